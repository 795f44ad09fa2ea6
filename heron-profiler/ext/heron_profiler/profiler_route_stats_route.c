/*
 * Heron::Profiler::RouteStats::Route: one route's figures, added to by every profiled request
 * (RouteStats#add). In Ruby, #add's instance variables and method calls cost about 0.3 µs a
 * request in isolation and 0.9 µs of server CPU in a profiled hello world, so the figures
 * live in a C struct; lib/heron/profiler/route_stats/route.rb keeps what the dashboard reads
 * (#find, #export) and #keep, which runs only for a request slower than the kept ones.
 *
 *   Route.new(name)
 *   #add(profile) #name #count #queries #max_ms #samples #slowest
 */
#include "profiler.h"

#define SAMPLES 1000 /* total times kept for the percentiles (Route::SAMPLES) */
#define SLOWEST 5    /* records kept in full (Route::SLOWEST) */

typedef struct Heron_Profiler_RouteStats_Route {
  VALUE name, slowest; /* a String; an Array of up to SLOWEST record Hashes, slowest first */
  long count, queries, nsamples;
  double max_ms, floor_ms; /* floor_ms: total time of the fastest kept record once SLOWEST are kept */
  double samples[SAMPLES];
} Heron_Profiler_RouteStats_Route;

static ID id_keep, id_to_h, id_total_ms, id_db_count;
static VALUE sym_total_ms;

static void Heron_Profiler_RouteStats_Route_mark(void *ptr)
{
  Heron_Profiler_RouteStats_Route *route = ptr;
  rb_gc_mark(route->name);
  rb_gc_mark(route->slowest);
}

static const rb_data_type_t Heron_Profiler_RouteStats_Route_type = {
  "Heron::Profiler::RouteStats::Route",
  { Heron_Profiler_RouteStats_Route_mark, RUBY_TYPED_DEFAULT_FREE, NULL, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static Heron_Profiler_RouteStats_Route *Heron_Profiler_RouteStats_Route_get(VALUE self)
{
  return rb_check_typeddata(self, &Heron_Profiler_RouteStats_Route_type);
}

static VALUE Heron_Profiler_RouteStats_Route_alloc(VALUE klass)
{
  Heron_Profiler_RouteStats_Route *route;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_RouteStats_Route, &Heron_Profiler_RouteStats_Route_type, route);
  route->name = Qnil;
  route->slowest = Qnil;
  return self;
}

/* call-seq: Route.new(name). A route ("GET /users/:id") with no request counted yet. */
static VALUE Heron_Profiler_RouteStats_Route_initialize(VALUE self, VALUE name)
{
  Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  RB_OBJ_WRITE(self, &route->name, name);
  RB_OBJ_WRITE(self, &route->slowest, rb_ary_new());
  return self;
}

/* The request's total time and statement count: from the struct of a RequestProfile, else
 * (anything answering total_ms and db_count) by calling them. */
static void Heron_Profiler_RouteStats_Route_figures(VALUE profile, double *ms, long *queries)
{
  const Heron_Profiler_RequestProfile *p;
  VALUE total;
  if (!Heron_Profiler_RequestProfile_p(profile)) {
    total = rb_funcall(profile, id_total_ms, 0);
    *ms = NIL_P(total) ? 0.0 : NUM2DBL(total);
    *queries = NUM2LONG(rb_funcall(profile, id_db_count, 0));
    return;
  }
  p = HERON_PROFILE(profile);
  *ms = isnan(p->total_ms) ? 0.0 : p->total_ms;
  *queries = p->db_count;
}

/* Hands the record of a request slower than the kept ones to #keep, and notes the fastest kept. */
static void Heron_Profiler_RouteStats_Route_keep(VALUE self, Heron_Profiler_RouteStats_Route *route, VALUE profile)
{
  VALUE last;
  rb_funcall(self, id_keep, 1, rb_funcall(profile, id_to_h, 0));
  if (RARRAY_LEN(route->slowest) < SLOWEST) return;
  last = rb_hash_aref(RARRAY_AREF(route->slowest, RARRAY_LEN(route->slowest) - 1), sym_total_ms);
  route->floor_ms = NIL_P(last) ? 0.0 : NUM2DBL(last);
}

/*
 * call-seq: add(profile) -> nil
 *
 * Counts a finished request of this route (a RequestProfile, or anything answering total_ms,
 * db_count and to_h): its total time among the last SAMPLES, the longest, its statements, and
 * its record (#keep) when it is among the SLOWEST slowest.
 */
static VALUE Heron_Profiler_RouteStats_Route_add(VALUE self, VALUE profile)
{
  Heron_Profiler_RouteStats_Route_add_profile(self, profile);
  return Qnil;
}

/* #add for C callers (RouteStats#add). */
void Heron_Profiler_RouteStats_Route_add_profile(VALUE self, VALUE profile)
{
  Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  double ms;
  long queries;
  Heron_Profiler_RouteStats_Route_figures(profile, &ms, &queries);
  route->count++;
  route->queries += queries;
  if (ms > route->max_ms) route->max_ms = ms;
  if (route->nsamples < SAMPLES) route->samples[route->nsamples++] = ms;
  else route->samples[route->count % SAMPLES] = ms;
  if (RARRAY_LEN(route->slowest) < SLOWEST || ms > route->floor_ms) Heron_Profiler_RouteStats_Route_keep(self, route, profile);
}

/* call-seq: samples -> Array of Float. The kept total times (ms), at most SAMPLES of them. */
static VALUE Heron_Profiler_RouteStats_Route_samples(VALUE self)
{
  const Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  VALUE samples = rb_ary_new_capa(route->nsamples);
  long i;
  for (i = 0; i < route->nsamples; i++) rb_ary_push(samples, DBL2NUM(route->samples[i]));
  return samples;
}

/* call-seq: name -> String. */
static VALUE Heron_Profiler_RouteStats_Route_name(VALUE self)
{
  return Heron_Profiler_RouteStats_Route_get(self)->name;
}

/* call-seq: slowest -> Array of Hash. The kept records, slowest first (#keep fills it). */
static VALUE Heron_Profiler_RouteStats_Route_slowest(VALUE self)
{
  return Heron_Profiler_RouteStats_Route_get(self)->slowest;
}

/* call-seq: count -> Integer. Requests counted. */
static VALUE Heron_Profiler_RouteStats_Route_count(VALUE self)
{
  return LONG2NUM(Heron_Profiler_RouteStats_Route_get(self)->count);
}

/* call-seq: queries -> Integer. Statements the counted requests ran. */
static VALUE Heron_Profiler_RouteStats_Route_queries(VALUE self)
{
  return LONG2NUM(Heron_Profiler_RouteStats_Route_get(self)->queries);
}

/* call-seq: max_ms -> Float. The longest total time. */
static VALUE Heron_Profiler_RouteStats_Route_max_ms(VALUE self)
{
  return DBL2NUM(Heron_Profiler_RouteStats_Route_get(self)->max_ms);
}

void Init_Heron_Profiler_RouteStats_Route(VALUE mProfiler)
{
  VALUE stats = rb_define_class_under(mProfiler, "RouteStats", rb_cObject);
  VALUE klass = rb_define_class_under(stats, "Route", rb_cObject);
  id_keep = rb_intern("keep");
  id_to_h = rb_intern("to_h");
  id_total_ms = rb_intern("total_ms");
  id_db_count = rb_intern("db_count");
  sym_total_ms = ID2SYM(id_total_ms);
  rb_define_const(klass, "SAMPLES", INT2FIX(SAMPLES));
  rb_define_const(klass, "SLOWEST", INT2FIX(SLOWEST));
  rb_define_alloc_func(klass, Heron_Profiler_RouteStats_Route_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_RouteStats_Route_initialize, 1);
  rb_define_method(klass, "add", Heron_Profiler_RouteStats_Route_add, 1);
  rb_define_method(klass, "samples", Heron_Profiler_RouteStats_Route_samples, 0);
  rb_define_method(klass, "name", Heron_Profiler_RouteStats_Route_name, 0);
  rb_define_method(klass, "slowest", Heron_Profiler_RouteStats_Route_slowest, 0);
  rb_define_method(klass, "count", Heron_Profiler_RouteStats_Route_count, 0);
  rb_define_method(klass, "queries", Heron_Profiler_RouteStats_Route_queries, 0);
  rb_define_method(klass, "max_ms", Heron_Profiler_RouteStats_Route_max_ms, 0);
}
