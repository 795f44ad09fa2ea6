# frozen_string_literal: true

module Heron
  module Attack
    # Renders a {Summary} Hash as a terminal report: totals, rates, then a latency table with
    # corrected and uncorrected latency and generator lateness side by side.
    class TextReport
      COLUMNS = %w[min mean p50 p75 p90 p95 p99 p99.9 max].freeze

      # @param report [Hash] a {Summary#to_h} (or one loaded from JSON).
      def initialize(report)
        @report = report
      end

      # @return [String] the report, several lines ending in a newline.
      def render
        lines = [heading, "", *totals, "", *latency_table, *load_table, "", *outcomes, *thresholds]
        lines.concat(["", *@report["warnings"].map { |w| "warning: #{w}" }]) unless @report["warnings"].empty?
        lines.join("\n") << "\n"
      end

      private

      def heading
        return web_socket_heading(@report["websocket"]) if @report["websocket"]
        plan = @report["plan"]
        span = plan["duration_s"] ? "for #{seconds(plan['duration_s'])}" : "for #{plan['requests']} requests"
        cap = plan["connections"] ? "at most #{plan['connections']} connections" : "no connection cap"
        cap = "HTTP/2, #{plan['connections']} connections x #{plan['max_streams']} streams" if plan["protocol"] == "h2"
        auto = plan["processes_auto"] ? " (#{plan['processes_auto']})" : ""
        "Heron attack: #{what} #{offered(plan)} #{span} " \
          "(#{plan['processes']} process#{'es' if plan['processes'] > 1}#{auto}, #{cap})"
      end

      def web_socket_heading(ws)
        "Heron attack: WebSocket #{@report['target']['url']}: #{ws['connections']} connections opened at " \
          "#{number(ws['connect_rate'])}/s, each sending #{ws['messages_per_connection']} messages at #{number(ws['message_rate'])}/s " \
          "(#{@report['plan']['processes']} process#{'es' if @report['plan']['processes'] > 1}; #{ws['opened']} opened)"
      end

      def offered(plan)
        stages = plan["stages"] || []
        return "at #{number(plan['rate'])}/s" if stages.size <= 1 && stages.all? { |st| st["from"] == st["to"] }
        return "at #{number(stages[0]['from'])}..#{number(stages[0]['to'])}/s" if stages.size == 1
        "at #{stages.map { |st| stage(st) }.join(', then ')}"
      end

      def stage(stage)
        rate = stage["from"] == stage["to"] ? number(stage["from"]) : "#{number(stage['from'])}..#{number(stage['to'])}"
        "#{rate}/s for #{seconds(stage['duration_s'])}"
      end

      def what
        target = @report["target"]
        target["url"] ? "#{target['method']} #{target['url']}" : "targets from #{target['targets_file']}"
      end

      def totals
        requests, rate, duration, bytes = @report.values_at("requests", "rate", "duration_s", "bytes")
        [row("Requests", "sent #{requests['sent']}", "responses #{requests['responses']}",
             "errors #{requests['errors']}", format("success %.2f%%", requests["success_ratio"] * 100)),
         row("Rate", "target #{number(rate['target'])}/s", "achieved #{number(rate['achieved'])}/s",
             "throughput #{number(rate['throughput'])}/s"), *stage_rates(rate["stages"]),
         row("Duration", "attack #{seconds(duration['attack'])}", "wait #{seconds(duration['wait'])}",
             "total #{seconds(duration['total'])}"),
         row("Bytes", "in #{bytes['in']}", "out #{bytes['out']}"), generator]
      end

      # A line per stage of a plan with several: its own target and achieved rate (a pause,
      # which sends nothing, is judged neither way).
      def stage_rates(judged)
        stages = @report.dig("plan", "stages") || []
        return [] if judged.nil? || stages.size < 2
        by_index = judged.to_h { |r| [r["stage"], r] }
        stages.each_with_index.map do |stage, i|
          span = format("%-16s", "#{seconds(stage['start_s'])}-#{seconds(stage['start_s'] + stage['duration_s'])}")
          r = by_index[i]
          next "  stage #{i + 1}".ljust(14) + "#{span}pause (or nothing sent): not judged" unless r
          row("  stage #{i + 1}", "#{span}target #{number(r['target'])}/s", "achieved #{number(r['achieved'])}/s",
              format("%.1f%%", r["percent"]))
        end
      end

      def generator
        cpu = @report["generator"] || { "cpu_s" => 0.0 } # absent from reports written before it existed
        per_request = cpu["cpu_us_per_request"] ? format("%.0f us/request", cpu["cpu_us_per_request"]) : "-"
        gc = cpu["gc_count"] && "gc #{cpu['gc_count']} (#{cpu['gc_ms']} ms)" # likewise
        row("Generator", format("cpu %.2fs", cpu["cpu_s"]), per_request, *gc)
      end

      def latency_table
        latency = @report["latency_ms"]
        ["Latency (ms)".ljust(14) + COLUMNS.map { |c| c.rjust(9) }.join,
         stats_row("corrected", latency["corrected"]), stats_row("uncorrected", latency["uncorrected"]),
         stats_row("lateness", @report["lateness_ms"]), *connect_row,
         "  (corrected: from when each request was due; uncorrected: from when it was sent)"]
      end

      # ws:// runs: each connection's connect and upgrade time, from when it was due to open.
      def connect_row
        ws = @report["websocket"]
        ws ? [stats_row("connect", ws["connect_ms"])] : []
      end

      def stats_row(name, stats)
        "  #{name}".ljust(14) + COLUMNS.map { |c| format("%.2f", stats[c]).rjust(9) }.join
      end

      # Latency and throughput against the offered rate, and the knee, when the rate varied.
      def load_table
        rows = @report["load"]
        return [] unless rows
        ["", "Load (by due time)   offered/s  throughput/s   p50 ms   p99 ms  errors",
         *rows.map { |r| load_row(r) }, *knee]
      end

      def load_row(row)
        mark = knee_second && (row["from_s"]...row["to_s"]).cover?(knee_second) ? "  <- knee" : ""
        format("  %6s-%-6s %14.1f %13.1f %8.2f %8.2f %6.2f%%%s", "#{row['from_s']}s", "#{row['to_s']}s",
               row["offered_rate"], row["throughput"], row["p50_ms"], row["p99_ms"], row["errors_pct"], mark)
      end

      def knee
        found = @report["knee"]
        return [] unless found
        return ["  knee: none (#{found['conditions'].join(' or ')} never held)"] unless found["second"]
        [format("  knee: at %.1f/s offered (second %d), where %s", found["offered_rate"], found["second"], found["held"].join(" and "))]
      end

      def knee_second
        @report.dig("knee", "second")
      end

      def outcomes
        codes = @report["status_codes"].map { |code, n| "#{code}:#{n}" }
        errors = @report["errors"].map { |kind, n| "#{kind}:#{n}" }
        [row("Status codes", codes.empty? ? "none" : codes.join("  ")), row("Errors", errors.join("  ")),
         *@report["error_samples"].map { |message, n| "  #{n} x #{message}" }]
      end

      def thresholds
        checks = @report["thresholds"] || []
        return [] if checks.empty?
        ["", "Thresholds", *checks.map { |t| "  #{t['broken'] ? 'BROKEN' : 'ok'.ljust(6)}  #{t['expression']}  (actual #{threshold_value(t)})" }]
      end

      def threshold_value(check)
        check["actual"].nil? ? "not measured" : "#{format('%.2f', check['actual'])}#{check['unit']}"
      end

      def row(label, *cells)
        label.ljust(14) + cells.join("   ")
      end

      def number(value)
        value.nil? ? "-" : format("%.2f", value)
      end

      def seconds(value)
        return "-" if value.nil?
        value < 1 ? format("%.1fms", value * 1000) : format("%.3fs", value)
      end
    end
  end
end
