# frozen_string_literal: true

require "async"
require "set"
require_relative "eviction"
require_relative "../control/backlog"
require_relative "../clock"

module Heron
  class Server
    # A reactor thread's open connections, against its share of `max_connections`: who is open
    # (longest open first), how many are still reading their PROXY header (they count towards
    # the limit), making room when the limit is reached and a client waits (Server::Eviction
    # chooses whom to close), and telling those who wait for a connection to close (the accept
    # loop waiting for room or resting after an accept error, a graceful stop waiting for the
    # last one).
    class ConnectionRegistry
      include Clock

      # @param max_connections [Integer] this reactor's share of the connection limit.
      # @param metrics [Object, nil] told of each connection opened and closed.
      def initialize(max_connections, metrics)
        @max_connections = max_connections
        @metrics = metrics
        @connections = Set.new
        @handshakes = 0
        @eviction = Server::Eviction.new
        @closed = Async::Notification.new # signalled whenever a connection closes
      end

      # @return [Integer] open connections.
      def size = @connections.size

      # @return [Boolean] whether none is open.
      def empty? = @connections.empty?

      # @return [Array<Connection>] the open connections, longest open first (a copy).
      def to_a = @connections.to_a

      # @param pending [Integer] sockets accepted but not yet registered.
      # @return [Integer] connections that may still be accepted.
      def room(pending = 0) = @max_connections - @connections.size - @handshakes - pending

      # Counts a socket reading its PROXY header as a connection while the block runs.
      # @return [Object] the block's value.
      def handshake
        @handshakes += 1
        yield
      ensure
        @handshakes -= 1
      end

      # @param connection [Connection]
      # @return [void]
      def add(connection)
        @connections << connection
        @metrics&.connection_opened
      end

      # A connection ended (or, with nil, a socket that never became one).
      # @param connection [Connection, nil]
      # @return [void]
      def closed(connection)
        @metrics&.connection_closed if connection
        @connections.delete(connection)
        @closed.signal
      end

      # At the connection limit, waits until a client is waiting to be accepted and then makes
      # room by closing the connections Server::Eviction chooses (idle keep-alive ones, else the
      # slowest clients still sending their request), or, when none may be closed (every one is
      # in the app), waits for one to close. One look makes room for as many clients as the
      # listener's accept queue holds (Control::Backlog; see Server::Eviction#choose).
      # @param listener [IO] the listening socket.
      # @return [void]
      def wait_for_room(listener)
        until room.positive?
          listener.wait_readable
          @eviction.choose(@connections, now, Control::Backlog.queued(listener)).each(&:evict)
          @closed.wait unless room.positive?
        end
      end

      # Waits `seconds`, or less if a connection closes (freeing a descriptor).
      # @param seconds [Numeric]
      # @return [void]
      def rest(seconds)
        Async::Task.current.with_timeout(seconds) { @closed.wait }
      rescue Async::TimeoutError
        nil
      end

      # Waits until every connection has closed, or `deadline` passes.
      # @param deadline [Float] monotonic time.
      # @return [Boolean] whether all closed.
      def wait_until_empty(deadline)
        until @connections.empty? || (left = deadline - now) <= 0
          rest(left)
        end
        @connections.empty?
      end
    end
  end
end
