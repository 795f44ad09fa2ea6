# frozen_string_literal: true

require_relative "clock"

module Heron
  module Profiler
    # Wraps a request's `rack.after_reply` callables in place to time them: from the first one
    # starting to the last one finishing (they may run concurrently), then reports the span once.
    class AfterReplyTimer
      # @param callables [Array<#call>] env["rack.after_reply"], changed in place.
      # @yieldparam ms [Float] the span of all the callables, once the last has finished.
      def initialize(callables, &done)
        @callables = callables
        @pending = callables.size
        @done = done
      end

      # Replaces each callable by a timed one; reports 0.0 at once when there are none.
      # @return [void]
      def wrap
        return @done.call(0.0) if @pending.zero?
        @callables.map! { |callable| timed(callable) }
      end

      private

      def timed(callable)
        -> { run(callable) }
      end

      def run(callable)
        @started ||= Clock.now
        callable.call
      ensure
        @done.call(Clock.ms_since(@started)) if (@pending -= 1).zero?
      end
    end
  end
end
