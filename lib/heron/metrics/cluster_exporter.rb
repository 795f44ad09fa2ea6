# frozen_string_literal: true

require "tmpdir"
require_relative "../metrics"

module Heron
  class Metrics
    # Cluster mode in five calls: the master's control listener serves its own series and every
    # live worker's, labelled by worker ({#aggregate}); workers publish snapshots through a
    # {SnapshotDirectory}.
    #
    #   exporter = ClusterExporter.new(config).start      # master, before forking
    #   metrics = exporter.worker_started(index)          # worker, right after fork
    #   exporter.worker_stopped(metrics)                  # worker, after its server stopped
    #   exporter.worker_exited(pid)                       # master, after reaping a worker
    #   exporter.stop                                     # master, on shutdown
    class ClusterExporter
      # @return [Metrics] the master's own registry (pass it to the cluster for worker restarts).
      attr_reader :local
      # @return [Aggregate, nil] what the master serves on /metrics (after {#start}).
      attr_reader :aggregate
      # @return [SnapshotDirectory] where the workers' snapshots go.
      attr_reader :directory

      # @param config [Heron::Configuration]
      # @param local [Metrics] the master's registry.
      # @param directory [SnapshotDirectory, nil] nil makes one in a new private temporary directory.
      # @param interval [Float] seconds between a worker's snapshots.
      def initialize(config, local: Metrics.current, directory: nil, interval: 1.0)
        @config = config
        @local = local
        @directory = directory || SnapshotDirectory.new(Dir.mktmpdir("heron-metrics-"))
        @interval = interval
      end

      # Master: makes the {Aggregate} the control listener serves.
      # @return [self]
      def start
        @aggregate = Aggregate.new(@local, @directory)
        self
      end

      # Worker: starts fresh counters and a thread that publishes them every interval.
      # @param index [Integer, nil] the worker's index, which labels its series.
      # @return [Metrics] the worker's registry, for its server.
      def worker_started(index = nil)
        metrics = Metrics.reset(worker: index)
        @publisher = Thread.new { @directory.publish(metrics, interval: @interval) }
        metrics
      end

      # Worker: stops publishing and writes the final counts.
      # @param metrics [Metrics] what {#worker_started} returned.
      # @return [void]
      def worker_stopped(metrics)
        @publisher&.kill&.join
        @directory.write(metrics.snapshot)
      end

      # Master: drops a dead worker's series (see {SnapshotDirectory#discard}).
      # @param pid [Integer] the worker's pid.
      # @return [Boolean] whether it had published anything.
      def worker_exited(pid)
        @directory.discard(pid)
      end

      # Master: removes the snapshot directory.
      # @return [void]
      def stop
        @directory.remove
      end
    end
  end
end
