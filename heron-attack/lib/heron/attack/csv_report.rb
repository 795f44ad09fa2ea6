# frozen_string_literal: true

require "csv"

module Heron
  module Attack
    # Writes the per-second timeline of a {Summary} report as CSV (`--csv FILE`): one row per
    # second of due time, with the requests offered, the outcomes of the requests due in that
    # second and their corrected latency.
    class CsvReport
      COLUMNS = %w[second offered responses ok failed errors p50_ms p99_ms max_ms].freeze

      # @param path [String] the file to write.
      # @param report [Hash] a {Summary#to_h}.
      # @return [void]
      def self.write(path, report)
        File.write(path, render(report))
      end

      # @param report [Hash] a {Summary#to_h}.
      # @return [String] a header line and one line per second.
      def self.render(report)
        CSV.generate do |csv|
          csv << COLUMNS
          report["timeline"].each { |second| csv << row(second) }
        end
      end

      # @param second [Hash] a timeline entry.
      # @return [Array] the CSV cells.
      def self.row(second)
        ok = second["responses"] - second["failed"]
        [second["second"], second["offered"], second["responses"], ok, second["failed"], second["errors"],
         second["p50_ms"].round(3), second["p99_ms"].round(3), second["max_ms"].round(3)]
      end
    end
  end
end
