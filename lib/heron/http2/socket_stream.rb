# frozen_string_literal: true

module Heron
  module HTTP2
    # The byte stream protocol-http2's framer reads and writes, over the connection's
    # Connection::BufferedSocket (so bytes a client sent with its preface are not lost).
    class SocketStream
      # @param socket [Connection::BufferedSocket]
      # @param write_timeout [Numeric] seconds a write may wait for the client.
      # @param read_timeout [#call] returns the seconds a read may wait now (nil: no limit).
      def initialize(socket, write_timeout:, read_timeout:)
        @socket = socket
        @write_timeout = write_timeout
        @read_timeout = read_timeout
      end

      # @param length [Integer]
      # @return [String] exactly `length` bytes.
      # @raise [EOFError] when the client closes first; Connection::BufferedSocket::Timeout.
      def read(length)
        @socket.fill(@read_timeout.call) or raise EOFError, "client closed" while @socket.buffered_bytes < length
        @socket.consume(length)
      end

      # @param data [String]
      # @return [Integer]
      def write(data) = @socket.write(data, @write_timeout)

      # Writes go out at once; nothing to flush.
      def flush = nil

      # Closes after draining what the client still sends (bounded), so a GOAWAY just written is
      # not destroyed by a reset before the client reads it.
      # @return [void]
      def close = @socket.linger_close

      # @return [Boolean]
      def closed? = @socket.closed?
    end
  end
end
