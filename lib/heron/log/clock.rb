# frozen_string_literal: true

module Heron
  module Log
    # Wall-clock timestamps for log lines. The access-log stamp has one-second resolution, so it is
    # formatted once a second and shared by every request in that second (the hot path).
    class Clock
      # @param pattern [String, nil] a Time#strftime pattern for {#second_stamp}.
      def initialize(pattern = nil)
        @pattern = pattern
        @cached = [nil, nil].freeze
      end

      # @return [String] the current time to the second, formatted with the pattern (frozen, cached).
      def second_stamp
        second = Process.clock_gettime(Process::CLOCK_REALTIME, :second)
        cached = @cached
        return cached[1] if cached[0] == second
        stamp = Time.at(second).strftime(@pattern).freeze
        @cached = [second, stamp].freeze
        stamp
      end

      # @return [String] the current UTC time as ISO 8601 with milliseconds, e.g. 2026-11-22T01:02:03.456Z.
      def iso8601_ms
        Time.now.utc.strftime("%Y-%m-%dT%H:%M:%S.%LZ")
      end
    end
  end
end
