# frozen_string_literal: true

require "async/notification"
require_relative "bytes"

module Heron
  module Response
    # The stream given to a Rack 3 streaming body (`body.call(stream)`). Writes go to the socket
    # as chunks (or raw when the length is known or the connection closes after the body); reads
    # come from the request body, or after an upgrade from the raw socket (Response::RawInput).
    # The response ends when the app closes the stream.
    class Stream
      # @param socket [Connection::BufferedSocket]
      # @param input [Request::Input, Response::RawInput] the request body, for bidirectional
      #   streams, or the raw socket after an upgrade.
      # @param chunked [Boolean] whether to frame writes as chunks.
      # @param timeout [Numeric] write timeout in seconds.
      def initialize(socket, input, chunked:, timeout:)
        @socket = socket
        @input = input
        @chunked = chunked
        @timeout = timeout
        @bytes = 0
        @closed = false
        @closed_signal = Async::Notification.new
      end

      # @return [Integer] body bytes written so far.
      attr_reader :bytes

      # Writes `data` to the client.
      # @param data [String]
      # @return [Integer] its length in bytes.
      def write(data)
        raise IOError, "stream closed" if @closed
        data = data.to_s
        return 0 if data.empty?
        @socket.write(frame(data), @timeout)
        @bytes += data.bytesize
      end

      # Same as {#write}, returning the stream.
      # @return [Response::Stream]
      def <<(data)
        write(data)
        self
      end

      # Reads from the request body (after an upgrade: from the raw socket, see RawInput).
      # @return [String, nil]
      def read(length = nil, buffer = nil)
        @input.read(length, buffer)
      end

      # Reads what is available, at most `length` bytes.
      # @return [String]
      # @raise [EOFError] at end of stream.
      def readpartial(length, buffer = nil)
        return @input.readpartial(length, buffer) if @input.respond_to?(:readpartial)
        @input.read(length, buffer) or raise EOFError, "end of request body"
      end

      # Nothing is buffered, so flushing does nothing.
      # @return [Response::Stream]
      def flush = self

      # Ends the response body.
      def close_write
        return if @closed
        @closed = true
        @socket.write("0\r\n\r\n", @timeout) if @chunked
      ensure
        @closed_signal.signal
      end

      alias close close_write

      # Stops reading the request body.
      def close_read
        @input.close
      end

      # @return [Boolean] whether the body has ended.
      def closed? = @closed

      # Waits (yielding the fiber) until the app closes the stream.
      def wait_closed
        @closed_signal.wait until @closed
      end

      private

      def frame(data)
        return data unless @chunked
        Bytes.append(Bytes.append(+"#{data.bytesize.to_s(16)}\r\n".b, data), "\r\n")
      end
    end
  end
end
