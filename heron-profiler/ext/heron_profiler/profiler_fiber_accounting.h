/*
 * Heron::Profiler::FiberAccounting (profiler_fiber_accounting.c): charges a request's fibers'
 * time, allocations and GC runs to its RequestProfile.
 */
#ifndef HERON_PROFILER_FIBER_ACCOUNTING_H
#define HERON_PROFILER_FIBER_ACCOUNTING_H

#include <ruby.h>
#include "profiler_request_profile.h"

typedef struct Heron_Profiler_FiberAccounting Heron_Profiler_FiberAccounting;
Heron_Profiler_FiberAccounting *Heron_Profiler_FiberAccounting_get(VALUE self);
void Heron_Profiler_FiberAccounting_open_profile(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p);
void Heron_Profiler_FiberAccounting_charge_running(Heron_Profiler_FiberAccounting *a);
void Heron_Profiler_FiberAccounting_close_profile(Heron_Profiler_FiberAccounting *a, VALUE profile, Heron_Profiler_RequestProfile *p);
void Init_Heron_Profiler_FiberAccounting(VALUE mProfiler);

#endif
