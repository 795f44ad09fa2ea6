# frozen_string_literal: true

require_relative "../clock"
require_relative "../systemd/notifier"

module Heron
  class Cluster
    # What the master tells the world about itself: ready, once, when every first worker serves
    # (pidfile, systemd, a hot restart's old master); each worker's exit (the pidfile); systemd's
    # status line, watchdog, reloading and stopping. Once a new master took over (a hot restart
    # handed over), the new one speaks for the service and this one says nothing more.
    class Announcer
      include Clock

      STATUS_INTERVAL = 5.0
      private_constant :STATUS_INTERVAL

      # @return [Integer, nil] the master's pid, from {#booted}.
      attr_reader :pid
      # @return [Time, nil] when the master booted.
      attr_reader :booted_at
      # @return [Systemd::Notifier]
      attr_reader :notifier

      # @param readiness [#ready!, #worker_exited, #ios, nil]
      # @param notifier [Systemd::Notifier]
      def initialize(readiness, notifier)
        @readiness = readiness
        @notifier = notifier
        @ready = false
        @handed_over = false
      end

      # Notes the master's pid and boot time.
      # @return [void]
      def booted
        @pid = Process.pid
        @booted_at = Time.now
      end

      # Every first worker serves: tells readiness, the first time only.
      # @param status [String]
      # @return [void]
      def ready(status)
        return if @ready
        @ready = true
        @readiness&.ready!(status)
      end

      # @return [Boolean] whether {#ready} was told.
      def ready? = @ready

      # A worker exited.
      # @return [void]
      def worker_exited
        @readiness&.worker_exited unless @handed_over
      end

      # The master stops.
      # @return [void]
      def stopping
        @notifier.stopping unless @handed_over
      end

      # A new master took over: this one stays quiet from now on.
      # @return [void]
      def handed_over
        @handed_over = true
      end

      # A phased restart began. @return [void]
      def reloading = @notifier.reloading

      # A phased restart ended. @param status [String] @return [void]
      def reloaded(status) = @notifier.ready(status: status)

      # Each tick of the master's loop: pets the watchdog, and sends the status line when the
      # watchdog did or at least every few seconds.
      # @param status [String]
      # @return [void]
      def tick(status)
        return unless @notifier.watchdog(status: status) || !@status_at || now - @status_at > STATUS_INTERVAL
        @status_at = now
        @notifier.status(status)
      end

      # @return [Array<IO>] readiness's descriptors, which a forked worker closes.
      def ios = @readiness&.ios || []
    end
  end
end
