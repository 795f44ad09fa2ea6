# frozen_string_literal: true

require "test_helper"
require "minitest/mock"
require "heron/log/clock"

class HeronLogClockTest < Minitest::Test
  def test_stamp_is_formatted_and_reused_within_a_second
    clock = Heron::Log::Clock.new("%Y-%m-%d %H:%M:%S")
    Process.stub(:clock_gettime, 1_700_000_000) do
      first = clock.stamp
      assert_equal Time.at(1_700_000_000).strftime("%Y-%m-%d %H:%M:%S"), first
      assert first.frozen?
      assert_same first, clock.stamp
    end
  end

  def test_stamp_changes_with_the_second
    clock = Heron::Log::Clock.new("%s")
    Process.stub(:clock_gettime, 100) { assert_equal "100", clock.stamp }
    Process.stub(:clock_gettime, 101) { assert_equal "101", clock.stamp }
  end

  def test_stamp_ms_in_utc
    clock = Heron::Log::Clock.new("%Y-%m-%dT%H:%M:%S", utc: true)
    Process.stub(:clock_gettime, 1_700_000_000_007) { assert_equal "2023-11-14T22:13:20.007", clock.stamp_ms }
    Process.stub(:clock_gettime, 1_700_000_000_999) { assert_equal "2023-11-14T22:13:20.999", clock.stamp_ms }
  end
end
