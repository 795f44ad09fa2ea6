# frozen_string_literal: true

require "test_helper"

# HTTP/2 request bodies (Heron::HTTP2::Input): read(n, buffer) fills the caller's String without
# making new ones, and mixes with read(n), gets and read in order.
class HeronHTTP2InputTest < Minitest::Test
  def input(consumed = [])
    Heron::HTTP2::Input.new(limit: nil, timeout: 5, consumed: consumed.method(:<<))
  end

  def test_read_into_a_buffer_fills_it_across_frames_without_allocating_and_reports_what_was_consumed
    consumed = []
    body = input(consumed)
    buffer = +"old contents"
    pieces = Sync do
      %w[hello wor ld].each { |frame| body.push(+frame) }
      body.finish
      Array.new(3) { body.read(4, buffer)&.dup }
    end
    assert_equal ["hell", "owor", "ld"], pieces
    assert_equal Encoding::BINARY, buffer.encoding
    assert_nil Sync { body.read(4, buffer) }
    assert_equal "", buffer
    assert_equal 10, consumed.sum
    assert_predicate body, :finished?
    assert_no_strings_made_by_buffered_reads
  end

  def test_read_part_takes_what_one_frame_holds
    body = input
    pieces = Sync do
      %w[hello wor ld].each { |frame| body.push(+frame) }
      body.finish
      Array.new(5) { body.read_part(4) }
    end
    assert_equal ["hell", "o", "wor", "ld", nil], pieces
  end

  def test_reads_mix_buffer_and_plain_calls_in_order_and_buffered_reads_allocate_nothing
    body = input
    buffer = +""
    pieces = Sync do
      body.push(+"abcdef")
      body.push(+"gh\nij\nk")
      body.finish
      [body.read(2, buffer).dup, body.read(3), body.gets, body.read(1, buffer).dup, body.gets, body.read]
    end
    assert_equal ["ab", "cde", "fgh\n", "i", "j\n", "k"], pieces
    utf8 = input
    split = Sync { utf8.push(+"éa\nb").then { utf8.finish }.then { [utf8.read(1), utf8.gets, utf8.read] } }
    assert_equal ["\xC3".b, "\xA9a\n".b, "b"], split, "offsets count bytes, whatever the frame's encoding"
    assert_no_strings_made_by_buffered_reads
  end

  # 64 frames of 16 KiB read 4 KiB at a time into one buffer: 256 reads, (almost) no objects.
  def assert_no_strings_made_by_buffered_reads
    body = input
    frames = Array.new(64) { "x".b * 16_384 }
    buffer = String.new(capacity: 16_384, encoding: Encoding::BINARY)
    allocated = Sync do
      frames.each { |frame| body.push(frame) }
      body.finish
      before = GC.stat(:total_allocated_objects)
      nil while body.read(4096, buffer)
      GC.stat(:total_allocated_objects) - before
    end
    assert_operator allocated, :<, 20, "256 reads into one buffer allocated #{allocated} objects"
  end
end
