# frozen_string_literal: true

require "test_helper"
require "csv"
require_relative "support/report_fixture"
require "heron/attack/csv_report"

class CsvReportTest < Minitest::Test
  include ReportFixture

  def test_one_row_per_second
    rows = CSV.parse(Heron::Attack::CsvReport.render(fixture_report))
    assert_equal Heron::Attack::CsvReport::COLUMNS, rows.first
    assert_equal [%w[0 50.0 50 49 1 0], %w[1 50.0 50 50 0 2]], rows.drop(1).map { |r| r.first(6) }
    assert_equal ["34.015", "59.0"], rows[1].values_at(6, 8)
  end
end
