# frozen_string_literal: true

require "test_helper"
require "json"
require "heron/attack/histogram"

class HistogramTest < Minitest::Test
  Histogram = Heron::Attack::Histogram

  def test_empty_histogram
    histogram = Histogram.new
    assert_predicate histogram, :empty?
    assert_equal 0, histogram.percentile(99)
    assert_in_delta 0.0, histogram.mean
    assert_nil histogram.min
  end

  def test_small_values_are_exact
    histogram = Histogram.new
    (1..100).each { |v| histogram.record(v) }
    assert_equal 50, histogram.percentile(50)
    assert_equal 99, histogram.percentile(99)
    assert_equal 100, histogram.percentile(100)
    assert_equal 1, histogram.percentile(0)
    assert_in_delta 50.5, histogram.mean
  end

  def test_three_significant_digits_across_the_range
    [2_047, 2_048, 12_345, 999_999, 1_234_567, 59_999_999].each do |value|
      histogram = Histogram.new.record(value).record(value * 2 > 60_000_000 ? value : value + 1)
      assert_in_delta value, histogram.percentile(50), value / 1000.0, "value #{value}"
    end
  end

  def test_percentile_never_exceeds_the_exact_max
    histogram = Histogram.new.record(1_000_001)
    assert_equal 1_000_001, histogram.percentile(100)
    assert_equal 1_000_001, histogram.max
  end

  def test_values_are_clamped_to_the_range
    histogram = Histogram.new(highest: 1_000).record(5_000).record(-3)
    assert_equal 1_000, histogram.max
    assert_equal 0, histogram.min
  end

  def test_record_many_times
    histogram = Histogram.new.record(10, 5)
    assert_equal 5, histogram.count
    assert_equal 50, histogram.sum
  end

  def test_merge_is_exact
    a = Histogram.new
    b = Histogram.new
    1.upto(1000) { |v| (v.odd? ? a : b).record(v * 1000) }
    whole = Histogram.new
    1.upto(1000) { |v| whole.record(v * 1000) }
    a.merge!(b)
    assert_equal whole.to_h, a.to_h
    assert_equal 1000, a.min
  end

  def test_merge_of_empty_histogram_keeps_extremes
    a = Histogram.new.record(7)
    a.merge!(Histogram.new)
    assert_equal [7, 7, 1], [a.min, a.max, a.count]
  end

  def test_serialisation_round_trips
    histogram = Histogram.new
    [3, 4_000, 70_000, 1_500_000, 2_500_000].each { |v| histogram.record(v, 3) }
    copy = Histogram.from_h(JSON.parse(JSON.generate(histogram.to_h)))
    assert_equal histogram.to_h, copy.to_h
    [50, 90, 99.9].each { |p| assert_equal histogram.percentile(p), copy.percentile(p) }
  end

  def test_each_bucket_yields_lowest_values_in_order
    histogram = Histogram.new.record(5_000).record(3)
    buckets = []
    histogram.each_bucket { |value, n| buckets << [value, n] }
    assert_equal [[3, 1], [5_000, 1]], buckets
  end
end
