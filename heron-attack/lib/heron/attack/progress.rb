# frozen_string_literal: true

module Heron
  module Attack
    # The live status line on stderr while an attack runs: requests sent, the rate achieved so
    # far, the corrected p99 so far, errors and requests in flight. It redraws one line in
    # place, so it is only used when stderr is a terminal ({.for} returns nil otherwise).
    class Progress
      # @param io [IO] where to draw (stderr).
      # @param total [Integer] requests planned for the whole run.
      # @return [Progress, nil] nil unless io is a TTY.
      def self.for(io, total:)
        io.respond_to?(:tty?) && io.tty? ? new(io, total: total) : nil
      end

      # @param recorder [Recorder] a run so far.
      # @return [Array(Integer, Integer, Integer, Integer)] sent, finished, errors and the corrected p99 in µs.
      def self.snapshot(recorder)
        [recorder.sent, recorder.responses + recorder.error_count, recorder.error_count,
         recorder.corrected.percentile(99)]
      end

      # @param io [IO] @param total [Integer] see {.for}.
      def initialize(io, total:)
        @io = io
        @total = total
      end

      # Redraws the line from a recorder (the single-process case).
      # @param recorder [Recorder] the run so far.
      # @param now [Float] the monotonic time.
      # @return [void]
      def update(recorder, now)
        show(self.class.snapshot(recorder), recorder.sent / [now - recorder.start, 1e-3].max)
      end

      # Redraws the line from a snapshot (summed over processes by {ProgressRelay}).
      # @param snapshot [Array(Integer, Integer, Integer, Integer)] see {.snapshot}.
      # @param rate [Float] requests sent per second so far.
      # @return [void]
      def show(snapshot, rate)
        @io.write("\r\e[K#{line(snapshot, rate)}")
      end

      # Clears the line.
      # @return [void]
      def finish
        @io.write("\r\e[K")
      end

      # @param snapshot [Array(Integer, Integer, Integer, Integer)] see {.snapshot}.
      # @param rate [Float] requests sent per second so far.
      # @return [String] e.g. "sent 400/600  rate 200.0/s  p99 3.1ms  errors 0  in flight 2".
      def line(snapshot, rate)
        sent, finished, errors, p99 = snapshot
        format("sent %d/%d  rate %.1f/s  p99 %.1fms  errors %d  in flight %d", sent, @total,
               rate, p99 / 1000.0, errors, sent - finished)
      end
    end
  end
end
