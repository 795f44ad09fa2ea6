# frozen_string_literal: true

require "protocol/http2/headers_frame"

module Heron
  module Attack
    module HTTP2
      # A response's HEADERS frame, read with its CONTINUATION frames within bounds (a server that
      # sent CONTINUATION frames forever would otherwise grow the generator's memory and stack).
      class HeaderBlock < Protocol::HTTP2::HeadersFrame
        MAX_BYTES = 64 * 1024
        MAX_FRAMES = 33 # the HEADERS frame and up to 32 CONTINUATION frames

        # @param stream [SocketStream] @param maximum_frame_size [Integer]
        # @return [void]
        # @raise [ProtocolError] past either bound.
        def read(stream, maximum_frame_size)
          stream.bounded(MAX_BYTES, MAX_FRAMES * 2) { super }
        end
      end
    end
  end
end
