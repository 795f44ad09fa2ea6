# frozen_string_literal: true

module Heron
  module Log
    # Wall-clock timestamps for log lines. Formatting a time is costly next to the rest of an
    # access line, so the part down to the second is formatted once a second and shared by every
    # line in that second (the hot path); milliseconds are appended as digits.
    class Clock
      MILLIS = Array.new(1000) { |ms| format(".%03d", ms).freeze }.freeze

      # @param pattern [String] a Time#strftime pattern down to the second.
      # @param utc [Boolean] format in UTC rather than local time.
      def initialize(pattern, utc: false)
        @pattern = pattern
        @utc = utc
        @cached = [nil, nil].freeze
      end

      # @return [String] the current time formatted with the pattern (frozen, shared within a second).
      def stamp
        at_second(Process.clock_gettime(Process::CLOCK_REALTIME, :second))
      end

      # @return [String] the current time formatted with the pattern, then ".mmm" milliseconds.
      def stamp_ms
        millis = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
        "#{at_second(millis / 1000)}#{MILLIS[millis % 1000]}"
      end

      private

      def at_second(second)
        cached = @cached
        return cached[1] if cached[0] == second
        time = @utc ? Time.at(second).utc : Time.at(second)
        stamp = time.strftime(@pattern).freeze
        @cached = [second, stamp].freeze
        stamp
      end
    end
  end
end
