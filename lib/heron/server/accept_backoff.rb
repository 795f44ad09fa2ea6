# frozen_string_literal: true

require_relative "../clock"

module Heron
  class Server
    # What an accept loop does when `accept` fails (EMFILE, ENFILE, ENOBUFS, ENOMEM or anything
    # else the kernel says): it waits a little, longer each time up to a cap, and logs once per
    # burst of failures, never once per attempt. A burst starts with the first failure and ends
    # with a successful accept at least `quiet` seconds after the last failure, so a process that
    # sits at its descriptor limit (accept one, fail, accept one...) logs two lines, not two per
    # connection.
    class AcceptBackoff
      FIRST_DELAY = 0.005
      MAX_DELAY = 0.1
      private_constant :FIRST_DELAY, :MAX_DELAY

      # @return [Integer] failures in the current burst (0 when none is under way).
      attr_reader :failures

      # @param logger [Log::Logger]
      # @param quiet [Numeric] seconds without a failure that end a burst.
      # @param clock [#call] monotonic seconds (replaceable in tests).
      def initialize(logger, quiet: 1.0, clock: Clock.method(:now))
        @logger = logger
        @quiet = quiet
        @clock = clock
        @failures = 0
        @delay = FIRST_DELAY
      end

      # Records one failed accept.
      # @param error [Exception] what accept raised.
      # @return [Float] seconds to wait before trying again.
      def failed(error)
        @last_failure = @clock.call
        start_burst(error) if @failures.zero?
        @failures += 1
        delay = @delay
        @delay = [@delay * 2, MAX_DELAY].min
        delay
      end

      # Records a successful accept; ends the burst of failures, if one is under way and quiet.
      # @return [void]
      def succeeded
        @delay = FIRST_DELAY
        return if @failures.zero? || @clock.call - @last_failure < @quiet
        @logger.warn("accepting again after #{@failures} failed accepts over #{(@last_failure - @since).round(2)} s")
        @failures = 0
      end

      private

      def start_burst(error)
        @since = @last_failure
        @logger.warn("accept failed (#{error.class.name}: #{error.message}); backing off until it works again")
      end
    end
  end
end
