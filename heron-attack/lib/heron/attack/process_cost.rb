# frozen_string_literal: true

module Heron
  module Attack
    # What a run cost the generator process(es): CPU seconds and garbage collections. Part of a
    # {Recorder}; merges by adding.
    class ProcessCost
      # @return [Float] CPU seconds used.
      attr_accessor :cpu
      # @return [Integer] garbage collections.
      attr_accessor :gc_count
      # @return [Integer] milliseconds spent collecting garbage.
      attr_accessor :gc_ms

      def initialize
        @cpu = 0.0
        @gc_count = @gc_ms = 0
      end

      # Runs the block and records the CPU time and collections this process spent in it.
      # @return [Object] the block's value.
      def measure
        cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
        gc = GC.stat.values_at(:count, :time)
        yield
      ensure
        @cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu
        @gc_count, @gc_ms = GC.stat.values_at(:count, :time).zip(gc).map { |now, before| now - before }
      end

      # Adds another process's cost.
      # @param other [ProcessCost]
      # @return [self]
      def merge!(other)
        @cpu += other.cpu
        @gc_count += other.gc_count
        @gc_ms += other.gc_ms
        self
      end
    end
  end
end
