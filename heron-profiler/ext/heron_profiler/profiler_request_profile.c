/*
 * Heron::Profiler::RequestProfile: everything measured about one request while it runs.
 * FiberAccounting (profiler_fiber_accounting.c) charges CPU time, allocations and GC runs to
 * it between fiber switches; the SQL hooks add queries; the middleware stamps the times.
 * The whole class is C; Heron::Profiler::Record (Ruby) makes a record Hash of one.
 *
 *   RequestProfile.new(method, path, query, queue_ms = nil, started = nil, now = nil)
 *   RequestProfile.start(env)
 *   #app_returned(status) #add_headers(headers) #finished #finished? #id #server_timing
 *   #add_query(query, duration_ms) #trim_queries(limit = 1000) #fibers #to_s #started_at #shapes
 *   readers: request_method path query status queries queue_ms app_ms total_ms reactor_ms cpu_ms
 *            allocations gc_count db_ms db_count after_reply_ms n_plus_one started
 *   writers: status= n_plus_one= after_reply_ms=
 */
#include "profiler.h"
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>

#define KEPT_QUERIES 1000

VALUE cHeron_Profiler_RequestProfile;
VALUE Heron_Profiler_RequestProfile_NONE;
static VALUE sym_total_allocated_objects, sym_shapes;
static volatile pid_t Heron_Profiler_pid; /* 0 after a fork, until read again */
VALUE Heron_Profiler_str_PATH_INFO, Heron_Profiler_str_QUERY_STRING;
static VALUE str_REQUEST_METHOD, str_request_start;
static VALUE str_server_timing, str_separator;

static void Heron_Profiler_RequestProfile_mark_values(void *ptr)
{
  Heron_Profiler_RequestProfile *p = ptr;
  rb_gc_mark(p->method);
  rb_gc_mark(p->path);
  rb_gc_mark(p->query);
  rb_gc_mark(p->status);
  rb_gc_mark(p->queries);
  rb_gc_mark(p->n_plus_one);
  rb_gc_mark(p->id);
  rb_gc_mark(p->fiber);
  rb_gc_mark(p->fibers);
  rb_gc_mark(p->extras);
}

/* A profile's struct comes from a free list of up to POOLED structs instead of malloc, and goes
 * back to it when the GC frees the object (under the GVL, as is every allocation): a profiled
 * hello world is about 2% faster, most of it in malloc_usable_size, which Ruby's xmalloc and
 * xfree call on every block. */
#define POOLED 256
typedef union Heron_Profiler_RequestProfile_cell {
  Heron_Profiler_RequestProfile profile;
  union Heron_Profiler_RequestProfile_cell *next;
} Heron_Profiler_RequestProfile_cell;
static Heron_Profiler_RequestProfile_cell *Heron_Profiler_RequestProfile_pool;
static long Heron_Profiler_RequestProfile_pooled;

static void Heron_Profiler_RequestProfile_release(void *ptr)
{
  Heron_Profiler_RequestProfile_cell *cell = ptr;
  if (Heron_Profiler_RequestProfile_pooled >= POOLED) {
    free(cell);
    return;
  }
  cell->next = Heron_Profiler_RequestProfile_pool;
  Heron_Profiler_RequestProfile_pool = cell;
  Heron_Profiler_RequestProfile_pooled++;
}

static Heron_Profiler_RequestProfile *Heron_Profiler_RequestProfile_take(void)
{
  Heron_Profiler_RequestProfile_cell *cell = Heron_Profiler_RequestProfile_pool;
  if (!cell) {
    cell = malloc(sizeof(*cell));
    if (!cell) rb_memerror();
  } else {
    Heron_Profiler_RequestProfile_pool = cell->next;
    Heron_Profiler_RequestProfile_pooled--;
  }
  memset(cell, 0, sizeof(*cell));
  return &cell->profile;
}

static size_t Heron_Profiler_RequestProfile_memsize(const void *ptr)
{
  return sizeof(Heron_Profiler_RequestProfile_cell);
}

static const rb_data_type_t Heron_Profiler_RequestProfile_type = {
  "Heron::Profiler::RequestProfile",
  { Heron_Profiler_RequestProfile_mark_values, Heron_Profiler_RequestProfile_release, Heron_Profiler_RequestProfile_memsize, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static VALUE Heron_Profiler_RequestProfile_alloc(VALUE klass)
{
  VALUE self = TypedData_Wrap_Struct(klass, &Heron_Profiler_RequestProfile_type, NULL);
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_take();
  DATA_PTR(self) = p;
  p->method = p->path = p->query = p->status = p->id = p->fiber = p->fibers = p->extras = Qnil;
  p->queries = p->n_plus_one = Heron_Profiler_RequestProfile_NONE;
  p->queue_ms = p->app_ms = p->total_ms = p->after_reply_ms = NAN;
  p->measure_cpu = 1;
  return self;
}

/* Leaves the thread's CPU time of this (unsampled) request unmeasured: cpu_ms stays NAN (nil),
 * and its fiber switches read no CPU clock. Call before FiberAccounting opens it. */
void Heron_Profiler_RequestProfile_skip_cpu(Heron_Profiler_RequestProfile *p)
{
  p->measure_cpu = 0;
  p->cpu_ms = NAN;
}

Heron_Profiler_RequestProfile *Heron_Profiler_RequestProfile_get(VALUE self)
{
  return rb_check_typeddata(self, &Heron_Profiler_RequestProfile_type);
}

/* Gives a profile (a restored one) its queries, N+1 findings and extras. */
void Heron_Profiler_RequestProfile_set_queries(VALUE self, VALUE queries, VALUE n_plus_one, VALUE extras)
{
  Heron_Profiler_RequestProfile *p = HERON_PROFILE(self);
  RB_OBJ_WRITE(self, &p->queries, queries);
  RB_OBJ_WRITE(self, &p->n_plus_one, n_plus_one);
  RB_OBJ_WRITE(self, &p->extras, extras);
}

/* Whether `value` is a RequestProfile. */
int Heron_Profiler_RequestProfile_p(VALUE value)
{
  return rb_typeddata_is_kind_of(value, &Heron_Profiler_RequestProfile_type);
}

/*
 * A new RequestProfile with the stamps, counters, status, queries and N+1 findings of `record`
 * (a copy the Store kept) and the given strings; it works for no fiber.
 */
VALUE Heron_Profiler_RequestProfile_restore(const Heron_Profiler_RequestProfile *record, VALUE method, VALUE path, VALUE query, VALUE id)
{
  VALUE self = Heron_Profiler_RequestProfile_alloc(cHeron_Profiler_RequestProfile);
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  *p = *record;
  p->fiber = p->fibers = Qnil;
  RB_OBJ_WRITE(self, &p->method, method);
  RB_OBJ_WRITE(self, &p->path, path);
  RB_OBJ_WRITE(self, &p->query, query);
  RB_OBJ_WRITE(self, &p->id, id);
  RB_OBJ_WRITE(self, &p->status, record->status);
  RB_OBJ_WRITE(self, &p->queries, record->queries);
  RB_OBJ_WRITE(self, &p->n_plus_one, record->n_plus_one);
  RB_OBJ_WRITE(self, &p->extras, record->extras);
  return self;
}

static double Heron_Profiler_seconds(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in seconds, the clock Process.clock_gettime(Process::CLOCK_MONOTONIC) reads. */
double Heron_Profiler_monotonic(void)
{
  return Heron_Profiler_seconds(CLOCK_MONOTONIC);
}

/* Reads the counters FiberAccounting charges: allocated objects (the process's, or the thread's
 * once ThreadAllocations is enabled), GC runs, the monotonic clock and, when `cpu` says a
 * profile involved measures it, the thread's CPU clock (a system call). */
void Heron_Profiler_Counters_read(Heron_Profiler_Counters *counters, int cpu)
{
  counters->allocated = Heron_Profiler_ThreadAllocations_enabled() ? Heron_Profiler_ThreadAllocations_count()
                                                                   : rb_gc_stat(sym_total_allocated_objects);
  counters->gcs = rb_gc_count();
  counters->held_ms = Heron_Profiler_monotonic() * 1000.0;
  counters->cpu_ms = cpu ? Heron_Profiler_CPUClock_now_ms() : NAN;
}

/* Remembers the counters at the moment this profile's fiber was switched in. */
void Heron_Profiler_RequestProfile_mark(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now)
{
  profile->mark_allocated = now->allocated;
  profile->mark_gcs = now->gcs;
  profile->mark_held = now->held_ms;
  if (profile->measure_cpu) profile->mark_cpu = now->cpu_ms;
}

/* Charges the counters' growth since the last mark to this profile. */
void Heron_Profiler_RequestProfile_charge(Heron_Profiler_RequestProfile *profile, const Heron_Profiler_Counters *now)
{
  if (now->allocated >= profile->mark_allocated) /* not when the counter changed source meanwhile */
    profile->allocations += (long)(now->allocated - profile->mark_allocated);
  profile->gc_count += (long)(now->gcs - profile->mark_gcs);
  if (now->held_ms > profile->mark_held) profile->reactor_ms += now->held_ms - profile->mark_held;
  if (profile->measure_cpu && now->cpu_ms > profile->mark_cpu) profile->cpu_ms += now->cpu_ms - profile->mark_cpu;
}

static double Heron_Profiler_optional_float(VALUE value, double fallback)
{
  return NIL_P(value) ? fallback : NUM2DBL(value);
}

static VALUE Heron_Profiler_float_or_nil(double value)
{
  return isnan(value) ? Qnil : DBL2NUM(value);
}

/*
 * call-seq: RequestProfile.new(method, path, query, queue_ms = nil, started = nil, now = nil)
 *
 * method, path, query: the request's (Strings, kept as given). queue_ms: time waited before the
 * app in ms (Float or nil). started: CLOCK_MONOTONIC seconds the request started (the server's
 * first byte; `now` when nil). now: CLOCK_MONOTONIC seconds the app starts (read when nil).
 */
static VALUE Heron_Profiler_RequestProfile_initialize(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  VALUE method, path, query, queue_ms, started, now;
  rb_scan_args(argc, argv, "33", &method, &path, &query, &queue_ms, &started, &now);
  RB_OBJ_WRITE(self, &p->method, method);
  RB_OBJ_WRITE(self, &p->path, path);
  RB_OBJ_WRITE(self, &p->query, query);
  p->queue_ms = Heron_Profiler_optional_float(queue_ms, NAN);
  p->app_start = NIL_P(now) ? Heron_Profiler_monotonic() : NUM2DBL(now);
  p->started = Heron_Profiler_optional_float(started, p->app_start);
  return self;
}

static double Heron_Profiler_elapsed_ms(double since)
{
  return (Heron_Profiler_monotonic() - since) * 1000.0;
}

/* Stamps the end of the app's call (#app_returned). */
void Heron_Profiler_RequestProfile_stamp_app(VALUE self, Heron_Profiler_RequestProfile *p, VALUE status)
{
  RB_OBJ_WRITE(self, &p->status, status);
  p->app_ms = Heron_Profiler_elapsed_ms(p->app_start);
}

/* call-seq: app_returned(status) -> nil. Stamps the end of the app's call. */
static VALUE Heron_Profiler_RequestProfile_app_returned(VALUE self, VALUE status)
{
  Heron_Profiler_RequestProfile_stamp_app(self, Heron_Profiler_RequestProfile_get(self), status);
  return Qnil;
}

/* Stamps the end of the request (#finished). */
void Heron_Profiler_RequestProfile_stamp_end(Heron_Profiler_RequestProfile *p)
{
  if (isnan(p->app_ms)) p->app_ms = Heron_Profiler_elapsed_ms(p->app_start);
  p->total_ms = Heron_Profiler_elapsed_ms(p->started);
}

/* call-seq: finished -> nil. Stamps the last byte written (or the body closed). */
static VALUE Heron_Profiler_RequestProfile_finished(VALUE self)
{
  Heron_Profiler_RequestProfile_stamp_end(Heron_Profiler_RequestProfile_get(self));
  return Qnil;
}

/* call-seq: finished? -> true or false. Whether #finished was called. */
static VALUE Heron_Profiler_RequestProfile_finished_p(VALUE self)
{
  return Heron_Profiler_RequestProfile_done(Heron_Profiler_RequestProfile_get(self)) ? Qtrue : Qfalse;
}

static void Heron_Profiler_forked(void)
{
  Heron_Profiler_pid = 0;
}

/* Writes `value` in `base` (10 or 36) at `out`, which has room for 20 bytes; returns its
 * length. Inlined, so each caller's base is a constant and the divisions are multiplications. */
static inline size_t Heron_Profiler_digits(char *out, unsigned long value, unsigned long base)
{
  size_t n = 1;
  unsigned long rest = value;
  char *p;
  while (rest >= base) {
    rest /= base;
    n++;
  }
  p = out + n;
  do {
    *--p = "0123456789abcdefghijklmnopqrstuvwxyz"[value % base];
    value /= base;
  } while (value);
  return n;
}

static size_t Heron_Profiler_base36(char *out, unsigned long value)
{
  return Heron_Profiler_digits(out, value, 36);
}

/* "<pid in base 36>-", worked out once per process (again after a fork). */
static char Heron_Profiler_id_prefix[24];
static size_t Heron_Profiler_id_prefix_len;

static size_t Heron_Profiler_id_prefix_text(char *buf)
{
  if (!Heron_Profiler_pid) {
    Heron_Profiler_pid = getpid();
    Heron_Profiler_id_prefix_len = Heron_Profiler_base36(Heron_Profiler_id_prefix, (unsigned long)Heron_Profiler_pid);
    Heron_Profiler_id_prefix[Heron_Profiler_id_prefix_len++] = '-';
  }
  memcpy(buf, Heron_Profiler_id_prefix, Heron_Profiler_id_prefix_len);
  return Heron_Profiler_id_prefix_len;
}

/* Writes the record's id (see #id) into `buf`, which has room for HERON_PROFILER_ID_MAX bytes;
 * returns its length. */
size_t Heron_Profiler_RequestProfile_id_text(VALUE self, const Heron_Profiler_RequestProfile *p, char *buf)
{
  size_t len;
  if (!NIL_P(p->id)) {
    len = (size_t)RSTRING_LEN(p->id) < HERON_PROFILER_ID_MAX ? (size_t)RSTRING_LEN(p->id) : HERON_PROFILER_ID_MAX;
    memcpy(buf, RSTRING_PTR(p->id), len);
    return len;
  }
  len = Heron_Profiler_id_prefix_text(buf);
  return len + Heron_Profiler_base36(buf + len, p->number ? (unsigned long)p->number : (unsigned long)(self >> 3));
}

/*
 * call-seq: id -> String
 *
 * The record's id, unique within the process: "<pid>-<number>" in base 36 (the object's
 * address until the profile is numbered by FiberAccounting#open). Frozen, built once. It is
 * also the `heron` entry of #server_timing.
 */
VALUE Heron_Profiler_RequestProfile_id(VALUE self)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  char buf[HERON_PROFILER_ID_MAX];
  size_t len;
  if (!NIL_P(p->id)) return p->id;
  len = Heron_Profiler_RequestProfile_id_text(self, p, buf);
  RB_OBJ_WRITE(self, &p->id, rb_obj_freeze(rb_utf8_str_new(buf, (long)len)));
  return p->id;
}

static VALUE Heron_Profiler_RequestProfile_timing(VALUE self, const Heron_Profiler_RequestProfile *p);

/* A small writer of Server-Timing text: snprintf's float formatting alone cost more than the
 * rest of a profiled request. */
typedef struct Heron_Profiler_Text {
  char buf[1024];
  size_t len;
} Heron_Profiler_Text;

static inline void Heron_Profiler_Text_bytes(Heron_Profiler_Text *text, const char *s, size_t n)
{
  if (text->len + n < sizeof(text->buf)) {
    memcpy(text->buf + text->len, s, n);
    text->len += n;
  }
}

/* Appends a string literal (its length known at compile time). */
#define Heron_Profiler_Text_add(text, literal) Heron_Profiler_Text_bytes((text), (literal), sizeof(literal) - 1)

/* Appends the decimal digits of `v`, written in place (a memcpy call per number cost more than
 * the digits). */
static void Heron_Profiler_Text_ulong(Heron_Profiler_Text *text, unsigned long v)
{
  if (text->len + 20 >= sizeof(text->buf)) return;
  text->len += Heron_Profiler_digits(text->buf + text->len, v, 10);
}

static void Heron_Profiler_Text_long(Heron_Profiler_Text *text, long value)
{
  Heron_Profiler_Text_ulong(text, value < 0 ? 0 : (unsigned long)value);
}

/* Milliseconds with two decimals, like "%.2f" (negative values, from clock skew, as 0.00). */
static void Heron_Profiler_Text_ms(Heron_Profiler_Text *text, double ms)
{
  unsigned long hundredths = (ms > 0 && ms < 1e15) ? (unsigned long)(ms * 100.0 + 0.5) : 0;
  char *p;
  Heron_Profiler_Text_ulong(text, hundredths / 100);
  if (text->len + 3 >= sizeof(text->buf)) return;
  p = text->buf + text->len;
  p[0] = '.';
  p[1] = (char)('0' + hundredths / 10 % 10);
  p[2] = (char)('0' + hundredths % 10);
  text->len += 3;
}

/*
 * call-seq: server_timing -> String
 *
 * The W3C Server-Timing value of a profile whose app has returned:
 * `app;dur=1.20, db;dur=0.31;desc="2 queries", queue;dur=0.05, reactor;dur=0.88, cpu;dur=0.90,
 * gc;desc="1 runs", alloc;desc="120 objects", heron;desc="5k2-1x8c"` (no queue entry when the
 * queue time is unknown, no cpu entry when the request's CPU time was not sampled, no db or gc
 * entry when it ran no statement or no GC: each byte of the header costs the server, about
 * 1 µs for the 55 of those two on a hello world; `heron` names the record, see #id). A binary
 * String.
 */
static VALUE Heron_Profiler_RequestProfile_server_timing(VALUE self)
{
  return Heron_Profiler_RequestProfile_timing(self, Heron_Profiler_RequestProfile_get(self));
}

/* Appends `, name;dur=MS` for one custom step ({name => [total_ms, runs]}, see
 * Heron::Profiler.step), whole or not at all; names are HTTP tokens of at most 32 bytes. */
static int Heron_Profiler_RequestProfile_step_text(VALUE name, VALUE timing, VALUE arg)
{
  Heron_Profiler_Text *text = (Heron_Profiler_Text *)arg;
  if (!RB_TYPE_P(name, T_STRING) || !RB_TYPE_P(timing, T_ARRAY) || RSTRING_LEN(name) > 32) return ST_CONTINUE;
  if (text->len + (size_t)RSTRING_LEN(name) + 32 >= sizeof(text->buf)) return ST_STOP;
  Heron_Profiler_Text_add(text, ", ");
  Heron_Profiler_Text_bytes(text, RSTRING_PTR(name), (size_t)RSTRING_LEN(name));
  Heron_Profiler_Text_add(text, ";dur=");
  Heron_Profiler_Text_ms(text, NUM2DBL(rb_ary_entry(timing, 0)));
  return ST_CONTINUE;
}

/* The custom steps' entries, when the app timed any (cold: only such requests get here). */
static void Heron_Profiler_RequestProfile_steps_text(const Heron_Profiler_RequestProfile *p, Heron_Profiler_Text *text)
{
  VALUE steps = rb_hash_aref(p->extras, ID2SYM(rb_intern("steps")));
  if (RB_TYPE_P(steps, T_HASH)) rb_hash_foreach(steps, Heron_Profiler_RequestProfile_step_text, (VALUE)text);
}

/* Writes #server_timing's value into `text`. */
static void Heron_Profiler_RequestProfile_timing_text(VALUE self, const Heron_Profiler_RequestProfile *p, Heron_Profiler_Text *text)
{
  char id[HERON_PROFILER_ID_MAX];
  Heron_Profiler_Text_add(text, "app;dur=");
  Heron_Profiler_Text_ms(text, isnan(p->app_ms) ? 0.0 : p->app_ms);
  if (p->db_count > 0) {
    Heron_Profiler_Text_add(text, ", db;dur=");
    Heron_Profiler_Text_ms(text, p->db_ms);
    Heron_Profiler_Text_add(text, ";desc=\"");
    Heron_Profiler_Text_long(text, p->db_count);
    Heron_Profiler_Text_add(text, " queries\"");
  }
  if (!isnan(p->queue_ms)) {
    Heron_Profiler_Text_add(text, ", queue;dur=");
    Heron_Profiler_Text_ms(text, p->queue_ms);
  }
  Heron_Profiler_Text_add(text, ", reactor;dur=");
  Heron_Profiler_Text_ms(text, p->reactor_ms);
  if (!isnan(p->cpu_ms)) {
    Heron_Profiler_Text_add(text, ", cpu;dur=");
    Heron_Profiler_Text_ms(text, p->cpu_ms);
  }
  if (p->gc_count > 0) {
    Heron_Profiler_Text_add(text, ", gc;desc=\"");
    Heron_Profiler_Text_long(text, p->gc_count);
    Heron_Profiler_Text_add(text, " runs\"");
  }
  Heron_Profiler_Text_add(text, ", alloc;desc=\"");
  Heron_Profiler_Text_long(text, p->allocations);
  Heron_Profiler_Text_add(text, " objects\", heron;desc=\"");
  Heron_Profiler_Text_bytes(text, id, Heron_Profiler_RequestProfile_id_text(self, p, id));
  Heron_Profiler_Text_add(text, "\"");
  if (RB_TYPE_P(p->extras, T_HASH)) Heron_Profiler_RequestProfile_steps_text(p, text);
}

/* #server_timing for a caller holding the pointer. */
static VALUE Heron_Profiler_RequestProfile_timing(VALUE self, const Heron_Profiler_RequestProfile *p)
{
  Heron_Profiler_Text text;
  text.len = 0;
  Heron_Profiler_RequestProfile_timing_text(self, p, &text);
  return rb_str_new(text.buf, (long)text.len);
}

/*
 * A started profile: the request's method, path and query string, `request_start` (the
 * server's first byte, CLOCK_MONOTONIC seconds as a Float; nil: unknown, so now) and its queue
 * time: `proxy_ms`, a trusted proxy's (see QueueTime), unless NAN, else the time since that
 * start.
 */
VALUE Heron_Profiler_RequestProfile_begin(VALUE method, VALUE path, VALUE query, VALUE request_start, double proxy_ms)
{
  VALUE self = Heron_Profiler_RequestProfile_alloc(cHeron_Profiler_RequestProfile);
  Heron_Profiler_RequestProfile *p = HERON_PROFILE(self);
  double started = NIL_P(request_start) ? NAN : NUM2DBL(request_start);
  RB_OBJ_WRITE(self, &p->method, method);
  RB_OBJ_WRITE(self, &p->path, path);
  RB_OBJ_WRITE(self, &p->query, query);
  p->app_start = Heron_Profiler_monotonic();
  p->started = isnan(started) ? p->app_start : started;
  p->queue_ms = proxy_ms;
  if (isnan(proxy_ms) && !isnan(started)) p->queue_ms = p->app_start > started ? (p->app_start - started) * 1000.0 : 0.0;
  return self;
}

/*
 * call-seq: RequestProfile.start(env, proxy_queue_ms = nil) -> RequestProfile
 *
 * A profile for the request in a Rack env, starting now: its method, path and query string,
 * `heron.request_start` (the server's first byte, CLOCK_MONOTONIC seconds) as its start, and
 * as its queue time `proxy_queue_ms` (a trusted proxy's, QueueTime.from_header) when given,
 * else the time since that start.
 */
static VALUE Heron_Profiler_RequestProfile_start(int argc, VALUE *argv, VALUE klass)
{
  VALUE env, proxy_ms;
  rb_scan_args(argc, argv, "11", &env, &proxy_ms);
  Check_Type(env, T_HASH);
  return Heron_Profiler_RequestProfile_for(env, rb_hash_aref(env, Heron_Profiler_str_PATH_INFO), rb_hash_aref(env, Heron_Profiler_str_QUERY_STRING),
                                           NIL_P(proxy_ms) ? NAN : NUM2DBL(proxy_ms));
}

/* RequestProfile.start(env, proxy_queue_ms) for a caller that has read the path and query
 * already; `proxy_ms` NAN: none. */
VALUE Heron_Profiler_RequestProfile_for(VALUE env, VALUE path, VALUE query, double proxy_ms)
{
  return Heron_Profiler_RequestProfile_begin(rb_hash_aref(env, str_REQUEST_METHOD), path, query, rb_hash_aref(env, str_request_start), proxy_ms);
}

/* The Server-Timing value with the app's own in front, in the form the app used. */
static VALUE Heron_Profiler_merged_server_timing(VALUE existing, VALUE ours)
{
  if (NIL_P(existing)) return ours;
  if (RB_TYPE_P(existing, T_ARRAY)) {
    if (RARRAY_LEN(existing) == 0) return ours;
    existing = rb_ary_dup(existing);
    rb_ary_push(existing, ours);
    return existing;
  }
  existing = rb_String(existing);
  if (RSTRING_LEN(existing) == 0) return ours;
  return rb_str_plus(rb_str_plus(existing, str_separator), ours);
}

/* Notes the value of a `server-timing` entry (a callback of HERON_PROFILER_HASH_FOREACH over
 * the headers, `arg` a VALUE to set). */
static int Heron_Profiler_RequestProfile_find_timing(st_data_t key, st_data_t value, st_data_t arg)
{
  if (!RB_TYPE_P((VALUE)key, T_STRING) || RSTRING_LEN((VALUE)key) != (long)sizeof("server-timing") - 1) return ST_CONTINUE;
  if (memcmp(RSTRING_PTR((VALUE)key), "server-timing", sizeof("server-timing") - 1) != 0) return ST_CONTINUE;
  *(VALUE *)arg = (VALUE)value;
  return ST_STOP;
}

/* The app's own `server-timing` header, or Qnil. A response's headers are few: walking them
 * compares a length or two, where a lookup hashes the name (about 120 instructions); past
 * SMALL_HEADERS entries, a lookup. A non-String key equal to "server-timing" is no header
 * (Rack 3's are Strings). */
#define SMALL_HEADERS 8
static VALUE Heron_Profiler_RequestProfile_app_timing(VALUE headers)
{
  VALUE found = Qnil;
  if (RHASH_SIZE(headers) > SMALL_HEADERS) return rb_hash_aref(headers, str_server_timing);
  HERON_PROFILER_HASH_FOREACH(headers, Heron_Profiler_RequestProfile_find_timing, &found);
  return found;
}

/* #add_headers for a caller holding the pointer. */
void Heron_Profiler_RequestProfile_add_timing(VALUE self, const Heron_Profiler_RequestProfile *p, VALUE headers)
{
  VALUE ours = Heron_Profiler_RequestProfile_timing(self, p);
  rb_hash_aset(headers, str_server_timing, Heron_Profiler_merged_server_timing(Heron_Profiler_RequestProfile_app_timing(headers), ours));
}

/*
 * call-seq: add_headers(headers) -> headers
 *
 * Adds the profile's #server_timing to the response headers (Rack 3, lower-case names), after
 * any `server-timing` the app set.
 */
static VALUE Heron_Profiler_RequestProfile_add_headers(VALUE self, VALUE headers)
{
  Heron_Profiler_RequestProfile_add_timing(self, Heron_Profiler_RequestProfile_get(self), headers);
  return headers;
}

/*
 * call-seq: add_query(query, duration_ms) -> query
 *
 * Records a statement this request ran (a Heron::Profiler::Query) that took `duration_ms` (a
 * Float): kept in #queries, its time added to #db_ms, and #db_count incremented.
 */
static VALUE Heron_Profiler_RequestProfile_add_query(VALUE self, VALUE query, VALUE duration_ms)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  double duration = NUM2DBL(duration_ms);
  if (p->queries == Heron_Profiler_RequestProfile_NONE) RB_OBJ_WRITE(self, &p->queries, rb_ary_new());
  rb_ary_push(p->queries, query);
  p->db_ms += duration;
  p->db_count++;
  return query;
}

/*
 * call-seq: trim_queries(limit = 1000) -> nil
 *
 * Forgets all but the first `limit` queries, so a record kept in the Store stays small;
 * #db_ms and #db_count still cover them all.
 */
static VALUE Heron_Profiler_RequestProfile_trim_queries(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  VALUE limit;
  long keep;
  rb_scan_args(argc, argv, "01", &limit);
  keep = NIL_P(limit) ? KEPT_QUERIES : NUM2LONG(limit);
  if (RARRAY_LEN(p->queries) > keep) RB_OBJ_WRITE(self, &p->queries, rb_ary_subseq(p->queries, 0, keep));
  return Qnil;
}

/* call-seq: fibers -> Array of the fibers charged to this profile (empty once closed). */
static VALUE Heron_Profiler_RequestProfile_fibers(VALUE self)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  VALUE fibers = rb_ary_new();
  if (!NIL_P(p->fiber)) rb_ary_push(fibers, p->fiber);
  if (!NIL_P(p->fibers)) rb_ary_concat(fibers, p->fibers);
  return fibers;
}

#define HERON_VALUE_READER(name) \
  static VALUE Heron_Profiler_RequestProfile_##name(VALUE self) { return Heron_Profiler_RequestProfile_get(self)->name; }
#define HERON_VALUE_WRITER(name) \
  static VALUE Heron_Profiler_RequestProfile_set_##name(VALUE self, VALUE value) \
  { RB_OBJ_WRITE(self, &Heron_Profiler_RequestProfile_get(self)->name, value); return value; }
#define HERON_FLOAT_READER(name) \
  static VALUE Heron_Profiler_RequestProfile_##name(VALUE self) \
  { return Heron_Profiler_float_or_nil(Heron_Profiler_RequestProfile_get(self)->name); }
#define HERON_LONG_READER(name) \
  static VALUE Heron_Profiler_RequestProfile_##name(VALUE self) { return LONG2NUM(Heron_Profiler_RequestProfile_get(self)->name); }

HERON_VALUE_READER(method)
HERON_VALUE_READER(path)
HERON_VALUE_READER(query)
HERON_VALUE_READER(status)
HERON_VALUE_READER(queries)
HERON_VALUE_READER(n_plus_one)
HERON_VALUE_WRITER(status)
HERON_VALUE_WRITER(n_plus_one)
HERON_VALUE_READER(extras)
HERON_VALUE_WRITER(extras)
HERON_FLOAT_READER(queue_ms)
HERON_FLOAT_READER(app_ms)
HERON_FLOAT_READER(total_ms)
HERON_FLOAT_READER(after_reply_ms)
HERON_FLOAT_READER(cpu_ms)
HERON_FLOAT_READER(reactor_ms)
HERON_FLOAT_READER(db_ms)
HERON_FLOAT_READER(started)
HERON_LONG_READER(allocations)
HERON_LONG_READER(gc_count)
HERON_LONG_READER(db_count)

/* call-seq: to_s -> String. "METHOD /path", for log lines. */
static VALUE Heron_Profiler_RequestProfile_to_s(VALUE self)
{
  const Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  return rb_sprintf("%"PRIsVALUE" %"PRIsVALUE, p->method, p->path);
}

/* call-seq: started_at -> Float. Epoch seconds the request started (from the monotonic stamp
 * and the clocks' current offset). */
static VALUE Heron_Profiler_RequestProfile_started_at(VALUE self)
{
  const Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  return DBL2NUM(Heron_Profiler_seconds(CLOCK_REALTIME) - (Heron_Profiler_monotonic() - p->started));
}

/* call-seq: shapes -> Array of Hash, or nil. {normalized:, count:, ms:} of every statement
 * (extras[:shapes], set by the middleware), when the record ran more than it keeps; nil: its
 * queries are all there. */
static VALUE Heron_Profiler_RequestProfile_shapes(VALUE self)
{
  const Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(self);
  return RB_TYPE_P(p->extras, T_HASH) ? rb_hash_lookup(p->extras, sym_shapes) : Qnil;
}

/* call-seq: after_reply_ms = Float or nil. Time the request's after-reply callbacks took. */
static VALUE Heron_Profiler_RequestProfile_set_after_reply_ms(VALUE self, VALUE ms)
{
  Heron_Profiler_RequestProfile_get(self)->after_reply_ms = Heron_Profiler_optional_float(ms, NAN);
  return ms;
}

static void Heron_Profiler_RequestProfile_define_readers(VALUE klass)
{
  rb_define_method(klass, "request_method", Heron_Profiler_RequestProfile_method, 0);
  rb_define_method(klass, "path", Heron_Profiler_RequestProfile_path, 0);
  rb_define_method(klass, "query", Heron_Profiler_RequestProfile_query, 0);
  rb_define_method(klass, "status", Heron_Profiler_RequestProfile_status, 0);
  rb_define_method(klass, "queries", Heron_Profiler_RequestProfile_queries, 0);
  rb_define_method(klass, "n_plus_one", Heron_Profiler_RequestProfile_n_plus_one, 0);
  rb_define_method(klass, "queue_ms", Heron_Profiler_RequestProfile_queue_ms, 0);
  rb_define_method(klass, "app_ms", Heron_Profiler_RequestProfile_app_ms, 0);
  rb_define_method(klass, "total_ms", Heron_Profiler_RequestProfile_total_ms, 0);
  rb_define_method(klass, "after_reply_ms", Heron_Profiler_RequestProfile_after_reply_ms, 0);
  rb_define_method(klass, "cpu_ms", Heron_Profiler_RequestProfile_cpu_ms, 0);
  rb_define_method(klass, "reactor_ms", Heron_Profiler_RequestProfile_reactor_ms, 0);
  rb_define_method(klass, "db_ms", Heron_Profiler_RequestProfile_db_ms, 0);
  rb_define_method(klass, "started", Heron_Profiler_RequestProfile_started, 0);
  rb_define_method(klass, "allocations", Heron_Profiler_RequestProfile_allocations, 0);
  rb_define_method(klass, "gc_count", Heron_Profiler_RequestProfile_gc_count, 0);
  rb_define_method(klass, "db_count", Heron_Profiler_RequestProfile_db_count, 0);
  rb_define_method(klass, "fibers", Heron_Profiler_RequestProfile_fibers, 0);
  rb_define_method(klass, "to_s", Heron_Profiler_RequestProfile_to_s, 0);
  rb_define_method(klass, "started_at", Heron_Profiler_RequestProfile_started_at, 0);
  rb_define_method(klass, "shapes", Heron_Profiler_RequestProfile_shapes, 0);
}

static void Heron_Profiler_RequestProfile_define_writers(VALUE klass)
{
  rb_define_method(klass, "status=", Heron_Profiler_RequestProfile_set_status, 1);
  rb_define_method(klass, "n_plus_one=", Heron_Profiler_RequestProfile_set_n_plus_one, 1);
  rb_define_method(klass, "extras", Heron_Profiler_RequestProfile_extras, 0);
  rb_define_method(klass, "extras=", Heron_Profiler_RequestProfile_set_extras, 1);
  rb_define_method(klass, "after_reply_ms=", Heron_Profiler_RequestProfile_set_after_reply_ms, 1);
}

static void Heron_Profiler_RequestProfile_init_strings(void)
{
  str_REQUEST_METHOD = Heron_Profiler_str("REQUEST_METHOD");
  Heron_Profiler_str_PATH_INFO = Heron_Profiler_str("PATH_INFO");
  Heron_Profiler_str_QUERY_STRING = Heron_Profiler_str("QUERY_STRING");
  str_request_start = Heron_Profiler_str("heron.request_start");
  str_server_timing = Heron_Profiler_str("server-timing");
  str_separator = Heron_Profiler_str(", ");
}

void Init_Heron_Profiler_RequestProfile(VALUE mProfiler)
{
  VALUE klass;
  klass = cHeron_Profiler_RequestProfile = rb_define_class_under(mProfiler, "RequestProfile", rb_cObject);
  Heron_Profiler_RequestProfile_NONE = rb_obj_freeze(rb_ary_new());
  rb_gc_register_mark_object(Heron_Profiler_RequestProfile_NONE);
  sym_total_allocated_objects = ID2SYM(rb_intern("total_allocated_objects"));
  sym_shapes = ID2SYM(rb_intern("shapes"));
  rb_define_const(klass, "KEPT_QUERIES", INT2FIX(KEPT_QUERIES));
  pthread_atfork(NULL, NULL, Heron_Profiler_forked);
  Heron_Profiler_RequestProfile_init_strings();
  rb_define_alloc_func(klass, Heron_Profiler_RequestProfile_alloc);
  rb_define_singleton_method(klass, "start", Heron_Profiler_RequestProfile_start, -1);
  rb_define_method(klass, "add_headers", Heron_Profiler_RequestProfile_add_headers, 1);
  rb_define_method(klass, "initialize", Heron_Profiler_RequestProfile_initialize, -1);
  rb_define_method(klass, "app_returned", Heron_Profiler_RequestProfile_app_returned, 1);
  rb_define_method(klass, "finished", Heron_Profiler_RequestProfile_finished, 0);
  rb_define_method(klass, "finished?", Heron_Profiler_RequestProfile_finished_p, 0);
  rb_define_method(klass, "id", Heron_Profiler_RequestProfile_id, 0);
  rb_define_method(klass, "server_timing", Heron_Profiler_RequestProfile_server_timing, 0);
  rb_define_method(klass, "add_query", Heron_Profiler_RequestProfile_add_query, 2);
  rb_define_method(klass, "trim_queries", Heron_Profiler_RequestProfile_trim_queries, -1);
  Heron_Profiler_RequestProfile_define_readers(klass);
  Heron_Profiler_RequestProfile_define_writers(klass);
}
