# frozen_string_literal: true

require "time"
require_relative "histogram"
require_relative "load_table"
require_relative "stage_rates"

module Heron
  module Attack
    # Turns a {Recorder} and the run's {Options} into the report Hash that the text, JSON and
    # HTML reports all read (its schema is documented in docs/attack.md).
    class Summary
      SCHEMA = "heron-attack/1"
      PERCENTILES = [50, 75, 90, 95, 99, 99.9].freeze
      CURVE_STEPS = 80 # points on the percentile curve, 0 → 99.99 on a log(1 / (1 - p)) axis
      LATE_MS = 10.0   # p99 generator lateness above this means the generator was a bottleneck

      # @param recorder [Recorder] the merged results.
      # @param options [Options] the run's settings.
      # @param started_at [Time] wall-clock start, for the report.
      def initialize(recorder, options, started_at: Time.now)
        @recorder = recorder
        @options = options
        @started_at = started_at
      end

      # @param histogram [Histogram] microseconds.
      # @return [Hash{String=>Float}] min, mean, p50 … p99.9 and max in milliseconds.
      def self.stats(histogram)
        ms = ->(us) { (us / 1000.0).round(3) }
        stats = { "min" => ms.call(histogram.min || 0), "mean" => ms.call(histogram.mean) }
        PERCENTILES.each { |p| stats["p#{p.to_s.delete_suffix('.0')}"] = ms.call(histogram.percentile(p)) }
        stats.merge("max" => ms.call(histogram.max))
      end

      # @param histogram [Histogram] microseconds.
      # @return [Array<Array(Float, Float)>] [percentile, milliseconds] pairs from 0 to 99.99.
      def self.curve(histogram)
        (0..CURVE_STEPS).map do |step|
          percentile = 100.0 * (1 - (10**(-4.0 * step / CURVE_STEPS)))
          [percentile.round(4), (histogram.percentile(percentile) / 1000.0).round(3)]
        end
      end

      # @return [Hash] the report; see docs/attack.md for every field.
      def to_h
        {
          "schema" => SCHEMA, "started_at" => @started_at.utc.iso8601(3),
          "target" => target, "plan" => plan, "requests" => requests, "rate" => rates,
          "duration_s" => durations, "generator" => generator, "latency_ms" => latency, "lateness_ms" => self.class.stats(@recorder.lateness),
          "status_codes" => @recorder.statuses.sort.to_h { |code, n| [code.to_s, n] },
          "errors" => @recorder.errors.dup, "error_samples" => error_samples,
          "bytes" => { "in" => @recorder.bytes_in, "out" => @recorder.bytes_out },
          "timeline" => timeline, "percentile_curve" => curves, "histograms" => histograms,
          "warnings" => warnings, "load" => load_table, "knee" => knee, "websocket" => websocket
        }
      end

      private

      def target
        { "url" => @options.url, "targets_file" => @options.request.targets_file, "method" => @options.request.method }
      end

      def plan
        load, client, request = @options.load, @options.client, @options.request
        { "rate" => load.rate, "duration_s" => load.duration, "requests" => load.total_requests,
          "connections" => load.connections, "processes" => @options.processes.count,
          "keepalive" => client.keepalive, "timeout_s" => client.timeout,
          "pick" => request.pick, "seed" => request.pick == "random" ? request.seed : nil,
          "stages" => load.schedule.to_a, "protocol" => protocol, "max_streams" => client.max_streams }
      end

      def protocol
        return "websocket" if @options.websocket?
        @options.client.http2 ? "h2" : "http/1.1"
      end

      def requests
        ok = @recorder.statuses.sum { |code, n| code < 400 ? n : 0 }
        { "sent" => @recorder.sent, "responses" => @recorder.responses, "ok" => ok,
          "errors" => @recorder.error_count, "success_ratio" => ratio(ok, @recorder.sent) }
      end

      # Target and achieved rate over the same windows, stage by stage ({StageRates}); the
      # run's figures cover only the stages that send.
      def rates
        overall = stage_rates.overall
        { "target" => overall["target"], "achieved" => overall["achieved"], "throughput" => throughput,
          "stages" => stage_rates.rows }
      end

      def stage_rates
        @stage_rates ||= StageRates.new(@recorder, @options.load.schedule)
      end

      def throughput
        total = span(@recorder.start, @recorder.last_done)
        total&.positive? ? (requests["ok"] / total).round(3) : nil
      end

      def durations
        { "attack" => span(@recorder.first_sent, @recorder.last_sent)&.round(6),
          "wait" => span(@recorder.last_sent, @recorder.last_done)&.round(6),
          "total" => span(@recorder.start, @recorder.last_done)&.round(6) }
      end

      def generator
        per_request = @recorder.sent.zero? ? nil : (@recorder.cpu * 1e6 / @recorder.sent).round(1)
        { "cpu_s" => @recorder.cpu.round(3), "cpu_us_per_request" => per_request, "gc_count" => @recorder.gc_count,
          "gc_ms" => @recorder.gc_ms }
      end

      def span(from, to)
        from && to ? to - from : nil
      end

      def ratio(part, whole)
        whole.zero? ? 0.0 : (part.to_f / whole).round(6)
      end

      def latency
        { "corrected" => self.class.stats(@recorder.corrected),
          "uncorrected" => self.class.stats(@recorder.uncorrected) }
      end

      # ws:// runs: the connections and their connect (upgrade) latency; nil for HTTP.
      def websocket
        return nil unless @options.websocket?
        web_socket = @options.web_socket
        { "connections" => @options.load.connections, "connect_rate" => web_socket.connect_rate,
          "message_rate" => web_socket.message_rate, "messages_per_connection" => web_socket.messages,
          "opened" => @recorder.connects.count, "connect_ms" => self.class.stats(@recorder.connects) }
      end

      def error_samples
        @recorder.error_samples.sort_by { |_, n| -n }.first(5).to_h
      end

      def timeline
        @timeline ||= @recorder.timeline.sort.map do |second, (histogram, errors, failed)|
          { "second" => second, "offered" => @options.load.schedule.offered(second, second + 1).round(3),
            "responses" => histogram.count, "errors" => errors, "failed" => failed,
            "p50_ms" => histogram.percentile(50) / 1000.0, "p99_ms" => histogram.percentile(99) / 1000.0,
            "max_ms" => histogram.max / 1000.0 }
        end
      end

      # The rows of rate against latency, for a run whose rate varies; nil for a constant rate.
      def load_table
        LoadTable.new(@recorder, @options.load.schedule).rows if @options.load.schedule.varying?
      end

      # The first second of due time where a --knee condition holds and still holds the next
      # second (or which is the last one), so one slow second of warm-up is not taken for the
      # knee; and the rate offered then.
      def knee
        conditions = @options.thresholds.knee
        return nil if conditions.empty?
        crossed = ->(entry) { entry.nil? || conditions.any? { |condition| condition.holds_in?(entry) } }
        second = timeline.each_with_index.find { |entry, i| crossed.call(entry) && crossed.call(timeline[i + 1]) }&.first
        { "conditions" => conditions.map(&:expression), "second" => second&.fetch("second"),
          "offered_rate" => second&.fetch("offered"),
          "held" => second ? conditions.select { |c| c.holds_in?(second) }.map(&:expression) : [] }
      end

      def curves
        { "corrected" => self.class.curve(@recorder.corrected),
          "uncorrected" => self.class.curve(@recorder.uncorrected) }
      end

      def histograms
        { "corrected" => @recorder.corrected.to_h, "uncorrected" => @recorder.uncorrected.to_h,
          "lateness" => @recorder.lateness.to_h }
      end

      def warnings
        [lateness_warning, rate_warning, errors_warning, early_stop_warning].compact
      end

      def lateness_warning
        late = @recorder.lateness.percentile(99) / 1000.0
        return unless late > LATE_MS
        format("generator lateness p99 %.1fms > %.0fms: the generator, not the server, may be the bottleneck " \
               "(try --processes or a lower rate)", late, LATE_MS)
      end

      def rate_warning
        worst = stage_rates.worst
        return unless worst && worst["percent"] < 99
        where = stage_rates.rows.size > 1 ? "stage #{worst['stage'] + 1}: " : ""
        format("%sachieved rate %.2f/s is below 99%% of the target %.2f/s", where, worst["achieved"], worst["target"])
      end

      def errors_warning
        return if @recorder.error_count.zero?
        "#{@recorder.error_count} of #{@recorder.sent} requests failed (not in the latency figures)"
      end

      def early_stop_warning
        return if @recorder.sent >= @options.load.total_requests
        "stopped early: #{@recorder.sent} of #{@options.load.total_requests} planned requests were sent"
      end
    end
  end
end
