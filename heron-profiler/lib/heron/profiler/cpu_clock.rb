# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which {FiberAccounting} reads at
    # every fiber switch of a profiled request. Written in C (ext/heron_profiler/profiler_cpu_clock.c):
    #
    # - `CPUClock.now` -> Float: the calling thread's CPU time in milliseconds.
    module CPUClock
    end
  end
end
