# frozen_string_literal: true

require_relative "usage_error"

module Heron
  module Attack
    # Chooses the target of request i. Round robin (the default) walks a fixed cycle in which each
    # target appears `weight` times, spread out evenly (weights 5,1,1 give a a a b c a a,
    # and 3,1 give a a b a, not a a a b); the choice depends only on i,
    # so every generator process agrees on it. Random picks each request independently with
    # probability weight / total, from a seeded generator so that a run can be repeated.
    class TargetPicker
      MODES = %w[round-robin random].freeze
      MAX_CYCLE = 1_000_000

      # @return [Array<Target>] the targets.
      attr_reader :targets

      # @param targets [Array<Target>] each with a positive #weight.
      # @param mode [String] "round-robin" or "random".
      # @param seed [Integer] for "random"; each generator process adds its offset to it.
      # @raise [UsageError] when the weights, reduced by their common divisor, add up to more
      #   than {MAX_CYCLE} (round robin keeps one entry per unit of weight).
      def initialize(targets, mode: "round-robin", seed: 0)
        @targets = targets
        @random = mode == "random" ? Random.new(seed) : nil
        @random ? cumulative! : cycle!
      end

      # @param index [Integer] the request's index in the plan.
      # @return [Target]
      def for(index)
        return @targets[@cycle[index % @cycle.size]] unless @random
        point = @random.rand(@total)
        @targets[@cumulative.bsearch_index { |sum| sum > point }]
      end

      # @param offset [Integer] a generator process's offset.
      # @return [TargetPicker] the same choice for that process (random gets its own stream).
      def for_process(offset, seed)
        @random ? self.class.new(@targets, mode: "random", seed: seed + offset) : self
      end

      private

      # Target i's k-th turn sits at (k + 0.5) / weight_i of the way through the cycle; sorting
      # all turns by that place spreads each target evenly (stride scheduling).
      def cycle!
        weights = reduced_weights
        raise UsageError, "target weights add up to #{weights.sum}, more than #{MAX_CYCLE}" if weights.sum > MAX_CYCLE
        turns = weights.each_with_index.flat_map { |w, i| Array.new(w) { |k| [(k + 0.5) / w, i] } }
        @cycle = turns.sort!.map!(&:last)
      end

      def reduced_weights
        weights = @targets.map(&:weight)
        divisor = weights.reduce(0, :gcd)
        weights.map { |w| w / divisor }
      end

      def cumulative!
        sum = 0
        @cumulative = @targets.map { |t| sum += t.weight }
        @total = sum
      end
    end
  end
end
