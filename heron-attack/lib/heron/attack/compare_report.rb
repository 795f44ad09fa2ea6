# frozen_string_literal: true

module Heron
  module Attack
    # `--compare A.json B.json …` as a terminal table: one column per run, one row per
    # percentile of corrected latency (and rates, errors), each value after the first run's
    # followed by its ratio to the first run's.
    class CompareReport
      ROWS = [["p50 ms", %w[latency_ms corrected p50]], ["p75 ms", %w[latency_ms corrected p75]],
              ["p90 ms", %w[latency_ms corrected p90]], ["p95 ms", %w[latency_ms corrected p95]],
              ["p99 ms", %w[latency_ms corrected p99]], ["p99.9 ms", %w[latency_ms corrected p99.9]],
              ["max ms", %w[latency_ms corrected max]], ["uncorr. p99 ms", %w[latency_ms uncorrected p99]],
              ["lateness p99 ms", %w[lateness_ms p99]], ["achieved /s", %w[rate achieved]],
              ["throughput /s", %w[rate throughput]], ["errors", %w[requests errors]]].freeze
      LABEL_WIDTH = 16

      # @param runs [Array<Array(String, Hash)>] label and report of each run, the baseline first.
      def initialize(runs)
        @runs = runs
      end

      # @return [String] the table, ending in a newline.
      def render
        widths = column_widths
        header = "".ljust(LABEL_WIDTH) + @runs.each_with_index.map { |(label, _), i| label.rjust(widths[i]) }.join
        lines = ["Compared with #{@runs.first.first} (corrected latency unless noted; ratio = run / #{@runs.first.first})",
                 "", header, *ROWS.map { |name, path| row(name, path, widths) }]
        "#{lines.join("\n")}\n"
      end

      private

      def row(name, path, widths)
        cells = cells(path)
        name.ljust(LABEL_WIDTH) + cells.each_with_index.map { |cell, i| cell.rjust(widths[i]) }.join
      end

      def cells(path)
        base = @runs.first.last.dig(*path)
        @runs.each_with_index.map do |(_, report), i|
          value = report.dig(*path)
          i.zero? ? number(value) : "#{number(value)} #{ratio(value, base)}"
        end
      end

      def column_widths
        @runs.each_index.map do |i|
          texts = [@runs[i].first] + ROWS.map { |_, path| cells(path)[i] }
          texts.map(&:length).max + 3
        end
      end

      def number(value)
        return "-" if value.nil?
        value.is_a?(Integer) ? value.to_s : format("%.2f", value)
      end

      def ratio(value, base)
        return "(-)" if value.nil? || base.nil? || base.zero?
        format("(%.2fx)", value.to_f / base)
      end
    end
  end
end
