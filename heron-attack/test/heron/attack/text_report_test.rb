# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class TextReportTest < Minitest::Test
  include ReportFixture

  def test_renders_the_run
    text = Heron::Attack::TextReport.new(fixture_report).render
    assert_match %r{\AHeron attack: GET http://127.0.0.1:1/x at 50.00/s for 100 requests \(1 process, no connection cap\)}, text
    assert_match(/^Requests +sent 100 +responses 100 +errors 2 +success 99.00%$/, text)
    assert_match(%r{^Rate +target 50.00/s +achieved 50.00/s}, text)
    assert_match(%r{^Generator +cpu 0.25s +2500 us/request +gc 3 \(12 ms\)$}, text)
    assert_match(/^Latency \(ms\) +min +mean +p50 +p75 +p90 +p95 +p99 +p99.9 +max$/, text)
    assert_match(/^  corrected +10.00 /, text)
    assert_match(/^  uncorrected /, text)
    assert_match(/^  lateness +0.20 /, text)
    assert_match(/^Status codes +200:99  503:1$/, text)
    assert_match(/^Errors +timeout:2  refused:0  reset:0  other:0$/, text)
    assert_match(/^  2 x timeout: Async::TimeoutError: execution expired$/, text)
    assert_match(/^warning: 2 of 100 requests failed/, text)
  end

  def test_duration_plan_and_caps
    report = fixture_report("-c", "4")
    report["plan"].merge!("duration_s" => 2.5, "processes" => 2)
    report["duration_s"]["wait"] = 0.0123
    text = Heron::Attack::TextReport.new(report).render
    assert_includes text, "for 2.500s (2 processes, at most 4 connections)"
    assert_includes text, "wait 12.3ms"
  end

  def test_report_from_before_the_generator_field
    report = fixture_report
    report.delete("generator")
    assert_match(/^Generator +cpu 0.00s +-$/, Heron::Attack::TextReport.new(report).render)
  end

  def test_empty_run_and_targets_file
    options = Heron::Attack::Options.parse(%w[--targets t.txt -r 5 -n 5])
    text = Heron::Attack::TextReport.new(Heron::Attack::Summary.new(Heron::Attack::Recorder.new(0.0), options).to_h).render
    assert_includes text, "Heron attack: targets from t.txt"
    assert_includes text, "achieved -/s"
    assert_includes text, "attack -"
    assert_match(/^Generator +cpu 0.00s +- +gc 0 \(0 ms\)$/, text)
    assert_match(/^Status codes +none$/, text)
    assert_includes text, "warning: stopped early: 0 of 5 planned requests were sent"
  end
end
