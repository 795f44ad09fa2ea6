# frozen_string_literal: true

require "socket"
require_relative "../version"
require_relative "backlog"
require_relative "../clock"

module Heron
  module Control
    # What the control listener reports about this Heron: whether it is ready, and the stats
    # document. The process that owns the listener (single server or cluster master) supplies
    # two callables: whether a drain has started, and its counters.
    class State
      include Clock

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
      # @param max_connections [Integer, nil] connections each process accepts at most.
      def initialize(mode:, draining:, counters:, listeners: -> { [] }, booted: nil, tag: nil, max_connections: nil)
        @max_connections = max_connections
        @booted = booted
        @tag = tag
        @mode = mode
        @draining = draining
        @counters = counters
        @listeners = listeners
        @booted_at = Time.now
        @started = now
        @ready = false
      end

      # Replaces the callables given to {#initialize} (a single process's server exists only once
      # its app is loaded).
      # @param draining [#call]
      # @param counters [#call]
      # @param listeners [#call]
      # @param booted [#call]
      # @return [void]
      def attach(draining:, counters:, listeners:, booted:)
        @draining = draining
        @counters = counters
        @listeners = listeners
        @booted = booted
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
          "boot_time" => @booted_at.utc.iso8601(3), "uptime_seconds" => (now - @started).round(3),
          "backlog" => Backlog.total(@listeners.call) }.merge(@counters.call.transform_keys(&:to_s))
      end

      # Capacity gauges for /metrics, in the Prometheus text format: the accept queue of the
      # app's listeners (when the platform tells) and the connection limit per process.
      # @return [String]
      def capacity_metrics
        backlog = Backlog.total(@listeners.call)
        text = +""
        text << gauge("heron_listen_backlog", "Connections waiting in the kernel's accept queue of the app's listeners.", backlog) if backlog
        text << gauge("heron_connections_max", "Connections each process accepts at most (max_connections).", @max_connections) if @max_connections
        text
      end

      private

      def gauge(name, help, value) = "# HELP #{name} #{help}\n# TYPE #{name} gauge\n#{name} #{value}\n"
    end
  end
end
