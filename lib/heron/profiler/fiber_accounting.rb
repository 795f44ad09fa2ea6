# frozen_string_literal: true

module Heron
  module Profiler
    # Attributes CPU time, allocated objects and GC runs to the request each fiber works for.
    #
    # A `TracePoint(:fiber_switch)` reads the three counters at every switch and charges their
    # growth since the previous switch to the {RequestProfile} of the fiber that was running, so
    # two requests interleaving on one reactor each get only their own share. Fibers of Async
    # tasks a request starts join its profile ({AsyncTaskHook}). The TracePoint is enabled only
    # while at least one profile is open, so an idle or unprofiled server pays nothing.
    #
    # Limits: allocations and GC runs are process-wide counters, so with several reactor threads
    # another thread's allocations between two switches land on whichever fiber was current
    # here (CPU time is per thread and stays exact). Work in threads a request starts is not
    # charged to it. A GC run is charged to the fiber that triggered it.
    class FiberAccounting
      CPU_CLOCK = Process::CLOCK_THREAD_CPUTIME_ID

      # Starts with no profile open and the TracePoint disabled.
      def initialize
        @profiles = {}.compare_by_identity
        @running = {}.compare_by_identity
        @open = @opened = 0
        @lock = Mutex.new
        @trace = TracePoint.new(:fiber_switch) { switch_to(@profiles[Fiber.current]) }
      end

      # @return [RequestProfile, nil] the profile the current fiber works for.
      def current
        @profiles[Fiber.current]
      end

      # @param fiber [Fiber, nil]
      # @return [RequestProfile, nil] the profile that fiber works for.
      def profile_for(fiber)
        @profiles[fiber]
      end

      # @return [Boolean] whether the fiber-switch TracePoint is enabled.
      def tracing?
        @trace.enabled?
      end

      # Opens a profile for the current fiber, numbers it (see {RequestProfile#id}) and starts
      # charging it.
      # @param profile [RequestProfile]
      # @return [RequestProfile] the profile.
      def open(profile)
        profile.number = @lock.synchronize do
          @trace.enable if (@open += 1) == 1
          @opened += 1
        end
        attach(profile)
        profile
      end

      # Charges the current fiber (one of a task a request started) to a profile from now on.
      # @param profile [RequestProfile]
      # @param fiber [Fiber] the fiber to attach.
      # @return [void]
      def attach(profile, fiber = Fiber.current)
        @profiles[fiber] = profile
        profile.fibers << fiber
        switch_to(profile) if fiber.equal?(Fiber.current)
      end

      # Charges what the running profile used so far, so its counters are current.
      # @return [void]
      def checkpoint
        switch_to(@running[Thread.current])
      end

      # Stops charging a profile: its fibers are forgotten (a stored profile holding on to fibers
      # would keep those write-barrier-unprotected objects in the old generation and bring on
      # extra major GCs), and the TracePoint is disabled once no profile is open.
      # @param profile [RequestProfile]
      # @return [void]
      def close(profile)
        switch_to(nil) if @running[Thread.current].equal?(profile)
        profile.fibers.each { |fiber| @profiles.delete(fiber) if @profiles[fiber].equal?(profile) }
        profile.fibers.clear
        @lock.synchronize { release }
      end

      private

      def release
        return unless (@open -= 1).zero?
        @trace.disable
        @running.clear
      end

      # Charges the counters' growth to the profile that was running on this thread and starts
      # counting for `profile`. Called at every fiber switch: keep it cheap.
      def switch_to(profile)
        thread = Thread.current
        previous = @running[thread]
        return if previous.nil? && profile.nil?
        allocated = GC.stat(:total_allocated_objects)
        gcs = GC.count
        cpu = Process.clock_gettime(CPU_CLOCK, :float_millisecond)
        previous&.charge(allocated, gcs, cpu)
        profile&.mark(allocated, gcs, cpu)
        @running[thread] = profile
      end
    end
  end
end
