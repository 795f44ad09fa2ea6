/*
 * Heron::Profiler::CPUClock: the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
 *
 * Linux serves this clock only through a system call (the vDSO does not), about 0.4-1 µs on a
 * virtual machine; a CPU-sampled profiled request (config.profile_cpu_sample) reads it twice
 * plus once per fiber switch, the others not at all. An earlier
 * version skipped most of those calls through glibc's rseq area; it saved about 1.6 µs per
 * profiled request but needed code few maintainers can review, so the plain call is used.
 *
 *   CPUClock.now -> Float (ms)
 */
#include "profiler.h"
#include <time.h>

/* CPU time of the calling thread, in ms. */
double Heron_Profiler_CPUClock_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* call-seq: CPUClock.now -> Float. The calling thread's CPU time in ms. */
static VALUE Heron_Profiler_CPUClock_now(VALUE self)
{
  return DBL2NUM(Heron_Profiler_CPUClock_now_ms());
}

void Init_Heron_Profiler_CPUClock(VALUE mProfiler)
{
  VALUE mod = rb_define_module_under(mProfiler, "CPUClock");
  rb_define_module_function(mod, "now", Heron_Profiler_CPUClock_now, 0);
}
