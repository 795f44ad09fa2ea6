# frozen_string_literal: true

require "test_helper"
require "minitest/mock"

# The pacer runs a GC once `every` bytes have been handed out, and not before. Whether it asked
# for a collection is counted on GC.start itself: GC.count is process-wide, and in a full run
# other threads (servers of earlier tests, the EventMachine reactor) allocate and may collect
# between two readings, so "no collection yet" cannot be read from it.
class GCPacerTest < Minitest::Test
  def test_collects_once_every_n_bytes
    pacer = Heron::Request::GCPacer.new(1000)
    calls = []
    GC.stub(:start, ->(**options) { calls << options }) do
      pacer.handed_out(600)
      assert_empty calls, "not yet: 600 of 1000 bytes"
      pacer.handed_out(400)
      assert_equal [{ full_mark: false, immediate_sweep: true }], calls, "1000 bytes: one minor collection"
      pacer.handed_out(999)
      assert_equal 1, calls.size, "the count starts again after a collection"
      pacer.handed_out(1)
      assert_equal 2, calls.size, "and collects again at 1000"
    end
  end

  # The request really collects (Ruby may turn the minor collection into a major one: counted
  # with GC.count, which only ever grows).
  def test_the_collection_happens
    pacer = Heron::Request::GCPacer.new(1000)
    before = GC.count
    pacer.handed_out(1000)
    assert_operator GC.count, :>, before, "1000 bytes: one collection"
  end

  # Two uploads at once to one server, 3 MiB each, read with read(16 KiB): 6 MiB handed out in
  # all, past the 4 MiB of the reactor thread's one pacer, so it asks for a collection; with a
  # pacer per upload neither reached 4 MiB and none was asked for. GC.start is watched, and still
  # collects.
  def test_concurrent_uploads_share_the_threads_pacer
    app = lambda do |env|
      total = 0
      while (piece = env["rack.input"].read(16 * 1024)) do total += piece.bytesize end
      [200, { "content-type" => "text/plain" }, [total.to_s]]
    end
    size = 3 * 1024 * 1024
    calls = Queue.new
    collect = GC.method(:start)
    GC.stub(:start, ->(**options) { calls << options && collect.call(**options) }) do
      with_server(app) do |port|
        sockets = Array.new(2) { connect(port) }
        writers = sockets.map do |socket|
          Thread.new { socket.write("POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: #{size}\r\n\r\n", "u" * size) }
        end
        assert_equal [size.to_s] * 2, sockets.map { |socket| read_response(socket)[2] }
        writers.each(&:join)
      ensure
        sockets&.each(&:close)
      end
    end
    assert_includes Array.new(calls.size) { calls.pop }, { full_mark: false, immediate_sweep: true }
  end
end
