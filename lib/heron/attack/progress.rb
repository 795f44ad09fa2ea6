# frozen_string_literal: true

module Heron
  module Attack
    # The live status line on stderr while an attack runs: requests sent, the rate achieved so
    # far, the corrected p99 so far, errors and requests in flight. It redraws one line in
    # place, so it is only used when stderr is a terminal ({.for} returns nil otherwise).
    class Progress
      # @param io [IO] where to draw (stderr).
      # @param total [Integer] requests planned for this process.
      # @return [Progress, nil] nil unless io is a TTY.
      def self.for(io, total:)
        io.respond_to?(:tty?) && io.tty? ? new(io, total: total) : nil
      end

      # @param io [IO] @param total [Integer] see {.for}.
      def initialize(io, total:)
        @io = io
        @total = total
      end

      # Redraws the line.
      # @param recorder [Recorder] the run so far.
      # @param now [Float] the monotonic time.
      # @return [void]
      def update(recorder, now)
        @io.write("\r\e[K#{line(recorder, now)}")
      end

      # Clears the line.
      # @return [void]
      def finish
        @io.write("\r\e[K")
      end

      # @param recorder [Recorder] @param now [Float]
      # @return [String] the status text, e.g. "sent 400/600  rate 200.0/s  p99 3.1ms  errors 0  in flight 2".
      def line(recorder, now)
        elapsed = [now - recorder.start, 1e-3].max
        in_flight = recorder.sent - recorder.responses - recorder.error_count
        format("sent %d/%d  rate %.1f/s  p99 %.1fms  errors %d  in flight %d", recorder.sent, @total,
               recorder.sent / elapsed, recorder.corrected.percentile(99) / 1000.0, recorder.error_count, in_flight)
      end
    end
  end
end
