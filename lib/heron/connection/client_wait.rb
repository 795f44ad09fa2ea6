# frozen_string_literal: true

require_relative "../clock"

module Heron
  class Connection
    # Whether, and since when, a connection waits on its client: for its first bytes, for its
    # next request (then it is idle), or for the rest of a request the app has not been given
    # yet. Server::Eviction reads it to choose whom to close at max_connections, a graceful stop
    # to close the idle; it also makes the wait for a request's first byte, in the connection's
    # fiber or parked through its Server::Parking::Spot.
    class ClientWait
      include Clock

      # @param spot [Server::Parking::Spot] where the connection parks.
      # @param accepted_at [Float] monotonic time of accept: the wait for the first request
      #   began then.
      def initialize(spot, accepted_at)
        # Three instance variables, so that Ruby 3.1 keeps them in the object's own slot: a
        # fourth moves them to a table of their own, one more cache line a request to load from
        # memory at many connections (bench/results/per_core.md, "Fewer cold lines a request").
        @spot = spot
        @since = accepted_at
        @idle = :first # :first before the first request, :kept between two, false while busy
      end

      # @return [Float, nil] the monotonic time the current wait on the client began; nil while
      #   the server works on a request or the connection no longer serves HTTP/1 requests. Set
      #   to nil by the connection when the server's turn begins (the app is called): a writer,
      #   not a method of its own, as it is set on every request.
      attr_accessor :since

      # @return [Boolean] whether nothing of a next request has come yet (before the first
      #   request, or between two).
      def idle? = @idle ? true : false

      # @return [Boolean] whether the connection is idle after serving at least one request.
      def kept_alive_idle? = :kept.equal?(@idle)

      # Waits for the first byte of a request: the first one's (which may have come with the
      # accept already), or the next one's on a kept-alive connection, which may park
      # (Server::Parking::Spot#wait_for_next). Idle while nothing is buffered.
      # @param first [Boolean] whether no request was read on the connection yet.
      # @param socket [Connection::BufferedSocket] the connection's socket.
      # @return [Float, Symbol, nil] the monotonic time the request's wait began (the accept for
      #   the first request), :parked when the connection parked, or nil when nothing came.
      def next_request(first, socket)
        @idle = !socket.buffered? && (first ? :first : :kept)
        @since = now unless first
        ready = first ? socket.buffered? || socket.fill(@spot.first_byte_wait) : @spot.wait_for_next
        return ready if !ready || :parked.equal?(ready)
        @idle = false
        first ? @since : (@since = now)
      end

      # The connection was answered with an error and ends: no longer idle.
      # @return [false]
      def busy
        @idle = false
      end

      # The connection no longer serves HTTP/1 requests (HTTP/2, or upgraded by its app): it
      # never waits for a request again.
      # @return [nil]
      def taken_over
        @idle = false
        @since = nil
      end
    end
  end
end
