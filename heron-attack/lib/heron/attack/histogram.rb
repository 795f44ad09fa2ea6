# frozen_string_literal: true

module Heron
  module Attack
    # A high-dynamic-range histogram of integer values (microseconds here), in the spirit of
    # HdrHistogram: values below 2048 are counted exactly, larger ones in log-linear buckets of
    # 1024 steps per power of two, so every value is kept to within 1/1024 (three significant
    # digits). Counts are sparse, so an empty or narrow histogram is small; histograms merge
    # exactly and serialise to a plain Hash.
    class Histogram
      SUB_BUCKET_BITS = 11
      HALF = 1 << (SUB_BUCKET_BITS - 1)
      DEFAULT_HIGHEST = 60_000_000

      # @return [Integer] how many values were recorded.
      attr_reader :count
      # @return [Integer] the highest value recordable; larger values are clamped to it.
      attr_reader :highest
      # @return [Integer] the sum of the recorded (clamped) values.
      attr_reader :sum

      # @param highest [Integer] the largest value kept; 60 s in microseconds by default.
      def initialize(highest: DEFAULT_HIGHEST)
        @highest = highest
        @counts = Hash.new(0)
        @count = 0
        @sum = 0
        @min = nil
        @max = 0
      end

      # Records one value.
      # @param value [Numeric] a non-negative value; rounded, then clamped to 0..highest.
      # @param times [Integer] how many times to count it.
      # @return [self]
      def record(value, times = 1)
        value = value.round.clamp(0, @highest)
        @counts[index_of(value)] += times
        @count += times
        @sum += value * times
        note_extremes(value)
        self
      end

      # @return [Integer, nil] the smallest recorded value (exact), nil when empty.
      attr_reader :min

      # @return [Integer] the largest recorded value (exact), 0 when empty.
      attr_reader :max

      # @return [Boolean] whether nothing was recorded.
      def empty?
        @count.zero?
      end

      # @return [Float] the mean of the recorded values, 0.0 when empty.
      def mean
        empty? ? 0.0 : @sum.fdiv(@count)
      end

      # The value at a percentile: the highest value equivalent to the bucket holding the
      # ceil(percentile% of count)-th smallest value, capped at the exact maximum.
      # @param percentile [Numeric] 0..100.
      # @return [Integer] 0 when empty.
      def percentile(percentile)
        return 0 if empty?
        rank = [(percentile.fdiv(100) * @count).ceil, 1].max
        seen = 0
        sorted_counts.each do |index, n|
          seen += n
          return [highest_equivalent(index), @max].min if seen >= rank
        end
        @max
      end

      # Adds another histogram's counts to this one.
      # @param other [Histogram]
      # @return [self]
      def merge!(other)
        other.each_bucket { |value, n| @counts[index_of(value)] += n }
        @count += other.count
        @sum += other.sum
        note_extremes(other.min) if other.min
        note_extremes(other.max) unless other.empty?
        self
      end

      # Yields each non-empty bucket as its lowest value and its count, lowest first.
      # @yieldparam value [Integer]
      # @yieldparam n [Integer]
      # @return [void]
      def each_bucket
        sorted_counts.each { |index, n| yield lowest_of(index), n }
      end

      # @return [Hash] a JSON-friendly form that {.from_h} reads back.
      def to_h
        buckets = []
        each_bucket { |value, n| buckets << [value, n] }
        { "unit" => "us", "significant_digits" => 3, "highest" => @highest, "count" => @count,
          "min" => @min, "max" => @max, "sum" => @sum, "buckets" => buckets }
      end

      # @param hash [Hash] the output of {#to_h} (string keys, e.g. parsed from JSON).
      # @return [Histogram]
      def self.from_h(hash)
        histogram = new(highest: hash.fetch("highest"))
        hash.fetch("buckets").each { |value, n| histogram.restore(value, n) }
        histogram.restore_totals(hash)
      end

      # @api private
      # Counts n values in the bucket of value without touching totals (used by {.from_h}).
      # @return [void]
      def restore(value, n)
        @counts[index_of(value)] += n
      end

      # @api private
      # Sets the exact totals from a serialised form.
      # @return [self]
      def restore_totals(hash)
        @count = hash.fetch("count")
        @sum = hash.fetch("sum")
        @min = hash["min"]
        @max = hash.fetch("max")
        self
      end

      private

      def note_extremes(value)
        @min = value if @min.nil? || value < @min
        @max = value if value > @max
      end

      def sorted_counts
        @counts.sort_by(&:first)
      end

      def index_of(value)
        shift = [value.bit_length - SUB_BUCKET_BITS, 0].max
        (shift * HALF) + (value >> shift)
      end

      def shift_of(index)
        index < 2 * HALF ? 0 : (index / HALF) - 1
      end

      def lowest_of(index)
        shift = shift_of(index)
        (index - (shift * HALF)) << shift
      end

      def highest_equivalent(index)
        lowest_of(index) + (1 << shift_of(index)) - 1
      end
    end
  end
end
