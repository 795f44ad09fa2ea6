# frozen_string_literal: true

module Heron
  module Attack
    # In the parent of a multi-process run: a thread reads each generator process's
    # {ProgressPipe} snapshots and redraws one {Progress} line with their sum (the p99 shown is
    # the worst process's p99, not the merged one, which only exists at the end).
    class ProgressRelay
      # @param progress [Progress] the line to draw.
      # @param readers [Array<IO>] the read ends, one per process.
      # @param start [Float] the run's monotonic start.
      def initialize(progress, readers, start)
        @progress = progress
        @readers = readers
        @start = start
        @latest = {}
      end

      # Starts the reading thread.
      # @return [self]
      def start
        @thread = Thread.new { relay until @readers.empty? }
        self
      end

      # Waits for every process to close its pipe, then clears the line.
      # @return [void]
      def finish
        @thread&.join
        @progress.finish
      end

      private

      def relay
        ready, = IO.select(@readers)
        ready.each { |reader| read(reader) }
        draw unless @latest.empty?
      end

      def read(reader)
        line = reader.gets
        return @latest[reader] = line.split.map(&:to_i) if line
        @readers.delete(reader)
        reader.close
      end

      def draw
        sums = @latest.values.transpose.map(&:sum)
        sums[3] = @latest.values.map(&:last).max
        @progress.show(sums, Process.clock_gettime(Process::CLOCK_MONOTONIC) - @start)
      end
    end
  end
end
