# frozen_string_literal: true

require_relative "error_kind"

module Heron
  module Attack
    # How a run's requests ended: responses by status code, failures by {ErrorKind} kind, and a
    # few of the failures' messages as samples. Part of a {Recorder}; merges exactly.
    class Outcomes
      SAMPLE_LIMIT = 5

      # @return [Hash{Integer=>Integer}] responses by status code.
      attr_reader :statuses
      # @return [Hash{String=>Integer}] failures by kind.
      attr_reader :errors
      # @return [Hash{String=>Integer}] up to {SAMPLE_LIMIT} distinct error messages, counted.
      attr_reader :error_samples

      def initialize
        @statuses = {}
        @errors = ErrorKind::KINDS.to_h { |kind| [kind, 0] }
        @error_samples = {}
      end

      # @param status [Integer] @return [void]
      def response(status)
        @statuses[status] = @statuses.fetch(status, 0) + 1
      end

      # @param error [Exception]
      # @return [String] its kind.
      def error(error)
        kind = ErrorKind.of(error)
        @errors[kind] += 1
        sample("#{kind}: #{error.class}: #{error.message}"[0, 200], 1)
        kind
      end

      # @return [Integer] requests answered with a status code.
      def responses = @statuses.values.sum

      # @return [Integer] requests that failed without a status.
      def error_count = @errors.values.sum

      # Adds another run's outcomes (all of its samples: the report keeps the most frequent).
      # @param other [Outcomes]
      # @return [self]
      def merge!(other)
        other.statuses.each { |code, n| @statuses[code] = @statuses.fetch(code, 0) + n }
        other.errors.each { |kind, n| @errors[kind] += n }
        other.error_samples.each { |key, n| @error_samples[key] = @error_samples.fetch(key, 0) + n }
        self
      end

      private

      def sample(key, count)
        return unless @error_samples.key?(key) || @error_samples.size < SAMPLE_LIMIT
        @error_samples[key] = @error_samples.fetch(key, 0) + count
      end
    end
  end
end
