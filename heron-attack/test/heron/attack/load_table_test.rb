# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/load_table"

class LoadTableTest < Minitest::Test
  def test_rows_merge_seconds_into_at_most_twenty_windows
    schedule = Heron::Attack::Schedule.new([[40.0, 10.0, 50.0]])
    recorder = Heron::Attack::Recorder.new(0.0)
    40.times do |second|
      recorder.response!(second + 0.1, second + 0.1, second + 0.1 + ((second + 1) / 1000.0), 200, 0)
      recorder.response!(second + 0.2, second + 0.2, second + 0.21, second >= 30 ? 500 : 200, 0)
    end
    recorder.error!(35.5, 35.6, Errno::ECONNRESET.new)
    rows = Heron::Attack::LoadTable.new(recorder, schedule).rows
    assert_equal 20, rows.size
    assert_equal [0, 2], rows.first.values_at("from_s", "to_s")
    assert_in_delta 11.0, rows.first["offered_rate"], 1e-9 # the mean of 10→12/s over 0..2 s
    assert_equal 2.0, rows.first["throughput"]
    assert_equal 1.0, rows.last["throughput"], "the 500s are not throughput"
    assert_equal 50.0, rows.last["errors_pct"]
    assert_in_delta 100.0 * 3 / 5, rows[17]["errors_pct"], 1e-9 # seconds 34, 35: two 500s and a reset of five
    assert_equal 10.0, rows.first["p99_ms"]
  end
end
