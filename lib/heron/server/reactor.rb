# frozen_string_literal: true

require "async"
require_relative "sleep_lanes"

module Heron
  class Server
    # The event loop of one reactor thread: Async's, except that `Kernel#sleep` in its fibers
    # (an app's `sleep 1`) waits in {Server::SleepLanes} rather than as a timer of its own in
    # io-event's heap. One waker task sleeps until the earliest deadline (to the next {GRAIN})
    # and resumes every fiber that is due. Other waits (I/O, timeouts, Async's own timers) are Async's as they were.
    class Reactor < Async::Reactor
      # The waker wakes on multiples of this (seconds), so sleeps that end within the same
      # millisecond are resumed together, by one timer: at 5,000 requests/s of `sleep 1` that is
      # at most 1,000 wake-ups a second instead of 5,000. A sleep ends up to this much later.
      GRAIN = 0.001

      # Runs the block as the root task of a new reactor in the calling thread, as `Sync` does,
      # and waits for it.
      # @yieldparam task [Async::Task]
      # @return [Object] the block's value.
      def self.sync(&block)
        new.run(finished: Async::Condition.new, &block).wait
      ensure
        Fiber.set_scheduler(nil)
      end

      def initialize(...)
        super
        @sleepers = Server::SleepLanes.new
      end

      # The fiber scheduler's hook for `Kernel#sleep`.
      # @param duration [Numeric, nil] seconds; nil sleeps until woken.
      # @return [void]
      def kernel_sleep(duration = nil)
        return super unless duration.is_a?(Numeric) && duration.positive?
        @waker ||= start_waker
        entry = @sleepers.add(duration, Fiber.current, now) or return super
        wake_earlier if entry[0] < @wake_at
        block(nil, nil)
      ensure
        @sleepers.cancel(entry) if entry
      end

      private

      def start_waker
        Async::Task.new(self, transient: true, annotation: "heron sleepers") { wake }.tap(&:run)
      end

      # The waker waits for a later deadline than this new sleep's: wake it once to wait again.
      def wake_earlier
        @wake_at = -Float::INFINITY
        unblock(nil, @waker.fiber)
      end

      # Sleeps until the earliest deadline (or until a sleep with an earlier one wakes it), then
      # resumes every fiber that is due.
      def wake
        loop do
          due = @sleepers.next_due
          @wake_at = due || Float::INFINITY
          block(nil, due && [(due / GRAIN).ceil * GRAIN - now, 0].max)
          @wake_at = -Float::INFINITY # resuming: a new sleep needs no wake-up
          @sleepers.take_due(now).each { |fiber| resume(fiber) }
        end
      end

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
