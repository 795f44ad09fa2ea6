/*
 * Heron::Profiler::FiberAccounting: attributes reactor time (the monotonic clock, a vDSO read),
 * CPU time (only for profiles that measure it: a system call), allocated objects and GC runs
 * to the request each fiber works for.
 *
 * A C event hook on fiber switches reads the counters whenever a switch leaves or
 * enters a fiber that works for an open profile, and charges their growth since the previous
 * switch to the RequestProfile of the fiber that was running, so two requests interleaving on
 * one reactor each get only their own share. Switches between fibers that work for nobody cost
 * a table lookup. A profile's own fiber enters the table only at the first switch after it
 * opened (it is "pending" until then): a request that never waits (a hello world, most cached
 * pages) opens and closes its profile without touching the table, about 300 instructions less. The hook is added at the first profile opened and then stays (adding and
 * removing it per request, or enabling a TracePoint, cost more than it does: it returns at
 * once while no profile is open); a process that never profiles has none.
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

/* A thread and the profile being charged on it. */
typedef struct Heron_Profiler_FiberAccounting_running {
  VALUE thread, profile;
  int pending; /* the profile's own fiber (its p->fiber, the current one) is not in the table yet:
                  it opened on this thread and no fiber switch happened since */
} Heron_Profiler_FiberAccounting_running;

struct Heron_Profiler_FiberAccounting {
  st_table *fibers; /* Fiber -> RequestProfile it works for */
  Heron_Profiler_FiberAccounting_running *running; /* one per thread charging a profile (a
                                                      reactor has one thread: no table needed) */
  long nrunning, running_capa;
  long open, opened;
  int hooked; /* the event hook was added */
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
  long i;
  st_foreach(a->fibers, Heron_Profiler_FiberAccounting_mark_entry, 0);
  for (i = 0; i < a->nrunning; i++) {
    rb_gc_mark(a->running[i].thread);
    rb_gc_mark(a->running[i].profile);
  }
}

static void Heron_Profiler_FiberAccounting_free(void *ptr)
{
  Heron_Profiler_FiberAccounting *a = ptr;
  st_free_table(a->fibers);
  ruby_xfree(a->running);
  ruby_xfree(a);
}

static size_t Heron_Profiler_FiberAccounting_memsize(const void *ptr)
{
  const Heron_Profiler_FiberAccounting *a = ptr;
  return sizeof(*a) + st_memsize(a->fibers) + (size_t)a->running_capa * sizeof(*a->running);
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

/* The index of `thread`'s entry in a->running, or -1. */
static long Heron_Profiler_FiberAccounting_running_index(const Heron_Profiler_FiberAccounting *a, VALUE thread)
{
  long i;
  for (i = 0; i < a->nrunning; i++)
    if (a->running[i].thread == thread) return i;
  return -1;
}

/* The profile being charged on `thread`, or Qnil. */
static VALUE Heron_Profiler_FiberAccounting_running_on(const Heron_Profiler_FiberAccounting *a, VALUE thread)
{
  long i = Heron_Profiler_FiberAccounting_running_index(a, thread);
  return i < 0 ? Qnil : a->running[i].profile;
}

/* Puts a pending profile's own fiber in the table (see the running struct), unless the profile
 * was closed meanwhile. */
static void Heron_Profiler_FiberAccounting_register(Heron_Profiler_FiberAccounting *a, Heron_Profiler_FiberAccounting_running *running)
{
  VALUE profile = running->profile, fiber;
  if (!running->pending) return;
  running->pending = 0;
  fiber = HERON_PROFILE(profile)->fiber;
  if (NIL_P(fiber)) return;
  st_insert(a->fibers, (st_data_t)fiber, (st_data_t)profile);
  RB_OBJ_WRITTEN(a->self, Qundef, fiber);
  RB_OBJ_WRITTEN(a->self, Qundef, profile);
}

/* Puts the own fiber of the profile pending on this thread, if any, in the table: called when
 * the current fiber may no longer be that fiber (a switch), or gets another profile. */
static void Heron_Profiler_FiberAccounting_settle(Heron_Profiler_FiberAccounting *a)
{
  long i = Heron_Profiler_FiberAccounting_running_index(a, rb_thread_current());
  if (i >= 0) Heron_Profiler_FiberAccounting_register(a, &a->running[i]);
}

/* Forgets that `profile` is pending on any thread (it is being closed); returns whether it was,
 * in which case its own fiber never entered the table. */
static int Heron_Profiler_FiberAccounting_unpend(Heron_Profiler_FiberAccounting *a, VALUE profile)
{
  long i;
  int was = 0;
  for (i = 0; i < a->nrunning; i++) {
    if (a->running[i].pending && a->running[i].profile == profile) {
      a->running[i].pending = 0;
      was = 1;
    }
  }
  return was;
}

/* The profile whose own fiber `fiber` is while it is pending, or Qnil. */
static VALUE Heron_Profiler_FiberAccounting_pending_for(const Heron_Profiler_FiberAccounting *a, VALUE fiber)
{
  long i;
  for (i = 0; i < a->nrunning; i++)
    if (a->running[i].pending && HERON_PROFILE(a->running[i].profile)->fiber == fiber) return a->running[i].profile;
  return Qnil;
}

/* The profile `fiber` works for, or Qnil. */
static VALUE Heron_Profiler_FiberAccounting_profile_of(const Heron_Profiler_FiberAccounting *a, VALUE fiber)
{
  VALUE profile = Heron_Profiler_FiberAccounting_pending_for(a, fiber);
  return NIL_P(profile) ? Heron_Profiler_FiberAccounting_lookup(a->fibers, fiber) : profile;
}

/* Records that `profile` (Qnil: none) is charged on `thread` from now on; `pending`: it just
 * opened on the current fiber, which is not in the table. The profile charged until now, when
 * another, has its own fiber put in the table if it was pending. */
static void Heron_Profiler_FiberAccounting_set_running(Heron_Profiler_FiberAccounting *a, VALUE thread, VALUE profile, int pending)
{
  long i = Heron_Profiler_FiberAccounting_running_index(a, thread);
  if (i >= 0 && a->running[i].profile != profile) Heron_Profiler_FiberAccounting_register(a, &a->running[i]);
  if (NIL_P(profile)) {
    if (i >= 0) a->running[i] = a->running[--a->nrunning];
    return;
  }
  if (i < 0) {
    if (a->nrunning == a->running_capa) {
      a->running_capa = a->running_capa ? a->running_capa * 2 : 4;
      REALLOC_N(a->running, Heron_Profiler_FiberAccounting_running, a->running_capa);
    }
    i = a->nrunning++;
    a->running[i].thread = thread;
    a->running[i].pending = 0;
    RB_OBJ_WRITTEN(a->self, Qundef, thread);
  }
  if (pending) a->running[i].pending = 1;
  if (a->running[i].profile == profile) return;
  a->running[i].profile = profile;
  RB_OBJ_WRITTEN(a->self, Qundef, profile);
}

/*
 * Charges the counters' growth to the profile that was running on this thread and starts
 * counting for `profile` (Qnil: nobody). Called at every fiber switch: keep it cheap.
 */
static void Heron_Profiler_FiberAccounting_switch_to(Heron_Profiler_FiberAccounting *a, VALUE profile, int pending)
{
  VALUE thread = rb_thread_current();
  VALUE previous = Heron_Profiler_FiberAccounting_running_on(a, thread);
  Heron_Profiler_Counters now;
  if (NIL_P(previous) && NIL_P(profile)) return;
  Heron_Profiler_Counters_read(&now, (!NIL_P(previous) && HERON_PROFILE(previous)->measure_cpu) ||
                                     (!NIL_P(profile) && HERON_PROFILE(profile)->measure_cpu));
  if (!NIL_P(previous)) Heron_Profiler_RequestProfile_charge(HERON_PROFILE(previous), &now);
  if (!NIL_P(profile)) Heron_Profiler_RequestProfile_mark(HERON_PROFILE(profile), &now);
  Heron_Profiler_FiberAccounting_set_running(a, thread, profile, pending);
}

/* The event hook: a fiber was switched in (`data` is the FiberAccounting). A finished profile
 * is charged no more (a task the request started may outlive it). */
static void Heron_Profiler_FiberAccounting_hook(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
  Heron_Profiler_FiberAccounting *a = RTYPEDDATA_DATA(data);
  VALUE profile;
  if (a->open == 0) return;
  Heron_Profiler_FiberAccounting_settle(a); /* the fiber switched away from may be a pending one */
  profile = Heron_Profiler_FiberAccounting_lookup(a->fibers, rb_fiber_current());
  if (!NIL_P(profile) && Heron_Profiler_RequestProfile_done(HERON_PROFILE(profile))) profile = Qnil;
  Heron_Profiler_FiberAccounting_switch_to(a, profile, 0);
}

static VALUE Heron_Profiler_FiberAccounting_alloc(VALUE klass)
{
  Heron_Profiler_FiberAccounting *a;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_FiberAccounting, &Heron_Profiler_FiberAccounting_type, a);
  a->fibers = st_init_numtable();
  a->self = self;
  return self;
}

/*
 * call-seq: FiberAccounting.new
 *
 * Starts with no profile open and no event hook. The instance then lives as long as the
 * process: once a profile is opened its hook holds on to it. A process needs one
 * (Heron::Profiler.accounting).
 */
static VALUE Heron_Profiler_FiberAccounting_initialize(VALUE self)
{
  rb_gc_register_mark_object(self);
  return self;
}

/* call-seq: current -> RequestProfile or nil. The profile the current fiber works for. */
static VALUE Heron_Profiler_FiberAccounting_current(VALUE self)
{
  return Heron_Profiler_FiberAccounting_profile_of(Heron_Profiler_FiberAccounting_get(self), rb_fiber_current());
}

/* call-seq: profile_for(fiber) -> RequestProfile or nil. The profile that fiber works for. */
static VALUE Heron_Profiler_FiberAccounting_profile_for(VALUE self, VALUE fiber)
{
  return Heron_Profiler_FiberAccounting_profile_of(Heron_Profiler_FiberAccounting_get(self), fiber);
}

/* call-seq: tracing? -> true or false. Whether fiber switches are being accounted (some
 * profile is open). */
static VALUE Heron_Profiler_FiberAccounting_tracing_p(VALUE self)
{
  return Heron_Profiler_FiberAccounting_get(self)->open > 0 ? Qtrue : Qfalse;
}

/* Charges `fiber` to the profile from now on (see #attach). */
static void Heron_Profiler_FiberAccounting_attach_fiber(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p, VALUE fiber, VALUE current)
{
  Heron_Profiler_FiberAccounting_settle(a);
  st_insert(a->fibers, (st_data_t)fiber, (st_data_t)profile);
  RB_OBJ_WRITTEN(a->self, Qundef, fiber);
  RB_OBJ_WRITTEN(a->self, Qundef, profile);
  if (NIL_P(p->fiber)) RB_OBJ_WRITE(profile, &p->fiber, fiber);
  else {
    if (NIL_P(p->fibers)) RB_OBJ_WRITE(profile, &p->fibers, rb_ary_new());
    rb_ary_push(p->fibers, fiber);
  }
  if (fiber == current) Heron_Profiler_FiberAccounting_switch_to(a, profile, 0);
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
  ++a->open;
  if (!a->hooked) {
    rb_add_event_hook(Heron_Profiler_FiberAccounting_hook, RUBY_EVENT_FIBER_SWITCH, a->self);
    a->hooked = 1;
  }
  if (!NIL_P(p->fiber)) { /* opened before: charged as any fiber attached to it */
    Heron_Profiler_FiberAccounting_attach_fiber(a, profile, p, current, current);
    return;
  }
  RB_OBJ_WRITE(profile, &p->fiber, current); /* pending: in the table at the first switch */
  Heron_Profiler_FiberAccounting_switch_to(a, profile, 1);
}

/*
 * call-seq: open(profile) -> profile
 *
 * Numbers the profile (see RequestProfile#id) and charges the current fiber to it from now
 * on (adding the event hook the first time).
 */
static VALUE Heron_Profiler_FiberAccounting_open(VALUE self, VALUE profile)
{
  Heron_Profiler_FiberAccounting_open_profile(Heron_Profiler_FiberAccounting_get(self), profile, Heron_Profiler_RequestProfile_get(profile));
  return profile;
}

/* #checkpoint for a caller holding the pointer. */
void Heron_Profiler_FiberAccounting_charge_running(Heron_Profiler_FiberAccounting *a)
{
  Heron_Profiler_FiberAccounting_switch_to(a, Heron_Profiler_FiberAccounting_running_on(a, rb_thread_current()), 0);
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
  int listed = !Heron_Profiler_FiberAccounting_unpend(a, profile); /* else its own fiber never entered the table */
  if (Heron_Profiler_FiberAccounting_running_on(a, rb_thread_current()) == profile) {
    Heron_Profiler_FiberAccounting_switch_to(a, Qnil, 0);
  }
  if (listed && !NIL_P(p->fiber)) Heron_Profiler_FiberAccounting_forget(a, p->fiber, profile);
  for (i = 0; !NIL_P(p->fibers) && i < RARRAY_LEN(p->fibers); i++) {
    Heron_Profiler_FiberAccounting_forget(a, RARRAY_AREF(p->fibers, i), profile);
  }
  p->fiber = p->fibers = Qnil;
  if (a->open > 0 && --a->open == 0) a->nrunning = 0;
}

/*
 * call-seq: close(profile) -> nil
 *
 * Stops charging a profile: its fibers are forgotten (a stored profile holding on to fibers
 * would keep them in the old generation and bring on extra major GCs); once no profile is open
 * the hook does nothing.
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
