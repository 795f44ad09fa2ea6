# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class LogScaleTest < Minitest::Test
  Scale = Heron::Attack::LogScale

  def test_suits_only_wide_positive_ranges
    assert Scale.suits?([0, 1, 1000])
    refute Scale.suits?([1, 40])
    refute Scale.suits?([0, 0])
    refute Scale.suits?([])
  end

  def test_fraction_over_whole_decades
    scale = Scale.new([2, 90])
    assert_in_delta 0.0, scale.fraction(1)
    assert_in_delta 0.5, scale.fraction(10)
    assert_in_delta 1.0, scale.fraction(100)
    assert_in_delta 0.0, scale.fraction(0)
    assert_predicate scale, :log?
  end

  def test_ticks
    assert_equal [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0], Scale.new([1.5, 99]).ticks
    assert_equal [0.1, 1.0, 10.0, 100.0, 1000.0], Scale.new([0.5, 999]).ticks
    assert_equal [10.0, 20.0, 50.0, 100.0], Scale.new([10, 10]).ticks
  end
end
