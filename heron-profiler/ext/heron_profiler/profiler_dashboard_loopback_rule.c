/*
 * Heron::Profiler::Dashboard::LoopbackRule: whether a request comes from a client on loopback
 * that connected over TCP without any forwarding header, the rule for who may see profiling
 * data when no profile_token is set. Every profiled request asks it (to decide on its
 * Server-Timing: the Meter, in C), and in Ruby its eight env lookups, a block and a regexp
 * cost about 1 µs a request; Dashboard::AccessControl (Ruby,
 * lib/heron/profiler/dashboard/access_control.rb) asks it too and documents the rule.
 *
 * The rule reads the env in one pass (rb_hash_foreach), noting each entry whose key has the
 * length of one it reads (_begin, _note, _judge), so the Meter notes its entries during its own
 * pass: eight String-keyed lookups, each hashing its key (about 290 instructions), cost more
 * than walking a server's env of two dozen entries, most turned away by their key's length.
 *
 *   LoopbackRule::PROXY_HEADERS  the forwarding headers (env keys) that make a request not local
 *   LoopbackRule.local?(env)     -> true or false
 */
#include "profiler.h"
#include <string.h>
#include <strings.h>

static const char *const Heron_Profiler_Dashboard_LoopbackRule_headers[] = {
  "HTTP_FORWARDED", "HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_X_CLIENT_IP", "HTTP_TRUE_CLIENT_IP",
  "HTTP_CF_CONNECTING_IP",
};
#define PROXY_HEADERS (sizeof(Heron_Profiler_Dashboard_LoopbackRule_headers) / sizeof(Heron_Profiler_Dashboard_LoopbackRule_headers[0]))
static long proxy_lengths[PROXY_HEADERS];
static VALUE unix_peer_key = Qundef; /* Heron::Profiler::TrustedPeer::UNIX_PEER_KEY, read at first use */

/* Whether `s` (`n` bytes) is an IPv4 address in 127.0.0.0/8 as a socket reports it: "127"
 * then three dot-separated groups of one to three digits. */
static int Heron_Profiler_Dashboard_LoopbackRule_loopback_v4(const char *s, long n)
{
  long i = 3, groups = 0, digits;
  if (n < 9 || memcmp(s, "127", 3) != 0) return 0;
  while (i < n && groups < 3) {
    if (s[i++] != '.') return 0;
    for (digits = 0; i < n && s[i] >= '0' && s[i] <= '9' && digits < 4; i++) digits++;
    if (digits == 0 || digits > 3) return 0;
    groups++;
  }
  return groups == 3 && i == n;
}

/* Whether REMOTE_ADDR's text is a loopback address: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped
 * into IPv6 (::ffff:127.x.x.x, any case). */
static int Heron_Profiler_Dashboard_LoopbackRule_loopback(VALUE addr)
{
  const char *s;
  long n;
  if (!RB_TYPE_P(addr, T_STRING)) return 0;
  s = RSTRING_PTR(addr);
  n = RSTRING_LEN(addr);
  if (n == 3 && memcmp(s, "::1", 3) == 0) return 1;
  if (n > 7 && s[0] == ':' && strncasecmp(s, "::ffff:", 7) == 0) return Heron_Profiler_Dashboard_LoopbackRule_loopback_v4(s + 7, n - 7);
  return Heron_Profiler_Dashboard_LoopbackRule_loopback_v4(s, n);
}

/* The unix-socket mark's key (Heron::Profiler::TrustedPeer::UNIX_PEER_KEY), read at first use. */
static VALUE Heron_Profiler_Dashboard_LoopbackRule_unix_key(void)
{
  VALUE key;
  if (unix_peer_key != Qundef) return unix_peer_key;
  key = rb_const_get(rb_path2class("Heron::Profiler::TrustedPeer"), rb_intern("UNIX_PEER_KEY"));
  Check_Type(key, T_STRING);
  key = rb_str_new_frozen(key);
  rb_gc_register_mark_object(key);
  unix_peer_key = key;
  return key;
}

/* Bit n set: the rule reads some key of n bytes (REMOTE_ADDR, the forwarding headers, the
 * unix-socket mark), so an env key of any other length is none of them. */
unsigned long Heron_Profiler_Dashboard_LoopbackRule_lengths;

/* Whether the `n` bytes at `key` are the `length` bytes at `name`. */
static inline int Heron_Profiler_Dashboard_LoopbackRule_is(const char *key, long n, const char *name, long length)
{
  return length == n && memcmp(key, name, (size_t)n) == 0;
}

/* Starts a pass over an env (see Heron_Profiler_Dashboard_LoopbackRule_note). */
void Heron_Profiler_Dashboard_LoopbackRule_begin(Heron_Profiler_Dashboard_LoopbackRule_seen *seen)
{
  VALUE unix_key = Heron_Profiler_Dashboard_LoopbackRule_unix_key();
  seen->remote_addr = Qnil;
  seen->forwarded = 0;
  seen->unix_key = RSTRING_PTR(unix_key);
  seen->unix_key_length = RSTRING_LEN(unix_key);
  if (seen->unix_key_length >= 64) rb_raise(rb_eArgError, "Heron::Profiler::TrustedPeer::UNIX_PEER_KEY: at most 63 bytes");
  Heron_Profiler_Dashboard_LoopbackRule_lengths |= 1UL << seen->unix_key_length;
}

/* What the `n` bytes of an env key at `key` are to the rule (HERON_LOOPBACK_*); a caller may
 * skip keys whose length Heron_Profiler_Dashboard_LoopbackRule_wants refuses. */
int Heron_Profiler_Dashboard_LoopbackRule_kind(const Heron_Profiler_Dashboard_LoopbackRule_seen *seen, const char *key, long n)
{
  size_t i;
  if (n == 11 && memcmp(key, "REMOTE_ADDR", 11) == 0) return HERON_LOOPBACK_REMOTE_ADDR;
  if (Heron_Profiler_Dashboard_LoopbackRule_is(key, n, seen->unix_key, seen->unix_key_length)) return HERON_LOOPBACK_UNIX_MARK;
  if (n < 5 || memcmp(key, "HTTP_", 5) != 0) return HERON_LOOPBACK_NONE; /* every forwarding header's key */
  for (i = 0; i < PROXY_HEADERS; i++) {
    if (Heron_Profiler_Dashboard_LoopbackRule_is(key, n, Heron_Profiler_Dashboard_LoopbackRule_headers[i], proxy_lengths[i])) return HERON_LOOPBACK_FORWARDING;
  }
  return HERON_LOOPBACK_NONE;
}

/* Notes an env entry whose key is of `kind` (HERON_LOOPBACK_*): REMOTE_ADDR's value, a
 * forwarding header's presence (whatever its value, as a lookup finds it), the unix-socket mark
 * when true. */
void Heron_Profiler_Dashboard_LoopbackRule_take(Heron_Profiler_Dashboard_LoopbackRule_seen *seen, int kind, VALUE value)
{
  if (kind == HERON_LOOPBACK_REMOTE_ADDR) seen->remote_addr = value;
  else if (kind == HERON_LOOPBACK_FORWARDING || (kind == HERON_LOOPBACK_UNIX_MARK && RTEST(value))) seen->forwarded = 1;
}

/* Notes one env entry, the `n` bytes of its key at `key` (a caller may skip keys whose length
 * Heron_Profiler_Dashboard_LoopbackRule_wants refuses). */
void Heron_Profiler_Dashboard_LoopbackRule_note(Heron_Profiler_Dashboard_LoopbackRule_seen *seen, const char *key, long n, VALUE value)
{
  Heron_Profiler_Dashboard_LoopbackRule_take(seen, Heron_Profiler_Dashboard_LoopbackRule_kind(seen, key, n), value);
}

/* The rule's answer once every entry of the env was noted. */
int Heron_Profiler_Dashboard_LoopbackRule_judge(const Heron_Profiler_Dashboard_LoopbackRule_seen *seen)
{
  return !seen->forwarded && Heron_Profiler_Dashboard_LoopbackRule_loopback(seen->remote_addr);
}

static int Heron_Profiler_Dashboard_LoopbackRule_note_entry(VALUE key, VALUE value, VALUE arg)
{
  if (RB_TYPE_P(key, T_STRING) && Heron_Profiler_Dashboard_LoopbackRule_wants(RSTRING_LEN(key))) {
    Heron_Profiler_Dashboard_LoopbackRule_note((Heron_Profiler_Dashboard_LoopbackRule_seen *)arg, RSTRING_PTR(key), RSTRING_LEN(key), value);
  }
  return ST_CONTINUE;
}

/* .local? for C callers: one pass over the env (see the file's comment). */
int Heron_Profiler_Dashboard_LoopbackRule_local(VALUE env)
{
  Heron_Profiler_Dashboard_LoopbackRule_seen seen;
  Heron_Profiler_Dashboard_LoopbackRule_begin(&seen);
  rb_hash_foreach(env, Heron_Profiler_Dashboard_LoopbackRule_note_entry, (VALUE)&seen);
  return Heron_Profiler_Dashboard_LoopbackRule_judge(&seen);
}

/* call-seq: LoopbackRule.local?(env) -> true or false. See the file's comment. */
static VALUE Heron_Profiler_Dashboard_LoopbackRule_local_p(VALUE klass, VALUE env)
{
  Check_Type(env, T_HASH);
  return Heron_Profiler_Dashboard_LoopbackRule_local(env) ? Qtrue : Qfalse;
}

void Init_Heron_Profiler_Dashboard_LoopbackRule(VALUE mProfiler)
{
  VALUE dashboard = rb_define_class_under(mProfiler, "Dashboard", rb_cObject);
  VALUE klass = rb_define_class_under(dashboard, "LoopbackRule", rb_cObject);
  VALUE names = rb_ary_new_capa((long)PROXY_HEADERS);
  size_t i;
  for (i = 0; i < PROXY_HEADERS; i++) {
    proxy_lengths[i] = (long)strlen(Heron_Profiler_Dashboard_LoopbackRule_headers[i]);
    Heron_Profiler_Dashboard_LoopbackRule_lengths |= 1UL << proxy_lengths[i];
    rb_ary_push(names, Heron_Profiler_str(Heron_Profiler_Dashboard_LoopbackRule_headers[i]));
  }
  rb_define_const(klass, "PROXY_HEADERS", rb_obj_freeze(names));
  Heron_Profiler_Dashboard_LoopbackRule_lengths |= 1UL << 11; /* REMOTE_ADDR */
  rb_define_singleton_method(klass, "local?", Heron_Profiler_Dashboard_LoopbackRule_local_p, 1);
}
