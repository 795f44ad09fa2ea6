/*
 * Heron::Profiler::Store (profiler_store.c): the ring of finished records.
 */
#ifndef HERON_PROFILER_STORE_H
#define HERON_PROFILER_STORE_H

#include <ruby.h>
#include "profiler_request_profile.h"

int Heron_Profiler_Store_p(VALUE value);
VALUE Heron_Profiler_Store_push(VALUE self, VALUE record);
void Heron_Profiler_Store_push_profile(VALUE self, VALUE profile, const Heron_Profiler_RequestProfile *p);
void Init_Heron_Profiler_Store(VALUE mProfiler);

#endif
