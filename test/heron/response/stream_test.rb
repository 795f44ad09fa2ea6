# frozen_string_literal: true

require "test_helper"

# Response::Stream, the stream a Rack 3 streaming body writes to, over a real socket pair, in a
# reactor as the server runs it.
class HeronResponseStreamTest < Minitest::Test
  Stream = Heron::Response::Stream

  # A request body stand-in with Input's reading API.
  class Body
    def initialize(data) = @data = +data
    def read(length = nil, _buffer = nil) = (length ? @data.slice!(0, length) : @data.slice!(0..)).then { |d| d.empty? && length ? nil : d }
    def close = (@closed = true)
    def closed? = @closed
  end

  def setup
    @ours, @peer = UNIXSocket.pair
    @socket = Heron::Connection::BufferedSocket.new(@ours)
  end

  def teardown
    [@ours, @peer].each { |io| io.close unless io.closed? }
  end

  def stream(chunked:, body: "") = Stream.new(@socket, Body.new(body), chunked: chunked, timeout: 1)

  def test_chunked_writes_are_framed_and_close_writes_the_last_chunk
    Sync do
      out = stream(chunked: true)
      assert_equal 5, out.write("hello")
      out << "" << "!" # an empty write sends nothing: it would end the body
      out.close
      @ours.close_write
      assert_equal "5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n", @peer.read
      assert_equal 6, out.bytes
      assert_predicate out, :closed?
    end
  end

  def test_raw_writes_when_the_length_is_known
    Sync do
      out = stream(chunked: false)
      out.write("abc")
      out.close
      out.close # once only
      @ours.close_write
      assert_equal "abc", @peer.read
    end
  end

  def test_writing_after_close_raises
    Sync do
      out = stream(chunked: true)
      out.close
      assert_raises(IOError) { out.write("late") }
    end
  end

  def test_reads_come_from_the_request_body
    Sync do
      out = stream(chunked: true, body: "request body")
      assert_equal "request", out.read(7)
      assert_equal " body", out.readpartial(100)
      assert_raises(EOFError) { out.readpartial(100) }
      out.close_read
    end
  end

  def test_wait_closed_returns_once_the_app_closes
    out = stream(chunked: false)
    Sync do |task|
      waiter = task.async { out.wait_closed; :closed }
      task.async { out.close }
      assert_equal :closed, waiter.wait
    end
  end
end
