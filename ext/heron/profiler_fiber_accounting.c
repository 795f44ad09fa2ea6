/*
 * Heron::Profiler::FiberAccounting: attributes CPU time, allocated objects and GC runs to the
 * request each fiber works for.
 *
 * A fiber_switch TracePoint, with a C hook, reads the three counters whenever a switch leaves
 * or enters a fiber that works for an open profile, and charges their growth since the
 * previous switch to the RequestProfile of the fiber that was running, so two requests
 * interleaving on one reactor each get only their own share. Switches between fibers that
 * work for nobody cost two table lookups. The TracePoint is enabled only while at least one
 * profile is open, so an idle or unprofiled server pays nothing.
 *
 * All of it runs holding the GVL, so the tables need no lock.
 *
 *   FiberAccounting.new
 *   #open(profile) #attach(profile, fiber = Fiber.current) #checkpoint #close(profile)
 *   #current #profile_for(fiber) #tracing?
 */
#include "profiler.h"
#include <ruby/debug.h>
#include <ruby/st.h>

struct Heron_Profiler_FiberAccounting {
  st_table *fibers;  /* Fiber -> RequestProfile it works for */
  st_table *running; /* Thread -> RequestProfile being charged on it (absent: none) */
  long open, opened;
  VALUE trace;
  VALUE self; /* this object, for the write barriers of the tables' entries */
};

static int Heron_Profiler_FiberAccounting_mark_entry(st_data_t key, st_data_t value, st_data_t arg)
{
  rb_gc_mark((VALUE)key);
  rb_gc_mark((VALUE)value);
  return ST_CONTINUE;
}

static void Heron_Profiler_FiberAccounting_mark(void *ptr)
{
  Heron_Profiler_FiberAccounting *a = ptr;
  st_foreach(a->fibers, Heron_Profiler_FiberAccounting_mark_entry, 0);
  st_foreach(a->running, Heron_Profiler_FiberAccounting_mark_entry, 0);
  rb_gc_mark(a->trace);
}

static void Heron_Profiler_FiberAccounting_free(void *ptr)
{
  Heron_Profiler_FiberAccounting *a = ptr;
  st_free_table(a->fibers);
  st_free_table(a->running);
  ruby_xfree(a);
}

static size_t Heron_Profiler_FiberAccounting_memsize(const void *ptr)
{
  const Heron_Profiler_FiberAccounting *a = ptr;
  return sizeof(*a) + st_memsize(a->fibers) + st_memsize(a->running);
}

static const rb_data_type_t Heron_Profiler_FiberAccounting_type = {
  "Heron::Profiler::FiberAccounting",
  { Heron_Profiler_FiberAccounting_mark, Heron_Profiler_FiberAccounting_free, Heron_Profiler_FiberAccounting_memsize, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

Heron_Profiler_FiberAccounting *Heron_Profiler_FiberAccounting_get(VALUE self)
{
  return rb_check_typeddata(self, &Heron_Profiler_FiberAccounting_type);
}

static VALUE Heron_Profiler_FiberAccounting_lookup(st_table *table, VALUE key)
{
  st_data_t value;
  return st_lookup(table, (st_data_t)key, &value) ? (VALUE)value : Qnil;
}

/*
 * Charges the counters' growth to the profile that was running on this thread and starts
 * counting for `profile` (Qnil: nobody). Called at every fiber switch: keep it cheap.
 */
static void Heron_Profiler_FiberAccounting_switch_to(Heron_Profiler_FiberAccounting *a, VALUE profile)
{
  VALUE thread = rb_thread_current();
  VALUE previous = Heron_Profiler_FiberAccounting_lookup(a->running, thread);
  Heron_Profiler_Counters now;
  if (NIL_P(previous) && NIL_P(profile)) return;
  Heron_Profiler_Counters_read(&now);
  if (!NIL_P(previous)) Heron_Profiler_RequestProfile_charge(HERON_PROFILE(previous), &now);
  if (NIL_P(profile)) {
    st_data_t key = (st_data_t)thread;
    st_delete(a->running, &key, NULL);
    return;
  }
  Heron_Profiler_RequestProfile_mark(HERON_PROFILE(profile), &now);
  st_insert(a->running, (st_data_t)thread, (st_data_t)profile);
  RB_OBJ_WRITTEN(a->self, Qundef, thread);
  RB_OBJ_WRITTEN(a->self, Qundef, profile);
}

/* The TracePoint's hook: a fiber was switched in. A finished profile is charged no more (a
 * task the request started may outlive it). */
static void Heron_Profiler_FiberAccounting_hook(VALUE tracepoint, void *data)
{
  Heron_Profiler_FiberAccounting *a = data;
  VALUE profile = Heron_Profiler_FiberAccounting_lookup(a->fibers, rb_fiber_current());
  if (!NIL_P(profile) && Heron_Profiler_RequestProfile_done(HERON_PROFILE(profile))) profile = Qnil;
  Heron_Profiler_FiberAccounting_switch_to(a, profile);
}

static VALUE Heron_Profiler_FiberAccounting_alloc(VALUE klass)
{
  Heron_Profiler_FiberAccounting *a;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_FiberAccounting, &Heron_Profiler_FiberAccounting_type, a);
  a->fibers = st_init_numtable();
  a->running = st_init_numtable();
  a->trace = Qnil;
  a->self = self;
  return self;
}

/*
 * call-seq: FiberAccounting.new
 *
 * Starts with no profile open and the TracePoint disabled. The instance then lives as long as
 * the process: its TracePoint's hook holds a pointer to it, and a profile left open would keep
 * the hook enabled after the last reference to the instance was gone. A process needs one
 * (Heron::Profiler.accounting).
 */
static VALUE Heron_Profiler_FiberAccounting_initialize(VALUE self)
{
  Heron_Profiler_FiberAccounting *a = Heron_Profiler_FiberAccounting_get(self);
  RB_OBJ_WRITE(self, &a->trace, rb_tracepoint_new(Qnil, RUBY_EVENT_FIBER_SWITCH, Heron_Profiler_FiberAccounting_hook, a));
  rb_gc_register_mark_object(self);
  return self;
}

/* call-seq: current -> RequestProfile or nil. The profile the current fiber works for. */
static VALUE Heron_Profiler_FiberAccounting_current(VALUE self)
{
  return Heron_Profiler_FiberAccounting_lookup(Heron_Profiler_FiberAccounting_get(self)->fibers, rb_fiber_current());
}

/* call-seq: profile_for(fiber) -> RequestProfile or nil. The profile that fiber works for. */
static VALUE Heron_Profiler_FiberAccounting_profile_for(VALUE self, VALUE fiber)
{
  return Heron_Profiler_FiberAccounting_lookup(Heron_Profiler_FiberAccounting_get(self)->fibers, fiber);
}

/* call-seq: tracing? -> true or false. Whether the fiber-switch TracePoint is enabled. */
static VALUE Heron_Profiler_FiberAccounting_tracing_p(VALUE self)
{
  return rb_tracepoint_enabled_p(Heron_Profiler_FiberAccounting_get(self)->trace);
}

/* Charges `fiber` to the profile from now on (see #attach). */
static void Heron_Profiler_FiberAccounting_attach_fiber(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p, VALUE fiber, VALUE current)
{
  st_insert(a->fibers, (st_data_t)fiber, (st_data_t)profile);
  RB_OBJ_WRITTEN(a->self, Qundef, fiber);
  RB_OBJ_WRITTEN(a->self, Qundef, profile);
  if (NIL_P(p->fiber)) RB_OBJ_WRITE(profile, &p->fiber, fiber);
  else {
    if (NIL_P(p->fibers)) RB_OBJ_WRITE(profile, &p->fibers, rb_ary_new());
    rb_ary_push(p->fibers, fiber);
  }
  if (fiber == current) Heron_Profiler_FiberAccounting_switch_to(a, profile);
}

/*
 * call-seq: attach(profile, fiber = Fiber.current) -> nil
 *
 * Charges a fiber (the request's own, or one of a task it started) to the profile from now
 * on; when it is the current fiber, from this moment.
 */
static VALUE Heron_Profiler_FiberAccounting_attach(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_FiberAccounting *a = Heron_Profiler_FiberAccounting_get(self);
  VALUE profile, fiber, current = rb_fiber_current();
  rb_scan_args(argc, argv, "11", &profile, &fiber);
  Heron_Profiler_FiberAccounting_attach_fiber(a, profile, Heron_Profiler_RequestProfile_get(profile), NIL_P(fiber) ? current : fiber, current);
  return Qnil;
}

/* #open for a caller holding the pointers. */
void Heron_Profiler_FiberAccounting_open_profile(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p)
{
  VALUE current = rb_fiber_current();
  p->number = ++a->opened;
  if (++a->open == 1) rb_tracepoint_enable(a->trace);
  Heron_Profiler_FiberAccounting_attach_fiber(a, profile, p, current, current);
}

/*
 * call-seq: open(profile) -> profile
 *
 * Numbers the profile (see RequestProfile#id), charges the current fiber to it from now on,
 * and enables the TracePoint when it is the first one open.
 */
static VALUE Heron_Profiler_FiberAccounting_open(VALUE self, VALUE profile)
{
  Heron_Profiler_FiberAccounting_open_profile(Heron_Profiler_FiberAccounting_get(self), profile, Heron_Profiler_RequestProfile_get(profile));
  return profile;
}

/* #checkpoint for a caller holding the pointer. */
void Heron_Profiler_FiberAccounting_charge_running(Heron_Profiler_FiberAccounting *a)
{
  Heron_Profiler_FiberAccounting_switch_to(a, Heron_Profiler_FiberAccounting_lookup(a->running, rb_thread_current()));
}

/* call-seq: checkpoint -> nil. Charges what the running profile used so far, so its counters are current. */
static VALUE Heron_Profiler_FiberAccounting_checkpoint(VALUE self)
{
  Heron_Profiler_FiberAccounting_charge_running(Heron_Profiler_FiberAccounting_get(self));
  return Qnil;
}

static void Heron_Profiler_FiberAccounting_forget(Heron_Profiler_FiberAccounting *a, VALUE fiber, VALUE profile)
{
  st_data_t key = (st_data_t)fiber;
  if (Heron_Profiler_FiberAccounting_lookup(a->fibers, fiber) == profile) st_delete(a->fibers, &key, NULL);
}

/* #close for a caller holding the pointers. */
void Heron_Profiler_FiberAccounting_close_profile(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p)
{
  long i;
  if (Heron_Profiler_FiberAccounting_lookup(a->running, rb_thread_current()) == profile) {
    Heron_Profiler_FiberAccounting_switch_to(a, Qnil);
  }
  if (!NIL_P(p->fiber)) Heron_Profiler_FiberAccounting_forget(a, p->fiber, profile);
  for (i = 0; !NIL_P(p->fibers) && i < RARRAY_LEN(p->fibers); i++) {
    Heron_Profiler_FiberAccounting_forget(a, RARRAY_AREF(p->fibers, i), profile);
  }
  p->fiber = p->fibers = Qnil;
  if (a->open > 0 && --a->open == 0) {
    rb_tracepoint_disable(a->trace);
    st_clear(a->running);
  }
}

/*
 * call-seq: close(profile) -> nil
 *
 * Stops charging a profile: its fibers are forgotten (a stored profile holding on to fibers
 * would keep them in the old generation and bring on extra major GCs), and the TracePoint is
 * disabled once no profile is open.
 */
static VALUE Heron_Profiler_FiberAccounting_close(VALUE self, VALUE profile)
{
  Heron_Profiler_FiberAccounting_close_profile(Heron_Profiler_FiberAccounting_get(self), profile, Heron_Profiler_RequestProfile_get(profile));
  return Qnil;
}

void Init_Heron_Profiler_FiberAccounting(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "FiberAccounting", rb_cObject);
  rb_define_alloc_func(klass, Heron_Profiler_FiberAccounting_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_FiberAccounting_initialize, 0);
  rb_define_method(klass, "current", Heron_Profiler_FiberAccounting_current, 0);
  rb_define_method(klass, "profile_for", Heron_Profiler_FiberAccounting_profile_for, 1);
  rb_define_method(klass, "tracing?", Heron_Profiler_FiberAccounting_tracing_p, 0);
  rb_define_method(klass, "attach", Heron_Profiler_FiberAccounting_attach, -1);
  rb_define_method(klass, "open", Heron_Profiler_FiberAccounting_open, 1);
  rb_define_method(klass, "checkpoint", Heron_Profiler_FiberAccounting_checkpoint, 0);
  rb_define_method(klass, "close", Heron_Profiler_FiberAccounting_close, 1);
}
