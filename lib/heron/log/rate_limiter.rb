# frozen_string_literal: true

require_relative "../clock"

module Heron
  module Log
    # Lets at most `limit` entries through per `interval` seconds and counts the rest, so a flood
    # (thousands of malformed requests a second) costs a few log lines, not the disk. The first
    # entry let through after a suppressed stretch learns how many were dropped.
    class RateLimiter
      # @param limit [Integer] entries per interval.
      # @param interval [Float] seconds.
      # @param clock [#call] monotonic seconds (tests pass their own).
      def initialize(limit: 10, interval: 1.0, clock: Heron::Clock.method(:now))
        @limit = limit
        @interval = interval
        @clock = clock
        @lock = Mutex.new
        @window = -Float::INFINITY
        @count = @suppressed = 0
      end

      # @yieldparam suppressed [Integer] entries dropped since the last one let through.
      # @return [Boolean] whether the block ran (the entry was let through).
      def allow
        dropped = @lock.synchronize { admit(@clock.call) }
        return false if dropped.nil?
        yield dropped
        true
      end

      private

      # @return [Integer, nil] how many were dropped before this one, nil when this one is.
      def admit(now)
        start_window(now) if now - @window >= @interval
        if @count >= @limit
          @suppressed += 1
          return nil
        end
        @count += 1
        dropped = @suppressed
        @suppressed = 0
        dropped
      end

      def start_window(now)
        @window = now
        @count = 0
      end
    end
  end
end
