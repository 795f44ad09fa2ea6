# frozen_string_literal: true

module Bench
  # Monotonic seconds, for deadlines and durations in the bench scripts.
  module Clock
    module_function

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # @return [Float] the seconds the block took.
    def elapsed
      start = now
      yield
      now - start
    end
  end
end
