/*
 * Heron::Profiler::Meter: the per-request primitive under Heron::Profiler::Middleware. Every
 * profiled request runs #call and #finish, and written in Ruby their dozens of method calls
 * cost more than Heron's whole hello-world request, so they are C; the Ruby middleware
 * (lib/heron/profiler/middleware.rb) is a subclass that sets the Meter up with its settings
 * and with the Procs that do the cold work (the dashboard, the memory profile, N+1 reports,
 * after-reply timing, checking a request's queries, naming a route), and inherits #call and
 * #finish, so a request enters C straight from the server.
 *
 * The Meter calls no Ruby method by name: the app is called (`call` on the Rack app, as a
 * server would) and the Procs it was given are run with rb_proc_call_with_block; everything
 * else is C (RequestProfile, FiberAccounting, Store, RouteStats::Route).
 *
 *   Meter.new(app, accounting, store, settings, hooks)
 *   #call(env)               -> [status, headers, body]
 *   #finish(profile, status) -> nil
 */
#include "profiler.h"
#include "profiler_meter.h"
#include <ruby/encoding.h>
#include <string.h>

static VALUE Heron_Profiler_loaded_features; /* $LOADED_FEATURES */
static ID id_call;

/* The Procs of #initialize's hooks, by the Symbol each is given under (see HOOK_NAMES). */
enum {
  HOOK_DASHBOARD,     /* (env) -> response */
  HOOK_MEMORY,        /* (env) -> response or nil */
  HOOK_FLAMEGRAPH,    /* (env) -> response or nil */
  HOOK_SQL,           /* () -> whether every SQL hook is installed */
  HOOK_PROXY_QUEUE,   /* (env) -> a trusted proxy's queue time (ms, a Float), or nil */
  HOOK_TIMING,        /* (env) -> whether the response may carry the profiler's headers */
  HOOK_AFTER_REPLY,   /* (profile, callables) -> ignored */
  HOOK_QUERIES,       /* (profile) -> ignored: checks a finished profile's queries */
  HOOK_N_PLUS_ONE,    /* (profile, headers, shown) -> ignored */
  HOOK_ROUTE,         /* (method, path) -> RouteStats::Route */
  HOOK_KEEP,          /* (route, profile) -> ignored: keeps the record among the route's slowest */
  HOOK_BODY,          /* (body, profile, status) -> the body that finishes the profile on close */
  HOOK_PUSH,          /* (profile) -> ignored: for a store that is not a Store::Ring */
  HOOK_COUNT
};
static const char *const HOOK_NAMES[HOOK_COUNT] = {
  "dashboard", "memory", "flamegraph", "sql", "proxy_queue", "timing", "after_reply",
  "queries", "n_plus_one", "route", "keep", "body", "push",
};

enum { LAST_METHOD, LAST_PATH, LAST_ROUTE, LAST_SIZE };

/* What an env key is to the Meter's pass (Heron_Profiler_Meter_kind); KEY_RULE + n: kind n of
 * the loopback rule (HERON_LOOPBACK_*). KEY_UNKNOWN (0) marks an empty slot of the key cache. */
enum { KEY_UNKNOWN, KEY_OTHER, KEY_PATH, KEY_QUERY, KEY_METHOD, KEY_AFTER_REPLY, KEY_QUEUE_HEADER, KEY_REQUEST_START, KEY_RULE };

/*
 * The kinds of the env keys seen, by the key's identity: a server builds each request's env
 * with the same key objects (Heron's and Puma's keys, header names included, are interned
 * frozen Strings), so the pass tells most entries apart by one pointer compare instead of
 * reading their bytes. Only frozen Strings are remembered (their bytes cannot change), and the
 * cache holds on to them (marked, so pinned: the address cannot be reused for another String
 * or moved). Open addressing, linear probing; emptied when half full, so a client sending
 * ever-new header names costs the pass its cache, never memory.
 */
#define KEY_SLOTS 256
#define KEY_MAX (KEY_SLOTS / 2)
typedef struct Heron_Profiler_Meter_keys {
  VALUE key[KEY_SLOTS]; /* Qfalse: empty */
  unsigned char kind[KEY_SLOTS];
  int count;
} Heron_Profiler_Meter_keys;

typedef struct Heron_Profiler_Meter {
  VALUE app, accounting, store, profile_path;
  VALUE hooks[HOOK_COUNT];
  VALUE last[LAST_SIZE]; /* the route last added to, and the method and path (frozen) it was for */
  Heron_Profiler_FiberAccounting *a; /* accounting's */
  int c_store;                       /* whether store is a Heron::Profiler::Store::Ring */
  long sample, requests;             /* profile_sample, and requests seen in the period */
  long cpu_sample, cpu_requests;     /* profile_cpu_sample, and profiles seen in the period */
  int loopback;                      /* headers by LoopbackRule (else HOOK_TIMING) */
  int proxies;                       /* whether any proxy is trusted (else X-Request-Start is not read) */
  long features_seen; /* $LOADED_FEATURES' size when the SQL hooks were last looked for;
                         -1: all are installed; -2: not looked for yet */
  Heron_Profiler_Meter_keys keys;
} Heron_Profiler_Meter;

/* What rb_protect hands to Heron_Profiler_Meter_measure (the values stay on this stack, where
 * the GC sees them). */
typedef struct Heron_Profiler_Meter_request {
  VALUE self, env, profile;
  VALUE after_reply; /* env's rack.after_reply as the pass found it (before the app ran), or Qnil */
  Heron_Profiler_Meter *m;
  Heron_Profiler_RequestProfile *p;
  int local; /* the loopback rule's answer, read before the app ran (when m->loopback) */
} Heron_Profiler_Meter_request;

/* What the Meter reads of a request's env, in one pass over it (Heron_Profiler_Meter_read): a
 * String-keyed lookup hashes its key (about 290 instructions) and a measured request needs
 * thirteen keys (six of them forwarding headers, normally absent), where the pass costs
 * libruby's walk (about 30 instructions an entry with rb_hash_stlike_foreach, 55 with
 * rb_hash_foreach) and, for a key seen before, one probe of the key cache (about 30): about
 * 1,500 instructions on Heron's env of 24 entries (in-process callgrind), where it was 3,000
 * with rb_hash_foreach and a length test and memcmp per entry, and the lookups about 4,000. */
typedef struct Heron_Profiler_Meter_env {
  VALUE self;            /* the Meter, owner of the key cache */
  Heron_Profiler_Meter *m;
  VALUE path, query, method, request_start, after_reply; /* Qnil when absent */
  int paths;        /* whether the pass reads PATH_INFO and QUERY_STRING (else they were looked up) */
  int loopback;     /* whether it notes what the loopback rule needs */
  int queue_header; /* a non-nil X-Request-Start or X-Queue-Start was seen */
  Heron_Profiler_Dashboard_LoopbackRule_seen rule;
} Heron_Profiler_Meter_env;

static void Heron_Profiler_Meter_mark(void *ptr)
{
  Heron_Profiler_Meter *m = ptr;
  int i;
  rb_gc_mark(m->app);
  rb_gc_mark(m->accounting);
  rb_gc_mark(m->store);
  rb_gc_mark(m->profile_path);
  for (i = 0; i < HOOK_COUNT; i++) rb_gc_mark(m->hooks[i]);
  for (i = 0; i < LAST_SIZE; i++) rb_gc_mark(m->last[i]);
  for (i = 0; i < KEY_SLOTS; i++) {
    if (m->keys.key[i] != Qfalse) rb_gc_mark(m->keys.key[i]);
  }
}

static const rb_data_type_t Heron_Profiler_Meter_type = {
  "Heron::Profiler::Meter",
  { Heron_Profiler_Meter_mark, RUBY_TYPED_DEFAULT_FREE, NULL, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static Heron_Profiler_Meter *Heron_Profiler_Meter_get(VALUE self)
{
  Heron_Profiler_Meter *m = rb_check_typeddata(self, &Heron_Profiler_Meter_type);
  if (NIL_P(m->app)) rb_raise(rb_eRuntimeError, "Heron::Profiler::Meter not initialized");
  return m;
}

static VALUE Heron_Profiler_Meter_alloc(VALUE klass)
{
  Heron_Profiler_Meter *m;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_Meter, &Heron_Profiler_Meter_type, m);
  int i;
  m->app = m->accounting = m->store = m->profile_path = Qnil;
  for (i = 0; i < HOOK_COUNT; i++) m->hooks[i] = Qnil;
  for (i = 0; i < LAST_SIZE; i++) m->last[i] = Qnil;
  for (i = 0; i < KEY_SLOTS; i++) m->keys.key[i] = Qfalse;
  return self;
}

/* Runs a hook's Proc. */
static VALUE Heron_Profiler_Meter_run(const Heron_Profiler_Meter *m, int hook, int argc, const VALUE *argv)
{
  return rb_proc_call_with_block(m->hooks[hook], argc, argv, Qnil);
}

/* The setting `name` of #initialize's settings Hash (KeyError when missing). */
static VALUE Heron_Profiler_Meter_setting(VALUE settings, const char *name)
{
  return rb_hash_fetch(settings, ID2SYM(rb_intern(name)));
}

/* Takes #initialize's hooks: a Proc under each of HOOK_NAMES (push may be nil). */
static void Heron_Profiler_Meter_take_hooks(VALUE self, Heron_Profiler_Meter *m, VALUE hooks)
{
  int i;
  Check_Type(hooks, T_HASH);
  for (i = 0; i < HOOK_COUNT; i++) {
    VALUE hook = rb_hash_fetch(hooks, ID2SYM(rb_intern(HOOK_NAMES[i])));
    if (!rb_obj_is_proc(hook) && !(i == HOOK_PUSH && NIL_P(hook))) {
      rb_raise(rb_eTypeError, "Heron::Profiler::Meter hook %s: a Proc expected", HOOK_NAMES[i]);
    }
    RB_OBJ_WRITE(self, &m->hooks[i], hook);
  }
  if (!m->c_store && NIL_P(m->hooks[HOOK_PUSH])) rb_raise(rb_eArgError, "Heron::Profiler::Meter: a push hook is needed for this store");
}

/*
 * call-seq: Meter.new(app, accounting, store, settings, hooks)
 *
 * A meter for the Rack app: `accounting` the FiberAccounting, `store` where finished profiles
 * go (a Heron::Profiler::Store::Ring, or anything the push hook takes them to). `settings`: a Hash of
 * profile_path (the dashboard's path prefix, a String, or nil), sample (the sampling period,
 * an Integer; 1 or less: every request), cpu_sample (the period of measured requests whose
 * thread CPU time is read too), proxies (whether any proxy is trusted: false, and a request's
 * X-Request-Start and X-Queue-Start are not even looked up) and loopback (true: responses get
 * the profiler's headers by LoopbackRule, asked in C; false: by the timing
 * hook). `hooks`: a Hash of Procs, see HOOK_NAMES above.
 */
static VALUE Heron_Profiler_Meter_initialize(VALUE self, VALUE app, VALUE accounting, VALUE store, VALUE settings, VALUE hooks)
{
  Heron_Profiler_Meter *m = rb_check_typeddata(self, &Heron_Profiler_Meter_type);
  Check_Type(settings, T_HASH);
  m->a = Heron_Profiler_FiberAccounting_get(accounting);
  m->c_store = Heron_Profiler_Store_Ring_p(store);
  Heron_Profiler_Meter_take_hooks(self, m, hooks);
  RB_OBJ_WRITE(self, &m->accounting, accounting);
  RB_OBJ_WRITE(self, &m->store, store);
  RB_OBJ_WRITE(self, &m->profile_path, Heron_Profiler_Meter_setting(settings, "profile_path"));
  m->sample = NUM2LONG(Heron_Profiler_Meter_setting(settings, "sample"));
  m->cpu_sample = NUM2LONG(Heron_Profiler_Meter_setting(settings, "cpu_sample"));
  m->requests = m->cpu_requests = 0;
  m->features_seen = -2;
  m->proxies = RTEST(Heron_Profiler_Meter_setting(settings, "proxies"));
  m->loopback = RTEST(Heron_Profiler_Meter_setting(settings, "loopback"));
  RB_OBJ_WRITE(self, &m->app, app);
  return self;
}

/* Installs the SQL hooks of the database libraries loaded by now (ActiveRecord may load after
 * the app is built). Asked again only after something new was required. */
static void Heron_Profiler_Meter_hook_sql(Heron_Profiler_Meter *m)
{
  long loaded = RARRAY_LEN(Heron_Profiler_loaded_features);
  if (m->features_seen == -1 || m->features_seen == loaded) return;
  m->features_seen = RTEST(Heron_Profiler_Meter_run(m, HOOK_SQL, 0, NULL)) ? -1 : loaded;
}

/* Whether the request's path lies under the dashboard's (profile_path). */
static int Heron_Profiler_Meter_dashboard_p(const Heron_Profiler_Meter *m, VALUE path)
{
  VALUE prefix = m->profile_path;
  if (!RB_TYPE_P(path, T_STRING) || !RB_TYPE_P(prefix, T_STRING)) return 0;
  return RSTRING_LEN(path) >= RSTRING_LEN(prefix) &&
         memcmp(RSTRING_PTR(path), RSTRING_PTR(prefix), (size_t)RSTRING_LEN(prefix)) == 0;
}

/* Whether `name` follows `__heron=` in the query string at `at`. */
static int Heron_Profiler_Meter_tool_p(const char *at, const char *end, const char *name)
{
  size_t length = strlen(name);
  return (size_t)(end - at) >= length && memcmp(at, name, length) == 0;
}

/* The response of a profiling tool the query string asks for (`__heron=memory`: the memory
 * profile, `__heron=flamegraph`: the flamegraph), or Qnil when it asks for none or the tool is
 * not available. One memmem for an ordinary request. */
static VALUE Heron_Profiler_Meter_tool(const Heron_Profiler_Meter *m, VALUE env, VALUE query)
{
  static const char flag[] = "__heron=";
  const char *start, *end, *at;
  if (!RB_TYPE_P(query, T_STRING)) return Qnil;
  start = RSTRING_PTR(query);
  end = start + RSTRING_LEN(query);
  at = memmem(start, (size_t)(end - start), flag, sizeof(flag) - 1);
  if (at == NULL) return Qnil;
  at += sizeof(flag) - 1;
  if (Heron_Profiler_Meter_tool_p(at, end, "memory")) return Heron_Profiler_Meter_run(m, HOOK_MEMORY, 1, &env);
  if (Heron_Profiler_Meter_tool_p(at, end, "flamegraph")) return Heron_Profiler_Meter_run(m, HOOK_FLAMEGRAPH, 1, &env);
  return Qnil;
}

/* Whether Strings `a` and `b` have the same bytes and encoding. */
static int Heron_Profiler_Meter_same(VALUE a, VALUE b)
{
  if (a == b) return 1;
  if (!RB_TYPE_P(a, T_STRING) || !RB_TYPE_P(b, T_STRING)) return 0;
  return RSTRING_LEN(a) == RSTRING_LEN(b) && ENCODING_GET(a) == ENCODING_GET(b) &&
         memcmp(RSTRING_PTR(a), RSTRING_PTR(b), (size_t)RSTRING_LEN(a)) == 0;
}

/*
 * The route of the profile's method and path: the one last added to when it was for the same
 * (consecutive requests for one path, as in a load test, then skip the route hook's two Hash
 * lookups, each hashing a String), else the route hook's. Routes are never replaced
 * (RouteStats#route_for), so it cannot go stale; the GVL guards it.
 */
static VALUE Heron_Profiler_Meter_route(VALUE self, Heron_Profiler_Meter *m, const Heron_Profiler_RequestProfile *p)
{
  VALUE route, args[2];
  if (!NIL_P(m->last[LAST_ROUTE]) && Heron_Profiler_Meter_same(m->last[LAST_METHOD], p->method) &&
      Heron_Profiler_Meter_same(m->last[LAST_PATH], p->path)) return m->last[LAST_ROUTE];
  args[0] = p->method;
  args[1] = p->path;
  route = Heron_Profiler_Meter_run(m, HOOK_ROUTE, 2, args);
  RB_OBJ_WRITE(self, &m->last[LAST_ROUTE], Qnil); /* until all three are set (rb_str_new_frozen may run the GC) */
  RB_OBJ_WRITE(self, &m->last[LAST_METHOD], RB_TYPE_P(p->method, T_STRING) ? rb_str_new_frozen(p->method) : p->method);
  RB_OBJ_WRITE(self, &m->last[LAST_PATH], RB_TYPE_P(p->path, T_STRING) ? rb_str_new_frozen(p->path) : p->path);
  RB_OBJ_WRITE(self, &m->last[LAST_ROUTE], route);
  return route;
}

/* Adds a finished profile to its route's figures; the keep hook keeps its record when it is
 * among the route's slowest. */
static void Heron_Profiler_Meter_add_route(VALUE self, Heron_Profiler_Meter *m, VALUE profile, const Heron_Profiler_RequestProfile *p)
{
  VALUE args[2];
  args[0] = Heron_Profiler_Meter_route(self, m, p);
  args[1] = profile;
  if (Heron_Profiler_RouteStats_Route_count(args[0], isnan(p->total_ms) ? 0.0 : p->total_ms, p->db_count)) {
    Heron_Profiler_Meter_run(m, HOOK_KEEP, 2, args);
  }
}

/* #finish for a caller holding the pointers. */
static void Heron_Profiler_Meter_finish_profile(VALUE self, Heron_Profiler_Meter *m, VALUE profile, Heron_Profiler_RequestProfile *p, VALUE status)
{
  if (Heron_Profiler_RequestProfile_done(p)) return;
  if (NIL_P(p->status)) RB_OBJ_WRITE(profile, &p->status, status);
  Heron_Profiler_RequestProfile_stamp_end(p);
  Heron_Profiler_FiberAccounting_close_profile(m->a, profile, p);
  if (RARRAY_LEN(p->queries) > 0) Heron_Profiler_Meter_run(m, HOOK_QUERIES, 1, &profile);
  if (m->c_store) Heron_Profiler_Store_Ring_push_profile(m->store, profile, p);
  else Heron_Profiler_Meter_run(m, HOOK_PUSH, 1, &profile);
  Heron_Profiler_Meter_add_route(self, m, profile, p);
}

/*
 * call-seq: finish(profile, status) -> nil
 *
 * Finishes a request's profile once no app code is left to run (its Array body returned, or
 * its other body closed, see ProfiledBody): stamps the total time, stops charging it, has its
 * queries checked (the queries hook), keeps it in the Store and adds it to its route. `status`
 * is used when the app returned none (it raised). Later calls do nothing.
 */
static VALUE Heron_Profiler_Meter_finish(VALUE self, VALUE profile, VALUE status)
{
  Heron_Profiler_Meter_finish_profile(self, Heron_Profiler_Meter_get(self), profile, Heron_Profiler_RequestProfile_get(profile), status);
  return Qnil;
}

/* The headers, copied when frozen: an app sharing one frozen headers Hash gets a copy, not a
 * 500. */
static VALUE Heron_Profiler_Meter_writable(VALUE headers)
{
  return OBJ_FROZEN(headers) ? rb_hash_dup(headers) : headers;
}

/* Whether this response gets the profiler's headers: the dashboard's rule, in every
 * environment. */
static int Heron_Profiler_Meter_timing_p(const Heron_Profiler_Meter_request *request)
{
  if (request->m->loopback) return request->local;
  return RTEST(Heron_Profiler_Meter_run(request->m, HOOK_TIMING, 1, &request->env));
}

/* Adds the profile's Server-Timing to the headers and reports N+1s once the app has returned. */
static VALUE Heron_Profiler_Meter_returned(const Heron_Profiler_Meter_request *request, VALUE headers)
{
  VALUE args[3];
  int shown;
  if (!RB_TYPE_P(headers, T_HASH)) return headers; /* not Rack 3: the server will refuse it */
  shown = Heron_Profiler_Meter_timing_p(request);
  if (shown) {
    headers = Heron_Profiler_Meter_writable(headers);
    Heron_Profiler_RequestProfile_add_timing(request->profile, request->p, headers);
  }
  if (RARRAY_LEN(request->p->queries) > 0) {
    headers = Heron_Profiler_Meter_writable(headers);
    args[0] = request->profile;
    args[1] = headers;
    args[2] = shown ? Qtrue : Qfalse;
    Heron_Profiler_Meter_run(request->m, HOOK_N_PLUS_ONE, 3, args);
  }
  return headers;
}

/* Times the request's after-reply callbacks (none: 0 ms, known before the record is stored):
 * those the app added to the server's `rack.after_reply` Array, read before the app ran (an app
 * that puts another Array there has its callbacks run, not timed). */
static void Heron_Profiler_Meter_after_reply(const Heron_Profiler_Meter_request *request)
{
  VALUE args[2];
  args[1] = request->after_reply;
  if (!RB_TYPE_P(args[1], T_ARRAY)) return;
  if (RARRAY_LEN(args[1]) == 0) {
    request->p->after_reply_ms = 0.0;
    return;
  }
  args[0] = request->profile;
  Heron_Profiler_Meter_run(request->m, HOOK_AFTER_REPLY, 2, args);
}

/* Whether this one is sampled: the first, then one in every `period`; `*count` counts them
 * (requests for profile_sample, measured requests for profile_cpu_sample). */
static int Heron_Profiler_Meter_sampled_p(long *count, long period)
{
  long seen;
  if (period <= 1) return 1;
  seen = *count;
  *count = (seen + 1) % period;
  return seen == 0;
}

/* The body hook's wrapper of a body that is not an Array (it finishes the profile on close). */
static VALUE Heron_Profiler_Meter_wrap(const Heron_Profiler_Meter_request *request, VALUE body, VALUE status)
{
  VALUE args[3];
  args[0] = body;
  args[1] = request->profile;
  args[2] = status;
  return Heron_Profiler_Meter_run(request->m, HOOK_BODY, 3, args);
}

/*
 * Calls the app and measures it. An Array body has no app code left to run once the app
 * returns, so its request is finished there; any other body is wrapped (the body hook) in one
 * that finishes it when the server closes it.
 */
static VALUE Heron_Profiler_Meter_measure(VALUE arg)
{
  const Heron_Profiler_Meter_request *request = (const Heron_Profiler_Meter_request *)arg;
  VALUE self = request->self, profile = request->profile;
  VALUE response = rb_funcallv(request->m->app, id_call, 1, &request->env);
  VALUE status, headers, body, added;
  if (!RB_TYPE_P(response, T_ARRAY) || RARRAY_LEN(response) != 3) { /* the server will refuse it */
    Heron_Profiler_Meter_finish_profile(self, request->m, profile, request->p, INT2FIX(500));
    return response;
  }
  status = RARRAY_AREF(response, 0);
  headers = RARRAY_AREF(response, 1);
  body = RARRAY_AREF(response, 2);
  Heron_Profiler_RequestProfile_stamp_app(profile, request->p, status);
  Heron_Profiler_Meter_after_reply(request);
  if (rb_obj_class(body) == rb_cArray) {
    Heron_Profiler_Meter_finish_profile(self, request->m, profile, request->p, status);
  } else {
    Heron_Profiler_FiberAccounting_charge_running(request->m->a);
    body = Heron_Profiler_Meter_wrap(request, body, status);
  }
  added = Heron_Profiler_Meter_returned(request, headers);
  if (added == headers && body == RARRAY_AREF(response, 2)) return response; /* same three values */
  return rb_ary_new_from_args(3, status, added, body);
}

/* Where a request goes instead of being measured: the dashboard, the memory profile, or
 * (sampled out) straight to the app; Qundef when it is to be measured. */
static VALUE Heron_Profiler_Meter_route_request(Heron_Profiler_Meter *m, VALUE env, VALUE path, VALUE query)
{
  VALUE response;
  if (Heron_Profiler_Meter_dashboard_p(m, path)) return Heron_Profiler_Meter_run(m, HOOK_DASHBOARD, 1, &env);
  response = Heron_Profiler_Meter_tool(m, env, query);
  if (!NIL_P(response)) return response;
  if (!Heron_Profiler_Meter_sampled_p(&m->requests, m->sample)) return rb_funcallv(m->app, id_call, 1, &env);
  Heron_Profiler_Meter_hook_sql(m);
  return Qundef;
}

/* Measures the app's call for a started profile (see #call). */
static VALUE Heron_Profiler_Meter_measured(VALUE self, Heron_Profiler_Meter *m, VALUE env, VALUE profile, const Heron_Profiler_Meter_env *read)
{
  Heron_Profiler_Meter_request request;
  VALUE response;
  int state = 0;
  request.local = m->loopback && Heron_Profiler_Dashboard_LoopbackRule_judge(&read->rule);
  request.after_reply = read->after_reply;
  request.self = self;
  request.env = env;
  request.profile = profile;
  request.m = m;
  request.p = HERON_PROFILE(profile);
  if (!Heron_Profiler_Meter_sampled_p(&m->cpu_requests, m->cpu_sample)) Heron_Profiler_RequestProfile_skip_cpu(request.p);
  Heron_Profiler_FiberAccounting_open_profile(m->a, profile, request.p);
  response = rb_protect(Heron_Profiler_Meter_measure, (VALUE)&request, &state);
  RB_GC_GUARD(profile);
  if (state) {
    Heron_Profiler_Meter_finish_profile(self, m, profile, request.p, INT2FIX(500));
    rb_jump_tag(state);
  }
  return response;
}

/* Whether the `n` bytes at `s` spell the string literal `literal` (a constant-length memcmp,
 * which the compiler writes as a few word compares). */
#define HERON_METER_KEY_IS(s, n, literal) ((n) == (long)sizeof(literal) - 1 && memcmp((s), (literal), sizeof(literal) - 1) == 0)
/* Bit n set: the Meter reads some env key of n bytes (see Heron_Profiler_Meter_classify). */
#define HERON_METER_LENGTHS ((1UL << 9) | (1UL << 12) | (1UL << 14) | (1UL << 16) | (1UL << 18) | (1UL << 19) | (1UL << 20))

/* What the `n` bytes of an env key at `s` are to the Meter (KEY_*), by its bytes. */
static int Heron_Profiler_Meter_classify(const Heron_Profiler_Meter_env *read, const char *s, long n)
{
  int rule;
  if (n >= 64 || !((HERON_METER_LENGTHS | Heron_Profiler_Dashboard_LoopbackRule_lengths) >> n & 1UL)) return KEY_OTHER;
  if (HERON_METER_KEY_IS(s, n, "PATH_INFO")) return KEY_PATH;
  if (HERON_METER_KEY_IS(s, n, "QUERY_STRING")) return KEY_QUERY;
  if (HERON_METER_KEY_IS(s, n, "REQUEST_METHOD")) return KEY_METHOD;
  if (HERON_METER_KEY_IS(s, n, "rack.after_reply")) return KEY_AFTER_REPLY;
  if (HERON_METER_KEY_IS(s, n, "HTTP_X_QUEUE_START") || HERON_METER_KEY_IS(s, n, "HTTP_X_REQUEST_START")) return KEY_QUEUE_HEADER;
  if (HERON_METER_KEY_IS(s, n, "heron.request_start")) return KEY_REQUEST_START;
  if (!read->loopback || !Heron_Profiler_Dashboard_LoopbackRule_wants(n)) return KEY_OTHER;
  rule = Heron_Profiler_Dashboard_LoopbackRule_kind(&read->rule, s, n);
  return rule == HERON_LOOPBACK_NONE ? KEY_OTHER : KEY_RULE + rule;
}

/* The key cache's first slot to probe for `key`. */
static inline unsigned Heron_Profiler_Meter_slot(VALUE key)
{
  return (unsigned)(((key >> 3) * 0x9E3779B97F4A7C15ULL) >> 56) & (KEY_SLOTS - 1);
}

/* Remembers a frozen String key's kind (see Heron_Profiler_Meter_keys). */
static void Heron_Profiler_Meter_remember(const Heron_Profiler_Meter_env *read, VALUE key, int kind)
{
  Heron_Profiler_Meter_keys *keys = &read->m->keys;
  unsigned slot;
  int i;
  if (keys->count >= KEY_MAX) {
    for (i = 0; i < KEY_SLOTS; i++) keys->key[i] = Qfalse;
    keys->count = 0;
  }
  for (slot = Heron_Profiler_Meter_slot(key); keys->key[slot] != Qfalse; slot = (slot + 1) & (KEY_SLOTS - 1)) {}
  RB_OBJ_WRITE(read->self, &keys->key[slot], key);
  keys->kind[slot] = (unsigned char)kind;
  keys->count++;
}

/* The kind of a key the cache does not hold: read from its bytes, and remembered when it is a
 * frozen String. Out of line, so the lookup's caller saves no registers for it. */
static int __attribute__((noinline)) Heron_Profiler_Meter_learn(const Heron_Profiler_Meter_env *read, VALUE key)
{
  int kind;
  if (!RB_TYPE_P(key, T_STRING)) return KEY_OTHER;
  kind = Heron_Profiler_Meter_classify(read, RSTRING_PTR(key), RSTRING_LEN(key));
  if (OBJ_FROZEN(key)) Heron_Profiler_Meter_remember(read, key, kind);
  return kind;
}

/* What an env key is to the Meter (KEY_*): remembered by its identity, else learnt. */
static inline int Heron_Profiler_Meter_kind(const Heron_Profiler_Meter_env *read, VALUE key)
{
  const Heron_Profiler_Meter_keys *keys = &read->m->keys;
  unsigned slot;
  for (slot = Heron_Profiler_Meter_slot(key); keys->key[slot] != Qfalse; slot = (slot + 1) & (KEY_SLOTS - 1)) {
    if (keys->key[slot] == key) return keys->kind[slot];
  }
  return Heron_Profiler_Meter_learn(read, key);
}

/* Notes one env entry (rb_hash_foreach's callback) into the Heron_Profiler_Meter_env at `arg`.
 * Most keys are known by their identity and turned away at once. */
static int Heron_Profiler_Meter_read_entry(st_data_t key, st_data_t value, st_data_t arg)
{
  Heron_Profiler_Meter_env *read = (Heron_Profiler_Meter_env *)arg;
  int kind = Heron_Profiler_Meter_kind(read, key);
  switch (kind) {
  case KEY_OTHER: break;
  case KEY_PATH: if (read->paths) read->path = value; break;
  case KEY_QUERY: if (read->paths) read->query = value; break;
  case KEY_METHOD: read->method = value; break;
  case KEY_AFTER_REPLY: read->after_reply = value; break;
  case KEY_QUEUE_HEADER: read->queue_header |= !NIL_P(value); break;
  case KEY_REQUEST_START: read->request_start = value; break;
  default: Heron_Profiler_Dashboard_LoopbackRule_take(&read->rule, kind - KEY_RULE, value); break;
  }
  return ST_CONTINUE;
}

/* Reads what a measured request needs of its env in one pass; `paths`: PATH_INFO and
 * QUERY_STRING too (else `read` has them already). */
static void Heron_Profiler_Meter_read(VALUE self, Heron_Profiler_Meter *m, VALUE env, Heron_Profiler_Meter_env *read, int paths)
{
  read->self = self;
  read->m = m;
  read->method = read->request_start = read->after_reply = Qnil;
  if (paths) read->path = read->query = Qnil;
  read->paths = paths;
  read->loopback = m->loopback;
  read->queue_header = 0;
  if (m->loopback) Heron_Profiler_Dashboard_LoopbackRule_begin(&read->rule);
  HERON_PROFILER_HASH_FOREACH(env, Heron_Profiler_Meter_read_entry, read);
}

/* The queue time (ms) of a proxy's X-Request-Start / X-Queue-Start header when the request
 * carries one and its peer is a trusted proxy (the proxy_queue hook); else NAN. */
static double Heron_Profiler_Meter_proxy_ms(const Heron_Profiler_Meter *m, VALUE env, const Heron_Profiler_Meter_env *read)
{
  VALUE ms;
  if (!m->proxies || !read->queue_header) return NAN;
  ms = Heron_Profiler_Meter_run(m, HOOK_PROXY_QUEUE, 1, &env);
  return NIL_P(ms) ? NAN : NUM2DBL(ms);
}

/*
 * call-seq: call(env) -> [status, headers, body]
 *
 * Rack entry point. Requests under profile_path go to the dashboard hook, `?__heron=memory` to
 * the memory hook, `?__heron=flamegraph` to the flamegraph hook; every other request (or one in
 * `sample`, the rest going straight to the app) is measured (see RequestProfile,
 * FiberAccounting) and answered with a Server-Timing header that also names its record.
 * Whatever the app raises, the profile is finished (status 500) and the error goes on. The env
 * is read in one pass (path and query string included when every request is measured; when
 * some are not, those two are looked up first, and only a measured request makes the pass).
 */
static VALUE Heron_Profiler_Meter_call(VALUE self, VALUE env)
{
  Heron_Profiler_Meter *m = Heron_Profiler_Meter_get(self);
  Heron_Profiler_Meter_env read;
  VALUE response, profile;
  Check_Type(env, T_HASH);
  if (m->sample <= 1) {
    Heron_Profiler_Meter_read(self, m, env, &read, 1);
  } else {
    read.path = rb_hash_aref(env, Heron_Profiler_str_PATH_INFO);
    read.query = rb_hash_aref(env, Heron_Profiler_str_QUERY_STRING);
  }
  response = Heron_Profiler_Meter_route_request(m, env, read.path, read.query);
  if (response != Qundef) return response;
  if (m->sample > 1) Heron_Profiler_Meter_read(self, m, env, &read, 0);
  profile = Heron_Profiler_RequestProfile_begin(read.method, read.path, read.query, read.request_start, Heron_Profiler_Meter_proxy_ms(m, env, &read));
  return Heron_Profiler_Meter_measured(self, m, env, profile, &read);
}

void Init_Heron_Profiler_Meter(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "Meter", rb_cObject);
  Heron_Profiler_loaded_features = rb_gv_get("$LOADED_FEATURES");
  rb_gc_register_mark_object(Heron_Profiler_loaded_features);
  id_call = rb_intern("call");
  rb_define_alloc_func(klass, Heron_Profiler_Meter_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_Meter_initialize, 5);
  rb_define_method(klass, "call", Heron_Profiler_Meter_call, 1);
  rb_define_method(klass, "finish", Heron_Profiler_Meter_finish, 2);
}
