/*
 * Heron::Profiler::Meter (profiler_meter.c): the per-request primitive the Ruby
 * Heron::Profiler::Middleware drives.
 */
#ifndef HERON_PROFILER_METER_H
#define HERON_PROFILER_METER_H

#include <ruby.h>

void Init_Heron_Profiler_Meter(VALUE mProfiler);

#endif
