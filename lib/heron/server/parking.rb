# frozen_string_literal: true

require_relative "parking_lot"
require_relative "parking/spot"
require_relative "parking/hot_waits"
require_relative "../clock"

module Heron
  class Server
    # The one owner of parking, per reactor thread: whether a connection may wait for its client
    # with no fiber (a plain socket, epoll, and `keepalive_park_after` below `keepalive_timeout`
    # or `prebuffer_body` on), when it does (at once for a silent new connection, after
    # `keepalive_park_after` between requests unless HOT_WAITS others wait in their fiber, while
    # a request body is short of `prebuffer_body`, while it lingers after a 408), until when
    # (each lane's deadline) and how it wakes (a connection worker resumes it, or it expires).
    #
    # A connection asks it once, for its {Spot} ({#spot}), and tells the spot what it waits for
    # (its first bytes, its next request, its body, its client's close); the spot answers with
    # what came, or :parked when the connection gave up its fiber. The lanes, the epoll set and
    # the timer are a {ParkingLot} only this object touches. A connection its app took over (an
    # upgraded one, between messages) waits without a fiber through its spot's
    # {Spot#park_until}: woken, it is called `readable` or `expired` in a connection worker.
    class Parking
      include Clock

      # Kept-alive connections of one reactor that may wait for their next request in their fiber
      # (keepalive_park_after) at once; more park at once, unless their client is quick (see
      # {#hot_wait}). Bounds the fibers, and so the dirty fiber stacks the process keeps, that a
      # burst of connections leaves behind.
      HOT_WAITS = 64

      # Seconds a connection accepted before a graceful stop has, once the stop began, to send its
      # first request.
      FIRST_BYTE_GRACE = 1.0

      # @return [Float, nil] seconds a kept-alive connection waits in its fiber before it parks;
      #   nil when kept-alive connections never park (keepalive_park_after >= keepalive_timeout).
      attr_reader :park_after
      # @return [Configuration]
      attr_reader :config

      # @param config [Configuration]
      # @param reactor [#closed] told when a parked connection ends (`closed(connection)`).
      def initialize(config, reactor)
        @config = config
        @reactor = reactor
        @draining = false
        @park_after = config.keepalive_park_after if config.keepalive_park_after < config.keepalive_timeout
      end

      # Starts parking in `root` (the reactor's task), if this platform and the settings allow it.
      # Until then (and in Heron::Testing) no connection parks.
      # @param root [Async::Task]
      # @param workers [Server::ConnectionWorkers] run woken connections.
      # @return [void]
      def start(root, workers)
        @kept = HotWaits.new(root, @config.keepalive_timeout)
        return unless ParkingLot.supported? && (@park_after || @config.prebuffer_body.positive?)
        @workers = workers
        @hot = HotWaits.new(root, @park_after) if @park_after
        @lot = ParkingLot.new(root, resume: ->(spot) { wake(spot, :resume) }, expire: ->(spot) { wake(spot, :expire) })
      end

      # The one question a connection asks: its spot, through which it waits for its client.
      # @param connection [#resume_first, #resume_requests, #time_out_body] see {Spot#initialize}.
      # @param socket [Connection::BufferedSocket]
      # @param accepted_at [Float] monotonic time of accept.
      # @return [Spot]
      def spot(connection, socket, accepted_at)
        Spot.new(self, connection, socket, accepted_at, parkable: !@lot.nil? && socket.parkable?)
      end

      # @return [Integer] connections parked.
      def size = @lot ? @lot.size : 0

      # @return [Boolean] whether a graceful stop is under way (see {#drain}).
      def draining? = @draining

      # A graceful stop began (told once by the reactor): no kept-alive connection waits for
      # another request, and a new one has at most FIRST_BYTE_GRACE to send its first.
      # @return [void]
      def drain
        @draining = true
      end

      # @return [Float] seconds a new connection has to send its first bytes.
      def first_byte_wait
        return @config.first_byte_timeout unless draining?
        [@config.first_byte_timeout, FIRST_BYTE_GRACE].min
      end

      # A kept-alive connection waits in its fiber for its next request, up to
      # keepalive_park_after, unless {HOT_WAITS} connections already are and this one's client is
      # not quick. A quick client (its last request came within keepalive_park_after) is busy, not
      # idle: parking it would cost a park and a wake-up per request
      # (bench/results/connections_scaling.md) and save no fiber, as its next request needs one at
      # once; it parks after keepalive_park_after as any. The wait makes no scheduler timer: its
      # deadline is kept by the reactor's one {HotWaits}.
      # @param socket [Connection::BufferedSocket]
      # @param quick [Boolean]
      # @return [Integer, Boolean, Symbol, nil] what Connection::BufferedSocket#fill gave, false
      #   when nothing came in time, or :busy.
      def hot_wait(socket, quick)
        return :busy if @hot.size >= HOT_WAITS && !quick
        @hot.readable?(socket) && socket.fill(@config.header_timeout)
      end

      # A kept-alive connection that cannot park (a TLS socket, or parking off) waits in its fiber
      # for its next request, up to keepalive_timeout, with no scheduler timer of its own: the
      # reactor's {HotWaits} for that timeout keeps the deadline, once neither the socket nor
      # OpenSSL holds a byte of it. A timer per wait stayed in the scheduler's heap until its
      # deadline, keepalive_timeout later, long enough to be promoted and die old (see HotWaits).
      # @param socket [Connection::BufferedSocket]
      # @return [Integer, Boolean, nil] what Connection::BufferedSocket#fill gave, or false when
      #   nothing came in time.
      def kept_wait(socket)
        return socket.fill(@config.keepalive_timeout) unless @kept
        ready = socket.fill_now
        return ready unless ready.is_a?(Symbol)
        return socket.fill(@config.keepalive_timeout) unless :wait_readable.equal?(ready) # a TLS write first
        @kept.readable?(socket) && socket.fill(@config.header_timeout)
      end

      # Parks a spot's connection with no fiber until its socket is readable or `deadline` passes
      # (called by {Spot} only). It never switches fibers: the caller returns before anything can
      # resume the connection.
      # @param spot [Spot]
      # @param io [BasicSocket] its socket.
      # @param deadline [Float] monotonic time.
      # @param lane [Symbol] see ParkingLot#park.
      # @return [void]
      def park(spot, io, deadline, lane)
        @lot.park(spot, io, deadline, lane)
      end

      # Parks a parked connection again in another lane, until another deadline (called by
      # {Spot} only; it never switches fibers).
      # @param spot [Spot]
      # @param deadline [Float] monotonic time.
      # @param lane [Symbol] see ParkingLot#park.
      # @return [Boolean] whether it was parked (else a worker is about to run it).
      def repark(spot, deadline, lane)
        return false unless @lot&.remove(spot.io)
        @lot.park(spot, spot.io, deadline, lane)
        true
      end

      # Closes a parked connection now (a graceful stop, an eviction).
      # @param spot [Spot]
      # @return [Boolean] whether it was parked (and is now closed).
      def release(spot)
        return false unless @lot&.remove(spot.io)
        closed(spot)
        true
      end

      # The reactor is ending: closes every parked connection (they have no task to stop).
      # @return [void]
      def close
        @lot&.close&.each { |spot| closed(spot) }
      end

      private

      # A parked connection's socket became readable (`resume`) or its deadline passed
      # (`expire`): a worker runs it; the reactor is told once it ends without parking again.
      def wake(spot, event)
        @workers.run do
          parked = spot.public_send(event) == :parked
        ensure
          @reactor.closed(spot.connection) unless parked
        end
      end

      def closed(spot)
        spot.close
        @reactor.closed(spot.connection)
      end
    end
  end
end
