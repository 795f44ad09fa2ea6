# frozen_string_literal: true

require "async"
require "async/notification"

module Heron
  module Attack
    # Fibers that run requests and are reused: a finished worker waits for its next request
    # instead of dying, so a steady run creates a few dozen fibers rather than one per request
    # (fiber and task set-up, and the garbage they leave, were a large share of the generator's
    # CPU). With a limit, {#dispatch} waits while every worker is busy. An idle worker waits
    # in the event loop and is resumed with its next request directly (an Async::Condition
    # per wait cost five objects a request).
    class WorkerPool
      # @param limit [Integer, nil] most workers (requests in flight); nil for no limit.
      # @yieldparam index [Integer] @yieldparam due [Float] the request to perform.
      def initialize(limit, &job)
        @limit = limit
        @job = job
        @idle = [] # the fibers of idle workers
        @workers = []
        @available = Async::Notification.new
      end

      # @return [Integer] how many workers exist (busy or idle).
      def size
        @workers.size
      end

      # Hands a request to an idle worker, or starts a new one; waits while at the limit.
      # @param task [Async::Task] the parent for new workers.
      # @param index [Integer] @param due [Float] the request.
      # @return [void]
      def dispatch(task, index, due)
        @available.wait while full?
        return Fiber.scheduler.resume(@idle.pop, [index, due]) unless @idle.empty?
        @workers << task.async { work(index, due) }
      end

      # Stops every worker (call once all requests have finished).
      # @return [void]
      def stop
        @workers.each(&:stop)
        @workers.clear
        @idle.clear
      end

      private

      def full?
        @limit && @idle.empty? && @workers.size >= @limit
      end

      def work(index, due)
        loop do
          @job.call(index, due)
          @idle.push(Fiber.current)
          @available.signal # runs the waiting dispatcher only after this worker is waiting below
          index, due = Fiber.scheduler.transfer
        end
      end
    end
  end
end
