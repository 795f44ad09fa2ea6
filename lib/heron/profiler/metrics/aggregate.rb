# frozen_string_literal: true

module Heron
  module Profiler
    class Metrics
      # What a cluster master's control listener serves on /metrics: its own registry (worker
      # restarts, the counts of workers that died) plus the latest snapshot of every live worker,
      # summed at scrape time. Responds to {#snapshot} and {#to_prometheus} like a {Metrics}.
      class Aggregate
        # @param local [Metrics] the master's registry.
        # @param directory [SnapshotDirectory] where the workers write their snapshots.
        def initialize(local, directory)
          @local = local
          @directory = directory
        end

        # @return [Hash] the sum of the master's snapshot and every worker's.
        def snapshot
          total = Metrics.new(live_gc: false)
          total.merge(@local.snapshot)
          @directory.snapshots.each { |snapshot| total.merge(snapshot) }
          total.snapshot.merge("processes" => total.value("processes"))
        end

        # @return [String] {#snapshot} in the Prometheus text format.
        def to_prometheus
          TextFormat.new(snapshot).render
        end
      end
    end
  end
end
