/*
 * Heron::Profiler::ThreadAllocations (profiler_thread_allocations.c): per-thread allocation
 * counts, which profiler_request_profile.c reads instead of the process's once enabled.
 */
#ifndef HERON_PROFILER_THREAD_ALLOCATIONS_H
#define HERON_PROFILER_THREAD_ALLOCATIONS_H

#include <ruby.h>

/* Whether allocations are counted per thread (ThreadAllocations.enable was called). */
int Heron_Profiler_ThreadAllocations_enabled(void);
/* Objects the calling thread has allocated since counting began. */
size_t Heron_Profiler_ThreadAllocations_count(void);
void Init_Heron_Profiler_ThreadAllocations(VALUE mProfiler);

#endif
