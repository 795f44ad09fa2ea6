# frozen_string_literal: true

module Heron
  class Cluster
    # The workers to replace one at a time: every worker in turn, on a phased restart (USR1) or
    # once a new mold is ready (reforking). The {Cluster} starts each replacement when the
    # previous one serves; this keeps the order and whether the round was a phased restart.
    class Rollout
      def initialize
        @queue = []
        @phased = false
      end

      # Queues every worker not already retiring, by index.
      # @param workers [Enumerable<Worker>]
      # @param phased [Boolean] whether this is a phased restart (its end is announced).
      # @return [void]
      def start(workers, phased: false)
        @queue = workers.reject(&:retiring).sort_by(&:index)
        @phased ||= phased
      end

      # @return [Boolean] whether no worker waits for its replacement.
      def idle? = @queue.empty?

      # @return [Worker, nil] the next worker to replace, taken off the queue.
      def shift = @queue.shift

      # @return [String] why the workers are replaced, for the log.
      def reason = @phased ? "phased restart" : "refork"

      # Ends the round (the queue is empty).
      # @return [Boolean] whether it was a phased restart (whose end is to be announced).
      def finish
        phased = @phased
        @phased = false
        phased
      end
    end
  end
end
