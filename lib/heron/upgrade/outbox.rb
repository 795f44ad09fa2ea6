# frozen_string_literal: true

require "async"

module Heron
  module Upgrade
    # What an upgraded connection's socket did not take yet: the writes queued in order, their
    # bytes bounded by `websocket_max_pending`, and the one task that sends them as the client
    # reads. A {Session} makes one when a write does not go out whole, and drops it once drained,
    # so an idle connection has none.
    class Outbox
      # @return [Integer] bytes queued and not yet sent.
      attr_reader :bytes

      # @param io [IO] the socket.
      # @param limit [Integer] the most bytes it queues.
      def initialize(io, limit)
        @io = io
        @limit = limit
        @queue = []
        @bytes = 0
      end

      # Queues `bytes` behind the others.
      # @param bytes [String]
      # @return [Boolean] false when that would pass the limit (nothing is queued).
      def push(bytes)
        return false if @bytes + bytes.bytesize > @limit
        @bytes += bytes.bytesize
        @queue << bytes
        true
      end

      # @return [Integer] writes queued.
      def size = @queue.size

      # Drops what is queued (the connection ends); a running flush stops.
      # @return [void]
      def clear
        @queue.clear
        @bytes = 0
      end

      # Starts the task that sends the queue (unless it runs), which calls the block once with
      # true when the queue is empty, or false when the socket broke or the client did not read
      # for `timeout` seconds.
      # @param timeout [Numeric] write_timeout.
      # @yieldparam done [Boolean]
      # @return [void]
      def flush_in_background(timeout, &done)
        @flusher ||= Async::Task.current.async(annotation: "heron upgrade flush") do
          done.call(flush(timeout))
        ensure
          @flusher = nil
        end
      end

      private

      def flush(timeout)
        while (bytes = @queue.first)
          written = @io.write_nonblock(bytes, exception: false)
          next sent(bytes, written) unless written == :wait_writable
          return false unless @io.wait_writable(timeout)
        end
        true
      rescue SystemCallError, IOError
        false
      end

      def sent(bytes, written)
        @bytes -= written
        return @queue.shift if written == bytes.bytesize
        @queue[0] = bytes.byteslice(written, bytes.bytesize - written)
      end
    end
  end
end
