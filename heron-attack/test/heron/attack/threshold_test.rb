# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class ThresholdTest < Minitest::Test
  include ReportFixture

  def check(expression)
    Heron::Attack::Threshold.new(expression).check(fixture_report)
  end

  def test_latency_percentiles_in_any_unit
    p99 = fixture_report.dig("latency_ms", "corrected", "p99")
    assert_operator p99, :>, 100
    assert check("p99>100ms")["broken"]
    refute check("p99>#{p99 + 1}ms")["broken"]
    assert check("p99 >= 0.1s")["broken"]
    assert_in_delta p99 * 1000, check("p99<1us")["actual"], 0.01
    refute check("p99<1us")["broken"]
    assert check("p99<1000000us")["broken"]
  end

  def test_errors_as_percentage_or_count
    # 100 sent, 99 ok: one 503 (the fixture's two timeouts were never "sent")
    result = check("errors>0.5%")
    assert_in_delta 1.0, result["actual"], 1e-9
    assert result["broken"]
    refute check("errors>1%")["broken"]
    assert check("errors>=1%")["broken"]
    assert_equal 1.0, check("errors>0")["actual"]
    refute check("errors>=2")["broken"]
  end

  def test_rate_as_percentage_of_target_or_absolute
    assert_in_delta 100.0, check("rate<99%")["actual"], 1.0
    refute check("rate<99%")["broken"]
    assert check("rate<101%")["broken"]
    assert check("rate<60/s")["broken"]
    refute check("throughput<10/s")["broken"]
  end

  def test_records_expression_limit_and_unit
    assert_equal({ "expression" => "p50>5ms", "metric" => "p50", "limit" => 5.0, "unit" => "ms", "broken" => true },
                 check(" p50>5ms ").except("actual"))
  end

  def test_a_metric_the_run_did_not_measure_counts_as_broken
    report = fixture_report
    report["rate"].merge!("achieved" => nil, "stages" => []) # nothing was sent
    result = Heron::Attack::Threshold.new("rate<50%").check(report)
    assert_nil result["actual"]
    assert result["broken"]
  end

  def test_bad_expressions_are_usage_errors
    ["p99", "p99>", "p99>250", "p98>1ms", "errors>1ms", "rate<5ms", "p99=>1ms", "x" * 200, "p99>1ms; rm"].each do |bad|
      error = assert_raises(Heron::Attack::UsageError, bad) { Heron::Attack::Threshold.new(bad) }
      assert_match(/--fail-if/, error.message)
    end
  end

  def test_per_second_conditions_for_the_knee
    second = { "responses" => 90, "errors" => 5, "failed" => 5, "p50_ms" => 3.0, "p99_ms" => 120.0, "max_ms" => 300.0 }
    assert Heron::Attack::Threshold.new("p99>100ms").holds_in?(second)
    refute Heron::Attack::Threshold.new("p50>0.01s").holds_in?(second)
    assert Heron::Attack::Threshold.new("errors>10%").holds_in?(second) # 10 of 95
    refute Heron::Attack::Threshold.new("errors>11%").holds_in?(second)
    refute Heron::Attack::Threshold.new("errors>1%").holds_in?(second.merge("responses" => 0, "errors" => 0, "failed" => 0))
    assert_predicate Heron::Attack::Threshold.new("max>1s"), :per_second?
    refute_predicate Heron::Attack::Threshold.new("p90>1s"), :per_second?
  end
end
