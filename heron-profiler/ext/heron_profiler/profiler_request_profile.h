/*
 * Heron::Profiler::RequestProfile (profiler_request_profile.c): one request's stamps and
 * counters, and the Counters a fiber switch reads.
 */
#ifndef HERON_PROFILER_REQUEST_PROFILE_H
#define HERON_PROFILER_REQUEST_PROFILE_H

#include <ruby.h>

#include <math.h>
#include <stddef.h>

typedef struct Heron_Profiler_RequestProfile {
  VALUE method, path, query, status, queries, n_plus_one, id;
  VALUE fiber;  /* the first fiber charged to this profile (the request's own), or Qnil */
  VALUE fibers; /* further fibers (tasks the request started): an Array, or Qnil */
  VALUE extras; /* what only Ruby code reads (custom steps, per-shape counts): a Hash, or Qnil */
  double started, app_start;                  /* CLOCK_MONOTONIC seconds */
  double queue_ms, app_ms, total_ms, after_reply_ms; /* NAN while unknown (nil in Ruby) */
  double reactor_ms, mark_held; /* ms the request's fibers held the thread (CLOCK_MONOTONIC, vDSO) */
  double cpu_ms, db_ms, mark_cpu; /* cpu_ms: NAN unless measure_cpu (a system call per switch) */
  size_t mark_allocated, mark_gcs;
  int measure_cpu; /* whether this request's thread CPU time is read (config.profile_cpu_sample) */
  long allocations, gc_count, db_count, number; /* number 0: not numbered yet */
} Heron_Profiler_RequestProfile;

/* Counters read at a fiber switch: held_ms is the monotonic clock (a vDSO read, no system
 * call); cpu_ms the thread's CPU clock, read only when a profile involved measures it (NAN
 * otherwise). */
typedef struct Heron_Profiler_Counters {
  size_t allocated, gcs;
  double held_ms, cpu_ms;
} Heron_Profiler_Counters;

extern VALUE cHeron_Profiler_RequestProfile;
extern VALUE Heron_Profiler_RequestProfile_NONE; /* the frozen empty Array of a profile without queries or findings */
extern VALUE Heron_Profiler_str_PATH_INFO, Heron_Profiler_str_QUERY_STRING;

/* Whether the profile's request is over (RequestProfile#finished was called). */
static inline int Heron_Profiler_RequestProfile_done(const Heron_Profiler_RequestProfile *profile)
{
  return !isnan(profile->total_ms);
}

Heron_Profiler_RequestProfile *Heron_Profiler_RequestProfile_get(VALUE self);
int Heron_Profiler_RequestProfile_p(VALUE value);
void Heron_Profiler_RequestProfile_set_queries(VALUE self, VALUE queries, VALUE n_plus_one, VALUE extras);
VALUE Heron_Profiler_RequestProfile_restore(const Heron_Profiler_RequestProfile *record, VALUE method, VALUE path, VALUE query, VALUE id);
VALUE Heron_Profiler_RequestProfile_id(VALUE self);
#define HERON_PROFILER_ID_MAX 40 /* bytes of a record id, at most */
size_t Heron_Profiler_RequestProfile_id_text(VALUE self, const Heron_Profiler_RequestProfile *p, char *buf);
void Heron_Profiler_Counters_read(Heron_Profiler_Counters *counters, int cpu);
void Heron_Profiler_RequestProfile_skip_cpu(Heron_Profiler_RequestProfile *p);
void Heron_Profiler_RequestProfile_mark(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now);
void Heron_Profiler_RequestProfile_charge(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now);

VALUE Heron_Profiler_RequestProfile_for(VALUE env, VALUE path, VALUE query, double proxy_ms);
VALUE Heron_Profiler_RequestProfile_begin(VALUE method, VALUE path, VALUE query, VALUE request_start, double proxy_ms);
void Heron_Profiler_RequestProfile_stamp_app(VALUE self, Heron_Profiler_RequestProfile *p, VALUE status);
void Heron_Profiler_RequestProfile_stamp_end(Heron_Profiler_RequestProfile *p);
void Heron_Profiler_RequestProfile_add_timing(VALUE self, const Heron_Profiler_RequestProfile *p, VALUE headers);

/* The RequestProfile struct of a value known to be one (created here, or taken from tables
 * that hold only RequestProfiles), without rb_check_typeddata's cost. */
#define HERON_PROFILE(value) ((Heron_Profiler_RequestProfile *)RTYPEDDATA_DATA(value))

void Init_Heron_Profiler_RequestProfile(VALUE mProfiler);

#endif
