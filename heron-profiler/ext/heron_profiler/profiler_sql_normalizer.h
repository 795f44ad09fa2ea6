/*
 * Heron::Profiler::SqlNormalizer (profiler_sql_normalizer.c): .scan, the normalizer's first pass.
 */
#ifndef HERON_PROFILER_SQL_NORMALIZER_H
#define HERON_PROFILER_SQL_NORMALIZER_H

#include <ruby.h>

void Init_Heron_Profiler_SqlNormalizer(VALUE mProfiler);

#endif
