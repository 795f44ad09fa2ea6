/*
 * Heron::Profiler::RouteStats#add: every profiled request is added to its route's figures. In
 * Ruby, the call from the middleware, the reads of the profile's method and path and the
 * method frames cost about as much as the figures themselves, so #add is C; the routes it finds
 * are cached in Ruby (@names: method => {path => Route}) by lib/heron/profiler/route_stats.rb's
 * #route_for, which #add calls for a path it has not seen.
 *
 *   #add(profile) -> nil
 */
#include "profiler.h"

static ID id_names, id_route_for, id_request_method, id_path;

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

/*
 * call-seq: add(profile) -> nil
 *
 * Adds a finished request (a RequestProfile, or anything answering request_method, path,
 * total_ms, db_count and to_h) to its route's figures (Route#add).
 */
static VALUE Heron_Profiler_RouteStats_add(VALUE self, VALUE profile)
{
  VALUE method, path, by_path, route = Qnil;
  Heron_Profiler_RouteStats_request(profile, &method, &path);
  by_path = rb_hash_lookup(rb_ivar_get(self, id_names), method);
  if (RB_TYPE_P(by_path, T_HASH)) route = rb_hash_lookup(by_path, path);
  if (NIL_P(route)) route = rb_funcall(self, id_route_for, 2, method, path);
  Heron_Profiler_RouteStats_Route_add_profile(route, profile);
  return Qnil;
}

void Init_Heron_Profiler_RouteStats(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "RouteStats", rb_cObject);
  id_names = rb_intern("@names");
  id_route_for = rb_intern("route_for");
  id_request_method = rb_intern("request_method");
  id_path = rb_intern("path");
  rb_define_method(klass, "add", Heron_Profiler_RouteStats_add, 1);
}
