# frozen_string_literal: true

require "test_helper"
require "heron/log/rate_limiter"

class HeronLogRateLimiterTest < Minitest::Test
  def setup
    @now = 100.0
    @limiter = Heron::Log::RateLimiter.new(limit: 3, interval: 1.0, clock: -> { @now })
  end

  def test_lets_the_limit_through_per_interval_and_reports_what_it_dropped
    seen = []
    5.times { @limiter.allow { |dropped| seen << dropped } }
    assert_equal [0, 0, 0], seen
    @now += 1.0
    refute_nil(@limiter.allow { |dropped| seen << dropped })
    assert_equal [0, 0, 0, 2], seen
  end

  def test_a_refused_entry_does_not_run_its_block
    3.times { @limiter.allow { nil } }
    ran = false
    refute(@limiter.allow { ran = true })
    refute ran
  end
end
