# frozen_string_literal: true

require_relative "../clock"
require_relative "../connection/buffered_socket"

module Heron
  module Upgrade
    # How an upgraded connection ends, made when it starts to: the deadline of a close the server
    # began (the client's close frame is awaited until then), whether the close waits for the
    # queued writes first (SSE), whether the socket lingers after a protocol error's close frame
    # (so the client reads that frame rather than a reset), and whether on_close has run.
    class Ending
      include Clock

      # How long a close the server began waits for the client's close frame.
      CLOSE_WAIT = 5.0
      # How long, and for how many bytes, a connection failed for a protocol error keeps reading
      # (and dropping) after its close frame.
      LINGER_SECONDS = 1.0
      LINGER_BYTES = 64 * 1024
      private_constant :CLOSE_WAIT, :LINGER_SECONDS, :LINGER_BYTES

      # @return [Float, nil] monotonic time a close the server began stops waiting for the client.
      attr_reader :close_by
      # @return [Boolean] whether the close waits until the queued writes are sent.
      attr_accessor :after_drain
      # @return [Boolean] whether the socket lingers before it closes (a protocol error).
      attr_accessor :linger

      def initialize
        @after_drain = false
        @linger = false
        @finished = false
      end

      # The server begins the close: the client has {CLOSE_WAIT} seconds to answer.
      # @return [self]
      def close_began
        @close_by = now + CLOSE_WAIT
        self
      end

      # @return [Boolean] true the first time only: on_close is to run now.
      def finish
        return false if @finished
        @finished = true
      end

      # Half-closes a socket that is to linger, drops what the client still sends (for a second
      # or 64 KiB at the most: Connection::BufferedSocket#linger_close), and closes it; a TLS
      # socket (no half-close) is left as it is.
      # @param io [IO]
      # @param scratch [String] a read buffer (the reactor's shared one).
      # @return [void]
      def drain(io, scratch)
        return unless @linger && io.is_a?(BasicSocket)
        @linger = false
        Connection::BufferedSocket.new(io, scratch).linger_close(timeout: LINGER_SECONDS, max: LINGER_BYTES)
      end
    end
  end
end
