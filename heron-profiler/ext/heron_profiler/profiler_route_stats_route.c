/*
 * Heron::Profiler::RouteStats::Route: one route's figures: how many requests, their total
 * times (the last SAMPLES, for the percentiles), the longest, the statements they ran, and the
 * SLOWEST records in full. Every profiled request adds to one (the Meter, through
 * Heron_Profiler_RouteStats_Route_count), and in Ruby #add's instance variables and method
 * calls cost about 0.3 µs a request in isolation and 0.9 µs of server CPU in a profiled hello
 * world, so the whole class is C; lib/heron/profiler/route_stats.rb finds the route of a
 * request and hands it the record to keep.
 *
 *   Route.new(name)
 *   #add(ms, queries) -> true or false   #keep(record) -> nil
 *   #find(id) #export #name #count #queries #max_ms #samples #slowest
 */
#include "profiler.h"
#include "profiler_route_stats_route.h"

#define SAMPLES 1000 /* total times kept for the percentiles (Route::SAMPLES) */
#define SLOWEST 5    /* records kept in full (Route::SLOWEST) */

typedef struct Heron_Profiler_RouteStats_Route {
  VALUE name, slowest; /* a String; an Array of up to SLOWEST record Hashes, slowest first */
  long count, queries, nsamples;
  double max_ms, floor_ms; /* floor_ms: total time of the fastest kept record once SLOWEST are kept */
  double samples[SAMPLES];
} Heron_Profiler_RouteStats_Route;

static VALUE sym_total_ms, sym_id, sym_queries, sym_route, sym_count, sym_max_ms, sym_samples, sym_slowest;

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

int Heron_Profiler_RouteStats_Route_count(VALUE self, double ms, long queries)
{
  Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  route->count++;
  route->queries += queries;
  if (ms > route->max_ms) route->max_ms = ms;
  if (route->nsamples < SAMPLES) route->samples[route->nsamples++] = ms;
  else route->samples[route->count % SAMPLES] = ms;
  return RARRAY_LEN(route->slowest) < SLOWEST || ms > route->floor_ms;
}

/*
 * call-seq: add(ms, queries) -> true or false
 *
 * Counts a finished request of this route, of `ms` total time (a Float) that ran `queries`
 * statements: its time among the last SAMPLES, the longest, its statements. True when it is
 * among the SLOWEST slowest, so its record is to be kept (#keep).
 */
static VALUE Heron_Profiler_RouteStats_Route_add(VALUE self, VALUE ms, VALUE queries)
{
  return Heron_Profiler_RouteStats_Route_count(self, NUM2DBL(ms), NUM2LONG(queries)) ? Qtrue : Qfalse;
}

/* A record's total_ms (0 when it has none). */
static double Heron_Profiler_RouteStats_Route_total(VALUE record)
{
  VALUE ms = RB_TYPE_P(record, T_HASH) ? rb_hash_lookup(record, sym_total_ms) : Qnil;
  return RB_FLOAT_TYPE_P(ms) || RB_INTEGER_TYPE_P(ms) ? NUM2DBL(ms) : 0.0;
}

/*
 * call-seq: keep(record) -> nil
 *
 * Keeps a request's record (a Hash with :total_ms) among the SLOWEST slowest, slowest first,
 * when it is slower than one of them or fewer are kept.
 */
static VALUE Heron_Profiler_RouteStats_Route_keep(VALUE self, VALUE record)
{
  Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  double ms = Heron_Profiler_RouteStats_Route_total(record);
  long at = 0, size, i;
  Check_Type(record, T_HASH);
  size = RARRAY_LEN(route->slowest);
  while (at < size && Heron_Profiler_RouteStats_Route_total(RARRAY_AREF(route->slowest, at)) >= ms) at++;
  if (at >= SLOWEST) return Qnil;
  rb_ary_push(route->slowest, record);
  for (i = size; i > at; i--) rb_ary_store(route->slowest, i, RARRAY_AREF(route->slowest, i - 1));
  rb_ary_store(route->slowest, at, record);
  if (RARRAY_LEN(route->slowest) > SLOWEST) rb_ary_pop(route->slowest);
  size = RARRAY_LEN(route->slowest);
  if (size == SLOWEST) route->floor_ms = Heron_Profiler_RouteStats_Route_total(RARRAY_AREF(route->slowest, size - 1));
  return Qnil;
}

/* call-seq: find(id) -> Hash or nil. A copy of the kept record with this id. */
static VALUE Heron_Profiler_RouteStats_Route_find(VALUE self, VALUE id)
{
  VALUE slowest = Heron_Profiler_RouteStats_Route_get(self)->slowest, record, kept;
  long i;
  if (!RB_TYPE_P(id, T_STRING)) return Qnil;
  for (i = 0; i < RARRAY_LEN(slowest); i++) {
    record = RARRAY_AREF(slowest, i);
    kept = rb_hash_lookup(record, sym_id);
    if (RB_TYPE_P(kept, T_STRING) && RTEST(rb_str_equal(kept, id))) return rb_hash_dup(record);
  }
  return Qnil;
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

/* The kept records without their queries. */
static VALUE Heron_Profiler_RouteStats_Route_slowest_summaries(const Heron_Profiler_RouteStats_Route *route)
{
  VALUE list = rb_ary_new_capa(RARRAY_LEN(route->slowest)), copy;
  long i;
  for (i = 0; i < RARRAY_LEN(route->slowest); i++) {
    copy = rb_hash_dup(RARRAY_AREF(route->slowest, i));
    rb_hash_delete(copy, sym_queries);
    rb_ary_push(list, copy);
  }
  return list;
}

/*
 * call-seq: export -> Hash
 *
 * What RouteStats.merge adds up (and another worker sends as JSON): route, count, queries,
 * max_ms, samples, and slowest (the kept records without their queries).
 */
static VALUE Heron_Profiler_RouteStats_Route_export(VALUE self)
{
  const Heron_Profiler_RouteStats_Route *route = Heron_Profiler_RouteStats_Route_get(self);
  VALUE row = rb_hash_new();
  rb_hash_aset(row, sym_route, route->name);
  rb_hash_aset(row, sym_count, LONG2NUM(route->count));
  rb_hash_aset(row, sym_queries, LONG2NUM(route->queries));
  rb_hash_aset(row, sym_max_ms, DBL2NUM(route->max_ms));
  rb_hash_aset(row, sym_samples, Heron_Profiler_RouteStats_Route_samples(self));
  rb_hash_aset(row, sym_slowest, Heron_Profiler_RouteStats_Route_slowest_summaries(route));
  return row;
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
static VALUE Heron_Profiler_RouteStats_Route_count_reader(VALUE self)
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

static void Heron_Profiler_RouteStats_Route_init_symbols(void)
{
  sym_total_ms = ID2SYM(rb_intern("total_ms"));
  sym_id = ID2SYM(rb_intern("id"));
  sym_queries = ID2SYM(rb_intern("queries"));
  sym_route = ID2SYM(rb_intern("route"));
  sym_count = ID2SYM(rb_intern("count"));
  sym_max_ms = ID2SYM(rb_intern("max_ms"));
  sym_samples = ID2SYM(rb_intern("samples"));
  sym_slowest = ID2SYM(rb_intern("slowest"));
}

void Init_Heron_Profiler_RouteStats_Route(VALUE mProfiler)
{
  VALUE stats = rb_define_class_under(mProfiler, "RouteStats", rb_cObject);
  VALUE klass = rb_define_class_under(stats, "Route", rb_cObject);
  Heron_Profiler_RouteStats_Route_init_symbols();
  rb_define_const(klass, "SAMPLES", INT2FIX(SAMPLES));
  rb_define_const(klass, "SLOWEST", INT2FIX(SLOWEST));
  rb_define_alloc_func(klass, Heron_Profiler_RouteStats_Route_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_RouteStats_Route_initialize, 1);
  rb_define_method(klass, "add", Heron_Profiler_RouteStats_Route_add, 2);
  rb_define_method(klass, "keep", Heron_Profiler_RouteStats_Route_keep, 1);
  rb_define_method(klass, "find", Heron_Profiler_RouteStats_Route_find, 1);
  rb_define_method(klass, "export", Heron_Profiler_RouteStats_Route_export, 0);
  rb_define_method(klass, "samples", Heron_Profiler_RouteStats_Route_samples, 0);
  rb_define_method(klass, "name", Heron_Profiler_RouteStats_Route_name, 0);
  rb_define_method(klass, "slowest", Heron_Profiler_RouteStats_Route_slowest, 0);
  rb_define_method(klass, "count", Heron_Profiler_RouteStats_Route_count_reader, 0);
  rb_define_method(klass, "queries", Heron_Profiler_RouteStats_Route_queries, 0);
  rb_define_method(klass, "max_ms", Heron_Profiler_RouteStats_Route_max_ms, 0);
}
