# frozen_string_literal: true

module Heron
  module HTTP2
    # The stream a Rack 3 streaming (callable) body is handed on HTTP/2: writes become DATA
    # frames, reads come from the request body. Closing it ends the response.
    class BodyStream
      # @param input [Input] the request body.
      # @param writer [#call] sends one chunk.
      def initialize(input, writer)
        @input = input
        @writer = writer
        @closed = false
      end

      # @param data [String]
      # @return [Integer] bytes written.
      def write(data)
        raise IOError, "stream closed" if @closed
        @writer.call(data)
        data.bytesize
      end

      # Same as #write, returning self.
      def <<(data)
        write(data)
        self
      end

      # @return [String, nil] request body bytes (see Input#read).
      def read(length = nil, buffer = nil) = @input.read(length, buffer)

      # Writes are sent at once; nothing to flush.
      def flush = self

      # Ends the response body.
      def close = (@closed = true)

      # Ends the response body (a full close; HTTP/2 has no half-close for the server's side here).
      def close_write = close

      # Stops reading the request body.
      def close_read = nil

      # @return [Boolean]
      def closed? = @closed
    end
  end
end
