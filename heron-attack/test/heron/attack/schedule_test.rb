# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/schedule"

class ScheduleTest < Minitest::Test
  Schedule = Heron::Attack::Schedule
  SECONDS = ->(text) { Float(text.delete_suffix("s")) }

  def test_constant_rate_is_i_over_rate
    schedule = Schedule.constant(50.0, 2.0)
    assert_equal 100, schedule.total
    assert_equal [0.0, 0.14, 1.98], [0, 7, 99].map { |i| schedule.due(i) }
    refute_predicate schedule, :varying?
    assert_in_delta 50.0, schedule.mean_rate, 1e-9
  end

  def test_linear_ramp_offers_the_integral_of_the_rate
    schedule = Schedule.new([[10.0, 0.0, 100.0]]) # 0 → 100/s over 10 s: 500 requests, n(t) = 5 t²
    assert_equal 500, schedule.total
    assert_predicate schedule, :varying?
    assert_in_delta Math.sqrt(1 / 5.0), schedule.due(1), 1e-9
    assert_in_delta Math.sqrt(499 / 5.0), schedule.due(499), 1e-9
    assert_in_delta 45.0, schedule.offered(4, 5), 1e-9
    assert_in_delta 50.0, schedule.rate_at(5), 1e-9
    dues = (0...500).map { |i| schedule.due(i) }
    assert_equal dues.sort, dues
  end

  def test_a_falling_ramp
    schedule = Schedule.new([[2.0, 100.0, 0.0]])
    assert_equal 100, schedule.total
    assert_in_delta 75.0, schedule.offered(0, 1), 1e-9
    assert_operator schedule.due(99), :<, 2.0
  end

  def test_stages_step_and_pause
    schedule = Schedule.parse_stages("2s:10, 1s:0, 2s:100..0", SECONDS)
    assert_equal 120, schedule.total
    assert_in_delta 1.9, schedule.due(19), 1e-9
    assert_in_delta 3.0, schedule.due(20), 1e-9, "nothing is due during the 0/s stage"
    assert_equal [[0.0, 2.0, 10.0, 10.0], [2.0, 1.0, 0.0, 0.0], [3.0, 2.0, 100.0, 0.0]],
                 schedule.to_a.map { |s| s.values_at("start_s", "duration_s", "from", "to") }
    assert_in_delta 0.0, schedule.offered(2, 3), 1e-9
    assert_equal 5.0, schedule.duration
    assert_equal schedule.due(5), Schedule.parse_stages("2s:10, 1s:0, 2s:100..0", SECONDS).tap { |s| s.due(100) }.due(5),
                 "going back to an earlier index finds its stage again"
  end

  def test_planned_requests_and_stage_of_each_index
    schedule = Schedule.parse_stages("1s:0, 2s:10, 1s:0, 0.5s:3, 1s:2..4", SECONDS)
    assert_equal [0, 20, 0, 2, 2], (0..4).map { |i| schedule.planned(i) } # 24.5 offered: 24 requests
    assert_equal schedule.total, (0..4).sum { |i| schedule.planned(i) }
    stages = (0...schedule.total).map { |i| schedule.stage_index(i) }
    assert_equal [1, 3, 4].zip([20, 2, 2]).to_h, stages.tally, "each index in the stage that plans it"
  end

  def test_parse_errors
    ["10", "10s", "10s:", "10s:-1", "10s:1..2..3", "10s:fast", "0s:10"].each do |bad|
      assert_raises(Heron::Attack::UsageError, bad) { Schedule.parse_stages(bad, SECONDS) }
    end
    assert_raises(Heron::Attack::UsageError) { Schedule.parse_stages((["1s:1"] * 101).join(","), SECONDS) }
    assert_raises(Heron::Attack::UsageError) { Schedule.parse_rate("0") }
    assert_raises(Heron::Attack::UsageError) { Schedule.parse_rate("1e9") }
    assert_equal [100.0, 5000.0], Schedule.parse_rate("100..5000")
  end
end
