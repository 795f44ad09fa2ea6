/*
 * Heron::Log::RequestId's per-request work in C (the rest, echo and reseed, is Ruby in
 * lib/heron/log/request_id.rb): keeping a sane client id or making a new one. A new id is
 * "PREFIX-COUNT" with COUNT in base 36, made in one allocation (an embedded String) and
 * without a lock: the GVL is held from reading the count to storing the next one, so no two
 * threads get the same count. In Ruby this was a Mutex block, a regexp and three Strings.
 */
#include "heron_log_request_id.h"
#include <ruby.h>
#include <ruby/encoding.h>

static ID id_prefix, id_count, id_reseed;
static VALUE Heron_Log_RequestId_header_key, Heron_Log_RequestId_env_key;

#define HERON_REQUEST_ID_MAX 128

/* What a kept id may hold: 1 to 128 of A-Z a-z 0-9 - _ @ (Rails' ActionDispatch::RequestId
 * strips every other character, so a wider set would make Rails log a different id). */
static int Heron_Log_RequestId_sane(VALUE id)
{
  const char *p;
  long len, i;
  if (!RB_TYPE_P(id, T_STRING)) return 0;
  len = RSTRING_LEN(id);
  if (len < 1 || len > HERON_REQUEST_ID_MAX) return 0;
  p = RSTRING_PTR(id);
  for (i = 0; i < len; i++) {
    char c = p[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '@')) return 0;
  }
  return 1;
}

/*
 * call-seq: Heron::Log::RequestId.generate -> String
 *
 * A new id, e.g. "3f9c2a7b1e04-1k": the process's prefix (drawn by RequestId.reseed on first
 * use and in every forked child) and the next count in base 36.
 */
static VALUE Heron_Log_RequestId_generate(VALUE self)
{
  static const char digits36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  char buffer[HERON_REQUEST_ID_MAX + 32], reversed[16];
  VALUE prefix = rb_ivar_get(self, id_prefix);
  unsigned long count;
  long length, n = 0;
  if (NIL_P(prefix)) {
    rb_funcall(self, id_reseed, 0);
    prefix = rb_ivar_get(self, id_prefix);
  }
  StringValue(prefix);
  length = RSTRING_LEN(prefix);
  if (length > HERON_REQUEST_ID_MAX) rb_raise(rb_eArgError, "request id prefix longer than %d bytes", HERON_REQUEST_ID_MAX);
  count = NUM2ULONG(rb_ivar_get(self, id_count)) + 1;
  rb_ivar_set(self, id_count, ULONG2NUM(count));
  do {
    reversed[n++] = digits36[count % 36];
    count /= 36;
  } while (count);
  memcpy(buffer, RSTRING_PTR(prefix), length);
  buffer[length++] = '-';
  while (n) buffer[length++] = reversed[--n];
  return rb_utf8_str_new(buffer, length);
}

/*
 * call-seq: Heron::Log::RequestId.assign(env) -> String
 *
 * Sets the request's id in the env, as `HTTP_X_REQUEST_ID` and `heron.request_id`: the
 * client's (or proxy's) X-Request-Id when it is sane, else a new one (see generate).
 */
static VALUE Heron_Log_RequestId_assign(VALUE self, VALUE env)
{
  VALUE given, id;
  Check_Type(env, T_HASH);
  given = rb_hash_aref(env, Heron_Log_RequestId_header_key);
  id = Heron_Log_RequestId_sane(given) ? given : Heron_Log_RequestId_generate(self);
  rb_hash_aset(env, Heron_Log_RequestId_header_key, id);
  rb_hash_aset(env, Heron_Log_RequestId_env_key, id);
  return id;
}

static VALUE Heron_Log_RequestId_key(const char *name)
{
  VALUE key = rb_obj_freeze(rb_utf8_str_new_cstr(name));
  rb_gc_register_mark_object(key);
  return key;
}

void Init_Heron_Log_RequestId(VALUE heron)
{
  VALUE mLog = rb_define_module_under(heron, "Log");
  VALUE cRequestId = rb_define_class_under(mLog, "RequestId", rb_cObject);
  id_prefix = rb_intern("@prefix");
  id_count = rb_intern("@count");
  id_reseed = rb_intern("reseed");
  Heron_Log_RequestId_header_key = Heron_Log_RequestId_key("HTTP_X_REQUEST_ID");
  Heron_Log_RequestId_env_key = Heron_Log_RequestId_key("heron.request_id");
  rb_define_singleton_method(cRequestId, "generate", Heron_Log_RequestId_generate, 0);
  rb_define_singleton_method(cRequestId, "assign", Heron_Log_RequestId_assign, 1);
}
