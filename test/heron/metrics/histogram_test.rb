# frozen_string_literal: true

require "test_helper"
require "heron/metrics"

class MetricsHistogramTest < Minitest::Test
  Histogram = Heron::Metrics::Histogram

  def test_observations_land_in_the_first_bucket_that_holds_them
    histogram = Histogram.new([0.1, 1])
    [0.05, 0.1, 0.5, 3].each { |value| histogram.observe(value) }
    assert_equal [2, 1, 1], histogram.counts
    assert_equal 4, histogram.count
    assert_in_delta 3.65, histogram.sum
  end

  def test_cumulative_counts_end_with_inf
    histogram = Histogram.new([0.1, 1]).observe(0.05).observe(2)
    assert_equal [["0.1", 1], ["1", 1], ["+Inf", 2]], histogram.cumulative
  end

  def test_merge_adds_counts_and_sums_from_a_histogram_or_its_hash
    left = Histogram.new([1]).observe(0.5)
    right = Histogram.new([1]).observe(5)
    left.merge(right).merge(right.to_h.transform_keys(&:to_sym))
    assert_equal [1, 2], left.counts
    assert_in_delta 10.5, left.sum
  end

  def test_merge_refuses_different_bounds
    assert_raises(ArgumentError) { Histogram.new([1]).merge(Histogram.new([2])) }
  end

  def test_to_h_round_trips_without_sharing_counts
    original = Histogram.new([1]).observe(0.5)
    copy = Histogram.from_h(original.to_h)
    copy.observe(0.1)
    assert_equal [1, 0], original.counts
    assert_equal [2, 0], copy.counts
  end
end
