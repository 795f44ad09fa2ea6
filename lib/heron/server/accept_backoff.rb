# frozen_string_literal: true

module Heron
  class Server
    # What an accept loop does when `accept` fails (EMFILE, ENFILE, ENOBUFS, ENOMEM or anything
    # else the kernel says): it waits a little, longer each time up to a cap, and logs once per
    # burst of failures (when it starts, and when accepting works again), never once per attempt.
    class AcceptBackoff
      FIRST_DELAY = 0.005
      MAX_DELAY = 0.1
      private_constant :FIRST_DELAY, :MAX_DELAY

      # @return [Integer] failures in the current burst (0 when accepting works).
      attr_reader :failures

      # @param logger [Log::Logger]
      def initialize(logger)
        @logger = logger
        @failures = 0
        @delay = FIRST_DELAY
      end

      # Records one failed accept.
      # @param error [Exception] what accept raised.
      # @return [Float] seconds to wait before trying again.
      def failed(error)
        start_burst(error) if @failures.zero?
        @failures += 1
        delay = @delay
        @delay = [@delay * 2, MAX_DELAY].min
        delay
      end

      # Records a successful accept; ends a burst of failures, if one was under way.
      # @return [void]
      def succeeded
        return if @failures.zero?
        seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - @since
        @logger.warn("accepting again after #{@failures} failed accepts in #{seconds.round(2)} s")
        @failures = 0
        @delay = FIRST_DELAY
      end

      private

      def start_burst(error)
        @since = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        @logger.warn("accept failed (#{error.class.name}: #{error.message}); backing off until it works again")
      end
    end
  end
end
