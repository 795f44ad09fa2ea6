# frozen_string_literal: true

module Heron
  module Attack
    # A y-axis from zero to a round maximum (1, 2, 2.5 or 5 times a power of ten).
    class LinearScale
      # @return [Float] the top of the axis.
      attr_reader :max

      # @param values [Array<Numeric>] the values to show.
      def initialize(values)
        @max = round_up(values.max || 1.0)
      end

      # @param value [Numeric]
      # @return [Float] where the value sits, 0.0 at the bottom to 1.0 at the top.
      def fraction(value)
        value.fdiv(@max)
      end

      # @return [Array<Float>] six evenly spaced tick values from 0 to the maximum.
      def ticks
        (0..5).map { |i| @max * i / 5 }
      end

      # @return [Boolean] false: a linear axis.
      def log?
        false
      end

      private

      def round_up(value)
        return 1.0 unless value.positive?
        step = 10**Math.log10(value).floor
        [1, 2, 2.5, 5, 10].map { |m| m * step }.find { |v| v >= value }.to_f
      end
    end
  end
end
