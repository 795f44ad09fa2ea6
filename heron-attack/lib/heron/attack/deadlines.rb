# frozen_string_literal: true

require "async"
require_relative "clock"

module Heron
  module Attack
    # Request timeouts for one reactor without a timer per request. Async's `with_timeout` puts
    # each request's timer into the event loop's heap (io-event's, in Ruby), so with 5,000 slow
    # requests in flight every other timer, each sleep of the generator's schedule included, was
    # pushed into and popped off a heap 5,000 deep: an Array per swap, 24 of the 70 objects a
    # request allocated, and more garbage to collect while thousands of fibers were alive. Every
    # request of a client has the same timeout, so deadlines come in the order requests start:
    # a FIFO queue holds them, and one fiber checks its front a few times per timeout (at most
    # every {TICK} s). A request times out between its deadline and one tick later.
    class Deadlines
      include Clock

      TICK = 0.1

      # @param timeout [Numeric] seconds each block may run.
      def initialize(timeout)
        @timeout = timeout.to_f
        @tick = [@timeout / 4, TICK].min
        @queue = []
      end

      # Runs the block in the current fiber, raising Async::TimeoutError into it if it is still
      # running after the timeout.
      # @return [Object] the block's value.
      # @raise [Async::TimeoutError]
      def within
        entry = [now + @timeout, Fiber.current]
        @queue.push(entry)
        @reaper ||= Async::Task.current.async(transient: true) { reap }
        yield
      ensure
        entry[1] = nil if entry
      end

      # Stops the checking fiber (a later {#within} starts a new one).
      # @return [void]
      def stop
        @reaper&.stop
        @reaper = nil
      end

      private

      def reap
        loop do
          sleep(@tick)
          expire(now)
        end
      end

      # Drops finished entries from the front and times out the expired ones.
      def expire(time)
        while (entry = @queue.first) && (entry[1].nil? || entry[0] <= time)
          @queue.shift
          fiber = entry[1]
          Fiber.scheduler.raise(fiber, Async::TimeoutError, "execution expired") if fiber&.alive?
        end
      end
    end
  end
end
