# frozen_string_literal: true

module Heron
  class Cluster
    # The workers to replace one at a time: every worker in turn, on a phased restart (USR1) or
    # once a new mold is ready (reforking). The {Cluster} starts each replacement when the
    # previous one serves; this keeps the order and which kind of round is under way.
    class Rollout
      def initialize
        @queue = []
        @round = nil
      end

      # Queues every worker not already retiring, by index.
      # @param workers [Enumerable<Worker>]
      # @param phased [Boolean] whether this is a phased restart (its end is announced); a
      #   refork started during one stays part of it.
      # @return [void]
      def start(workers, phased: false)
        @queue = workers.reject(&:retiring).sort_by(&:index)
        @round = phased ? :phased : (@round || :refork)
      end

      # @return [Boolean] whether no worker waits for its replacement.
      def idle? = @queue.empty?

      # @return [Worker, nil] the next worker to replace, taken off the queue.
      def shift = @queue.shift

      # @return [Boolean] whether a refork's round is under way (its first worker, the mold's
      #   own place, replaces no one; a one-worker cluster has no other).
      def reforking? = @round == :refork

      # @return [String] why the workers are replaced, for the log.
      def reason = @round == :refork ? "refork" : "phased restart"

      # Ends the round (the queue is empty).
      # @return [Symbol, nil] the round that ended, :phased or :refork; nil when none was under way.
      def finish
        round = @round
        @round = nil
        round
      end
    end
  end
end
