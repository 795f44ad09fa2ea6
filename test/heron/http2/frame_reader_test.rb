# frozen_string_literal: true

require "test_helper"
require "objspace"
require "stringio"
require "protocol/http2/framer"
require "heron/http2/frame_reader"

# HTTP2::FrameReader (C): frames taken off the front of a read buffer, one call each, their
# headers' bounds checked before any payload is waited for.
class HeronHTTP2FrameReaderTest < Minitest::Test
  FrameReader = Heron::HTTP2::FrameReader
  P = Protocol::HTTP2

  def reader(max_frame_size = 16_384, block_limit: 65_536, keep: 1024) = FrameReader.new(max_frame_size, block_limit, keep)

  # A frame's bytes as sent, whatever its length field says.
  def frame(type, flags, id, payload, length: payload.bytesize)
    [length >> 16, length & 0xffff, type, flags, id].pack("CnCCN").b + payload.b
  end

  def fields(frames) = [frames.type, frames.flags, frames.stream_id, frames.length]

  def test_a_whole_frame_is_consumed_and_its_payload_returned
    frames = reader
    buffer = frame(0x1, P::END_HEADERS | P::END_STREAM, 1, "\x82\x86\x84") + frame(0x8, 0, 0, "\x00\x00\x01\x00")
    block = frames.read(buffer)
    assert_equal ["\x82\x86\x84".b, Encoding::BINARY], [block, block.encoding]
    assert_equal [0x1, P::END_HEADERS | P::END_STREAM, 1, 3], fields(frames)
    assert_equal 13, buffer.bytesize, "the next frame left"
    assert_equal "\x00\x00\x01\x00".b, frames.read(buffer)
    assert_equal [0x8, 0, 0, 4], fields(frames)
    assert_equal "", buffer
    assert_nil frames.read(buffer)
  end

  def test_less_than_a_header_consumes_nothing
    frames = reader
    whole = frame(0x0, 0, 1, "abc")
    (0...9).each do |size|
      buffer = whole.byteslice(0, size)
      assert_nil frames.read(buffer), "#{size} bytes"
      assert_equal size, buffer.bytesize
    end
  end

  # The header is taken and false returned: the caller reads the payload (waiting for it) the
  # way protocol-http2's frames do, within the frame size the reader checked.
  def test_a_payload_still_to_come_leaves_it_to_the_caller_after_the_header
    frames = reader
    buffer = frame(0x0, P::END_STREAM, 3, "hello")
    buffer = buffer.byteslice(0, 11)
    assert_equal false, frames.read(buffer)
    assert_equal [0x0, P::END_STREAM, 3, 5], fields(frames)
    assert_equal "he", buffer
  end

  def test_a_field_block_that_continuation_frames_go_on_is_left_after_its_header
    frames = reader
    [0x1, 0x9].each do |type|
      buffer = frame(type, 0, 1, "\x82\x86") + frame(0x9, P::END_HEADERS, 1, "\x84")
      assert_equal false, frames.read(buffer), "type #{type}"
      assert_equal [type, 0, 1, 2], fields(frames)
      assert_equal "\x82\x86".b, buffer.byteslice(0, 2)
    end
  end

  def test_the_stream_ids_reserved_bit_is_cleared
    frames = reader
    frames.read(frame(0x0, 0, 0x8000_0005, "x"))
    assert_equal 5, frames.stream_id
  end

  # Every frame protocol-http2's framer writes comes back as it was written, each size from 0
  # to the largest frame, in one buffer.
  def test_frames_written_by_protocol_http2_read_back_whole
    io = StringIO.new(+"".b)
    written = write_frames(Protocol::HTTP2::Framer.new(io))
    buffer = io.string.b
    frames = reader
    written.each do |expected|
      payload = frames.read(buffer)
      assert_equal [expected.type, expected.flags, expected.stream_id, expected.length], fields(frames)
      assert_equal expected.payload.to_s.b, payload
    end
    assert_equal "", buffer
  end

  def test_a_frame_past_max_frame_size_is_a_frame_size_error_on_its_header
    frames = reader
    buffer = frame(0x0, 0, 1, "", length: 16_385)
    error = assert_raises(P::FrameSizeError) { frames.read(buffer) }
    assert_equal P::FRAME_SIZE_ERROR, error.code
    assert_equal 9, buffer.bytesize, "nothing consumed"
    assert_equal false, frames.read(frame(0x0, 0, 1, "", length: 16_384)), "the largest frame allowed"
    frames.max_frame_size = 32_768
    assert_equal false, frames.read(buffer)
    assert_raises(P::FrameSizeError) { frames.read(frame(0x0, 0, 1, "", length: 32_769)) }
  end

  def test_max_frame_size_is_within_what_settings_allow
    frames = reader
    [16_383, 16_777_216, -1].each { |size| assert_raises(ArgumentError) { frames.max_frame_size = size } }
    assert_raises(ArgumentError) { FrameReader.new(1024, 65_536, 1024) }
    frames.max_frame_size = 16_777_215
    assert_equal 16_777_215, frames.max_frame_size
  end

  def test_a_length_its_type_does_not_allow_is_a_frame_size_error
    {
      "RST_STREAM of 5" => frame(0x3, 0, 1, "\x00" * 5),
      "WINDOW_UPDATE of 3" => frame(0x8, 0, 0, "\x00" * 3),
      "PING of 7" => frame(0x6, 0, 0, "\x00" * 7),
      "SETTINGS of 5" => frame(0x4, 0, 0, "\x00" * 5),
      "a SETTINGS ACK with a payload" => frame(0x4, 0x1, 0, "\x00" * 6),
      "GOAWAY of 7" => frame(0x7, 0, 0, "\x00" * 7),
      "a padded DATA frame with no Pad Length" => frame(0x0, P::PADDED, 1, ""),
      "a padded HEADERS frame with no Pad Length" => frame(0x1, P::PADDED | P::END_HEADERS, 1, ""),
      "a HEADERS frame shorter than its priority fields" => frame(0x1, P::PRIORITY | P::END_HEADERS, 1, "\x00" * 4),
      "a padded, prioritised HEADERS frame of 5" => frame(0x1, P::PRIORITY | P::PADDED | P::END_HEADERS, 1, "\x00" * 5),
      "a PUSH_PROMISE shorter than its promised stream id" => frame(0x5, P::END_HEADERS, 1, "\x00" * 3)
    }.each { |name, buffer| assert_refused(name, buffer, P::FrameSizeError, P::FRAME_SIZE_ERROR) }
  end

  def test_padding_past_the_payload_is_a_protocol_error
    {
      "DATA, padding as long as the payload" => frame(0x0, P::PADDED, 1, "\x04abc"),
      "DATA, padding longer than the payload" => frame(0x0, P::PADDED, 1, "\xffabc"),
      "HEADERS, padding as long as the payload" => frame(0x1, P::PADDED | P::END_HEADERS, 1, "\x04abc"),
      "HEADERS, padding into the priority fields" => frame(0x1, P::PADDED | P::PRIORITY | P::END_HEADERS, 1, "\x01#{"\x00" * 5}"),
      "PUSH_PROMISE, padding into the promised stream id" => frame(0x5, P::PADDED | P::END_HEADERS, 1, "\x01#{"\x00" * 4}")
    }.each { |name, buffer| assert_refused(name, buffer, P::ProtocolError, P::PROTOCOL_ERROR) }
    assert_equal "\x03abc".b, reader.read(frame(0x0, P::PADDED, 1, "\x03abc")), "padding up to the last byte"
    assert_equal "\x01#{"\x00" * 5}x".b, reader.read(frame(0x1, P::PADDED | P::PRIORITY | P::END_HEADERS, 1, "\x01#{"\x00" * 5}x"))
  end

  # The Pad Length is the payload's first byte: a padded frame waits for it before anything is
  # taken, so its bound is checked before the caller waits for the rest.
  def test_a_padded_frame_waits_for_its_pad_length
    frames = reader
    buffer = frame(0x0, P::PADDED, 1, "\x09abc").byteslice(0, 9)
    assert_nil frames.read(buffer)
    buffer << "\x09"
    assert_raises(P::ProtocolError) { frames.read(buffer) }
  end

  def test_settings_ping_and_goaway_on_a_stream_are_protocol_errors
    [[0x4, ""], [0x6, "\x00" * 8], [0x7, "\x00" * 8]].each do |type, payload|
      error = assert_raises(P::ProtocolError, "type #{type}") { reader.read(frame(type, 0, 1, payload)) }
      assert_equal P::PROTOCOL_ERROR, error.code
    end
  end

  def test_a_field_blocks_first_frame_past_the_block_limit_is_enhance_your_calm
    frames = reader(block_limit: 100)
    [0x1, 0x5, 0x9].each do |type|
      error = assert_raises(P::ProtocolError) { frames.read(frame(type, P::END_HEADERS, 1, "\x00" * 101)) }
      assert_equal P::ENHANCE_YOUR_CALM, error.code
    end
    assert_equal 100, frames.read(frame(0x1, P::END_HEADERS, 1, "\x00" * 100)).bytesize
    assert_equal 101, frames.read(frame(0x0, 0, 1, "\x00" * 101)).bytesize, "DATA is not a field block"
  end

  # As Connection::ReadBuffer.drop_front: an emptied buffer keeps its memory up to `keep`.
  def test_an_emptied_buffer_keeps_its_memory_up_to_keep
    buffer = String.new(capacity: 800, encoding: Encoding::BINARY) << frame(0x0, 0, 1, "x" * 500)
    held = ObjectSpace.memsize_of(buffer)
    reader.read(buffer)
    assert_equal held, ObjectSpace.memsize_of(buffer)
    big = String.new(capacity: 20_000, encoding: Encoding::BINARY) << frame(0x0, 0, 1, "x" * 10_000)
    held = ObjectSpace.memsize_of(big)
    reader.read(big)
    assert_operator ObjectSpace.memsize_of(big), :<, held
  end

  private

  # The frame at the front of buffer raises `error` with `code`, nothing consumed.
  def assert_refused(name, buffer, error, code)
    size = buffer.bytesize
    raised = assert_raises(error, name) { reader.read(buffer) }
    assert_equal code, raised.code, name
    assert_equal size, buffer.bytesize, "#{name}: nothing consumed"
  end

  # Frames of every type the server reads, of sizes from empty to the largest, written in turn.
  def write_frames(framer)
    frames = [P::SettingsFrame.new.tap { |f| f.pack([[P::Settings::MAXIMUM_FRAME_SIZE, 16_384]]) },
              P::SettingsFrame.new(0, 0x1).tap { |f| f.pack([]) },
              P::PingFrame.new.tap { |f| f.pack("12345678") },
              P::WindowUpdateFrame.new(3).tap { |f| f.pack(65_535) },
              P::ResetStreamFrame.new(5).tap { |f| f.pack(P::CANCEL) },
              P::GoawayFrame.new.tap { |f| f.pack(7, P::NO_ERROR, "bye") }]
    [0, 1, 100, 16_383, 16_384].each do |size|
      frames << P::DataFrame.new(1).tap { |f| f.pack("d" * size) }
      frames << P::DataFrame.new(1).tap { |f| f.pack("p" * (size / 2), padding_size: [size / 2, 255].min) } if size.positive? && size < 16_000
      frames << P::HeadersFrame.new(3, P::END_HEADERS).tap { |f| f.pack("h" * size) }
    end
    frames.each { |f| framer.write_frame(f) }
  end
end
