# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class LinearScaleTest < Minitest::Test
  Scale = Heron::Attack::LinearScale

  def test_rounds_the_maximum_up
    assert_in_delta 5.0, Scale.new([0.1, 3.3]).max
    assert_in_delta 250.0, Scale.new([201]).max
    assert_in_delta 1000.0, Scale.new([1000]).max
    assert_in_delta 1.0, Scale.new([]).max
    assert_in_delta 1.0, Scale.new([0, 0]).max
  end

  def test_fraction_and_ticks
    scale = Scale.new([10])
    assert_in_delta 0.5, scale.fraction(5)
    assert_equal [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], scale.ticks
    refute_predicate scale, :log?
  end
end
