/*
 * Heron::Profiler::Store::Ring (profiler_store_ring.c): the ring of finished records under
 * Heron::Profiler::Store.
 */
#ifndef HERON_PROFILER_STORE_RING_H
#define HERON_PROFILER_STORE_RING_H

#include <ruby.h>
#include "profiler_request_profile.h"

int Heron_Profiler_Store_Ring_p(VALUE value);
VALUE Heron_Profiler_Store_Ring_push(VALUE self, VALUE record);
void Heron_Profiler_Store_Ring_push_profile(VALUE self, VALUE profile, const Heron_Profiler_RequestProfile *p);
void Init_Heron_Profiler_Store_Ring(VALUE mProfiler);

#endif
