# frozen_string_literal: true

module Heron
  module Attack
    # In the parent of a multi-process run: a thread reads each generator process's
    # {ProgressPipe} snapshots and redraws one {Progress} line with their sum. The rate is the
    # sum of each process's own rate; the p99 shown is the worst process's p99, since the merged
    # one only exists at the end.
    class ProgressRelay
      # @param progress [Progress] the line to draw.
      # @param readers [Array<IO>] the read ends, one per process.
      def initialize(progress, readers)
        @progress = progress
        @readers = readers
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
        snapshots = @latest.values
        sums = snapshots.map { |s| s.first(3) }.transpose.map(&:sum)
        rate = snapshots.sum { |sent, *, elapsed_us| sent / [elapsed_us / 1e6, 1e-3].max }
        @progress.show(sums << snapshots.map { |s| s[3] }.max, rate)
      end
    end
  end
end
