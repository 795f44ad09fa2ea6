/*
 * Heron::Profiler::Dashboard::LoopbackRule (profiler_dashboard_loopback_rule.c): the dashboard's
 * loopback rule.
 */
#ifndef HERON_PROFILER_DASHBOARD_LOOPBACK_RULE_H
#define HERON_PROFILER_DASHBOARD_LOOPBACK_RULE_H

#include <ruby.h>

/* What the rule needs of an env, noted entry by entry during a caller's one pass over it (a
 * String-keyed Hash lookup hashes its key: about 350 instructions, against a few integer
 * compares an entry for the pass). */
typedef struct Heron_Profiler_Dashboard_LoopbackRule_seen {
  VALUE remote_addr; /* REMOTE_ADDR's value, Qnil until seen */
  const char *unix_key; /* the unix-socket mark's key (a frozen String kept for good), its bytes */
  long unix_key_length;
  int forwarded;     /* a forwarding header, or the unix-socket mark, was seen */
} Heron_Profiler_Dashboard_LoopbackRule_seen;

extern unsigned long Heron_Profiler_Dashboard_LoopbackRule_lengths;

/* What an env key is to the rule (Heron_Profiler_Dashboard_LoopbackRule_kind): a caller that
 * remembers the answer per key (the Meter, by the key's identity) notes an entry with
 * Heron_Profiler_Dashboard_LoopbackRule_take without reading the key's bytes again. */
enum {
  HERON_LOOPBACK_NONE,        /* a key the rule does not read */
  HERON_LOOPBACK_REMOTE_ADDR, /* REMOTE_ADDR */
  HERON_LOOPBACK_FORWARDING,  /* a forwarding header: its presence counts, whatever its value */
  HERON_LOOPBACK_UNIX_MARK    /* the unix-socket mark: counts when its value is true */
};

/* Whether the rule reads some env key of `n` bytes (else a pass need not note that entry). */
static inline int Heron_Profiler_Dashboard_LoopbackRule_wants(long n)
{
  return n > 0 && n < 64 && (Heron_Profiler_Dashboard_LoopbackRule_lengths >> n) & 1UL;
}

void Heron_Profiler_Dashboard_LoopbackRule_begin(Heron_Profiler_Dashboard_LoopbackRule_seen *seen);
int Heron_Profiler_Dashboard_LoopbackRule_kind(const Heron_Profiler_Dashboard_LoopbackRule_seen *seen, const char *key, long n);
void Heron_Profiler_Dashboard_LoopbackRule_take(Heron_Profiler_Dashboard_LoopbackRule_seen *seen, int kind, VALUE value);
void Heron_Profiler_Dashboard_LoopbackRule_note(Heron_Profiler_Dashboard_LoopbackRule_seen *seen, const char *key, long n, VALUE value);
int Heron_Profiler_Dashboard_LoopbackRule_judge(const Heron_Profiler_Dashboard_LoopbackRule_seen *seen);
int Heron_Profiler_Dashboard_LoopbackRule_local(VALUE env);
void Init_Heron_Profiler_Dashboard_LoopbackRule(VALUE mProfiler);

#endif
