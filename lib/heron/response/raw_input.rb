# frozen_string_literal: true

module Heron
  module Response
    # The reading side of an upgraded connection (101): what the client sends after the request
    # head, unframed. Bytes already buffered behind the head come first, then the socket. Reads
    # wait without a deadline, as on a hijacked socket: the protocol on top (WebSocket pings,
    # for one) decides when a silent peer is dead.
    class RawInput
      # @param socket [Connection::BufferedSocket]
      # @param limit [Integer, nil] most bytes one read may gather (max_body_size); nil: no limit.
      def initialize(socket, limit: nil)
        @socket = socket
        @limit = limit
        @closed = false
      end

      # Reads like IO#read: `length` bytes (fewer only at end of stream), or everything until
      # the end of stream when `length` is nil.
      # @param length [Integer, nil]
      # @param buffer [String, nil] replaced with the data when given.
      # @return [String, nil] nil at end of stream when `length` is positive.
      # @raise [Request::Input::TooLarge] when one read would gather more than the limit.
      def read(length = nil, buffer = nil)
        return fill_buffer(buffer, +"") if length&.zero?
        check_limit(length)
        nil while (length.nil? || @socket.buffered_bytes < length) && fill && check_limit(length)
        return nil if length && !@socket.buffered?
        fill_buffer(buffer, @socket.consume(length || @socket.buffered_bytes))
      end

      # Reads whatever is available, at most `length` bytes, waiting for at least one.
      # @param length [Integer]
      # @param buffer [String, nil]
      # @return [String]
      # @raise [EOFError] at end of stream.
      def readpartial(length, buffer = nil)
        fill if !@socket.buffered?
        raise EOFError, "end of stream" if !@socket.buffered?
        fill_buffer(buffer, @socket.consume(length))
      end

      # Same as {#readpartial}, returning nil at end of stream (the protocol-http spelling).
      # @return [String, nil]
      def read_partial(length = READ_SIZE, buffer = nil)
        readpartial(length, buffer)
      rescue EOFError
        nil
      end

      READ_SIZE = 16 * 1024

      # Stops reading: later reads see the end of stream.
      def close
        @closed = true
      end

      private

      def check_limit(length)
        wanted = length || @socket.buffered_bytes
        return true unless @limit && wanted > @limit
        raise Request::Input::TooLarge, "a read of #{wanted} bytes from the upgraded connection exceeds #{@limit}"
      end

      def fill
        return nil if @closed || @socket.closed?
        @socket.fill(nil)
      end

      def fill_buffer(buffer, data)
        return data unless buffer
        buffer.replace(data)
      end
    end
  end
end
