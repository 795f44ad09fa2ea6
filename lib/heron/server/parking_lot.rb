# frozen_string_literal: true

require_relative "../http_parser" # loads heron_ext, which defines Connection::IdleSet

module Heron
  class Server
    # Where a reactor thread's connections wait without a fiber: idle keep-alive connections
    # between requests, and requests whose body is still arriving before the app is called. A
    # fiber's stack pages stay dirty once touched (Ruby's fiber pool does not give them back on
    # Linux), so a connection waiting in a fiber costs about 18 KiB; parked, it costs its objects.
    #
    # The sockets wait in one {Connection::IdleSet} (epoll, one-shot). One watcher task waits on
    # the set's descriptor through the fiber scheduler and hands each socket that became readable
    # (or hung up) to `resume`, which serves it in a new task; one timer task sleeps until the
    # earliest deadline and hands each connection past its deadline to `expire`. A connection is
    # in the lot until one of those, or {#remove}, takes it out.
    class ParkingLot
      # Sweeps of the unordered (body) deadlines are at least this far apart, so many distinct
      # deadlines cost a few sweeps a second rather than one each.
      SWEEP_INTERVAL = 0.05
      private_constant :SWEEP_INTERVAL

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
        @idle = {} # fileno => [connection, deadline], in parking order, so in deadline order
        @waiting = {} # the same for requests waiting for their body: deadlines in any order
        @watcher = root.async(transient: true, annotation: "heron parking lot") { watch }
      end

      # @return [Integer] connections parked.
      def size = @idle.size + @waiting.size

      # Parks a connection until its socket is readable or `deadline` passes.
      # @param connection [Connection]
      # @param io [BasicSocket] its socket.
      # @param deadline [Float] monotonic time.
      # @param ordered [Boolean] whether deadlines of connections parked this way never come
      #   before those parked earlier (keep-alive: now + keepalive_timeout), so expiry only looks
      #   at the oldest.
      # @return [void]
      def park(connection, io, deadline, ordered:)
        (ordered ? @idle : @waiting)[io.fileno] = [connection, deadline]
        @set.add(io.fileno)
        schedule(deadline)
      end

      # Takes a connection out before its socket is closed (a graceful stop, an eviction).
      # @param io [BasicSocket] the parked connection's socket.
      # @return [Connection, nil] the connection that was parked there.
      def remove(io)
        fileno = io.fileno
        @set.delete(fileno)
        (@idle.delete(fileno) || @waiting.delete(fileno))&.first
      end

      # Stops watching and returns every connection still parked (the reactor is ending).
      # @return [Array<Connection>]
      def close
        [@watcher, @timer].each { |task| task&.stop }
        @io.close
        @set.close
        left = (@idle.values + @waiting.values).map(&:first)
        @idle.clear
        @waiting.clear
        left
      end

      private

      def watch
        loop do
          @io.wait_readable
          @set.ready.each do |fileno|
            entry = @idle.delete(fileno) || @waiting.delete(fileno)
            @resume.call(entry.first) if entry
          end
        end
      end

      # Makes the timer wake at `deadline` unless it wakes earlier already.
      def schedule(deadline)
        return if @wake_at && @wake_at <= deadline
        @timer&.stop
        @wake_at = deadline
        @timer = @root.async(transient: true, annotation: "heron parking timer") do
          sleep(deadline - now) if deadline > now
          @timer = @wake_at = nil
          expire_due
        end
      end

      def expire_due
        at = now
        while (entry = @idle.first) && entry[1][1] <= at
          expire(@idle, entry[0])
        end
        @waiting.select { |_, (_, deadline)| deadline <= at }.each_key { |fileno| expire(@waiting, fileno) }
        following = [@idle.first&.last&.last, @waiting.each_value.map(&:last).min].compact.min
        schedule([following, at + SWEEP_INTERVAL].max) if following
      end

      def expire(parked, fileno)
        @set.delete(fileno)
        @expire.call(parked.delete(fileno).first)
      end

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
