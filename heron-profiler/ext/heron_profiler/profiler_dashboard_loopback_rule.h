/*
 * Heron::Profiler::Dashboard::LoopbackRule (profiler_dashboard_loopback_rule.c): the dashboard's
 * loopback rule.
 */
#ifndef HERON_PROFILER_DASHBOARD_LOOPBACK_RULE_H
#define HERON_PROFILER_DASHBOARD_LOOPBACK_RULE_H

#include <ruby.h>

int Heron_Profiler_Dashboard_LoopbackRule_local(VALUE env);
void Init_Heron_Profiler_Dashboard_LoopbackRule(VALUE mProfiler);

#endif
