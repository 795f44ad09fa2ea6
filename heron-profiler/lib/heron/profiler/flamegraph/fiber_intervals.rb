# frozen_string_literal: true

require_relative "../clock"

module Heron
  module Profiler
    class Flamegraph
      # When a request's fibers were running: a TracePoint on fiber switches, enabled only while
      # one flamegraph request runs, notes (CLOCK_MONOTONIC, in microseconds, the clock
      # stackprof stamps its samples with) each moment the thread switched into a fiber that
      # works for the profile (the request's own, or an Async task it started, see
      # {AsyncTaskHook}) and each moment it switched out to any other fiber (another request's,
      # or the event loop's).
      #
      # Switches in other threads are ignored: the intervals are those of the request's thread.
      class FiberIntervals
        # @param profile [RequestProfile] the open profile the request's fibers work for.
        # @param accounting [FiberAccounting] which profile each fiber works for.
        # @param thread [Thread] the request's thread.
        def initialize(profile, accounting, thread = Thread.current)
          @profile = profile
          @accounting = accounting
          @thread = thread
          @edges = []
          @trace = TracePoint.new(:fiber_switch) { switched }
        end

        # Notes the intervals while the block runs (the current fiber counts as running at the
        # start).
        # @yield the request's work.
        # @return [Object] the block's value.
        def record
          enter
          @trace.enable
          yield
        ensure
          @trace.disable
          leave
        end

        # @param timestamp [Integer] a CLOCK_MONOTONIC stamp in microseconds.
        # @return [Boolean] whether one of the request's fibers was running then.
        def cover?(timestamp)
          (@edges.bsearch_index { |edge| edge > timestamp } || @edges.size).odd?
        end

        # @return [Integer] how many times the request's fibers were switched in.
        def count
          (@edges.size + 1) / 2
        end

        private

        def switched
          return unless Thread.current.equal?(@thread)
          @accounting.profile_for(Fiber.current).equal?(@profile) ? enter : leave
        end

        def enter
          @edges << Clock.now(:microsecond) if @edges.size.even?
        end

        def leave
          @edges << Clock.now(:microsecond) if @edges.size.odd?
        end
      end
    end
  end
end
