# frozen_string_literal: true

require_relative "histogram"

module Heron
  module Attack
    # Latency, throughput and errors against the offered rate, for runs whose rate varies (a
    # ramp or stages): the run's seconds, grouped into at most {MAX_ROWS} equal windows of due
    # time, each with the rate the schedule offered, the successful responses per second to the
    # requests due in it, their corrected p50/p99 (merged exactly from the per-second
    # histograms) and the share that failed.
    class LoadTable
      MAX_ROWS = 20

      # @param recorder [Recorder] @param schedule [Schedule]
      def initialize(recorder, schedule)
        @recorder = recorder
        @schedule = schedule
      end

      # @return [Array<Hash>] rows: from_s, to_s, offered_rate, throughput, p50_ms, p99_ms, errors_pct.
      def rows
        seconds = @schedule.duration.ceil
        width = [(seconds / MAX_ROWS.to_f).ceil, 1].max
        0.step(seconds - 1, width).map { |from| row(from, [from + width, seconds].min) }
      end

      private

      def row(from, to)
        histogram = Histogram.new
        errors = failed = 0
        (from...to).each do |second|
          latencies, transport, statuses = @recorder.timeline[second]
          next unless latencies
          histogram.merge!(latencies)
          errors += transport
          failed += statuses
        end
        summarize(from, to, histogram, errors, failed)
      end

      def summarize(from, to, histogram, errors, failed)
        span = to - from
        total = histogram.count + errors
        { "from_s" => from, "to_s" => to, "offered_rate" => (@schedule.offered(from, to) / span).round(3),
          "throughput" => ((histogram.count - failed) / span.to_f).round(3),
          "p50_ms" => (histogram.percentile(50) / 1000.0).round(3), "p99_ms" => (histogram.percentile(99) / 1000.0).round(3),
          "errors_pct" => total.zero? ? 0.0 : (100.0 * (errors + failed) / total).round(3) }
      end
    end
  end
end
