/*
 * Heron::Profiler::RouteStats#add: every profiled request is added to its route's figures. In
 * Ruby, the call from the middleware, the reads of the profile's method and path and the
 * method frames cost about as much as the figures themselves, so #add is C; the routes it finds
 * are cached in Ruby (@names: method => {path => Route}) by lib/heron/profiler/route_stats.rb's
 * #route_for, which #add calls for a path it has not seen.
 *
 * The route last added to is kept in C with its RouteStats, method and path (frozen copies):
 * consecutive requests for the same path, as in a load test, then skip the two cache lookups,
 * each of which hashed a String (about 800 instructions together; an instance variable read
 * from C cost 180 more). Routes are never replaced (#start), so it cannot go stale; the GVL
 * guards it.
 *
 *   #add(profile) -> nil
 */
#include "profiler.h"
#include <ruby/encoding.h>
#include <string.h>

static VALUE cHeron_Profiler_RouteStats;
static ID id_names, id_route_for, id_request_method, id_path;
enum { LAST_STATS, LAST_METHOD, LAST_PATH, LAST_ROUTE, LAST_SIZE };
static VALUE last[LAST_SIZE]; /* the route last added to, and what it was found for */

/* The request's method and path: from the struct of a RequestProfile, else by calling them. */
static void Heron_Profiler_RouteStats_request(VALUE profile, VALUE *method, VALUE *path)
{
  if (Heron_Profiler_RequestProfile_p(profile)) {
    *method = HERON_PROFILE(profile)->method;
    *path = HERON_PROFILE(profile)->path;
    return;
  }
  *method = rb_funcall(profile, id_request_method, 0);
  *path = rb_funcall(profile, id_path, 0);
}

/* Whether Strings `a` and `b` have the same bytes and encoding. */
static int Heron_Profiler_RouteStats_same(VALUE a, VALUE b)
{
  if (a == b) return 1;
  if (!RB_TYPE_P(a, T_STRING) || !RB_TYPE_P(b, T_STRING)) return 0;
  return RSTRING_LEN(a) == RSTRING_LEN(b) && ENCODING_GET(a) == ENCODING_GET(b) &&
         memcmp(RSTRING_PTR(a), RSTRING_PTR(b), (size_t)RSTRING_LEN(a)) == 0;
}

/* The route last added to, if it was for this method and path; else Qnil. */
static VALUE Heron_Profiler_RouteStats_last(VALUE self, VALUE method, VALUE path)
{
  if (last[LAST_STATS] != self) return Qnil;
  if (!Heron_Profiler_RouteStats_same(last[LAST_METHOD], method) || !Heron_Profiler_RouteStats_same(last[LAST_PATH], path)) return Qnil;
  return last[LAST_ROUTE];
}

/* The route of a method and path: the last one, else from the cache, else #route_for's. */
static VALUE Heron_Profiler_RouteStats_find(VALUE self, VALUE method, VALUE path)
{
  VALUE by_path, route = Heron_Profiler_RouteStats_last(self, method, path);
  if (!NIL_P(route)) return route;
  by_path = rb_hash_lookup(rb_ivar_get(self, id_names), method);
  if (RB_TYPE_P(by_path, T_HASH)) route = rb_hash_lookup(by_path, path);
  if (NIL_P(route)) route = rb_funcall(self, id_route_for, 2, method, path);
  last[LAST_STATS] = Qnil; /* until all four are set (rb_str_new_frozen may run the GC) */
  last[LAST_METHOD] = RB_TYPE_P(method, T_STRING) ? rb_str_new_frozen(method) : method;
  last[LAST_PATH] = RB_TYPE_P(path, T_STRING) ? rb_str_new_frozen(path) : path;
  last[LAST_ROUTE] = route;
  last[LAST_STATS] = self;
  return route;
}

/* #add for C callers (the middleware). */
void Heron_Profiler_RouteStats_add_profile(VALUE self, VALUE profile)
{
  VALUE method, path;
  Heron_Profiler_RouteStats_request(profile, &method, &path);
  Heron_Profiler_RouteStats_Route_add_profile(Heron_Profiler_RouteStats_find(self, method, path), profile);
}

/* Whether `value` is a Heron::Profiler::RouteStats (not a subclass), whose #add is this C. */
int Heron_Profiler_RouteStats_p(VALUE value)
{
  return rb_obj_class(value) == cHeron_Profiler_RouteStats;
}

/*
 * call-seq: add(profile) -> nil
 *
 * Adds a finished request (a RequestProfile, or anything answering request_method, path,
 * total_ms, db_count and to_h) to its route's figures (Route#add).
 */
static VALUE Heron_Profiler_RouteStats_add(VALUE self, VALUE profile)
{
  Heron_Profiler_RouteStats_add_profile(self, profile);
  return Qnil;
}

void Init_Heron_Profiler_RouteStats(VALUE mProfiler)
{
  VALUE klass;
  int i;
  klass = cHeron_Profiler_RouteStats = rb_define_class_under(mProfiler, "RouteStats", rb_cObject);
  rb_gc_register_mark_object(klass);
  for (i = 0; i < LAST_SIZE; i++) {
    last[i] = Qnil;
    rb_gc_register_address(&last[i]);
  }
  id_names = rb_intern("@names");
  id_route_for = rb_intern("route_for");
  id_request_method = rb_intern("request_method");
  id_path = rb_intern("path");
  rb_define_method(klass, "add", Heron_Profiler_RouteStats_add, 1);
}
