# frozen_string_literal: true

require_relative "usage_error"

module Heron
  module Attack
    # One `--fail-if` condition, such as "p99>250ms", "errors>0.1%" or "rate<99%": a metric, a
    # comparison and a limit. {#check} reads the metric from a {Summary} report and says whether
    # the condition holds (the threshold is broken). Metrics:
    # - p50, p75, p90, p95, p99, p99.9, mean, max: corrected latency, with a unit (us, ms, s);
    # - errors: requests without a success (transport errors and 4xx/5xx), as a percentage of
    #   those sent ("errors>0.1%") or a count ("errors>0");
    # - rate: achieved send rate, as a percentage of the target ("rate<99%": the sending stage
    #   furthest below its own target, see {StageRates}) or in req/s (over the sending stages);
    # - throughput: successful responses per second.
    class Threshold
      LATENCY = %w[p50 p75 p90 p95 p99 p99.9 mean max].freeze
      METRICS = [*LATENCY, "errors", "rate", "throughput"].freeze
      UNITS = { "us" => 0.001, "ms" => 1.0, "s" => 1000.0 }.freeze
      SYNTAX = /\A\s*(?<metric>[a-z0-9.]+)\s*(?<op>[<>]=?)\s*(?<value>\d+(?:\.\d+)?)\s*(?<unit>us|ms|s|%|\/s)?\s*\z/
      MAX_LENGTH = 100

      # @return [String] the expression as given. @return [String] the metric name.
      attr_reader :expression, :metric

      # @param expression [String] e.g. "p99>250ms".
      # @raise [UsageError] for a malformed expression, an unknown metric or a missing/wrong unit.
      def initialize(expression)
        @expression = expression.to_s.strip
        match = @expression.length <= MAX_LENGTH && SYNTAX.match(@expression)
        raise UsageError, "bad --fail-if #{expression.inspect} (want e.g. 'p99>250ms', 'errors>0.1%', 'rate<99%')" unless match
        @metric, @op, @unit = match.values_at(:metric, :op, :unit)
        @value = match[:value].to_f
        check_metric!
      end

      # @param report [Hash] a {Summary#to_h}.
      # @return [Hash] expression, metric, actual value (in the limit's unit, nil when the run
      #   has no such figure), limit and whether it is broken.
      def check(report)
        actual = measure(report)
        { "expression" => @expression, "metric" => @metric, "actual" => actual&.round(6),
          "limit" => @value, "unit" => @unit, "broken" => actual.nil? || actual.public_send(@op, @value) }
      end

      # @return [Boolean] whether a per-second figure of the timeline can be checked against it
      #   (p50, p99, max, errors), as --knee needs.
      def per_second?
        %w[p50 p99 max errors].include?(@metric)
      end

      # @param second [Hash] a timeline entry of a {Summary} report.
      # @return [Boolean] whether the condition holds for that second.
      def holds_in?(second)
        actual = second_value(second)
        !actual.nil? && actual.public_send(@op, @value)
      end

      private

      def second_value(second)
        return second["#{@metric}_ms"] / UNITS.fetch(@unit) unless @metric == "errors"
        failed = second["errors"] + second.fetch("failed", 0)
        return failed.to_f unless @unit == "%"
        total = second["responses"] + second["errors"]
        total.zero? ? nil : 100.0 * failed / total
      end

      def check_metric!
        raise UsageError, "--fail-if: unknown metric #{@metric.inspect} (one of #{METRICS.join(', ')})" unless METRICS.include?(@metric)
        allowed = allowed_units
        return if allowed.include?(@unit)
        want = allowed.map { |u| u || "no unit" }.join(" or ")
        raise UsageError, "--fail-if #{@expression.inspect}: #{@metric} takes #{want}"
      end

      def allowed_units
        return UNITS.keys if LATENCY.include?(@metric)
        { "errors" => ["%", nil], "rate" => ["%", "/s", nil], "throughput" => ["/s", nil] }.fetch(@metric)
      end

      def measure(report)
        return latency(report) if LATENCY.include?(@metric)
        send(@metric, report)
      end

      def latency(report)
        report.dig("latency_ms", "corrected", @metric) / UNITS.fetch(@unit)
      end

      def errors(report)
        requests = report["requests"]
        failed = requests["sent"] - requests["ok"]
        return failed.to_f unless @unit == "%"
        requests["sent"].zero? ? 0.0 : 100.0 * failed / requests["sent"]
      end

      def rate(report)
        achieved, target, stages = report["rate"].values_at("achieved", "target", "stages")
        return achieved unless @unit == "%"
        return stages.map { |stage| stage["percent"] }.min if stages && !stages.empty?
        achieved && target ? 100.0 * achieved / target : nil
      end

      def throughput(report)
        report.dig("rate", "throughput")
      end
    end
  end
end
