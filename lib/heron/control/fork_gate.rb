# frozen_string_literal: true

module Heron
  module Control
    # Keeps a cluster master's forks and its control thread's fibers apart.
    #
    # Ruby 3.1 cannot fork safely while another thread is inside a fiber other than its root
    # one: the child marks that thread's root fiber as still suspended, while its VM stack lived
    # on the dead thread's machine stack, which the child's own new threads reuse; the child's
    # GC then reads garbage from it (`[BUG] try to mark T_NONE object`, segmentation faults, or
    # a worker that quietly dies). The control thread runs its reactor one turn at a time
    # through {#turn}; between turns it is in its root fiber. {#hold} (the master, around each
    # fork) waits for the current turn to end, with the reactor woken so it ends at once, and
    # no turn starts until the fork is done.
    class ForkGate
      def initialize
        @mutex = Thread::Mutex.new
        @changed = Thread::ConditionVariable.new
        @forks = 0
        @turning = false
      end

      # Runs one turn of the control thread's reactor (called from its root fiber), after any
      # fork that is waiting.
      # @yield the turn.
      # @return [Object] the block's value.
      def turn
        @mutex.synchronize do
          @changed.wait(@mutex) while @forks.positive?
          @turning = true
        end
        yield
      ensure
        changing { @turning = false }
      end

      # Runs the block (a fork) while the control thread is between turns.
      # @param wake [#call] makes a running turn return soon (wakes the reactor's selector).
      # @yield the fork.
      # @return [Object] the block's value.
      def hold(wake)
        @mutex.synchronize do
          @forks += 1
          wake.call if @turning
          @changed.wait(@mutex) while @turning
        end
        yield
      ensure
        changing { @forks -= 1 }
      end

      private

      def changing
        @mutex.synchronize do
          yield
          @changed.broadcast
        end
      end
    end
  end
end
