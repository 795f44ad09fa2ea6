# frozen_string_literal: true

require "cgi/escape"
require_relative "svg_chart"

module Heron
  module Attack
    # Renders one run, or several overlaid (--compare), as a single self-contained HTML page:
    # a summary table, per-second p50/p99 over time, throughput and errors over time, latency
    # against the offered rate (when it varied) and the corrected/uncorrected percentile curves,
    # drawn as inline SVG with no scripts or external files.
    class HtmlReport
      COLORS = ["#1f5fbf", "#d0342c", "#2a9d4b", "#8e44ad", "#e08a00", "#17a2b8", "#6b4f2a", "#e377c2"].freeze
      PERCENTILE_TICKS = [[0, "0%"], [1, "90%"], [2, "99%"], [3, "99.9%"], [4, "99.99%"]].freeze
      COLUMNS = [["sent", %w[requests sent]], ["achieved /s", %w[rate achieved]],
                 ["p50 ms", %w[latency_ms corrected p50]], ["p90 ms", %w[latency_ms corrected p90]],
                 ["p99 ms", %w[latency_ms corrected p99]], ["p99.9 ms", %w[latency_ms corrected p99.9]],
                 ["max ms", %w[latency_ms corrected max]], ["uncorrected p99 ms", %w[latency_ms uncorrected p99]],
                 ["lateness p99 ms", %w[lateness_ms p99]], ["errors", %w[requests errors]]].freeze

      # @param runs [Array<Array(String, Hash)>] label and {Summary#to_h} for each run.
      def initialize(runs)
        @runs = runs
      end

      # @return [String] the HTML page.
      def render
        <<~HTML
          <!DOCTYPE html>
          <html lang="en"><head><meta charset="utf-8"><title>#{h(title)}</title>
          <style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:12px 0}
          td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th:first-child,td:first-child{text-align:left}
          .warn{color:#a33}</style></head><body>
          <h1>#{h(title)}</h1>
          #{descriptions}
          #{table}
          #{warnings}
          #{timeline_chart.render}
          #{throughput_chart.render}
          #{offered_chart&.render}
          #{curve_chart.render}
          <p>Corrected latency is measured from when each request was due (start + i / rate), so queueing inside the
          server or the generator shows up; uncorrected latency is measured from when the request was actually sent.</p>
          </body></html>
        HTML
      end

      private

      def title
        @runs.size == 1 ? "heron attack report" : "heron attack: #{@runs.map(&:first).join(' vs ')}"
      end

      def descriptions
        items = @runs.map do |label, report|
          plan, target = report.values_at("plan", "target")
          "<li><b>#{h(label)}</b>: #{h(target['method'])} #{h(target['url'] || target['targets_file'])} at " \
            "#{plan['rate']}/s#{' (mean; the rate varied)' if report['load']}, #{plan['requests']} requests#{h(protocol(report))}, " \
            "started #{h(report['started_at'])}#{h(knee(report['knee']))}</li>"
        end
        "<ul>#{items.join}</ul>"
      end

      # HTTP/2's connections and streams; a WebSocket run's connections and connect latency.
      def protocol(report)
        plan, ws = report.values_at("plan", "websocket")
        if ws
          connect = ws["connect_ms"]
          return format(", WebSocket: %d of %d connections opened (connect p50 %.2f ms, p99 %.2f ms), %d messages each",
                        ws["opened"], ws["connections"], connect["p50"], connect["p99"], ws["messages_per_connection"])
        end
        plan["protocol"] == "h2" ? ", HTTP/2 over #{plan['connections']} connections x #{plan['max_streams']} streams" : ""
      end

      def knee(found)
        return "" unless found
        return "; no knee (#{found['conditions'].join(' or ')} never held)" unless found["second"]
        format("; knee at %.1f/s offered (second %d, %s)", found["offered_rate"], found["second"], found["held"].join(" and "))
      end

      def table
        head = "<tr><th>run</th>#{COLUMNS.map { |name, _| "<th>#{h(name)}</th>" }.join}</tr>"
        rows = @runs.map do |label, report|
          "<tr><td>#{h(label)}</td>#{COLUMNS.map { |_, path| "<td>#{h(report.dig(*path))}</td>" }.join}</tr>"
        end
        "<table>#{head}#{rows.join}</table>"
      end

      def warnings
        items = @runs.flat_map { |label, report| report["warnings"].map { |w| "<li>#{h(label)}: #{h(w)}</li>" } }
        items.empty? ? "" : %(<ul class="warn">#{items.join}</ul>)
      end

      def timeline_chart
        chart = SvgChart.new(title: "Corrected latency per second (by due time): max, p99, p50", x_label: "seconds since start",
                             y_label: "latency (ms)", x_ticks: second_ticks)
        each_run do |label, report, color|
          points = ->(key) { report["timeline"].map { |s| [s["second"] + 0.5, s[key]] } }
          chart.add("#{label} max", points.call("max_ms"), color: color, style: :dotted)
          chart.add("#{label} p99", points.call("p99_ms"), color: color)
          chart.add("#{label} p50", points.call("p50_ms"), color: color, style: :dashed)
        end
        chart
      end

      def throughput_chart
        chart = SvgChart.new(title: "Per second (by due time): offered, successful responses, failures",
                             x_label: "seconds since start", y_label: "requests per second", x_ticks: second_ticks)
        each_run do |label, report, color|
          seconds = report["timeline"]
          chart.add("#{label} offered", seconds.map { |s| [s["second"] + 0.5, s["offered"] || 0] }, color: color, style: :dotted)
          chart.add("#{label} ok", seconds.map { |s| [s["second"] + 0.5, s["responses"] - s.fetch("failed", 0)] }, color: color)
          chart.add("#{label} errors", seconds.map { |s| [s["second"] + 0.5, s["errors"] + s.fetch("failed", 0)] }, color: color, style: :dashed)
        end
        chart
      end

      # p50/p99 against the rate offered in each second; only for runs whose rate varied.
      def offered_chart
        ramps = @runs.select { |_, report| report["load"] }
        return nil if ramps.empty?
        chart = SvgChart.new(title: "Corrected latency against offered rate (each point one second)",
                             x_label: "offered requests per second", y_label: "latency (ms)")
        each_run do |label, report, color|
          next unless report["load"]
          points = ->(key) { report["timeline"].map { |s| [s["offered"], s[key]] } }
          chart.add("#{label} p99", points.call("p99_ms"), color: color)
          chart.add("#{label} p50", points.call("p50_ms"), color: color, style: :dashed)
        end
        chart
      end

      def second_ticks
        last = @runs.map { |_, report| report["timeline"].map { |s| s["second"] + 1 }.max || 1 }.max
        step = [(last / 10.0).ceil, 1].max
        0.step(last, step).map { |s| [s, s.to_s] }
      end

      def curve_chart
        chart = SvgChart.new(title: "Latency by percentile", x_label: "percentile (log scale)",
                             y_label: "latency (ms)", x_ticks: PERCENTILE_TICKS)
        each_run do |label, report, color|
          curves = report["percentile_curve"]
          chart.add("#{label} corrected", log_x(curves["corrected"]), color: color)
          chart.add("#{label} uncorrected", log_x(curves["uncorrected"]), color: color, style: :dashed)
        end
        chart
      end

      def each_run
        @runs.each_with_index { |(label, report), i| yield label, report, COLORS[i % COLORS.size] }
      end

      def log_x(curve)
        curve.map { |percentile, ms| [-Math.log10(1 - [percentile, 99.99].min / 100.0), ms] }
      end

      def h(value)
        CGI.escapeHTML(value.to_s)
      end
    end
  end
end
