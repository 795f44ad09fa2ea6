/*
 * The profiler's extension (heron/profiler_ext.so), apart from Heron's core: it is loaded only
 * when profiling or metrics are on (lib/heron/profiler.rb). Its Init defines each C class, one
 * file each:
 *
 *   Heron::Profiler::CPUClock        profiler_cpu_clock.c
 *   Heron::Profiler::RequestProfile  profiler_request_profile.c
 *   Heron::Profiler::FiberAccounting profiler_fiber_accounting.c
 *   Heron::Profiler::Meter           profiler_meter.c (what Ruby's Middleware drives)
 *   Heron::Profiler::Store::Ring     profiler_store_ring.c
 *   Heron::Profiler::Dashboard::LoopbackRule profiler_dashboard_loopback_rule.c
 *   Heron::Profiler::RouteStats::Route profiler_route_stats_route.c
 *   Heron::Profiler::SqlScanner      profiler_sql_scanner.c (.scan, SqlNormalizer's first pass)
 *   Heron::Profiler::ThreadAllocations profiler_thread_allocations.c (per-thread counts, read by RequestProfile)
 */
#include "profiler.h"
#include <ruby/encoding.h>
#include <string.h>

/* A frozen (binary) String kept alive for good. Interned in Ruby's deduplicated-string table,
 * so it is the very object the core's parser uses as an env key for the same text. */
VALUE Heron_Profiler_str(const char *s)
{
  VALUE str = rb_enc_interned_str(s, (long)strlen(s), rb_ascii8bit_encoding());
  rb_gc_register_mark_object(str);
  return str;
}

void Init_profiler_ext(void)
{
  VALUE mProfiler = rb_define_module_under(rb_define_module("Heron"), "Profiler");
  Init_Heron_Profiler_CPUClock(mProfiler);
  Init_Heron_Profiler_RequestProfile(mProfiler);
  Init_Heron_Profiler_FiberAccounting(mProfiler);
  Init_Heron_Profiler_Meter(mProfiler);
  Init_Heron_Profiler_Store_Ring(mProfiler);
  Init_Heron_Profiler_Dashboard_LoopbackRule(mProfiler);
  Init_Heron_Profiler_RouteStats_Route(mProfiler);
  Init_Heron_Profiler_SqlScanner(mProfiler);
  Init_Heron_Profiler_ThreadAllocations(mProfiler);
}
