# frozen_string_literal: true

require "json"

module RailsApp
  # One open-loop row of bench/rails.rb, read from a `heron attack --json` report: the requests
  # the plan offered, those answered 2xx, the corrected latency of the answered ones, and every
  # other outcome (a status outside 2xx, a timeout, a reset, a request never sent) as a failure.
  class AttackRow
    attr_reader :planned, :ok

    # @param report [Hash] a heron attack JSON report (schema heron-attack/1).
    # @param planned [Integer] requests the plan offered (rate × seconds).
    # @param cpu_seconds [Float] server CPU seconds over the run.
    def initialize(report, planned:, cpu_seconds:)
      @report = report
      @planned = planned
      @cpu_seconds = cpu_seconds
      @ok = report["status_codes"].sum { |code, n| code.start_with?("2") ? n : 0 }
    end

    # Requests offered but not answered 2xx (a generator that fell behind and never sent some
    # of them counts those too).
    # @return [Integer]
    def failed = [@planned, @report.dig("requests", "sent")].max - @ok

    # What the failures were: non-2xx statuses and transport errors by kind, e.g. "500×3, timeout 40".
    # @return [String]
    def failures
      statuses = @report["status_codes"].reject { |code, _| code.start_with?("2") }.map { |code, n| "#{code}×#{n}" }
      errors = @report["errors"].select { |_, n| n.positive? }.map { |kind, n| "#{kind} #{n}" }
      unsent = [@planned - @report.dig("requests", "sent"), 0].max
      parts = statuses + errors + (unsent.positive? ? ["unsent #{unsent}"] : [])
      parts.empty? ? "" : " (#{parts.join(', ')})"
    end

    # @return [Array] the table cells: 2xx of planned, p50, p99 (ms, answered requests), failures,
    #   server CPU ms per 2xx answer.
    def cells
      latency = @report.dig("latency_ms", "corrected")
      ["#{@ok} / #{@planned}", latency["p50"].round, latency["p99"].round, "#{failed}#{failures}",
       (1000 * @cpu_seconds / [@ok, 1].max).round(2)]
    end
  end
end
