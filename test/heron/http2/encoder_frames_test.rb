# frozen_string_literal: true

require "test_helper"
require "stringio"
require "protocol/hpack"
require "protocol/http2/framer"
require "heron/http2/encoder"

# Encoder#frames: a response's frames packed into the connection's output in one call, read back
# by protocol-http2's framer: HEADERS (split into CONTINUATION frames past the frame size, each
# on the stream), then the DATA frame, END_STREAM on the last; nothing written for a bad field.
class HeronHTTP2EncoderFramesTest < Minitest::Test
  FIELDS = [[":status", "200"], ["content-type", "text/plain"], ["x-request-id", "r-1"]].freeze

  def read_frames(bytes)
    framer = Protocol::HTTP2::Framer.new(StringIO.new(bytes))
    frames = []
    frames << framer.read_frame until framer.instance_variable_get(:@stream).eof?
    frames
  end

  def decode(block) = Protocol::HPACK::Decompressor.new(block, Protocol::HPACK::Context.new).decode

  def test_headers_and_data_with_end_stream_on_the_data
    out = "prefix".b
    Heron::HTTP2::Encoder.new.frames(out, 3, FIELDS, Protocol::HTTP2::END_STREAM, 16_384, 4096, "hello")
    assert out.start_with?("prefix")
    headers, data = read_frames(out.byteslice(6..))
    assert_equal [Protocol::HTTP2::HeadersFrame, 3, Protocol::HTTP2::END_HEADERS], [headers.class, headers.stream_id, headers.flags]
    assert_equal FIELDS, decode(headers.unpack)
    assert_equal [Protocol::HTTP2::DataFrame, 3, Protocol::HTTP2::END_STREAM, "hello"], [data.class, data.stream_id, data.flags, data.unpack]
  end

  # [type, flags, stream id, payload] of each frame, read raw (protocol-http2's framer folds
  # CONTINUATION frames into their HEADERS frame).
  def raw_frames(bytes)
    frames = []
    until bytes.empty?
      high, low, type, flags, id = bytes.unpack("CnCCN")
      length = (high << 16) | low
      frames << [type, flags, id, bytes.byteslice(9, length)]
      bytes = bytes.byteslice((9 + length)..)
    end
    frames
  end

  def test_a_block_past_the_frame_size_goes_on_in_continuation_frames_of_the_stream
    fields = FIELDS + [["x-big", "v" * 250]]
    frames = raw_frames(Heron::HTTP2::Encoder.new.frames("".b, 5, fields, Protocol::HTTP2::END_STREAM, 100, 4096))
    assert_operator frames.size, :>=, 3
    assert_equal [Protocol::HTTP2::HeadersFrame::TYPE] + [Protocol::HTTP2::ContinuationFrame::TYPE] * (frames.size - 1), frames.map(&:first)
    assert(frames.all? { |_, _, id, payload| id == 5 && payload.bytesize <= 100 })
    assert_equal [Protocol::HTTP2::END_STREAM] + [0] * (frames.size - 2) + [Protocol::HTTP2::END_HEADERS], frames.map { |frame| frame[1] },
                 "END_STREAM on the HEADERS, END_HEADERS on the last"
    assert_equal fields, decode(frames.map(&:last).join)
  end

  def test_a_bad_field_writes_nothing
    out = "kept".b
    assert_raises(ArgumentError) { Heron::HTTP2::Encoder.new.frames(out, 1, [["x-a", 1]], 0, 16_384, 4096, "body") }
    assert_equal "kept", out
  end
end
