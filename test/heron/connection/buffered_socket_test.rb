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

  def test_skip_drops_bytes_from_the_front_without_returning_them
    @peer.write("GET / HTTP/1.1\r\n\r\nnext")
    @socket.fill(1)
    @socket.skip(18)
    assert_equal "next", @socket.peek(100)
    @socket.skip(4)
    refute_predicate @socket, :buffered?
  end

  def test_fill_times_out_and_returns_nil_at_end_of_stream
    error = assert_raises(Heron::TimeoutError) { @socket.fill(0.05) }
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
    assert_raises(Heron::TimeoutError) { @socket.append_to(out, 10, 0.05) }
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
    assert_raises(Heron::TimeoutError) { @socket.write("x" * (8 * 1024 * 1024), 0.1) }
  end

  # A write that must wait sends the bytes it was given, whatever the caller does to its String
  # meanwhile: Response::Writer builds every head of a reactor thread in one String, and the
  # next connection's head is built while this one waits.
  def test_a_write_that_waits_sends_the_bytes_it_was_given_though_the_string_changes
    filled = 0
    while (count = @ours.write_nonblock("x" * 65_536, exception: false)).is_a?(Integer) # until the socket is full
      filled += count
    end
    data = "a" * 1000
    writer = Thread.new { @socket.write(data, 5) }
    Thread.pass until writer.status == "sleep" || !writer.alive? # waiting for the peer to read
    data.tr!("a", "b") # the next head, built in the same String
    received = +""
    received << @peer.readpartial(65_536) while received.bytesize < filled + 1000
    assert_equal 1000, writer.value
    assert_equal "a" * 1000, received.byteslice(filled, 1000)
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

  # fill_decoded decodes what it reads straight into the caller's String: nothing of the body is
  # left in the connection's buffer, a chunk line split across reads decodes whole, at most `max`
  # bytes are read, and only the bytes after the body's end (a pipelined request) stay buffered.
  def test_fill_decoded_decodes_into_the_callers_string_and_keeps_what_follows_the_body
    @peer.write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    @socket.fill(1)
    parser = Heron::HTTPParser.new
    @socket.consume(@socket.parse_head(parser, {}))
    out = +"".b
    @peer.write("a;x=1\r")
    assert_equal [6, "", false], [@socket.fill_decoded(parser, out, 100, 1), out, @socket.buffered?]
    @peer.write("\n0123456789\r\n0\r\n\r\nGET / HTTP/1.1\r\n")
    assert_equal 4, @socket.fill_decoded(parser, out, 4, 1)
    assert_equal ["012", false], [out, @socket.buffered?]
    @socket.fill_decoded(parser, out, 100, 1)
    assert_equal ["0123456789", "GET / HTTP/1.1\r\n"], [out, @socket.peek(100)]
    assert @socket.decode_chunked(parser, out)
    @peer.close
    assert_nil @socket.fill_decoded(parser, out, 100, 1)
  end

  # A prebuffered body (256 KiB here) taken 16 KiB at a time copies each piece once: slice!
  # copied all that was left on every call, about 2 MiB of garbage for these 256 KiB.
  def test_consume_in_pieces_copies_each_piece_once
    size = 256 * 1024
    writer = Thread.new { @peer.write("z" * size) }
    @socket.fill(1) while @socket.buffered_bytes < size
    writer.join
    malloced = with_gc_disabled { (size / 16_384).times { assert_equal "z" * 16_384, @socket.consume(16_384) } }
    refute_predicate @socket, :buffered?
    assert_operator malloced, :<, 2 * size, "consuming #{size} bytes in 16 KiB pieces allocated #{malloced} bytes"
  end

  # The app's first reads of a prebuffered body take it from the buffer into the app's String:
  # copied into that String's memory, with no String per read for the bytes (one made a piece and
  # another for the rest, and the app's String shared the piece's block until the GC swept it).
  def test_read_into_from_the_buffer_copies_into_the_callers_string
    size = 256 * 1024
    body = Array.new(size) { |i| (i % 251).chr }.join.b
    writer = Thread.new { @peer.write(body) }
    @socket.fill(1) while @socket.buffered_bytes < size
    writer.join
    out = String.new
    got = @socket.read_into(16_384, out, 1).dup # warms the call sites (their caches are objects too)
    objects = GC.stat(:total_allocated_objects)
    (size / 16_384 - 1).times { got << @socket.read_into(16_384, out, 1) } # at most one small String a read
    assert_operator GC.stat(:total_allocated_objects) - objects, :<=, size / 16_384 + 2
    assert_equal [body, false], [got, @socket.buffered?]
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

  private

  # @return [Integer] bytes Ruby allocated with malloc while the block ran (GC off, so none freed).
  def with_gc_disabled
    GC.start
    GC.disable
    before = GC.stat(:malloc_increase_bytes)
    yield
    GC.stat(:malloc_increase_bytes) - before
  ensure
    GC.enable
  end
end
