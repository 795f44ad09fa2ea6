# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/target_picker"

class TargetPickerTest < Minitest::Test
  def targets(*weights)
    weights.each_with_index.map { |w, i| Heron::Attack::Target.new("GET", "http://h/#{(97 + i).chr}", weight: w) }
  end

  def names(picker, count)
    (0...count).map { |i| picker.for(i).uri.path.delete("/") }.join
  end

  def test_round_robin_spreads_each_target_by_weight
    assert_equal "abcabc", names(Heron::Attack::TargetPicker.new(targets(1, 1, 1)), 6)
    assert_equal "aaba" * 2, names(Heron::Attack::TargetPicker.new(targets(3, 1)), 8)
    assert_equal "aaabcaa" * 2, names(Heron::Attack::TargetPicker.new(targets(5, 1, 1)), 14)
    assert_equal "ab" * 3, names(Heron::Attack::TargetPicker.new(targets(4, 4)), 6), "common divisor removed"
  end

  def test_round_robin_is_the_same_in_every_process
    picker = Heron::Attack::TargetPicker.new(targets(2, 1))
    assert_same picker, picker.for_process(3, 42)
  end

  def test_random_follows_the_weights_and_repeats_with_a_seed
    picker = Heron::Attack::TargetPicker.new(targets(3, 1), mode: "random", seed: 7)
    counts = names(picker, 20_000).chars.tally
    assert_in_delta 15_000, counts["a"], 500
    assert_in_delta 5_000, counts["b"], 500
    again = Heron::Attack::TargetPicker.new(targets(3, 1), mode: "random", seed: 7)
    assert_equal names(again, 50), names(Heron::Attack::TargetPicker.new(targets(3, 1), mode: "random", seed: 7), 50)
    refute_equal names(again.for_process(1, 7), 50), names(Heron::Attack::TargetPicker.new(targets(3, 1), mode: "random", seed: 7), 50)
  end

  def test_weights_too_large_for_a_cycle
    error = assert_raises(Heron::Attack::UsageError) { Heron::Attack::TargetPicker.new(targets(999_999, 2)) }
    assert_match(/weights add up to 1000001/, error.message)
  end
end
