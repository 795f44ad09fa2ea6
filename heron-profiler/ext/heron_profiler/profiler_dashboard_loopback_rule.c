/*
 * Heron::Profiler::Dashboard::LoopbackRule: whether a request comes from a client on loopback
 * that connected over TCP without any forwarding header, the rule for who may see profiling
 * data when no profile_token is set. Every profiled request asks it (to decide on its
 * Server-Timing: the Meter, in C), and in Ruby its eight env lookups, a block and a regexp
 * cost about 1 µs a request; Dashboard::AccessControl (Ruby,
 * lib/heron/profiler/dashboard/access_control.rb) asks it too and documents the rule.
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
static VALUE proxy_keys[PROXY_HEADERS];
static VALUE str_REMOTE_ADDR;
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
  if (n > 7 && strncasecmp(s, "::ffff:", 7) == 0) return Heron_Profiler_Dashboard_LoopbackRule_loopback_v4(s + 7, n - 7);
  return Heron_Profiler_Dashboard_LoopbackRule_loopback_v4(s, n);
}

/* .local? for C callers (the Meter): see the file's comment. */
int Heron_Profiler_Dashboard_LoopbackRule_local(VALUE env)
{
  size_t i;
  if (unix_peer_key == Qundef) {
    unix_peer_key = rb_const_get(rb_path2class("Heron::Profiler::TrustedPeer"), rb_intern("UNIX_PEER_KEY"));
    rb_gc_register_mark_object(unix_peer_key);
  }
  if (!Heron_Profiler_Dashboard_LoopbackRule_loopback(rb_hash_aref(env, str_REMOTE_ADDR))) return 0;
  if (RTEST(rb_hash_aref(env, unix_peer_key))) return 0;
  for (i = 0; i < PROXY_HEADERS; i++) {
    if (rb_hash_lookup2(env, proxy_keys[i], Qundef) != Qundef) return 0;
  }
  return 1;
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
    proxy_keys[i] = Heron_Profiler_str(Heron_Profiler_Dashboard_LoopbackRule_headers[i]);
    rb_ary_push(names, proxy_keys[i]);
  }
  rb_define_const(klass, "PROXY_HEADERS", rb_obj_freeze(names));
  str_REMOTE_ADDR = Heron_Profiler_str("REMOTE_ADDR");
  rb_define_singleton_method(klass, "local?", Heron_Profiler_Dashboard_LoopbackRule_local_p, 1);
}
