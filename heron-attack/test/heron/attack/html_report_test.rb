# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class HtmlReportTest < Minitest::Test
  include ReportFixture

  def test_single_run_page_is_self_contained
    html = Heron::Attack::HtmlReport.new([["run", fixture_report]]).render
    assert html.start_with?("<!DOCTYPE html>")
    assert_equal 3, html.scan("<svg").size, "latency, throughput and percentile charts"
    refute_match(/<script|<link|src=/, html)
    assert_includes html, "run p99"
    assert_includes html, "run max"
    assert_includes html, "run uncorrected"
    assert_includes html, ">99.99%</text>"
    assert_includes html, "2 of 100 requests failed"
  end

  def test_compare_overlays_both_runs
    html = Heron::Attack::HtmlReport.new([["before", fixture_report], ["after", fixture_report]]).render
    assert_includes html, "heron attack: before vs after"
    %w[before after].each do |label|
      assert_includes html, "#{label} p99"
      assert_includes html, "#{label} corrected"
      assert_includes html, "<td>#{label}</td>"
    end
    assert_equal 16, html.scan("<polyline").size
  end

  def test_throughput_and_errors_over_time
    html = Heron::Attack::HtmlReport.new([["run", fixture_report]]).render
    assert_includes html, "Per second (by due time): offered, successful responses, failures"
    %w[offered ok errors].each { |name| assert_includes html, ">run #{name}</text>" }
  end

  def test_a_ramp_gets_latency_against_offered_rate_and_its_knee
    report = fixture_report
    report["load"] = [{ "from_s" => 0, "to_s" => 2 }]
    report["knee"] = { "conditions" => ["p99>50ms"], "second" => 1, "offered_rate" => 50.0, "held" => ["p99>50ms"] }
    html = Heron::Attack::HtmlReport.new([["ramp", report]]).render
    assert_equal 4, html.scan("<svg").size
    assert_includes html, "Corrected latency against offered rate"
    assert_includes html, "; knee at 50.0/s offered (second 1, p99&gt;50ms)"
  end

  def test_http2_and_websocket_runs_say_so
    assert_includes Heron::Attack::HtmlReport.new([["h2", fixture_report("--http2", "-c", "2")]]).render,
                    "100 requests, HTTP/2 over 2 connections x 100 streams,"
    report = fixture_report
    report["websocket"] = { "connections" => 4, "opened" => 3, "messages_per_connection" => 25,
                            "connect_ms" => { "p50" => 1.5, "p99" => 9.25 } }
    assert_includes Heron::Attack::HtmlReport.new([["ws", report]]).render,
                    "WebSocket: 3 of 4 connections opened (connect p50 1.50 ms, p99 9.25 ms), 25 messages each"
  end
end
