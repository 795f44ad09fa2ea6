/*
 * Heron::Profiler::SqlScanner (profiler_sql_scanner.c): .scan, SqlNormalizer's first pass.
 */
#ifndef HERON_PROFILER_SQL_SCANNER_H
#define HERON_PROFILER_SQL_SCANNER_H

#include <ruby.h>

void Init_Heron_Profiler_SqlScanner(VALUE mProfiler);

#endif
