# frozen_string_literal: true

require "async/notification"

module Heron
  module Attack
    module HTTP2
      # The HTTP/2 connections to one origin: up to `size` of them, opened by the first requests
      # (one each, as h2load does), then each request goes to the connection with the most room.
      # When every connection is at its stream limit, a request waits for one to free up.
      class Pool
        # @param size [Integer] connections to open.
        # @yieldreturn [Connection] a newly opened connection.
        def initialize(size, &opener)
          @size = size
          @opener = opener
          @connections = []
          @opening = 0
          @available = Async::Notification.new
        end

        # @return [Connection] a connection with a stream reserved for the caller.
        # @raise whatever opening a connection raises.
        def acquire
          loop do
            @connections.select!(&:usable?)
            return open if @connections.size + @opening < @size
            best = @connections.max_by(&:capacity)
            return best.tap(&:reserve) if best&.capacity&.positive?
            @available.wait
          end
        end

        # Hands back the stream {#acquire} reserved (the request has finished).
        # @param connection [Connection]
        # @return [void]
        def release(connection)
          connection.close if !connection.usable? && connection.active.zero?
          @available.signal
        end

        # Closes every connection.
        # @return [void]
        def close
          @connections.each(&:close).clear
        end

        private

        def open
          @opening += 1
          connection = @opener.call
          @connections << connection
          connection.tap(&:reserve)
        ensure
          @opening -= 1
          @available.signal
        end
      end
    end
  end
end
