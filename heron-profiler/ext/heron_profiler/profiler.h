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

/*
 * A walk over a Hash's entries for callbacks that only read them (no allocation, no Ruby call,
 * the Hash left alone): the Meter's pass over a request's env, the look for an app's own
 * Server-Timing. rb_hash_stlike_foreach is libruby's own walk of a Hash's table (exported,
 * declared only in its internal headers; extconf.rb checks for it): it skips rb_hash_foreach's
 * guard against the Hash changing under it (an rb_ensure per walk and a check per entry,
 * about 55 instructions an entry), which such a callback does not need. The callback is an
 * st_foreach callback: int (st_data_t key, st_data_t value, st_data_t arg).
 */
#ifdef HAVE_RB_HASH_STLIKE_FOREACH
int rb_hash_stlike_foreach(VALUE hash, st_foreach_callback_func *func, st_data_t arg);
#define HERON_PROFILER_HASH_FOREACH(hash, func, arg) rb_hash_stlike_foreach((hash), (func), (st_data_t)(arg))
#else
#define HERON_PROFILER_HASH_FOREACH(hash, func, arg) rb_hash_foreach((hash), (func), (VALUE)(arg))
#endif

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
