# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class OptionsChecksTest < Minitest::Test
  Checks = Heron::Attack::Options::Checks

  def test_seconds_reads_plain_seconds_ms_s_and_m
    assert_equal [3.0, 0.5, 1.5, 120.0], %w[3 500ms 1.5s 2m].map { |text| Checks.seconds(text) }
    error = assert_raises(Heron::Attack::UsageError) { Checks.seconds("soon") }
    assert_equal "bad duration \"soon\"", error.message
    assert_raises(Heron::Attack::UsageError) { Checks.seconds("-1s") }
  end

  def test_positive_names_the_option
    Checks.positive!(:connections, 1)
    error = assert_raises(Heron::Attack::UsageError) { Checks.positive!(:connections, 0) }
    assert_equal "--connections must be a positive integer", error.message
  end
end
