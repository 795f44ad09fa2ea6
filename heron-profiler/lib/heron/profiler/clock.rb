# frozen_string_literal: true

module Heron
  module Profiler
    # The profiler's one clock for durations and deadlines: CLOCK_MONOTONIC, which wall time
    # adjustments do not move. The gem does not depend on heron, so it has its own (the server's
    # is `Heron::Clock`); thread CPU time is {CPUClock}'s.
    module Clock
      module_function

      # @param unit [Symbol] as Process.clock_gettime takes it: :float_second, :microsecond, ...
      # @return [Numeric] the monotonic clock in that unit (the origin is arbitrary: compare, do not show).
      def now(unit = :float_second) = Process.clock_gettime(Process::CLOCK_MONOTONIC, unit)

      # @param started [Float] a {.now} in seconds.
      # @return [Float] the milliseconds since then.
      def ms_since(started) = (now - started) * 1000.0
    end
  end
end
