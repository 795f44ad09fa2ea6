# frozen_string_literal: true

require "cgi/escape"
require_relative "linear_scale"
require_relative "log_scale"

module Heron
  module Attack
    # A small line chart rendered as inline SVG. The y-axis is linear from zero, or logarithmic
    # when the values span more than {LogScale::RANGE}×. The x-axis is linear unless the caller
    # gives its own tick labels (the percentile chart passes log-scaled x values and labels).
    # The legend sits below the plot, outside it, in rows of {LEGEND_COLUMNS}, so it can never
    # cover a line (it used to be a box over the top-left corner of the plot, which hid the
    # start of the lines there).
    class SvgChart
      WIDTH = 880
      HEIGHT = 360
      MARGIN = { left: 70, right: 20, top: 36, bottom: 48 }.freeze
      LEGEND_COLUMNS = 3
      LEGEND_ROW = 18

      # @param title [String] @param x_label [String] @param y_label [String]
      # @param x_ticks [Array<Array(Float, String)>, nil] fixed x ticks (value, label), or nil for automatic.
      def initialize(title:, x_label:, y_label:, x_ticks: nil)
        @title = title
        @x_label = x_label
        @y_label = y_label
        @x_ticks = x_ticks
        @series = []
      end

      # Adds a series.
      # @param name [String] legend text.
      # @param points [Array<Array(Float, Float)>] x, y pairs.
      # @param color [String] a CSS colour.
      # @param style [Symbol] :solid, :dashed or :dotted.
      # @return [self]
      def add(name, points, color:, style: :solid)
        @series << { name: name, points: points, color: color, style: style }
        self
      end

      # @return [String] an <svg> element.
      def render
        total = HEIGHT + legend_height
        [%(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 #{WIDTH} #{total}" width="#{WIDTH}" height="#{total}" font-family="sans-serif" font-size="12">),
         %(<rect width="#{WIDTH}" height="#{total}" fill="#fff"/>),
         text(WIDTH / 2, 20, @title, size: 15, weight: "bold"), *grid, *@series.map { |s| line(s) },
         *legend, axis_labels, "</svg>"].join("\n")
      end

      private

      def x_range
        @x_range ||= begin
          xs = all_points.map(&:first) + (@x_ticks || []).map(&:first)
          [xs.min || 0.0, [xs.max || 1.0, (xs.min || 0.0) + 1e-9].max]
        end
      end

      def y_scale
        @y_scale ||= begin
          ys = all_points.map(&:last)
          LogScale.suits?(ys) ? LogScale.new(ys) : LinearScale.new(ys)
        end
      end

      def all_points
        @series.flat_map { |s| s[:points] }
      end

      def px(x)
        low, high = x_range
        MARGIN[:left] + ((x - low).fdiv(high - low) * plot_width)
      end

      def py(y)
        HEIGHT - MARGIN[:bottom] - (y_scale.fraction(y) * plot_height)
      end

      def plot_width
        WIDTH - MARGIN[:left] - MARGIN[:right]
      end

      def plot_height
        HEIGHT - MARGIN[:top] - MARGIN[:bottom]
      end

      def grid
        y_scale.ticks.map { |y| y_tick(y) } + x_tick_values.map { |x, label| x_tick(x, label) }
      end

      def y_tick(y)
        %(<line x1="#{MARGIN[:left]}" x2="#{WIDTH - MARGIN[:right]}" y1="#{r(py(y))}" y2="#{r(py(y))}" stroke="#e3e3e3"/>) +
          text(MARGIN[:left] - 6, py(y) + 4, label_number(y), anchor: "end")
      end

      def x_tick(x, label)
        %(<line x1="#{r(px(x))}" x2="#{r(px(x))}" y1="#{MARGIN[:top]}" y2="#{HEIGHT - MARGIN[:bottom]}" stroke="#e3e3e3"/>) +
          text(px(x), HEIGHT - MARGIN[:bottom] + 16, label)
      end

      def x_tick_values
        return @x_ticks if @x_ticks
        low, high = x_range
        (0..8).map { |i| low + ((high - low) * i / 8) }.map { |x| [x, label_number(x)] }
      end

      def line(series)
        points = series[:points].map { |x, y| "#{r(px(x))},#{r(py(y))}" }.join(" ")
        %(<polyline fill="none" stroke="#{series[:color]}"#{stroke(series[:style])} points="#{points}"/>)
      end

      def stroke(style)
        { solid: %( stroke-width="2"), dashed: %( stroke-width="2" stroke-dasharray="6 4"),
          dotted: %( stroke-width="1.5" stroke-dasharray="2 3") }.fetch(style)
      end

      def legend_height
        rows = (@series.size + LEGEND_COLUMNS - 1) / LEGEND_COLUMNS
        rows.zero? ? 0 : (rows * LEGEND_ROW) + 8
      end

      def legend
        column = (WIDTH - MARGIN[:left] - MARGIN[:right]) / LEGEND_COLUMNS
        @series.each_with_index.map do |series, i|
          x = MARGIN[:left] + ((i % LEGEND_COLUMNS) * column)
          y = HEIGHT + 4 + ((i / LEGEND_COLUMNS) * LEGEND_ROW)
          %(<line x1="#{x}" x2="#{x + 30}" y1="#{y}" y2="#{y}" stroke="#{series[:color]}"#{stroke(series[:style])}/>) +
            text(x + 36, y + 4, series[:name], anchor: "start")
        end
      end

      def axis_labels
        text(WIDTH / 2, HEIGHT - 10, @x_label) +
          %(<text x="16" y="#{HEIGHT / 2}" text-anchor="middle" transform="rotate(-90 16 #{HEIGHT / 2})">#{CGI.escapeHTML(y_label)}</text>)
      end

      def y_label
        y_scale.log? ? "#{@y_label}, log scale" : @y_label
      end

      def text(x, y, content, anchor: "middle", size: 12, weight: "normal")
        %(<text x="#{r(x)}" y="#{r(y)}" text-anchor="#{anchor}" font-size="#{size}" font-weight="#{weight}">#{CGI.escapeHTML(content.to_s)}</text>)
      end

      def label_number(value)
        value >= 100 || value == value.round ? value.round.to_s : format("%.2g", value)
      end

      def r(value)
        value.round(1)
      end
    end
  end
end
