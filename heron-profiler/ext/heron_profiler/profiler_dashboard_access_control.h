/*
 * Heron::Profiler::Dashboard::AccessControl (profiler_dashboard_access_control.c): the
 * dashboard's loopback rule.
 */
#ifndef HERON_PROFILER_DASHBOARD_ACCESS_CONTROL_H
#define HERON_PROFILER_DASHBOARD_ACCESS_CONTROL_H

#include <ruby.h>

int Heron_Profiler_Dashboard_AccessControl_local(VALUE env);
void Init_Heron_Profiler_Dashboard_AccessControl(VALUE mProfiler);

#endif
