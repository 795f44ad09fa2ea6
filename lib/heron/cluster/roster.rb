# frozen_string_literal: true

require_relative "memory"
require_relative "../clock"

module Heron
  class Cluster
    # The master's live workers by pid, how many it keeps (`workers`, changed by TTIN/TTOU),
    # how many it started again, and what it reads of them as a whole: the status line, the
    # control listener's counts, whether a replacement is under way, which one is above
    # `worker_max_memory`.
    class Roster
      include Enumerable
      include Clock

      MEMORY_CHECK_INTERVAL = 5.0
      private_constant :MEMORY_CHECK_INTERVAL

      # @return [Integer] how many workers the master keeps.
      attr_reader :wanted
      # @return [Integer] workers started after the first round (crashes, timeouts, replacements).
      attr_reader :restarts

      # @param wanted [Integer]
      # @param metrics [#worker_restarted, nil] told of each crash restart.
      def initialize(wanted, metrics)
        @wanted = wanted
        @metrics = metrics
        @workers = {}
        @restarts = 0
      end

      # @yieldparam worker [Worker] each live worker.
      def each(&) = @workers.each_value(&)

      # @param worker [Worker] forked (it has its pid). @return [Worker]
      def add(worker) = (@workers[worker.pid] = worker)

      # @param pid [Integer] @return [Worker, nil] the worker taken out, if it was one.
      def delete(pid) = @workers.delete(pid)

      # @param pid [Integer] @return [Worker, nil]
      def [](pid) = @workers[pid]

      # @param worker [Worker] @return [Boolean] whether it is still live here.
      def live?(worker) = @workers.key?(worker.pid)

      # @return [Integer] live workers.
      def size = @workers.size

      # @return [Boolean] whether none is live.
      def empty? = @workers.empty?

      # Tells `metrics` of each crash restart from now on, unless metrics were given before.
      # @param metrics [#worker_restarted, nil]
      # @return [void]
      def report_to(metrics)
        @metrics ||= metrics
      end

      # Counts a worker started again; a crash is also told to the metrics.
      # @param crashed [Boolean]
      # @return [void]
      def restarted(crashed:)
        @metrics&.worker_restarted if crashed
        @restarts += 1
      end

      # @param delta [Integer] +1 or -1.
      # @return [Integer, nil] the new count, or nil when it would leave no worker.
      def resize(delta)
        count = @wanted + delta
        @wanted = count if count >= 1
      end

      # @return [Boolean] whether as many workers serve as the master keeps.
      def all_serving? = count(&:serving?) >= @wanted

      # @return [Boolean] whether a worker waits for its replacement or drains.
      def replacing? = any? { |worker| worker.replaces || worker.retiring }

      # @return [Worker, nil] the serving worker that answered most (the one to promote to mold).
      def busiest = select(&:serving?).reject(&:retiring).max_by(&:served)

      # @return [String] e.g. "2/2 workers serving, 17 connections".
      def status = "#{count(&:serving?)}/#{@wanted} workers serving, #{sum(&:connections)} connections"

      # @return [Hash] the control listener's counts of the workers.
      def stats
        { workers: size, worker_pids: @workers.keys, restarts: @restarts, parked_connections: sum(&:parked),
          requests_by_worker: @workers.transform_values(&:served) }
      end

      # At most every few seconds: the first serving worker whose resident memory is above `limit`.
      # @param limit [Integer] bytes.
      # @return [Array(Worker, Integer), nil] the worker and its bytes.
      def over_memory(limit)
        return nil if @memory_checked_at && now - @memory_checked_at < MEMORY_CHECK_INTERVAL
        @memory_checked_at = now
        lazy.select(&:serving?).map { |worker| [worker, Memory.rss(worker.pid) || 0] }.find { |_, bytes| bytes > limit }
      end
    end
  end
end
