# frozen_string_literal: true

module Heron
  module Attack
    # A logarithmic y-axis over whole decades, for latencies that span orders of magnitude (a
    # 1 s stall next to 1 ms responses). Values at or below zero sit on the bottom line.
    class LogScale
      # Positive values spanning more than this ratio get a log axis.
      RANGE = 50

      # @param values [Array<Numeric>]
      # @return [Boolean] whether the values span enough to need a log axis.
      def self.suits?(values)
        positive = values.select(&:positive?)
        !positive.empty? && positive.max > positive.min * RANGE
      end

      # @param values [Array<Numeric>] at least one positive.
      def initialize(values)
        positive = values.select(&:positive?)
        @low = Math.log10(positive.min).floor
        @high = [Math.log10(positive.max).ceil, @low + 1].max
      end

      # @param value [Numeric]
      # @return [Float] where the value sits, 0.0 at the bottom to 1.0 at the top.
      def fraction(value)
        return 0.0 unless value.positive?
        ((Math.log10(value) - @low) / (@high - @low)).clamp(0.0, 1.0)
      end

      # @return [Array<Float>] each decade, plus 2× and 5× when there are at most three decades.
      def ticks
        steps = @high - @low <= 3 ? [1, 2, 5] : [1]
        values = (@low...@high).flat_map { |e| steps.map { |m| m * (10.0**e) } }
        values << 10.0**@high
      end

      # @return [Boolean] true: a log axis.
      def log?
        true
      end
    end
  end
end
