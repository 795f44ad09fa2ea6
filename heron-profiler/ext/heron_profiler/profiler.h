/*
 * The profiler's extension: what its C files share (the frozen Strings of profiler_ext.c, the
 * monotonic clock), and each C class's own header. Every class lives in one file,
 * profiler_<name>.c, whose profiler_<name>.h declares its Init_ and what other C files call;
 * Ruby (heron-profiler/lib/heron/profiler/) drives them and calls back into none by name.
 */
#ifndef HERON_PROFILER_H
#define HERON_PROFILER_H

#include <ruby.h>
#include <math.h>
#include <stddef.h>

VALUE Heron_Profiler_str(const char *s); /* profiler_ext.c */
double Heron_Profiler_monotonic(void);   /* CLOCK_MONOTONIC seconds (profiler_request_profile.c) */

#include "profiler_cpu_clock.h"
#include "profiler_request_profile.h"
#include "profiler_fiber_accounting.h"
#include "profiler_store_ring.h"
#include "profiler_dashboard_loopback_rule.h"
#include "profiler_meter.h"
#include "profiler_route_stats_route.h"
#include "profiler_sql_scanner.h"
#include "profiler_thread_allocations.h"

#endif
