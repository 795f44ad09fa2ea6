# frozen_string_literal: true

require_relative "histogram"
require_relative "outcomes"
require_relative "process_cost"
require_relative "send_span"

module Heron
  module Attack
    # Collects what happened to every request of a run: latency from the due time (corrected)
    # and from the send (uncorrected), generator lateness, bytes, sends by stage and a
    # per-second timeline; how the requests ended ({Outcomes}), when the first and last went out
    # ({SendSpan}) and what the run cost the generator ({ProcessCost}). Times are
    # CLOCK_MONOTONIC seconds; latencies are kept in microseconds. Recorders from several
    # processes merge exactly.
    class Recorder
      SAMPLE_LIMIT = Outcomes::SAMPLE_LIMIT

      # @return [Histogram] latency from the due time, microseconds.
      attr_reader :corrected
      # @return [Histogram] latency from the actual send, microseconds.
      attr_reader :uncorrected
      # @return [Histogram] how late the generator sent each request, microseconds.
      attr_reader :lateness
      # @return [Histogram] WebSocket runs: connect and upgrade time of each connection from when
      #   it was due to open, microseconds (empty for HTTP).
      attr_reader :connects
      # @return [Hash{Integer=>Array(Histogram, Integer, Integer)}] by second of due time since the
      #   start: latencies, errors (no status), failed responses (status >= 400).
      attr_reader :timeline
      # @return [Integer] requests sent.
      attr_reader :sent
      # @return [Integer] response body bytes received.
      attr_reader :bytes_in
      # @return [Integer] request body bytes sent.
      attr_reader :bytes_out
      # @return [Float] the run's start (the due time of request 0).
      attr_reader :start
      # @return [Hash{Integer=>Array(Integer, Float)}] by stage of the plan (0-based): requests sent
      #   that were due in it, and when the last of them was sent.
      attr_reader :stage_sends
      # @return [Outcomes] responses by status, failures by kind, error samples.
      attr_reader :outcomes
      # @return [SendSpan] first and last send, last finish.
      attr_reader :span
      # @return [ProcessCost] CPU and garbage collection of the generator process(es).
      attr_reader :cost

      # @param start [Float] the monotonic time request 0 is due.
      def initialize(start)
        @start = start
        @corrected = Histogram.new
        @uncorrected = Histogram.new
        @lateness = Histogram.new
        @connects = Histogram.new
        @timeline = {}
        @stage_sends = {}
        @sent = @bytes_in = @bytes_out = 0
        @outcomes = Outcomes.new
        @span = SendSpan.new
        @cost = ProcessCost.new
      end

      # @return [Hash{Integer=>Integer}] see {Outcomes#statuses}.
      def statuses = @outcomes.statuses
      # @return [Hash{String=>Integer}] see {Outcomes#errors}.
      def errors = @outcomes.errors
      # @return [Hash{String=>Integer}] see {Outcomes#error_samples}.
      def error_samples = @outcomes.error_samples
      # @return [Integer] requests answered with a status code.
      def responses = @outcomes.responses
      # @return [Integer] requests that failed without a status.
      def error_count = @outcomes.error_count
      # @return [Float, nil] see {SendSpan}.
      def first_sent = @span.first_sent
      # @return [Float, nil] see {SendSpan}.
      def last_sent = @span.last_sent
      # @return [Float, nil] see {SendSpan}.
      def last_done = @span.last_done
      # @return [Float] CPU seconds the generator process(es) used for the run.
      def cpu = @cost.cpu
      # @return [Integer] garbage collections in the generator process(es) during the run.
      def gc_count = @cost.gc_count
      # @return [Integer] milliseconds the generator process(es) spent collecting garbage.
      def gc_ms = @cost.gc_ms

      # Notes that a request went out.
      # @param due [Float] when it was due.
      # @param sent [Float] when it was written.
      # @param bytes [Integer] request body bytes.
      # @param stage [Integer] the stage of the plan it was due in.
      # @return [void]
      def sent!(due, sent, bytes, stage = 0)
        @sent += 1
        stage_sent(stage, 1, sent)
        @bytes_out += bytes
        @lateness.record((sent - due) * 1e6)
        @span.sent(sent)
      end

      # Records a response.
      # @param due [Float] @param sent [Float] @param done [Float] monotonic times.
      # @param status [Integer] @param bytes [Integer] response body bytes.
      # @return [void]
      def response!(due, sent, done, status, bytes)
        @span.done(done)
        @outcomes.response(status)
        @bytes_in += bytes
        @corrected.record((done - due) * 1e6)
        @uncorrected.record((done - sent) * 1e6)
        slot = second(due)
        slot[0].record((done - due) * 1e6)
        slot[2] += 1 if status >= 400
      end

      # Records a WebSocket connection that opened (upgraded).
      # @param due [Float] when it was due to open. @param done [Float] when the 101 was read.
      # @return [void]
      def connected!(due, done)
        @connects.record((done - due) * 1e6)
      end

      # Runs the block (the whole run) and records the CPU time and garbage collections it took.
      # @return [Object] the block's value.
      def measure(&) = @cost.measure(&)

      # Records a failed request.
      # @param due [Float] @param done [Float] monotonic times.
      # @param error [Exception]
      # @return [String] the error's kind.
      def error!(due, done, error)
        @span.done(done)
        second(due)[1] += 1
        @outcomes.error(error)
      end

      # Adds another recorder's data (same start) to this one.
      # @param other [Recorder]
      # @return [self]
      def merge!(other)
        [[@corrected, other.corrected], [@uncorrected, other.uncorrected], [@lateness, other.lateness], [@connects, other.connects]]
          .each { |mine, theirs| mine.merge!(theirs) }
        [[@outcomes, other.outcomes], [@span, other.span], [@cost, other.cost]].each { |mine, theirs| mine.merge!(theirs) }
        @sent += other.sent
        @bytes_in += other.bytes_in
        @bytes_out += other.bytes_out
        merge_timeline(other)
        other.stage_sends.each { |stage, (count, last)| stage_sent(stage, count, last) }
        self
      end

      private

      def stage_sent(stage, count, last)
        entry = @stage_sends[stage] ||= [0, last]
        entry[0] += count
        entry[1] = last if last > entry[1]
      end

      def second(due)
        @timeline[(due - @start).floor] ||= [Histogram.new, 0, 0]
      end

      def merge_timeline(other)
        other.timeline.each do |sec, (histogram, errors, failed)|
          mine = @timeline[sec] ||= [Histogram.new, 0, 0]
          mine[0].merge!(histogram)
          mine[1] += errors
          mine[2] += failed
        end
      end
    end
  end
end
