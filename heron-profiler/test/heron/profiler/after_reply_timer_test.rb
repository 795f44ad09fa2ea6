# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class AfterReplyTimerTest < Minitest::Test
  def test_reports_the_span_once_after_the_last_callable
    reports = []
    ran = []
    callables = [-> { ran << 1; sleep 0.02 }, -> { ran << 2 }]
    Heron::Profiler::AfterReplyTimer.new(callables) { |ms| reports << ms }.wrap
    callables.each(&:call)
    assert_equal [1, 2], ran
    assert_equal 1, reports.size
    assert_operator reports.first, :>=, 20.0
  end

  def test_reports_even_when_a_callable_raises
    reports = []
    callables = [-> { raise "boom" }]
    Heron::Profiler::AfterReplyTimer.new(callables) { |ms| reports << ms }.wrap
    assert_raises(RuntimeError) { callables.first.call }
    assert_equal 1, reports.size
  end

  def test_no_callables_reports_zero_at_once
    reports = []
    Heron::Profiler::AfterReplyTimer.new([]) { |ms| reports << ms }.wrap
    assert_equal [0.0], reports
  end
end
