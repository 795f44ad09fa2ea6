# frozen_string_literal: true

require_relative "progress"

module Heron
  module Attack
    # Stands in for {Progress} inside a generator process of a multi-process run: it writes a
    # one-line snapshot to a pipe, and the parent's {ProgressRelay} sums the processes' lines.
    class ProgressPipe
      # @param io [IO] the write end of a pipe.
      def initialize(io)
        @io = io
      end

      # Writes "sent finished errors p99_us elapsed_us": the elapsed time lets the parent add up
      # per-process rates even though the processes report at different moments.
      # @param recorder [Recorder] this process's run so far.
      # @param now [Float] the monotonic time.
      # @return [void]
      def update(recorder, now)
        elapsed = ((now - recorder.start) * 1e6).round
        @io.write("#{[*Progress.snapshot(recorder), elapsed].join(' ')}\n")
      rescue IOError, SystemCallError
        nil # the parent stopped listening; progress is best effort
      end

      # Closes the pipe, which tells the relay this process is done.
      # @return [void]
      def finish
        @io.close
      end
    end
  end
end
