# frozen_string_literal: true

module Heron
  class Metrics
    # A Prometheus-style histogram: fixed upper bounds, a count per bucket, a sum and a count.
    # Buckets are stored non-cumulatively and summed up only when rendered, so two histograms
    # with the same bounds merge by adding their arrays.
    class Histogram
      # @return [Array<Float>] the finite upper bounds, ascending.
      attr_reader :bounds
      # @return [Array<Integer>] observations per bucket; the last one is above every bound.
      attr_reader :counts
      # @return [Float] the sum of all observed values.
      attr_reader :sum

      # @param bounds [Array<Numeric>] the finite upper bounds (the +Inf bucket is implicit).
      # @param counts [Array<Integer>, nil] per-bucket counts to start from (bounds.size + 1).
      # @param sum [Numeric] the sum to start from.
      def initialize(bounds, counts: nil, sum: 0.0)
        @bounds = bounds.map(&:to_f).freeze
        @counts = counts ? counts.dup : Array.new(@bounds.size + 1, 0)
        @sum = sum.to_f
      end

      # Records one value.
      # @param value [Numeric] the observed value (seconds, for Heron's histograms).
      # @return [self]
      def observe(value)
        index = @bounds.index { |bound| value <= bound } || @bounds.size
        @counts[index] += 1
        @sum += value
        self
      end

      # @return [Integer] how many values were observed.
      def count
        @counts.sum
      end

      # @return [Array<Array(String, Integer)>] each `le` label value ("+Inf" last) with the
      #   cumulative count at or below it, as the text format wants.
      def cumulative
        running = 0
        labels = @bounds.map { |bound| Metrics.format_number(bound) } << "+Inf"
        labels.zip(@counts.map { |count| running += count })
      end

      # Adds another histogram's observations into this one.
      # @param other [Histogram, Hash] a histogram, or its {#to_h} form.
      # @return [self]
      # @raise [ArgumentError] when the bounds differ.
      def merge(other)
        other = Histogram.from_h(other) if other.is_a?(Hash)
        raise ArgumentError, "histogram bounds differ" unless other.bounds == @bounds
        other.counts.each_with_index { |count, index| @counts[index] += count }
        @sum += other.sum
        self
      end

      # @return [Hash] a JSON-friendly copy: "bounds", "counts", "sum".
      def to_h
        { "bounds" => @bounds, "counts" => @counts.dup, "sum" => @sum }
      end

      # @param hash [Hash] the {#to_h} form (string or symbol keys).
      # @return [Histogram]
      def self.from_h(hash)
        hash = hash.transform_keys(&:to_s)
        new(hash.fetch("bounds"), counts: hash.fetch("counts"), sum: hash.fetch("sum"))
      end
    end
  end
end
