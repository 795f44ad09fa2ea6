/*
 * The per-request path of Heron::Profiler::Middleware: #call and #finish. Every profiled
 * request runs them, and written in Ruby their dozens of method calls cost more than Heron's
 * whole hello-world request, so they are here; lib/heron/profiler/middleware.rb holds the
 * constructor and everything that is not on every request (the dashboard, the memory
 * profile, N+1 reports, after-reply timing, checking a request's queries).
 *
 * The values the hot path reads live in a C struct, not in instance variables (reading one of
 * those costs as much as a hash lookup); Ruby's #initialize hands them over with #configure.
 *
 *   #configure(app, accounting, store, profile_path, sample, check_timing, routes, cpu_sample, proxies) (private)
 *   #call(env)              -> [status, headers, body]
 *   #finish(profile, status) -> nil
 */
#include "profiler.h"
#include <string.h>

static VALUE cHeron_Profiler_ProfiledBody;
static VALUE str_after_reply, str_X_REQUEST_START, str_X_QUEUE_START;
static VALUE Heron_Profiler_loaded_features; /* $LOADED_FEATURES */

typedef struct Heron_Profiler_Middleware {
  VALUE app, accounting, store, profile_path;
  VALUE routes; /* a RouteStats that #add's each finished profile, or Qnil */
  Heron_Profiler_FiberAccounting *a; /* accounting's */
  int c_store;                       /* whether store is a Heron::Profiler::Store */
  int c_routes;                      /* whether routes is a Heron::Profiler::RouteStats (C #add) */
  long sample, requests;              /* config.profile_sample, and requests seen in the period */
  long cpu_sample, cpu_requests;      /* config.profile_cpu_sample, and profiles seen in the period */
  int check_timing;                  /* Server-Timing only for some requests: TIMING_* */
  int proxies;                       /* whether any proxy is trusted (else X-Request-Start is not read) */
  long features_seen; /* $LOADED_FEATURES' size when the SQL hooks were last looked for;
                         -1: all are installed; -2: not looked for yet */
} Heron_Profiler_Middleware;

/* What rb_protect hands to Heron_Profiler_Middleware_measure (the values stay on this stack,
 * where the GC sees them). */
typedef struct Heron_Profiler_Middleware_request {
  VALUE self, env, profile;
  Heron_Profiler_Middleware *m;
  Heron_Profiler_RequestProfile *p;
} Heron_Profiler_Middleware_request;
enum { TIMING_LOOPBACK, TIMING_ASK }; /* check_timing: no token; a token */
static ID id_add, id_call, id_new, id_push, id_dashboard, id_memory_profile, id_flamegraph, id_install_hooks;
static ID id_report_n_plus_one, id_time_after_reply, id_check_queries, id_trusted_proxy_p, id_timing_allowed_p;

static void Heron_Profiler_Middleware_mark(void *ptr)
{
  Heron_Profiler_Middleware *m = ptr;
  rb_gc_mark(m->app);
  rb_gc_mark(m->accounting);
  rb_gc_mark(m->store);
  rb_gc_mark(m->profile_path);
  rb_gc_mark(m->routes);
}

static const rb_data_type_t Heron_Profiler_Middleware_type = {
  "Heron::Profiler::Middleware",
  { Heron_Profiler_Middleware_mark, RUBY_TYPED_DEFAULT_FREE, NULL, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static Heron_Profiler_Middleware *Heron_Profiler_Middleware_get(VALUE self)
{
  Heron_Profiler_Middleware *m = rb_check_typeddata(self, &Heron_Profiler_Middleware_type);
  if (NIL_P(m->app)) rb_raise(rb_eRuntimeError, "Heron::Profiler::Middleware not configured");
  return m;
}

static VALUE Heron_Profiler_Middleware_alloc(VALUE klass)
{
  Heron_Profiler_Middleware *m;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_Middleware, &Heron_Profiler_Middleware_type, m);
  m->app = m->accounting = m->store = m->profile_path = m->routes = Qnil;
  return self;
}

/*
 * call-seq: configure(app, accounting, store, profile_path, sample, check_timing, routes, cpu_sample, proxies) -> self
 *
 * What #call needs: the Rack app, the FiberAccounting, the Store, the dashboard's path prefix
 * (a String, or nil for none), the sampling period (an Integer; 1 or less: every request),
 * which responses get the profiler's headers (:loopback: those AccessControl's loopback rule
 * allows, asked in C, when there is no profile_token; true: those #timing_allowed?(env) allows),
 * the RouteStats each finished profile is added to (or
 * nil), the period of measured requests whose thread CPU time is read too (an Integer; 1
 * or less: every one), and whether any proxy is trusted (false: a request's X-Request-Start
 * and X-Queue-Start are not even looked up).
 */
static VALUE Heron_Profiler_Middleware_configure(int argc, VALUE *argv, VALUE self)
{
  VALUE app, accounting, store, profile_path, sample, check_timing, routes, cpu_sample, proxies;
  Heron_Profiler_Middleware *m = rb_check_typeddata(self, &Heron_Profiler_Middleware_type);
  rb_scan_args(argc, argv, "9", &app, &accounting, &store, &profile_path, &sample, &check_timing, &routes, &cpu_sample, &proxies);
  m->a = Heron_Profiler_FiberAccounting_get(accounting);
  m->c_store = Heron_Profiler_Store_p(store);
  m->c_routes = Heron_Profiler_RouteStats_p(routes);
  RB_OBJ_WRITE(self, &m->app, app);
  RB_OBJ_WRITE(self, &m->accounting, accounting);
  RB_OBJ_WRITE(self, &m->store, store);
  RB_OBJ_WRITE(self, &m->profile_path, profile_path);
  RB_OBJ_WRITE(self, &m->routes, routes);
  m->sample = NUM2LONG(sample);
  m->cpu_sample = NUM2LONG(cpu_sample);
  m->requests = m->cpu_requests = 0;
  m->features_seen = -2;
  m->proxies = RTEST(proxies);
  m->check_timing = SYMBOL_P(check_timing) ? TIMING_LOOPBACK : TIMING_ASK;
  return self;
}

/* Installs the SQL hooks of the database libraries loaded by now (ActiveRecord may load after
 * the app is built). Asked again only after something new was required. */
static void Heron_Profiler_Middleware_hook_sql(VALUE self, Heron_Profiler_Middleware *m)
{
  long loaded = RARRAY_LEN(Heron_Profiler_loaded_features);
  if (m->features_seen == -1 || m->features_seen == loaded) return;
  m->features_seen = RTEST(rb_funcall(self, id_install_hooks, 0)) ? -1 : loaded;
}

/* Whether the request's path lies under the dashboard's (config.profile_path). */
static int Heron_Profiler_Middleware_dashboard_p(const Heron_Profiler_Middleware *m, VALUE path)
{
  VALUE prefix = m->profile_path;
  if (!RB_TYPE_P(path, T_STRING) || !RB_TYPE_P(prefix, T_STRING)) return 0;
  return RSTRING_LEN(path) >= RSTRING_LEN(prefix) &&
         memcmp(RSTRING_PTR(path), RSTRING_PTR(prefix), (size_t)RSTRING_LEN(prefix)) == 0;
}

/* Whether `name` follows `__heron=` in the query string at `at`. */
static int Heron_Profiler_Middleware_tool_p(const char *at, const char *end, const char *name)
{
  size_t length = strlen(name);
  return (size_t)(end - at) >= length && memcmp(at, name, length) == 0;
}

/* The response of a profiling tool the query string asks for (`__heron=memory`: the memory
 * profile, `__heron=flamegraph`: the flamegraph), or Qnil when it asks for none or the tool is
 * not available. One memmem for an ordinary request. */
static VALUE Heron_Profiler_Middleware_tool(VALUE self, VALUE env, VALUE query)
{
  static const char flag[] = "__heron=";
  const char *start, *end, *at;
  if (!RB_TYPE_P(query, T_STRING)) return Qnil;
  start = RSTRING_PTR(query);
  end = start + RSTRING_LEN(query);
  at = memmem(start, (size_t)(end - start), flag, sizeof(flag) - 1);
  if (at == NULL) return Qnil;
  at += sizeof(flag) - 1;
  if (Heron_Profiler_Middleware_tool_p(at, end, "memory")) return rb_funcall(self, id_memory_profile, 1, env);
  if (Heron_Profiler_Middleware_tool_p(at, end, "flamegraph")) return rb_funcall(self, id_flamegraph, 1, env);
  return Qnil;
}

/* #finish for a caller holding the pointers. */
static void Heron_Profiler_Middleware_finish_profile(VALUE self, Heron_Profiler_Middleware *m, VALUE profile, Heron_Profiler_RequestProfile *p, VALUE status)
{
  if (Heron_Profiler_RequestProfile_done(p)) return;
  if (NIL_P(p->status)) RB_OBJ_WRITE(profile, &p->status, status);
  Heron_Profiler_RequestProfile_stamp_end(p);
  Heron_Profiler_FiberAccounting_close_profile(m->a, profile, p);
  if (RARRAY_LEN(p->queries) > 0) rb_funcall(self, id_check_queries, 1, profile);
  if (m->c_store) Heron_Profiler_Store_push_profile(m->store, profile, p);
  else rb_funcall(m->store, id_push, 1, profile);
  if (m->c_routes) Heron_Profiler_RouteStats_add_profile(m->routes, profile);
  else if (!NIL_P(m->routes)) rb_funcall(m->routes, id_add, 1, profile);
}

/*
 * call-seq: finish(profile, status) -> nil
 *
 * Finishes a request's profile once no app code is left to run (its Array body returned, or
 * its other body closed, see ProfiledBody): stamps the total time, stops charging it, checks
 * its queries for N+1s and keeps it in the Store. `status` is used when the app returned
 * none (it raised). Later calls do nothing.
 */
static VALUE Heron_Profiler_Middleware_finish(VALUE self, VALUE profile, VALUE status)
{
  Heron_Profiler_Middleware_finish_profile(self, Heron_Profiler_Middleware_get(self), profile, Heron_Profiler_RequestProfile_get(profile), status);
  return Qnil;
}

/* The headers, copied when frozen: an app sharing one frozen headers Hash gets a copy, not a
 * 500. */
static VALUE Heron_Profiler_Middleware_writable(VALUE headers)
{
  return OBJ_FROZEN(headers) ? rb_hash_dup(headers) : headers;
}

/* Whether this response gets the profiler's headers (see #configure's check_timing): the
 * dashboard's rule, in every environment. */
static int Heron_Profiler_Middleware_timing_p(const Heron_Profiler_Middleware_request *request)
{
  if (request->m->check_timing == TIMING_LOOPBACK) return Heron_Profiler_Dashboard_AccessControl_local(request->env);
  return RTEST(rb_funcall(request->self, id_timing_allowed_p, 1, request->env));
}

/* Adds the profile's Server-Timing to the headers and reports N+1s once the app has returned. */
static VALUE Heron_Profiler_Middleware_returned(const Heron_Profiler_Middleware_request *request, VALUE headers)
{
  if (!RB_TYPE_P(headers, T_HASH)) return headers; /* not Rack 3: the server will refuse it */
  int shown = Heron_Profiler_Middleware_timing_p(request);
  if (shown) {
    headers = Heron_Profiler_Middleware_writable(headers);
    Heron_Profiler_RequestProfile_add_timing(request->profile, request->p, headers);
  }
  if (RARRAY_LEN(request->p->queries) > 0) {
    headers = Heron_Profiler_Middleware_writable(headers);
    rb_funcall(request->self, id_report_n_plus_one, 3, request->profile, headers, shown ? Qtrue : Qfalse);
  }
  return headers;
}

/* Times the request's after-reply callbacks (none: 0 ms, known before the record is stored). */
static void Heron_Profiler_Middleware_after_reply(const Heron_Profiler_Middleware_request *request)
{
  VALUE callables = rb_hash_aref(request->env, str_after_reply);
  if (!RB_TYPE_P(callables, T_ARRAY)) return;
  if (RARRAY_LEN(callables) == 0) request->p->after_reply_ms = 0.0;
  else rb_funcall(request->self, id_time_after_reply, 2, request->profile, callables);
}

/* Whether this one is sampled: the first, then one in every `period`; `*count` counts them
 * (requests for config.profile_sample, measured requests for config.profile_cpu_sample). */
static int Heron_Profiler_Middleware_sampled_p(long *count, long period)
{
  long seen;
  if (period <= 1) return 1;
  seen = *count;
  *count = (seen + 1) % period;
  return seen == 0;
}

/*
 * Calls the app and measures it. An Array body has no app code left to run once the app
 * returns, so its request is finished there; any other body is wrapped in a ProfiledBody that
 * finishes it when the server closes it.
 */
static VALUE Heron_Profiler_Middleware_measure(VALUE arg)
{
  const Heron_Profiler_Middleware_request *request = (const Heron_Profiler_Middleware_request *)arg;
  VALUE self = request->self, profile = request->profile;
  VALUE response = rb_funcall(request->m->app, id_call, 1, request->env);
  VALUE status, headers, body, added;
  if (!RB_TYPE_P(response, T_ARRAY) || RARRAY_LEN(response) != 3) { /* the server will refuse it */
    Heron_Profiler_Middleware_finish_profile(self, request->m, profile, request->p, INT2FIX(500));
    return response;
  }
  status = RARRAY_AREF(response, 0);
  headers = RARRAY_AREF(response, 1);
  body = RARRAY_AREF(response, 2);
  Heron_Profiler_RequestProfile_stamp_app(profile, request->p, status);
  Heron_Profiler_Middleware_after_reply(request);
  if (rb_obj_class(body) == rb_cArray) {
    Heron_Profiler_Middleware_finish_profile(self, request->m, profile, request->p, status);
  } else {
    Heron_Profiler_FiberAccounting_charge_running(request->m->a);
    body = rb_funcall(cHeron_Profiler_ProfiledBody, id_new, 4, body, self, profile, status);
  }
  added = Heron_Profiler_Middleware_returned(request, headers);
  if (added == headers && body == RARRAY_AREF(response, 2)) return response; /* same three values */
  return rb_ary_new_from_args(3, status, added, body);
}

/* Where a request goes instead of being measured: the dashboard, the memory profile, or
 * (sampled out) straight to the app; Qundef when it is to be measured. */
static VALUE Heron_Profiler_Middleware_route(VALUE self, Heron_Profiler_Middleware *m, VALUE env, VALUE path, VALUE query)
{
  VALUE response;
  if (Heron_Profiler_Middleware_dashboard_p(m, path)) return rb_funcall(self, id_dashboard, 1, env);
  response = Heron_Profiler_Middleware_tool(self, env, query);
  if (!NIL_P(response)) return response;
  if (!Heron_Profiler_Middleware_sampled_p(&m->requests, m->sample)) return rb_funcall(m->app, id_call, 1, env);
  Heron_Profiler_Middleware_hook_sql(self, m);
  return Qundef;
}

/* Measures the app's call for a started profile (see #call). */
static VALUE Heron_Profiler_Middleware_run(VALUE self, Heron_Profiler_Middleware *m, VALUE env, VALUE profile)
{
  Heron_Profiler_Middleware_request request;
  VALUE response;
  int state = 0;
  request.self = self;
  request.env = env;
  request.profile = profile;
  request.m = m;
  request.p = HERON_PROFILE(profile);
  if (!Heron_Profiler_Middleware_sampled_p(&m->cpu_requests, m->cpu_sample)) Heron_Profiler_RequestProfile_skip_cpu(request.p);
  Heron_Profiler_FiberAccounting_open_profile(m->a, profile, request.p);
  response = rb_protect(Heron_Profiler_Middleware_measure, (VALUE)&request, &state);
  RB_GC_GUARD(profile);
  if (state) {
    Heron_Profiler_Middleware_finish_profile(self, m, profile, request.p, INT2FIX(500));
    rb_jump_tag(state);
  }
  return response;
}

/* Whether the request carries a proxy's queue header (X-Request-Start / X-Queue-Start) that
 * may be believed: its peer is one of config.trusted_proxies (#trusted_proxy?). */
static int Heron_Profiler_Middleware_proxy_p(VALUE self, const Heron_Profiler_Middleware *m, VALUE env)
{
  if (!m->proxies) return 0;
  if (NIL_P(rb_hash_aref(env, str_X_REQUEST_START)) && NIL_P(rb_hash_aref(env, str_X_QUEUE_START))) return 0;
  return RTEST(rb_funcall(self, id_trusted_proxy_p, 1, env));
}

/*
 * call-seq: call(env) -> [status, headers, body]
 *
 * Rack entry point. Requests under config.profile_path go to the dashboard, `?__heron=memory`
 * to the memory profile, `?__heron=flamegraph` to the flamegraph; every other request (or one in
 * config.profile_sample, the rest going straight to the app) is measured (see RequestProfile,
 * FiberAccounting) and answered with a Server-Timing header that also names its record.
 * Whatever the app raises, the profile is finished (status 500) and the error goes on to the
 * server.
 */
static VALUE Heron_Profiler_Middleware_call(VALUE self, VALUE env)
{
  Heron_Profiler_Middleware *m = Heron_Profiler_Middleware_get(self);
  VALUE path, query, response;
  Check_Type(env, T_HASH);
  path = rb_hash_aref(env, Heron_Profiler_str_PATH_INFO);
  query = rb_hash_aref(env, Heron_Profiler_str_QUERY_STRING);
  response = Heron_Profiler_Middleware_route(self, m, env, path, query);
  if (response != Qundef) return response;
  return Heron_Profiler_Middleware_run(self, m, env, Heron_Profiler_RequestProfile_for_proxy(env, path, query, Heron_Profiler_Middleware_proxy_p(self, m, env)));
}

void Init_Heron_Profiler_Middleware(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "Middleware", rb_cObject);
  cHeron_Profiler_ProfiledBody = rb_define_class_under(mProfiler, "ProfiledBody", rb_cObject);
  str_after_reply = Heron_Profiler_str("rack.after_reply");
  str_X_REQUEST_START = Heron_Profiler_str("HTTP_X_REQUEST_START");
  str_X_QUEUE_START = Heron_Profiler_str("HTTP_X_QUEUE_START");
  Heron_Profiler_loaded_features = rb_gv_get("$LOADED_FEATURES");
  rb_gc_register_mark_object(Heron_Profiler_loaded_features);
  rb_define_alloc_func(klass, Heron_Profiler_Middleware_alloc);
  rb_define_private_method(klass, "configure", Heron_Profiler_Middleware_configure, -1);
  id_add = rb_intern("add");
  id_call = rb_intern("call");
  id_new = rb_intern("new");
  id_push = rb_intern("push");
  id_dashboard = rb_intern("dashboard");
  id_memory_profile = rb_intern("memory_profile");
  id_flamegraph = rb_intern("flamegraph");
  id_install_hooks = rb_intern("install_hooks");
  id_report_n_plus_one = rb_intern("report_n_plus_one");
  id_time_after_reply = rb_intern("time_after_reply");
  id_check_queries = rb_intern("check_queries");
  id_trusted_proxy_p = rb_intern("trusted_proxy?");
  id_timing_allowed_p = rb_intern("timing_allowed?");
  rb_define_method(klass, "call", Heron_Profiler_Middleware_call, 1);
  rb_define_method(klass, "finish", Heron_Profiler_Middleware_finish, 2);
}
