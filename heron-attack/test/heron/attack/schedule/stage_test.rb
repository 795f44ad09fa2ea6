# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/schedule"

class ScheduleStageTest < Minitest::Test
  Stage = Heron::Attack::Schedule::Stage

  def test_count_is_the_area_under_the_rate
    assert_in_delta 300.0, Stage.new(0.0, 10.0, 20.0, 40.0, 0.0).count, 1e-9
    assert_in_delta 0.0, Stage.new(0.0, 10.0, 0.0, 0.0, 0.0).count, 1e-9
  end

  def test_time_for_inverts_the_count
    step = Stage.new(0.0, 10.0, 20.0, 20.0, 0.0)
    assert_in_delta 0.5, step.time_for(10), 1e-12
    ramp = Stage.new(0.0, 10.0, 20.0, 40.0, 0.0) # n(t) = 20 t + t²
    [0.0, 1.0, 5.5, 10.0].each { |t| assert_in_delta t, ramp.time_for((20 * t) + (t * t)), 1e-9 }
    down = Stage.new(0.0, 10.0, 40.0, 20.0, 0.0) # n(t) = 40 t - t²
    [0.0, 3.0, 10.0].each { |t| assert_in_delta t, down.time_for((40 * t) - (t * t)), 1e-9 }
  end
end
