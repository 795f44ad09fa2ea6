/*
 * The per-request path of Heron::Profiler::Middleware: #call and #finish. Every profiled
 * request runs them, and written in Ruby their dozens of method calls cost more than Heron's
 * whole hello-world request, so they are here; lib/heron/profiler/middleware.rb holds the
 * constructor and everything that is not on every request (the dashboard, the memory
 * profile, N+1 reports, after-reply timing, checking a request's queries).
 *
 *   #call(env)              -> [status, headers, body]
 *   #finish(profile, status) -> nil
 */
#include "profiler.h"
#include <string.h>

static VALUE cHeron_Profiler_ProfiledBody;
static VALUE str_after_reply;

/* What rb_protect hands to Heron_Profiler_Middleware_measure (the values stay on this stack,
 * where the GC sees them). */
typedef struct Heron_Profiler_Middleware_request {
  VALUE self, env, profile;
} Heron_Profiler_Middleware_request;
static ID id_app, id_accounting, id_store, id_profile_path, id_sql_hooked, id_sample, id_requests;
static ID id_call, id_new, id_push, id_dashboard, id_memory_profile, id_install_hooks;
static ID id_report_n_plus_one, id_time_after_reply, id_check_queries;

/* Whether the request's path lies under the dashboard's (config.profile_path). */
static int Heron_Profiler_Middleware_dashboard_p(VALUE self, VALUE path)
{
  VALUE prefix = rb_ivar_get(self, id_profile_path);
  if (!RB_TYPE_P(path, T_STRING) || !RB_TYPE_P(prefix, T_STRING)) return 0;
  return RSTRING_LEN(path) >= RSTRING_LEN(prefix) &&
         memcmp(RSTRING_PTR(path), RSTRING_PTR(prefix), (size_t)RSTRING_LEN(prefix)) == 0;
}

/* Whether the query string asks for a memory profile (`__heron=memory`). */
static int Heron_Profiler_Middleware_memory_p(VALUE query)
{
  static const char flag[] = "__heron=memory";
  if (!RB_TYPE_P(query, T_STRING)) return 0;
  return memmem(RSTRING_PTR(query), (size_t)RSTRING_LEN(query), flag, sizeof(flag) - 1) != NULL;
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
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(profile);
  if (Heron_Profiler_RequestProfile_done(p)) return Qnil;
  if (NIL_P(p->status)) RB_OBJ_WRITE(profile, &p->status, status);
  Heron_Profiler_RequestProfile_finished(profile);
  Heron_Profiler_FiberAccounting_close(rb_ivar_get(self, id_accounting), profile);
  if (RARRAY_LEN(p->queries) > 0) rb_funcall(self, id_check_queries, 1, profile);
  rb_funcall(rb_ivar_get(self, id_store), id_push, 1, profile);
  return Qnil;
}

/* Adds the profile's headers, reports N+1s and times after-reply callbacks once the app has
 * returned. An app sharing one frozen headers Hash gets a copy, not a 500. */
static VALUE Heron_Profiler_Middleware_returned(VALUE self, VALUE profile, VALUE env, VALUE headers)
{
  Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(profile);
  VALUE callables;
  if (!RB_TYPE_P(headers, T_HASH)) return headers; /* not Rack 3: the server will refuse it */
  if (OBJ_FROZEN(headers)) headers = rb_hash_dup(headers);
  Heron_Profiler_RequestProfile_add_headers(profile, headers);
  if (RARRAY_LEN(p->queries) > 0) rb_funcall(self, id_report_n_plus_one, 2, profile, headers);
  callables = rb_hash_aref(env, str_after_reply);
  if (!RB_TYPE_P(callables, T_ARRAY)) return headers;
  if (RARRAY_LEN(callables) == 0) p->after_reply_ms = 0.0;
  else rb_funcall(self, id_time_after_reply, 2, profile, callables);
  return headers;
}

/* Whether this request is one of those measured: the first, then one in every @sample
 * (config.profile_sample). */
static int Heron_Profiler_Middleware_sampled_p(VALUE self)
{
  VALUE sample = rb_ivar_get(self, id_sample);
  long every = FIXNUM_P(sample) ? FIX2LONG(sample) : 1, count;
  if (every <= 1) return 1;
  count = FIX2LONG(rb_ivar_get(self, id_requests));
  rb_ivar_set(self, id_requests, LONG2FIX((count + 1) % every));
  return count == 0;
}

/*
 * Calls the app and measures it. An Array body has no app code left to run once the app
 * returns, so its request is finished there; any other body is wrapped in a ProfiledBody that
 * finishes it when the server closes it.
 */
static VALUE Heron_Profiler_Middleware_measure(VALUE arg)
{
  const Heron_Profiler_Middleware_request *request = (const Heron_Profiler_Middleware_request *)arg;
  VALUE self = request->self, env = request->env, profile = request->profile;
  VALUE response = rb_funcall(rb_ivar_get(self, id_app), id_call, 1, env);
  VALUE status, headers, body, added;
  if (!RB_TYPE_P(response, T_ARRAY) || RARRAY_LEN(response) != 3) { /* the server will refuse it */
    Heron_Profiler_Middleware_finish(self, profile, INT2FIX(500));
    return response;
  }
  status = RARRAY_AREF(response, 0);
  headers = RARRAY_AREF(response, 1);
  body = RARRAY_AREF(response, 2);
  Heron_Profiler_RequestProfile_app_returned(profile, status);
  if (rb_obj_class(body) == rb_cArray) {
    Heron_Profiler_Middleware_finish(self, profile, status);
  } else {
    Heron_Profiler_FiberAccounting_checkpoint(rb_ivar_get(self, id_accounting));
    body = rb_funcall(cHeron_Profiler_ProfiledBody, id_new, 4, body, self, profile, status);
  }
  added = Heron_Profiler_Middleware_returned(self, profile, env, headers);
  if (added == headers && body == RARRAY_AREF(response, 2)) return response; /* same three values */
  return rb_ary_new_from_args(3, status, added, body);
}

/*
 * call-seq: call(env) -> [status, headers, body]
 *
 * Rack entry point. Requests under config.profile_path go to the dashboard, `?__heron=memory`
 * to the memory profile (when memory_profiler is there); every other request (or one in
 * config.profile_sample, the rest going straight to the app) is measured (see RequestProfile,
 * FiberAccounting) and answered with a Server-Timing and an x-heron-profile-id header. Whatever the app raises, the profile is finished (status 500)
 * and the error goes on to the server.
 */
static VALUE Heron_Profiler_Middleware_call(VALUE self, VALUE env)
{
  VALUE path, query, profile, response;
  Heron_Profiler_Middleware_request request;
  int state = 0;
  Check_Type(env, T_HASH);
  path = rb_hash_aref(env, Heron_Profiler_str_PATH_INFO);
  if (Heron_Profiler_Middleware_dashboard_p(self, path)) return rb_funcall(self, id_dashboard, 1, env);
  query = rb_hash_aref(env, Heron_Profiler_str_QUERY_STRING);
  if (Heron_Profiler_Middleware_memory_p(query)) {
    response = rb_funcall(self, id_memory_profile, 1, env);
    if (!NIL_P(response)) return response;
  }
  if (!Heron_Profiler_Middleware_sampled_p(self)) {
    return rb_funcall(rb_ivar_get(self, id_app), id_call, 1, env);
  }
  if (!RTEST(rb_ivar_get(self, id_sql_hooked))) {
    rb_ivar_set(self, id_sql_hooked, rb_funcall(self, id_install_hooks, 0));
  }
  profile = Heron_Profiler_RequestProfile_for(env, path, query);
  Heron_Profiler_FiberAccounting_open(rb_ivar_get(self, id_accounting), profile);
  request.self = self;
  request.env = env;
  request.profile = profile;
  response = rb_protect(Heron_Profiler_Middleware_measure, (VALUE)&request, &state);
  RB_GC_GUARD(profile);
  if (state) {
    Heron_Profiler_Middleware_finish(self, profile, INT2FIX(500));
    rb_jump_tag(state);
  }
  return response;
}

void Init_Heron_Profiler_Middleware(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "Middleware", rb_cObject);
  cHeron_Profiler_ProfiledBody = rb_define_class_under(mProfiler, "ProfiledBody", rb_cObject);
  str_after_reply = Heron_str("rack.after_reply");
  id_app = rb_intern("@app");
  id_accounting = rb_intern("@accounting");
  id_store = rb_intern("@store");
  id_profile_path = rb_intern("@profile_path");
  id_sql_hooked = rb_intern("@sql_hooked");
  id_sample = rb_intern("@sample");
  id_requests = rb_intern("@requests");
  id_call = rb_intern("call");
  id_new = rb_intern("new");
  id_push = rb_intern("push");
  id_dashboard = rb_intern("dashboard");
  id_memory_profile = rb_intern("memory_profile");
  id_install_hooks = rb_intern("install_hooks");
  id_report_n_plus_one = rb_intern("report_n_plus_one");
  id_time_after_reply = rb_intern("time_after_reply");
  id_check_queries = rb_intern("check_queries");
  rb_define_method(klass, "call", Heron_Profiler_Middleware_call, 1);
  rb_define_method(klass, "finish", Heron_Profiler_Middleware_finish, 2);
}
