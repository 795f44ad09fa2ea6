# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class QueueTimeTest < Minitest::Test
  NOW = 1_700_000_000.5

  def measure(env, monotonic = 100.0)
    Heron::Profiler::QueueTime.measure(env, monotonic, NOW)
  end

  def test_from_the_servers_request_start
    assert_in_delta 25.0, measure({ "heron.request_start" => 99.975 })
  end

  def test_unknown_without_header_or_start
    assert_nil measure({})
  end

  def test_header_in_seconds_milliseconds_and_microseconds
    assert_in_delta 500.0, measure({ "HTTP_X_REQUEST_START" => "t=1700000000.0" })
    assert_in_delta 400.0, measure({ "HTTP_X_REQUEST_START" => "t=1700000000100" })
    assert_in_delta 300.0, measure({ "HTTP_X_QUEUE_START" => "t=1700000000200000" })
  end

  def test_header_wins_over_the_server_start
    env = { "HTTP_X_REQUEST_START" => "1700000000.4", "heron.request_start" => 99.999 }
    assert_in_delta 100.0, measure(env), 0.01
  end

  def test_future_stamp_clamps_to_zero_and_garbage_is_unknown
    assert_equal 0.0, measure({ "HTTP_X_REQUEST_START" => "t=1800000000" })
    assert_nil measure({ "HTTP_X_REQUEST_START" => "t=soon" })
  end
end
