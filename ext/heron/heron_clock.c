/*
 * Heron::Clock: the server's one clock for deadlines, timeouts and durations (lib/heron/clock.rb).
 * In C because a request reads it about four times (the wait for its head, its start, its
 * duration, a hot wait's deadline) and the Ruby method around Process.clock_gettime was a frame
 * of its own each time (bench/results/per_core.md, "Fewer cold lines a request").
 *
 *   Heron::Clock.now -> Float   (and a private #now where the module is included)
 */
#include "heron_clock.h"
#include <time.h>

/* call-seq: now -> Float
 * Seconds on CLOCK_MONOTONIC, which wall time adjustments (NTP, a changed date) do not move; the
 * origin is arbitrary: compare, do not show. The same value as
 * Process.clock_gettime(Process::CLOCK_MONOTONIC). */
static VALUE Heron_Clock_now(VALUE self)
{
  struct timespec ts;
  (void)self;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) rb_sys_fail("clock_gettime");
  return DBL2NUM((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

void Init_Heron_Clock(VALUE mHeron)
{
  VALUE mClock = rb_define_module_under(mHeron, "Clock");
  rb_define_module_function(mClock, "now", Heron_Clock_now, 0);
}
