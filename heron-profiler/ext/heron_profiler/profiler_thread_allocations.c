/*
 * Heron::Profiler::ThreadAllocations: objects allocated by each thread, for Rack servers that
 * run each request on a thread of its own (Puma). Ruby counts allocations per process only, and
 * threads take turns on the GVL without a fiber switch the profiler could see, so under such a
 * server a request's count would include every other thread's. Once enabled, an internal
 * NEWOBJ hook counts each allocation in a thread-local counter, and FiberAccounting reads that
 * counter instead of the process's (see Heron_Profiler_Counters_read). It costs a hook call per
 * allocation in the whole process, so it stays off under Heron and Falcon, whose requests are
 * fibers on one thread (there the process counter, read at each fiber switch, is exact).
 *
 *   ThreadAllocations.enable    -> true (once; it then stays on)
 *   ThreadAllocations.enabled?  -> true or false
 *   ThreadAllocations.count     -> Integer, the calling thread's allocations since enable
 */
#include "profiler_thread_allocations.h"
#include <ruby/debug.h>

static __thread size_t Heron_Profiler_ThreadAllocations_allocated; /* native threads: one per Ruby thread */
static int Heron_Profiler_ThreadAllocations_on;
static VALUE Heron_Profiler_ThreadAllocations_hook = Qnil;

static void Heron_Profiler_ThreadAllocations_newobj(VALUE tracepoint, void *data)
{
  (void)tracepoint;
  (void)data;
  Heron_Profiler_ThreadAllocations_allocated++;
}

int Heron_Profiler_ThreadAllocations_enabled(void)
{
  return Heron_Profiler_ThreadAllocations_on;
}

size_t Heron_Profiler_ThreadAllocations_count(void)
{
  return Heron_Profiler_ThreadAllocations_allocated;
}

/* call-seq: enable -> true. See the file's comment. */
static VALUE Heron_Profiler_ThreadAllocations_enable(VALUE self)
{
  (void)self;
  if (Heron_Profiler_ThreadAllocations_on) return Qtrue;
  Heron_Profiler_ThreadAllocations_hook =
    rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ, Heron_Profiler_ThreadAllocations_newobj, NULL);
  rb_gc_register_mark_object(Heron_Profiler_ThreadAllocations_hook);
  rb_tracepoint_enable(Heron_Profiler_ThreadAllocations_hook);
  Heron_Profiler_ThreadAllocations_on = 1;
  return Qtrue;
}

/* call-seq: enabled? -> true or false */
static VALUE Heron_Profiler_ThreadAllocations_enabled_p(VALUE self)
{
  (void)self;
  return Heron_Profiler_ThreadAllocations_on ? Qtrue : Qfalse;
}

/* call-seq: count -> Integer */
static VALUE Heron_Profiler_ThreadAllocations_count_m(VALUE self)
{
  (void)self;
  return SIZET2NUM(Heron_Profiler_ThreadAllocations_allocated);
}

void Init_Heron_Profiler_ThreadAllocations(VALUE mProfiler)
{
  VALUE module = rb_define_module_under(mProfiler, "ThreadAllocations");
  rb_define_singleton_method(module, "enable", Heron_Profiler_ThreadAllocations_enable, 0);
  rb_define_singleton_method(module, "enabled?", Heron_Profiler_ThreadAllocations_enabled_p, 0);
  rb_define_singleton_method(module, "count", Heron_Profiler_ThreadAllocations_count_m, 0);
}
