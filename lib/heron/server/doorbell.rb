# frozen_string_literal: true

module Heron
  class Server
    # A task's fiber waiting, with no timer, until another fiber of its reactor rings: the
    # connection workers' spawner waits for pending connections, the hot waits' watcher for a
    # first waiter. Built on the fiber scheduler's `block` and `unblock`, as Ruby's own Mutex
    # and Queue are, rather than an Async::Notification: a ring queues the waiter for the loop's
    # next turn without switching to it, and costs no objects (bench/results/wakeups.md).
    class Doorbell
      def initialize
        @fiber = nil
        @waiting = false
      end

      # Waits in the calling fiber until {#ring}. Only one fiber waits on a doorbell.
      # @return [void]
      def wait
        @fiber = Fiber.current
        @waiting = true
        Fiber.scheduler.block(nil, nil) while @waiting
      ensure
        @waiting = false # stopped while waiting: a later ring must not wake its dead fiber
      end

      # Wakes the waiting fiber at the loop's next turn; nothing when none waits (the owner
      # looks for work again before it waits next). Never switches fibers.
      # @return [void]
      def ring
        return unless @waiting
        @waiting = false
        Fiber.scheduler.unblock(nil, @fiber)
      end
    end
  end
end
