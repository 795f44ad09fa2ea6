# frozen_string_literal: true

module Heron
  # The server's one clock for deadlines, timeouts and durations: CLOCK_MONOTONIC, which wall
  # time adjustments (NTP, a changed date) do not move. Call {.now}, or include the module for a
  # private `now`.
  module Clock
    module_function

    # @return [Float] seconds on the monotonic clock (the origin is arbitrary: compare, do not show).
    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end
