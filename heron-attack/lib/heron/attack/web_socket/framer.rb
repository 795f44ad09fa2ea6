# frozen_string_literal: true

require_relative "../protocol_error"

module Heron
  module Attack
    module WebSocket
      # protocol-websocket's framer with a bound on what a server may send: a frame, and the
      # frames of one fragmented message together, at most `limit` bytes (its default is 2^63,
      # so a server announcing a huge frame would grow the generator's read buffer without end).
      class Framer < Protocol::WebSocket::Framer
        # @param stream [SocketStream] @param limit [Integer] bytes.
        def initialize(stream, limit)
          super(stream)
          @limit = limit
          @message = 0
        end

        # @return [Protocol::WebSocket::Frame]
        # @raise [Protocol::WebSocket::ProtocolError] for a frame larger than the limit.
        # @raise [ProtocolError] for a message whose frames add up to more.
        def read_frame(maximum_frame_size = @limit)
          frame = super
          return frame if frame.control?
          @message = frame.finished? ? 0 : @message + frame.length
          raise ProtocolError, "a message larger than #{@limit} bytes" if @message > @limit
          frame
        end
      end
    end
  end
end
