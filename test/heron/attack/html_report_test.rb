# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class HtmlReportTest < Minitest::Test
  include ReportFixture

  def test_single_run_page_is_self_contained
    html = Heron::Attack::HtmlReport.new([["run", fixture_report]]).render
    assert html.start_with?("<!DOCTYPE html>")
    assert_equal 2, html.scan("<svg").size
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
    assert_equal 10, html.scan("<polyline").size
  end
end
