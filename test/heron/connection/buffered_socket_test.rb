# frozen_string_literal: true

require "test_helper"

# Connection::BufferedSocket over a real socket pair, outside the fiber scheduler (its waits are
# IO#wait_readable / #wait_writable, which block the thread here).
class HeronConnectionBufferedSocketTest < Minitest::Test
  BufferedSocket = Heron::Connection::BufferedSocket

  def setup
    @ours, @peer = UNIXSocket.pair
    @socket = BufferedSocket.new(@ours)
  end

  def teardown
    [@ours, @peer].each { |io| io.close unless io.closed? }
  end

  def test_fill_appends_what_arrived_and_consume_takes_from_the_front
    @peer.write("hello world")
    assert_equal 11, @socket.fill(1)
    assert_equal "hello", @socket.consume(5)
    assert_equal " world", @socket.peek(100)
    assert_equal 6, @socket.buffered_bytes
    data = @socket.consume(100)
    assert_equal [" world", Encoding::BINARY], [data, data.encoding]
    refute_predicate @socket, :buffered?
  end

  def test_fill_times_out_and_returns_nil_at_end_of_stream
    error = assert_raises(BufferedSocket::Timeout) { @socket.fill(0.05) }
    assert_match(/timed out/, error.message)
    @peer.close
    assert_nil @socket.fill(1)
  end

  def test_read_into_takes_buffered_bytes_first_then_the_socket
    @peer.write("abcdef")
    @socket.fill(1)
    @socket.consume(2)
    out = +"old"
    assert_same out, @socket.read_into(3, out, 1)
    assert_equal "cde", out
    assert_equal "f", @socket.read_into(10, out, 1)
    @peer.write("xyz")
    assert_equal "xyz", @socket.read_into(10, out, 1)
    @peer.close
    assert_nil @socket.read_into(10, out, 1)
  end

  def test_append_to_adds_buffered_bytes_then_the_socket_and_keeps_the_strings_memory
    @peer.write("abcdef")
    @socket.fill(1)
    @socket.consume(2)
    out = String.new("<", capacity: 100_000)
    assert_equal 3, @socket.append_to(out, 3, 1)
    assert_equal 1, @socket.append_to(out, 10, 1)
    @peer.write("x" * 90_000)
    appended = 0
    appended += @socket.append_to(out, 90_000 - appended, 1) while appended < 90_000
    assert_equal "<cdef#{'x' * 90_000}", out
    assert_raises(BufferedSocket::Timeout) { @socket.append_to(out, 10, 0.05) }
    @peer.close
    assert_nil @socket.append_to(out, 10, 1)
  end

  def test_write_sends_everything_even_past_the_socket_buffer
    data = "x" * (4 * 1024 * 1024)
    reader = Thread.new { received = +""; received << @peer.readpartial(65_536) while received.bytesize < data.bytesize; received }
    assert_equal data.bytesize, @socket.write(data, 5)
    assert_equal data, reader.value
  end

  def test_write_times_out_when_the_peer_stops_reading
    assert_raises(BufferedSocket::Timeout) { @socket.write("x" * (8 * 1024 * 1024), 0.1) }
  end

  def test_the_shared_scratch_buffer_is_not_kept
    scratch = BufferedSocket.scratch_buffer
    socket = BufferedSocket.new(@ours, scratch)
    @peer.write("first")
    socket.fill(1)
    @peer.write("second")
    socket.fill(1)
    assert_equal "firstsecond", socket.peek(100)
  end

  def test_parse_head_and_decode_chunked_work_on_the_buffer_in_place
    @peer.write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET")
    @socket.fill(1)
    parser = Heron::HTTPParser.new
    env = {}
    @socket.consume(@socket.parse_head(parser, env))
    out = +"".b
    assert @socket.decode_chunked(parser, out)
    assert_equal ["POST", "hello", "GET"], [env["REQUEST_METHOD"], out, @socket.peek(10)]
  end

  def test_a_plain_socket_needs_no_handshake
    assert @socket.handshake(0.01)
  end

  def test_linger_close_lets_the_peer_read_the_last_bytes_and_closes
    @peer.write("unread request bytes")
    @socket.write("response", 1)
    closer = Thread.new { @socket.linger_close(timeout: 2) }
    assert_equal "response", @peer.read # EOF after the response: the write side was shut down
    @peer.close
    closer.join(3)
    assert_predicate @socket, :closed?
  end
end
