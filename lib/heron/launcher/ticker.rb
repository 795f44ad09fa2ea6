# frozen_string_literal: true

module Heron
  class Launcher
    # A single process's task in each event loop (see Server#heartbeat): once every reactor
    # thread has started one, the server accepts, and {#initialize}'s block runs (readiness:
    # pidfile, hot-restart handover, READY=1). Then, when systemd set WATCHDOG_USEC, it pings
    # the watchdog from the event loop itself: a loop stuck in a non-yielding call stops the
    # pings, and systemd restarts the service after WatchdogSec. STATUS= rides along.
    class Ticker
      INTERVAL = 1.0

      # @param threads [Integer] reactor threads to wait for.
      # @param notifier [Systemd::Notifier]
      # @yield once every reactor runs.
      def initialize(threads, notifier, &on_ready)
        @threads = threads
        @notifier = notifier
        @on_ready = on_ready
        @started = 0
        @lock = Mutex.new
      end

      # Runs in a task of each reactor until the task is stopped (or returns when there is no
      # watchdog to ping).
      # @param reactor [#connection_count]
      # @return [void]
      def run(reactor)
        started
        return unless @notifier.watchdog_interval
        loop do
          @notifier.watchdog(status: "serving, #{reactor.connection_count} connections")
          sleep(INTERVAL)
        end
      end

      private

      def started
        all = @lock.synchronize { (@started += 1) == @threads }
        @on_ready&.call if all
      end
    end
  end
end
