# frozen_string_literal: true

require_relative "../http_parser" # loads heron_ext, which defines Connection::IdleSet
require_relative "../clock"

module Heron
  class Server
    # Where a reactor thread's connections wait without a fiber: idle keep-alive connections
    # between requests, and requests whose body is still arriving before the app is called. A
    # fiber's stack pages stay dirty once touched (Ruby's fiber pool does not give them back on
    # Linux), so a connection waiting in a fiber costs about 18 KiB; parked, it costs its objects.
    #
    # The sockets wait in one {Connection::IdleSet} (epoll, one-shot). One watcher task waits on
    # the set's descriptor through the fiber scheduler and hands each socket that became readable
    # (or hung up) to `resume`, which serves it in a worker; one timer task sleeps until the
    # earliest deadline (or TICK) and hands each connection past its deadline to `expire`. A connection is
    # in the lot until one of those, or {#remove}, takes it out. Only Server::Parking, which
    # decides what parks, in which lane and until when, uses it; what it parks is that owner's
    # Server::Parking::Spot for the connection.
    class ParkingLot
      include Clock

      # The timer looks again at least this often while anything is parked, so a deadline earlier
      # than the one it sleeps for is late by at most this; sweeps of the unordered (body)
      # deadlines are also at least this far apart.
      TICK = 0.1
      # Connections expired in one turn of the event loop, at most; the timer yields between
      # batches. Slow clients that connected together time out together: 4,096 body drippers
      # cut in one turn queued 4,096 jobs ahead of every new connection's.
      EXPIRE_BATCH = 64
      # Lanes whose connections all wait the same time, so parking order is deadline order.
      ORDERED = %i[fresh idle upgraded].freeze
      # Lanes whose expiry cuts a client for being slow (silent after connecting, or dripping a
      # body): at most CUTS_PER_TICK of theirs expire per TICK, the others a TICK later. A client
      # cut may reconnect at once, and slow clients that connected together time out together:
      # 4,096 body drippers cut within a second came back within a second, and a new client's
      # connection waited behind their reconnects in the kernel's accept queue (FIFO) for up to
      # 0.3-0.5 s (bench/results/connection_cap.md). Paced, the reconnects come no faster than
      # the loop serves them; a slow client kept a little longer holds only its slot, and at
      # max_connections Server::Eviction closes the slowest for a new client at once.
      PACED = %i[fresh body].freeze
      CUTS_PER_TICK = 50
      private_constant :TICK, :EXPIRE_BATCH, :ORDERED, :PACED, :CUTS_PER_TICK

      # @return [Boolean] whether connections can be parked on this platform (epoll).
      def self.supported? = Connection::IdleSet.supported?

      # @param root [Async::Task] parent of the watcher and timer tasks.
      # @param resume [#call] called with a connection whose socket is readable, in the watcher's
      #   fiber (so it starts a task and returns).
      # @param expire [#call] called with a connection whose deadline passed, in the timer's
      #   fiber (likewise).
      def initialize(root, resume:, expire:)
        @root = root
        @resume = resume
        @expire = expire
        @set = Connection::IdleSet.new
        @io = IO.for_fd(@set.fileno, autoclose: false)
        # lane => { fileno => [connection, deadline] }. In the ORDERED lanes every connection
        # waits the same time, so parking order is deadline order and expiry looks at the oldest.
        @lanes = { fresh: {}, idle: {}, body: {}, linger: {}, upgraded: {}, closing: {} }
        @wake = Async::Notification.new # wakes the idle timer (see #schedule)
        @watcher = root.async(transient: true, annotation: "heron parking lot") { watch }
        @timer = root.async(transient: true, annotation: "heron parking timer") { tick }
      end

      # @return [Integer] connections parked.
      def size = @lanes.each_value.sum(&:size)

      # Parks a connection until its socket is readable or `deadline` passes.
      # @param connection [Connection]
      # @param io [BasicSocket] its socket.
      # @param deadline [Float] monotonic time.
      # @param lane [Symbol] :fresh (no request yet: first_byte_timeout), :idle (between
      #   requests: keepalive_timeout), :body (a request waiting for its body: deadlines in any
      #   order), :linger (closing after a 408: dropping what the client still sends), :upgraded
      #   (a `rack.upgrade` WebSocket or SSE stream between messages: websocket_ping_interval) or
      #   :closing (an upgraded connection waiting for the client's close frame: any order).
      # @return [void]
      def park(connection, io, deadline, lane)
        @lanes.fetch(lane)[io.fileno] = [connection, deadline]
        @set.add(io.fileno)
        schedule(deadline)
      end

      # Takes a connection out before its socket is closed (a graceful stop, an eviction).
      # @param io [BasicSocket] the parked connection's socket.
      # @return [Connection, nil] the connection that was parked there.
      def remove(io)
        fileno = io.fileno
        @set.delete(fileno)
        take(fileno)&.first
      end

      # Stops watching and returns every connection still parked (the reactor is ending).
      # @return [Array<Connection>]
      def close
        [@watcher, @timer].each { |task| task&.stop }
        @io.close
        @set.close
        @lanes.each_value.flat_map { |lane| lane.each_value.map(&:first).tap { lane.clear } }
      end

      private

      def watch
        loop do
          @io.wait_readable
          @set.ready.each do |fileno|
            entry = take(fileno)
            @resume.call(entry.first) if entry
          end
        end
      end

      # Makes the timer wake by `deadline` (within TICK) unless it wakes earlier already. An idle
      # timer (the lot was empty) is woken at the loop's next turn, never switched to: a
      # connection that parks must not lose its turn inside #park, or the socket could become
      # readable and be served by another worker before the parking fiber has returned. So it
      # waits on an Async::Notification, whose signal queues the waiter (an Async::Condition's
      # would switch to it).
      def schedule(deadline)
        return if @wake_at && @wake_at <= deadline
        idle = @wake_at.nil?
        @wake_at = deadline
        @wake.signal if idle
      end

      # One long-lived task (a task per deadline would be a fiber, and a fiber's stack, each).
      def tick
        loop do
          @wake.wait until @wake_at
          sleep((@wake_at - now).clamp(0, TICK))
          expire_due if @wake_at && @wake_at <= now
        end
      end

      # @return [Array(Connection, Float), nil] the entry parked on `fileno`, taken out of its lane.
      def take(fileno)
        @lanes.each_value { |lane| (entry = lane.delete(fileno)) and return entry }
        nil
      end

      # Expires every connection past its deadline, EXPIRE_BATCH per turn of the loop.
      def expire_due
        at = now
        due(at).each_slice(EXPIRE_BATCH).with_index do |batch, index|
          Async::Task.current.yield if index.positive?
          batch.each { |lane, fileno| expire(lane, fileno, at) }
        end
        following = ORDERED.filter_map { |name| @lanes[name].first&.last&.last }
        @lanes.each { |name, lane| following << lane.each_value.map(&:last).min unless ORDERED.include?(name) || lane.empty? }
        @wake_at = following.empty? ? nil : [following.min, at + TICK].max
      end

      # @return [Array<Array(Hash, Integer)>] the lane and descriptor of each connection past its
      #   deadline, at most CUTS_PER_TICK of them from the PACED lanes.
      def due(at)
        cuts = CUTS_PER_TICK
        @lanes.flat_map do |name, lane|
          past = proc { |_, (_, deadline)| deadline <= at }
          entries = ORDERED.include?(name) ? lane.lazy.take_while(&past) : lane.lazy.select(&past)
          entries = entries.first(cuts).tap { |taken| cuts -= taken.size } if PACED.include?(name)
          entries.map { |fileno, _| [lane, fileno] }.to_a
        end
      end

      # Expires the connection parked on `fileno` if it is still there and due: between two
      # batches it may have woken up, and its descriptor gone to a connection parked since.
      def expire(lane, fileno, at)
        entry = lane[fileno]
        return unless entry && entry[1] <= at
        lane.delete(fileno)
        @set.delete(fileno)
        @expire.call(entry.first)
      end
    end
  end
end
