# frozen_string_literal: true

require "socket"
require_relative "../version"
require_relative "backlog"

module Heron
  module Control
    # What the control listener reports about this Heron: whether it is ready, and the stats
    # document. The process that owns the listener (single server or cluster master) supplies
    # two callables: whether a drain has started, and its counters.
    class State
      # @return [Time] when the process started booting.
      attr_reader :booted_at
      # @return [String, nil] the process titles' tag, so an operator can tell Herons apart.
      attr_reader :tag

      # @param mode [String] "single" or "cluster".
      # @param draining [#call] true once a stop was asked for.
      # @param counters [#call] a Hash of counts (workers, connections, in_flight, …) to report.
      # @param listeners [#call] the app's listening sockets, for the backlog.
      # @param booted [#call, nil] asked until it says true, when nobody calls {#ready!}.
      # @param tag [String, nil] see {#tag}.
      def initialize(mode:, draining:, counters:, listeners: -> { [] }, booted: nil, tag: nil)
        @booted = booted
        @tag = tag
        @mode = mode
        @draining = draining
        @counters = counters
        @listeners = listeners
        @booted_at = Time.now
        @started = monotonic
        @ready = false
      end

      # Replaces the callables given to {#initialize} (a single process's server exists only once
      # its app is loaded).
      # @param draining [#call]
      # @param counters [#call]
      # @param listeners [#call]
      # @return [void]
      def attach(draining:, counters:, listeners:)
        @draining = draining
        @counters = counters
        @listeners = listeners
      end

      # Marks the process as serving (until a drain starts).
      # @return [void]
      def ready!
        @ready = true
      end

      # @return [String] "booting", "ready" or "draining".
      def status
        return "draining" if @draining.call
        @ready ||= @booted&.call || false
        @ready ? "ready" : "booting"
      end

      # @return [Hash] the stats document.
      def stats
        { "version" => VERSION, "pid" => Process.pid, "tag" => @tag, "mode" => @mode, "status" => status,
          "boot_time" => @booted_at.utc.iso8601(3), "uptime_seconds" => (monotonic - @started).round(3),
          "backlog" => Backlog.total(@listeners.call) }.merge(@counters.call.transform_keys(&:to_s))
      end

      private

      def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
