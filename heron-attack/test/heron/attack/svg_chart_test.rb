# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class SvgChartTest < Minitest::Test
  SvgChart = Heron::Attack::SvgChart

  def test_renders_series_legend_and_axes
    chart = SvgChart.new(title: "T <1>", x_label: "x", y_label: "y")
    chart.add("a", [[0, 1], [10, 3.3]], color: "#123456").add("b", [[0, 2], [10, 2]], color: "#654321", style: :dashed)
    svg = chart.render
    assert svg.start_with?("<svg ")
    assert_equal 2, svg.scan("<polyline").size
    assert_includes svg, "T &lt;1&gt;"
    assert_includes svg, %(stroke-dasharray="6 4")
    assert_includes svg, ">5</text>" # y axis tops out at a round 5 for data up to 3.3
  end

  def test_wide_ranges_get_a_log_axis_and_dotted_lines
    chart = SvgChart.new(title: "t", x_label: "x", y_label: "latency")
    svg = chart.add("a", [[0, 1.5], [1, 1000.0], [2, 0]], color: "red", style: :dotted).render
    assert_includes svg, "latency, log scale"
    assert_includes svg, %(stroke-dasharray="2 3")
    assert_includes svg, ">1000</text>"
    assert_raises(KeyError) { SvgChart.new(title: "t", x_label: "x", y_label: "y").add("a", [[0, 1]], color: "red", style: :wavy).render }
  end

  def test_fixed_ticks_and_empty_chart
    svg = SvgChart.new(title: "t", x_label: "x", y_label: "y", x_ticks: [[0, "0%"], [4, "99.99%"]]).render
    assert_includes svg, ">99.99%</text>"
    assert_includes svg, ">1</text>"
  end

  def test_small_values_get_decimal_labels
    svg = SvgChart.new(title: "t", x_label: "x", y_label: "y").add("a", [[0, 0.03], [1, 0.04]], color: "red").render
    assert_includes svg, ">0.05</text>"
  end

  def test_legend_sits_below_the_plot_and_covers_no_line
    chart = SvgChart.new(title: "t", x_label: "x", y_label: "y")
    5.times { |i| chart.add("series #{i}", [[0, 10], [1, 10]], color: "red") }
    svg = chart.render
    swatches = svg.scan(/<line x1="(\d+)" x2="(\d+)" y1="([\d.]+)" y2="[\d.]+" stroke="red"/)
    assert_equal 5, swatches.size
    swatches.each { |_, _, y| assert_operator y.to_f, :>=, SvgChart::HEIGHT, "legend entries are below the x axis labels" }
    refute_match(/fill-opacity/, svg, "no box over the plot")
    height = svg[/height="(\d+)"/, 1].to_i
    assert_operator height, :>, swatches.map { |_, _, y| y.to_f }.max, "the svg grows to hold the legend"
  end
end
