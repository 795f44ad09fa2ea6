# frozen_string_literal: true

module Heron
  class Metrics
    # What a cluster master's control listener serves on /metrics: its own registry (worker
    # restarts, its own resource use) plus the latest snapshot of every live worker, read at
    # scrape time. Responds to {#snapshot} (their sum) and {#to_prometheus} (one series per
    # process, labelled `worker="N"` or `worker="master"`) like a {Metrics}.
    class Aggregate
      MASTER = "master"

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

      # @return [String] every process's series in the Prometheus text format.
      def to_prometheus
        TextFormat.new(sources).render
      end

      private

      # @return [Array<Array(Hash, Hash)>] [labels, snapshot] for the master, then each worker
      #   (by index; if a dead worker's file is still there beside its replacement's, the
      #   process that started last wins, so no two series share labels).
      def sources
        workers = @directory.snapshots.group_by { |snapshot| snapshot["worker"].to_s }
                            .map { |index, same| [{ worker: index }, same.max_by { |snapshot| started(snapshot) }] }
        [[{ worker: MASTER }, @local.snapshot]] + workers.sort_by { |labels, _| labels[:worker].to_i }
      end

      def started(snapshot)
        snapshot.dig("process", "start_time_seconds") || 0
      end
    end
  end
end
