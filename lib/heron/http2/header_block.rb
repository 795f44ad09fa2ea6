# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"

module Heron
  module HTTP2
    # A HEADERS frame whose header block (the frame and its CONTINUATION frames) is bounded:
    # protocol-http2 reads CONTINUATION frames one inside the other without a limit, so a client
    # sending them forever would grow memory and the fiber's stack (the CONTINUATION flood).
    class HeaderBlock < Protocol::HTTP2::HeadersFrame
      # The most CONTINUATION frames one header block may have.
      MAX_CONTINUATIONS = 32

      class << self
        # @return [Integer] bytes a header block may have in all (set from max_header_bytes).
        attr_accessor :max_bytes
      end
      self.max_bytes = 64 * 1024

      # Reads the frame through a counter that stops the block at its bounds, within one
      # `header_timeout` (SocketStream#head) however the block is split and paced. A whole block
      # in one frame, its bytes here already (a request's usual HEADERS), is read as it is.
      def read(stream, maximum_frame_size)
        return super if end_headers? && @length <= HeaderBlock.max_bytes && stream.buffered_bytes >= @length
        stream.head { super(Counter.new(stream, HeaderBlock.max_bytes, (MAX_CONTINUATIONS + 1) * 2), maximum_frame_size) }
      end

      # Passes reads through while they stay within `bytes` in all and `reads` calls.
      class Counter
        def initialize(stream, bytes, reads)
          @stream = stream
          @bytes = bytes
          @reads = reads
        end

        # @raise [Protocol::HTTP2::ProtocolError] (ENHANCE_YOUR_CALM) past either bound.
        def read(length)
          @bytes -= length
          @reads -= 1
          raise Protocol::HTTP2::ProtocolError.new("header block too large", Protocol::HTTP2::ENHANCE_YOUR_CALM) if @bytes.negative? || @reads.negative?
          @stream.read(length)
        end
      end
    end
  end
end
