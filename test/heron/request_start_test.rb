# frozen_string_literal: true

require "test_helper"

class HeronRequestStartTest < Minitest::Test
  NOW = 1_700_000_000.5

  def since(header) = Heron::RequestStart.seconds_since(header, NOW)

  def test_seconds_milliseconds_and_microseconds
    assert_in_delta 0.5, since("t=1700000000.0")
    assert_in_delta 0.4, since("t=1700000000100")
    assert_in_delta 0.3, since("t=1700000000200000")
    assert_in_delta 0.1, since("1700000000.4"), 0.0001
  end

  def test_a_future_stamp_is_zero_and_an_implausible_or_missing_one_is_nil
    assert_equal 0.0, since("t=1800000000")
    assert_nil since("t=1"), "more than ten minutes back: no proxy queues that long"
    assert_in_delta 599.5, since("t=#{NOW - 599.5}")
    assert_nil since("t=soon")
    assert_nil since(nil)
  end
end
