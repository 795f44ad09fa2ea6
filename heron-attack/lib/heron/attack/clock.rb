# frozen_string_literal: true

module Heron
  module Attack
    # The load generator's one clock for due times, deadlines and latencies: CLOCK_MONOTONIC,
    # which wall time adjustments do not move. Call {.now}, or include the module for a private
    # `now`. (heron-attack runs without the heron gem, so it has its own.)
    module Clock
      module_function

      # @return [Float] seconds on the monotonic clock (the origin is arbitrary: compare, do not show).
      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
