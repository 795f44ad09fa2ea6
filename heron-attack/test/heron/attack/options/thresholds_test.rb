# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsThresholdsTest < Minitest::Test
  include OptionGroups
  Thresholds = Heron::Attack::Options::Thresholds

  def thresholds(*argv)
    parse_group(argv, Thresholds.new)
  end

  def test_defaults_are_no_conditions
    assert_equal [[], []], [Thresholds.new.fail_if, Thresholds.new.knee]
    given = thresholds("--fail-if", "p99>250ms", "--knee", "errors>1%")
    assert_equal [["p99>250ms"], ["errors>1%"]], [given.fail_if.map(&:expression), given.knee.map(&:expression)]
  end

  def test_the_knee_takes_only_per_second_metrics
    error = assert_raises(Heron::Attack::UsageError) { thresholds("--knee", "rate<5%") }
    assert_equal "--knee takes p50, p99, max or errors, not rate", error.message
  end

  def test_each_option_takes_at_most_32_conditions
    assert_equal 32, thresholds(*(["--fail-if", "p99>1ms"] * 32), *(["--knee", "p99>1ms"] * 32)).fail_if.size
    error = assert_raises(Heron::Attack::UsageError) { thresholds(*(["--fail-if", "p99>1ms"] * 33)) }
    assert_equal "at most 32 --fail-if conditions", error.message
    error = assert_raises(Heron::Attack::UsageError) { thresholds(*(["--knee", "p99>1ms"] * 33)) }
    assert_equal "at most 32 --knee conditions", error.message
  end
end
