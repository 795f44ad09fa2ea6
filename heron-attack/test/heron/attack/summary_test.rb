# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class SummaryTest < Minitest::Test
  include ReportFixture

  def test_report_fields
    report = fixture_report
    assert_equal "heron-attack/1", report["schema"]
    assert_equal "2026-01-02T03:04:05.000Z", report["started_at"]
    assert_equal({ "sent" => 100, "responses" => 100, "ok" => 99, "errors" => 2, "success_ratio" => 0.99 }, report["requests"])
    assert_equal({ "200" => 99, "503" => 1 }, report["status_codes"])
    assert_equal 2, report["errors"]["timeout"]
    assert_equal({ "in" => 500, "out" => 300 }, report["bytes"])
    assert_in_delta 50.0, report["rate"]["achieved"], 0.01
    assert_in_delta 1.98, report["duration_s"]["attack"], 0.001
    assert_equal({ "cpu_s" => 0.25, "cpu_us_per_request" => 2500.0, "gc_count" => 3, "gc_ms" => 12 }, report["generator"])
  end

  def test_latency_stats
    corrected = fixture_report["latency_ms"]["corrected"]
    assert_equal %w[min mean p50 p75 p90 p95 p99 p99.9 max], corrected.keys
    assert_in_delta 10.0, corrected["min"], 0.02
    assert_in_delta 59.0, corrected["p50"], 0.1
    assert_in_delta 109.0, corrected["max"], 0.02
    assert_in_delta 0.2, fixture_report["lateness_ms"]["p99"], 0.01
  end

  def test_timeline_and_curves
    report = fixture_report
    assert_equal [0, 1], report["timeline"].map { |s| s["second"] }
    assert_equal [50, 50], report["timeline"].map { |s| s["responses"] }
    assert_equal [0, 2], report["timeline"].map { |s| s["errors"] }
    curve = report["percentile_curve"]["corrected"]
    assert_equal [0.0, 99.99], [curve.first.first, curve.last.first]
    assert_equal curve.map(&:last).sort, curve.map(&:last)
  end

  def test_warnings
    assert_equal ["2 of 100 requests failed (not in the latency figures)"], fixture_report["warnings"]
    recorder = fixture_recorder
    5.times { recorder.sent!(1.0, 1.5, 0) }
    warnings = Heron::Attack::Summary.new(recorder, fixture_options).to_h["warnings"]
    assert(warnings.any? { |w| w.include?("generator lateness") })
    options = Heron::Attack::Options.parse(%w[http://h/ --rate 80 -n 100])
    assert(Heron::Attack::Summary.new(fixture_recorder, options).to_h["warnings"].any? { |w| w.include?("below 99%") })
  end

  def test_empty_run
    report = Heron::Attack::Summary.new(Heron::Attack::Recorder.new(0.0), fixture_options).to_h
    assert_nil report["rate"]["achieved"]
    assert_nil report["rate"]["throughput"]
    assert_nil report["duration_s"]["total"]
    assert_nil report["generator"]["cpu_us_per_request"]
    assert_in_delta 0.0, report["requests"]["success_ratio"]
    assert_in_delta 0.0, report["latency_ms"]["corrected"]["max"]
  end
end
