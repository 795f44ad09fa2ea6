/*
 * Heron::Profiler::RouteStats::Route (profiler_route_stats_route.c): one route's figures.
 */
#ifndef HERON_PROFILER_ROUTE_STATS_ROUTE_H
#define HERON_PROFILER_ROUTE_STATS_ROUTE_H

#include <ruby.h>

/* Route#add for C callers: counts a request of `ms` total and `queries` statements; whether its
 * record is to be kept among the route's slowest (Route#keep). Raises TypeError when `self` is
 * not a Route. */
int Heron_Profiler_RouteStats_Route_count(VALUE self, double ms, long queries);
void Init_Heron_Profiler_RouteStats_Route(VALUE mProfiler);

#endif
