# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"
require "heron/attack/compare_report"

class CompareReportTest < Minitest::Test
  include ReportFixture

  def test_ratios_to_the_first_run
    faster = fixture_report.tap { |r| r["latency_ms"]["corrected"]["p50"] /= 2 }
    missing = fixture_report.tap { |r| r["rate"]["achieved"] = nil }
    text = Heron::Attack::CompareReport.new([["base", fixture_report], ["fast", faster], ["odd", missing]]).render
    p50 = fixture_report.dig("latency_ms", "corrected", "p50")
    assert_match(/^Compared with base /, text)
    assert_match(/^p50 ms +#{format('%.2f', p50)} +#{format('%.2f', p50 / 2)} \(0.50x\) +#{format('%.2f', p50)} \(1.00x\)$/, text)
    assert_match(/^achieved \/s +[\d.]+ +[\d.]+ \(1.00x\) +- \(-\)$/, text)
    assert_match(/^errors +2 +2 \(1.00x\) +2 \(1.00x\)$/, text)
    assert_equal 1, text.lines.map(&:length).uniq.size - 2, "the table's rows line up (title and blank line aside)"
  end
end
