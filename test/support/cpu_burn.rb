# frozen_string_literal: true

# Spends CPU time on the current thread: what a busy request does in the profiler's tests.
module CpuBurn
  # @param ms [Numeric] milliseconds of the thread's CPU time to use.
  # @return [nil]
  def burn_cpu(ms)
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    started = Process.clock_gettime(clock, :float_millisecond)
    nil while Process.clock_gettime(clock, :float_millisecond) - started < ms
  end
end
