/*
 * The per-request profiler's hot path, in C: Heron::Profiler::RequestProfile holds one
 * request's stamps and counters, Heron::Profiler::FiberAccounting charges CPU time,
 * allocations and GC runs to it at every fiber switch. Both run on every profiled request, so
 * they avoid Ruby method calls and allocations; lib/heron/profiler/ adds the cold methods
 * (to_h, the SQL list, the dashboard).
 */
#ifndef HERON_PROFILER_H
#define HERON_PROFILER_H

#include <ruby.h>
#include <math.h>
#include <stddef.h>

typedef struct Heron_Profiler_RequestProfile {
  VALUE method, path, query, status, queries, n_plus_one, id;
  VALUE fiber;  /* the first fiber charged to this profile (the request's own), or Qnil */
  VALUE fibers; /* further fibers (tasks the request started): an Array, or Qnil */
  double started, app_start;                  /* CLOCK_MONOTONIC seconds */
  double queue_ms, app_ms, total_ms, after_reply_ms; /* NAN while unknown (nil in Ruby) */
  double cpu_ms, db_ms, mark_cpu;
  size_t mark_allocated, mark_gcs;
  long allocations, gc_count, db_count, number; /* number 0: not numbered yet */
} Heron_Profiler_RequestProfile;

/* Counters read at a fiber switch. */
typedef struct Heron_Profiler_Counters {
  size_t allocated, gcs;
  double cpu_ms;
} Heron_Profiler_Counters;

extern VALUE cHeron_Profiler_RequestProfile;
extern VALUE Heron_Profiler_str_PATH_INFO, Heron_Profiler_str_QUERY_STRING;

/* Whether the profile's request is over (RequestProfile#finished was called). */
static inline int Heron_Profiler_RequestProfile_done(const Heron_Profiler_RequestProfile *profile)
{
  return !isnan(profile->total_ms);
}

Heron_Profiler_RequestProfile *Heron_Profiler_RequestProfile_get(VALUE self);
double Heron_Profiler_monotonic(void);
VALUE Heron_str(const char *s); /* heron_ext.c */
void Heron_Profiler_Counters_read(Heron_Profiler_Counters *counters);
void Heron_Profiler_RequestProfile_mark(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now);
void Heron_Profiler_RequestProfile_charge(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now);

VALUE Heron_Profiler_RequestProfile_for(VALUE env, VALUE path, VALUE query);
VALUE Heron_Profiler_RequestProfile_app_returned(VALUE self, VALUE status);
VALUE Heron_Profiler_RequestProfile_finished(VALUE self);
VALUE Heron_Profiler_RequestProfile_add_headers(VALUE self, VALUE headers);

VALUE Heron_Profiler_FiberAccounting_open(VALUE self, VALUE profile);
VALUE Heron_Profiler_FiberAccounting_checkpoint(VALUE self);
VALUE Heron_Profiler_FiberAccounting_close(VALUE self, VALUE profile);

void Init_Heron_Profiler_RequestProfile(VALUE mProfiler);
void Init_Heron_Profiler_FiberAccounting(VALUE mProfiler);
void Init_Heron_Profiler_Middleware(VALUE mProfiler);
void Init_Heron_Profiler_Store(VALUE mProfiler);

#endif
