# frozen_string_literal: true

require "protocol/http2/frame"

module Heron
  module HTTP2
    # Packs the frames of a response (RFC 9113 §4.1: a 9-byte header, then the payload) straight
    # into the connection's output (SocketStream#frame), where protocol-http2 makes, packs and
    # writes a Frame object for each: HEADERS with its CONTINUATION frames, and DATA.
    module FramePacker
      HEADERS = 0x1
      DATA = 0x0
      CONTINUATION = 0x9
      private_constant :HEADERS, :DATA, :CONTINUATION

      module_function

      # A header block as a HEADERS frame and, past `max` bytes, CONTINUATION frames (the last
      # with END_HEADERS; each with the stream's id: protocol-http2 0.22 sends them on stream 0).
      # @param out [SocketStream] the connection's output.
      # @param id [Integer] the stream's id.
      # @param block [String] the encoded header block.
      # @param flags [Integer] END_STREAM or 0.
      # @param max [Integer] the peer's SETTINGS_MAX_FRAME_SIZE.
      # @return [void]
      def headers(out, id, block, flags, max)
        size = block.bytesize
        return out.frame(HEADERS, flags | Protocol::HTTP2::END_HEADERS, id, block) if size <= max
        out.frame(HEADERS, flags, id, block.byteslice(0, max))
        (max...size).step(max) do |offset|
          length = [size - offset, max].min
          last = offset + length == size
          out.frame(CONTINUATION, last ? Protocol::HTTP2::END_HEADERS : 0, id, block.byteslice(offset, length))
        end
      end

      # One DATA frame (the caller keeps it within the windows and the frame size).
      # @param out [SocketStream]
      # @param id [Integer]
      # @param data [String]
      # @param flags [Integer] END_STREAM or 0.
      # @return [void]
      def data(out, id, data, flags)
        out.frame(DATA, flags, id, data)
      end
    end
  end
end
