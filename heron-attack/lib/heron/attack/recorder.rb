# frozen_string_literal: true

require_relative "histogram"
require_relative "error_kind"

module Heron
  module Attack
    # Collects what happened to every request of a run: latency from the due time (corrected)
    # and from the send (uncorrected), generator lateness, status codes, errors by kind, bytes,
    # and a per-second timeline. Times are CLOCK_MONOTONIC seconds; latencies are kept in
    # microseconds. Recorders from several processes merge exactly.
    class Recorder
      SAMPLE_LIMIT = 5

      # @return [Histogram] latency from the due time, microseconds.
      attr_reader :corrected
      # @return [Histogram] latency from the actual send, microseconds.
      attr_reader :uncorrected
      # @return [Histogram] how late the generator sent each request, microseconds.
      attr_reader :lateness
      # @return [Histogram] WebSocket runs: connect and upgrade time of each connection from when
      #   it was due to open, microseconds (empty for HTTP).
      attr_reader :connects
      # @return [Hash{Integer=>Integer}] responses by status code.
      attr_reader :statuses
      # @return [Hash{String=>Integer}] failures by {ErrorKind} kind.
      attr_reader :errors
      # @return [Hash{String=>Integer}] up to {SAMPLE_LIMIT} distinct error messages, counted.
      attr_reader :error_samples
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
      # @return [Float, nil] when the first and last requests were sent and the last finished.
      attr_reader :first_sent, :last_sent, :last_done
      # @return [Hash{Integer=>Array(Integer, Float)}] by stage of the plan (0-based): requests sent
      #   that were due in it, and when the last of them was sent.
      attr_reader :stage_sends
      # @return [Float] CPU seconds the generator process(es) used for the run.
      attr_accessor :cpu
      # @return [Integer] garbage collections in the generator process(es) during the run.
      attr_accessor :gc_count
      # @return [Integer] milliseconds the generator process(es) spent collecting garbage.
      attr_accessor :gc_ms

      # @param start [Float] the monotonic time request 0 is due.
      def initialize(start)
        @start = start
        @corrected = Histogram.new
        @uncorrected = Histogram.new
        @lateness = Histogram.new
        @connects = Histogram.new
        @statuses = {}
        @errors = ErrorKind::KINDS.to_h { |kind| [kind, 0] }
        @error_samples = {}
        @timeline = {}
        @stage_sends = {}
        @sent = @bytes_in = @bytes_out = 0
        @cpu = 0.0
        @gc_count = @gc_ms = 0
      end

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
        @first_sent = sent if @first_sent.nil? || sent < @first_sent
        @last_sent = sent if @last_sent.nil? || sent > @last_sent
      end

      # Records a response.
      # @param due [Float] @param sent [Float] @param done [Float] monotonic times.
      # @param status [Integer] @param bytes [Integer] response body bytes.
      # @return [void]
      def response!(due, sent, done, status, bytes)
        finished(done)
        @statuses[status] = @statuses.fetch(status, 0) + 1
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
      def measure
        cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
        gc = GC.stat.values_at(:count, :time)
        yield
      ensure
        @cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu
        @gc_count, @gc_ms = GC.stat.values_at(:count, :time).zip(gc).map { |now, before| now - before }
      end

      # Records a failed request.
      # @param due [Float] @param done [Float] monotonic times.
      # @param error [Exception]
      # @return [String] the error's kind.
      def error!(due, done, error)
        finished(done)
        kind = ErrorKind.of(error)
        @errors[kind] += 1
        sample(kind, error)
        second(due)[1] += 1
        kind
      end

      # @return [Integer] requests answered with a status code.
      def responses
        @statuses.values.sum
      end

      # @return [Integer] requests that failed without a status.
      def error_count
        @errors.values.sum
      end

      # Adds another recorder's data (same start) to this one.
      # @param other [Recorder]
      # @return [self]
      def merge!(other)
        [[@corrected, other.corrected], [@uncorrected, other.uncorrected], [@lateness, other.lateness], [@connects, other.connects]]
          .each { |mine, theirs| mine.merge!(theirs) }
        merge_counts(other)
        merge_times(other)
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

      def finished(done)
        @last_done = done if @last_done.nil? || done > @last_done
      end

      def second(due)
        @timeline[(due - @start).floor] ||= [Histogram.new, 0, 0]
      end

      def sample(kind, error)
        key = "#{kind}: #{error.class}: #{error.message}"[0, 200]
        return unless @error_samples.key?(key) || @error_samples.size < SAMPLE_LIMIT
        @error_samples[key] = @error_samples.fetch(key, 0) + 1
      end

      def merge_counts(other)
        other.statuses.each { |code, n| @statuses[code] = @statuses.fetch(code, 0) + n }
        other.errors.each { |kind, n| @errors[kind] += n }
        other.error_samples.each { |key, n| @error_samples[key] = @error_samples.fetch(key, 0) + n }
        @sent += other.sent
        @cpu += other.cpu
        @gc_count += other.gc_count
        @gc_ms += other.gc_ms
        @bytes_in += other.bytes_in
        @bytes_out += other.bytes_out
      end

      def merge_times(other)
        @first_sent = [@first_sent, other.first_sent].compact.min
        @last_sent = [@last_sent, other.last_sent].compact.max
        @last_done = [@last_done, other.last_done].compact.max
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
