# frozen_string_literal: true

module Heron
  module Systemd
    # In single mode, systemd's watchdog is pinged from the event loop itself (a task of the
    # reactor, see Server#heartbeat): a loop stuck in a non-yielding call stops the pings and
    # systemd restarts the service after WatchdogSec. STATUS= rides along.
    class Watchdog
      INTERVAL = 1.0

      # @param notifier [Notifier]
      def initialize(notifier)
        @notifier = notifier
      end

      # Pings until the calling task is stopped.
      # @param reactor [#connection_count]
      # @return [void]
      def run(reactor)
        loop do
          @notifier.watchdog(status: "serving, #{reactor.connection_count} connections")
          sleep(INTERVAL)
        end
      end
    end
  end
end
