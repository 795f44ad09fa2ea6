# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/outcomes"

class OutcomesTest < Minitest::Test
  Outcomes = Heron::Attack::Outcomes

  def test_statuses_errors_and_samples
    outcomes = Outcomes.new
    2.times { outcomes.response(200) }
    outcomes.response(503)
    assert_equal "refused", outcomes.error(Errno::ECONNREFUSED.new)
    assert_equal({ 200 => 2, 503 => 1 }, outcomes.statuses)
    assert_equal [3, 1], [outcomes.responses, outcomes.error_count]
    assert_equal({ "refused: Errno::ECONNREFUSED: Connection refused" => 1 }, outcomes.error_samples)
  end

  def test_samples_are_limited_but_a_known_one_still_counts
    outcomes = Outcomes.new
    (Outcomes::SAMPLE_LIMIT + 3).times { |i| outcomes.error(RuntimeError.new("boom #{i}")) }
    outcomes.error(RuntimeError.new("boom 0"))
    assert_equal Outcomes::SAMPLE_LIMIT, outcomes.error_samples.size
    assert_equal 2, outcomes.error_samples["other: RuntimeError: boom 0"]
    assert_equal Outcomes::SAMPLE_LIMIT + 4, outcomes.error_count
  end

  def test_merge_adds_counts_and_keeps_every_sample
    a = Outcomes.new
    b = Outcomes.new
    a.response(200)
    b.response(200)
    a.error(RuntimeError.new("one"))
    b.error(RuntimeError.new("two"))
    a.merge!(b)
    assert_equal({ 200 => 2 }, a.statuses)
    assert_equal 2, a.errors["other"]
    assert_equal 2, a.error_samples.size
  end
end
