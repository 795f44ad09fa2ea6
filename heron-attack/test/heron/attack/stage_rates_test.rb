# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/stage_rates"

# StageRates on recorded send times (stage_rates_cli_test.rb sends for real).
class StageRatesTest < Minitest::Test
  SECONDS = ->(text) { Float(text.delete_suffix("s")) }

  # Sends every request of the plan at due + delay(index), as a generator would record them.
  def rates(stages, &delay)
    schedule = Heron::Attack::Schedule.parse_stages(stages, SECONDS)
    recorder = Heron::Attack::Recorder.new(10.0)
    schedule.total.times do |i|
      due = 10.0 + schedule.due(i)
      recorder.sent!(due, due + delay.call(i, due - 10.0), 0, schedule.stage_index(i))
    end
    Heron::Attack::StageRates.new(recorder, schedule)
  end

  def test_on_time_every_sending_stage_meets_its_target_and_pauses_are_left_out
    result = rates("1s:0,2s:10,1s:0,1s:40") { 0.0 }
    assert_equal [[1, 10.0, 10.0, 20], [3, 40.0, 40.0, 40]], result.rows.map { |r| r.values_at("stage", "target", "achieved", "sent") }
    assert_equal({ "target" => 20.0, "achieved" => 20.0 }, result.overall) # 60 requests over the 3 s that send
  end

  # A generator at half speed: request i goes out at 2 × its due time. The first stage's window
  # runs to its last send (2 s), the second's from its start to 4 s; the run's achieved rate is
  # over the union of the windows, 4 s, not their sum, 5 s.
  def test_a_generator_at_half_speed_is_half_as_fast_in_every_stage_and_overall
    result = rates("1s:100,1s:100") { |_, due| due + 0.01 }
    first, second = result.rows
    assert_in_delta 2.0, first["window_s"], 0.02
    assert_in_delta 50.0, first["percent"], 0.5
    assert_in_delta 3.0, second["window_s"], 0.02
    assert_in_delta 33.3, second["percent"], 0.5
    assert_in_delta 50.0, result.overall["achieved"], 0.5
    assert_equal 1, result.worst["stage"]
  end

  def test_nothing_sent_is_not_measured
    schedule = Heron::Attack::Schedule.parse_stages("1s:10", SECONDS)
    result = Heron::Attack::StageRates.new(Heron::Attack::Recorder.new(0.0), schedule)
    assert_empty result.rows
    assert_nil result.worst
    assert_equal({ "target" => nil, "achieved" => nil }, result.overall)
  end
end
