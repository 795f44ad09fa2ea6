# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require_relative "support/report_fixture"

class JsonReportTest < Minitest::Test
  include ReportFixture
  JsonReport = Heron::Attack::JsonReport

  def test_round_trip
    Dir.mktmpdir do |dir|
      path = File.join(dir, "run.json")
      report = fixture_report
      JsonReport.write(path, report)
      loaded = JsonReport.load(path)
      assert_equal JSON.parse(JSON.generate(report)), loaded
      histogram = Heron::Attack::Histogram.from_h(loaded["histograms"]["corrected"])
      assert_in_delta loaded["latency_ms"]["corrected"]["p99"], histogram.percentile(99) / 1000.0, 0.001
    end
  end

  def test_schema_keys_are_documented
    doc = File.read(File.expand_path("../../../docs/attack.md", __dir__))
    fixture_report.each_key { |key| assert_includes doc, "`#{key}`", "docs/attack.md documents #{key}" }
  end

  def test_load_errors
    Dir.mktmpdir do |dir|
      path = File.join(dir, "x.json")
      File.write(path, '{"schema": "other"}')
      assert_raises(Heron::Attack::UsageError) { JsonReport.load(path) }
      File.write(path, "not json")
      assert_raises(Heron::Attack::UsageError) { JsonReport.load(path) }
      assert_raises(Heron::Attack::UsageError) { JsonReport.load(File.join(dir, "missing.json")) }
    end
  end
end
