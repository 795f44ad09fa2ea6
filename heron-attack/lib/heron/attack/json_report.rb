# frozen_string_literal: true

require "json"
require_relative "summary"
require_relative "usage_error"

module Heron
  module Attack
    # Writes a {Summary} Hash as JSON and reads one back (for --compare).
    class JsonReport
      # @param path [String] the file to write.
      # @param report [Hash] a {Summary#to_h}.
      # @return [void]
      def self.write(path, report)
        File.write(path, "#{JSON.pretty_generate(report)}\n")
      end

      # @param path [String] a file written by {.write}.
      # @return [Hash] the report.
      # @raise [UsageError] when the file is missing or is not a heron attack report.
      def self.load(path)
        report = JSON.parse(File.read(path))
        raise UsageError, "#{path} is not a heron attack JSON report" unless report.is_a?(Hash) && report["schema"] == Summary::SCHEMA
        report
      rescue SystemCallError, JSON::ParserError => e
        raise UsageError, "cannot read #{path}: #{e.message.lines.first.strip}"
      end
    end
  end
end
