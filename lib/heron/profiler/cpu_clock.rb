# frozen_string_literal: true

require_relative "../heron_ext"

module Heron
  module Profiler
    # The calling thread's CPU time, read without a system call while the thread has stayed on
    # its CPU. {FiberAccounting} reads it at every fiber switch of a profiled request.
    #
    # Linux serves CLOCK_THREAD_CPUTIME_ID only through a system call. While a thread stays on
    # its CPU, though, its CPU time advances as the wall clock does, and the kernel says when it
    # left: it resets the `rseq_cs` pointer of the thread's rseq area (registered by glibc 2.35
    # and later) whenever the thread is preempted, blocks, migrates or takes a signal. So a
    # reading adds the CLOCK_MONOTONIC_RAW time since the last system-call reading when the
    # pointer Heron set is still there and that reading is under 1 ms old, and makes a new one
    # otherwise. Time a hypervisor takes within such a millisecond counts as CPU time here.
    # Readings never go back.
    #
    # Written in C (ext/heron/profiler_cpu_clock.c), which defines:
    #
    # - `CPUClock.now` -> Float: the calling thread's CPU time in milliseconds.
    # - `CPUClock.mode` -> `:rseq` (as above) or `:syscall` (every reading is the system call:
    #   no rseq, or the kernel did not clear the pointer during a short sleep at load).
    module CPUClock
    end
  end
end
