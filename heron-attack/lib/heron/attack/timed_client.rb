# frozen_string_literal: true

require_relative "deadlines"
require_relative "resolver"

module Heron
  module Attack
    # What the generator's clients share, whatever the protocol ({Client}, {HTTP2::Client}): each
    # call runs within the timeout ({Deadlines}: up to a tenth of a second late), each host is
    # resolved once ({Resolver}), and closing closes the connections and stops the timeouts. A
    # subclass defines `exchange(target)` and `close_connections`.
    class TimedClient
      # @param timeout [Numeric] seconds allowed for connect, send and the whole response.
      def initialize(timeout)
        @deadlines = Deadlines.new(timeout)
        @resolver = Resolver.new
      end

      # Sends one request and reads the response, within the timeout.
      # @param target [Target]
      # @return [Response]
      # @raise [Async::TimeoutError, SystemCallError, EOFError, ProtocolError] on failure.
      def call(target)
        @deadlines.within { exchange(target) }
      end

      # Resolves a target's host now, so a bad name fails before the attack starts.
      # @param target [Target]
      # @return [Addrinfo]
      # @raise [SocketError] when the name does not resolve.
      def resolve(target)
        @resolver.resolve(target)
      end

      # Closes every connection and stops checking timeouts.
      # @return [void]
      def close
        close_connections
        @deadlines.stop
      end
    end
  end
end
