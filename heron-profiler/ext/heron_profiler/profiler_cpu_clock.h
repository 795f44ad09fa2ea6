/*
 * Heron::Profiler::CPUClock (profiler_cpu_clock.c): the thread's CPU clock.
 */
#ifndef HERON_PROFILER_CPU_CLOCK_H
#define HERON_PROFILER_CPU_CLOCK_H

#include <ruby.h>

double Heron_Profiler_CPUClock_now_ms(void);
void Init_Heron_Profiler_CPUClock(VALUE mProfiler);

#endif
