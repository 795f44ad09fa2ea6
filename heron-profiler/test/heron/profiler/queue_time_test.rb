# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# Which stamp wins (a proxy's header over the server's own) is tested with RequestProfile.start.
class QueueTimeTest < Minitest::Test
  NOW = 1_700_000_000.5

  def from_header(header)
    Heron::Profiler::QueueTime.from_header(header, NOW)
  end

  def test_header_in_seconds_milliseconds_and_microseconds
    assert_in_delta 500.0, from_header("t=1700000000.0")
    assert_in_delta 400.0, from_header("t=1700000000100")
    assert_in_delta 300.0, from_header("t=1700000000200000")
    assert_in_delta 100.0, from_header("1700000000.4"), 0.01
  end

  def test_future_stamp_clamps_to_zero_and_garbage_is_unknown
    assert_equal 0.0, from_header("t=1800000000")
    assert_nil from_header("t=soon")
    assert_in_delta 600_000.0, from_header("t=#{NOW - 600}"), 0.01
    assert_nil from_header("t=#{NOW - 601}"), "more than 10 minutes back: no proxy waits that long"
  end
end
