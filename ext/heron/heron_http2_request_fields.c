/*
 * Heron::HTTP2::RequestFields: a request's HTTP/2 header fields into its Rack env (RFC 9113
 * §8.3), as HTTP/1.1's parser names them: the request line from the pseudo-headers, which must
 * all come first, once each (:method, :scheme and a non-empty :path present); each regular
 * field as HTTP_* (CONTENT_TYPE, CONTENT_LENGTH), repeated ones joined with ", " (cookie crumbs
 * with "; "). A malformed request (an upper-case, non-token or connection-specific name, te
 * other than "trailers", a pseudo-header unknown, repeated or after a regular field) gives an
 * EnvBuilder::Malformed, a :path that is not well-formed UTF-8 an EnvBuilder::InvalidTarget:
 * returned, not raised, so that the caller decodes the rest of the block (the HPACK table must
 * stay in step) and resets only the stream.
 *
 * Every string in the env is binary, as HTTP/1.1's parser gives them. SERVER_PROTOCOL and
 * rack.hijack? are the same for every HTTP/2 request: the connection's template has them
 * (HTTP2::EnvBuilder).
 */
#include "heron_http2_request_fields.h"
#include <ruby/encoding.h>
#include <string.h>
#include "heron_str.h"
#include "heron_asan.h"

static VALUE k_REQUEST_METHOD, k_REQUEST_URI, k_PATH_INFO, k_QUERY_STRING, k_HTTP_HOST, k_HTTP_COOKIE, k_HTTP_TE;

static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
#define METHODS_COUNT (sizeof(methods) / sizeof(methods[0]))
static VALUE method_values[METHODS_COUNT];

static const char *const connection_specific[] = {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                                                  "upgrade"};
#define CONNECTION_SPECIFIC_COUNT (sizeof(connection_specific) / sizeof(connection_specific[0]))

void Heron_HTTP2_RequestFields_start(Heron_HTTP2_RequestFields *r, VALUE env)
{
  r->env = env;
  r->method = r->path = r->authority = Qundef;
  r->scheme = 0;
  r->regular = 0;
  r->error = Qnil;
  r->error_class = NULL;
}

/* Sets the request's error (the first one only): EnvBuilder::Malformed or ::InvalidTarget, made
 * by #finish (they are Ruby classes, lib/heron/http2/env_builder.rb, looked up then). */
static void Heron_HTTP2_RequestFields_fail(Heron_HTTP2_RequestFields *r, const char *class_name, VALUE message)
{
  if (!NIL_P(r->error)) return;
  r->error = message;
  r->error_class = class_name;
}

static VALUE Heron_HTTP2_RequestFields_error(Heron_HTTP2_RequestFields *r)
{
  return rb_exc_new_str(rb_path2class(r->error_class), r->error);
}

static void Heron_HTTP2_RequestFields_malformed(Heron_HTTP2_RequestFields *r, VALUE message)
{
  Heron_HTTP2_RequestFields_fail(r, "Heron::HTTP2::EnvBuilder::Malformed", message);
}

static VALUE Heron_HTTP2_RequestFields_name(const char *name, size_t len)
{
  return rb_str_new(name, (long)len);
}

static int Heron_HTTP2_RequestFields_connection_specific(const char *name, size_t len)
{
  size_t i;
  for (i = 0; i < CONNECTION_SPECIFIC_COUNT; i++)
    if (strlen(connection_specific[i]) == len && memcmp(connection_specific[i], name, len) == 0) return 1;
  return 0;
}

static VALUE Heron_HTTP2_RequestFields_new_key(const char *name, size_t len)
{
  char small[128];
  char *out = len + 5 <= sizeof(small) ? small : ALLOC_N(char, len + 5);
  size_t n = Heron_env_key_bytes(out, name, len);
  VALUE key = rb_enc_interned_str(out, (long)n, rb_ascii8bit_encoding()); /* the same object as Heron_str's */
  if (out != small) xfree(out);
  return key;
}

VALUE Heron_HTTP2_RequestFields_key(Heron_HTTP2_RequestFields *r, const char *name, size_t len)
{
  size_t i;
  int upper = 0, token = len > 0;
  /* "_" and "-" both become "_" in the env: "x_forwarded_for" must not pass for "x-forwarded-for" */
  if (memchr(name, '_', len)) return Qnil;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c >= 'A' && c <= 'Z') upper = 1;
    else if (c <= 0x20 || c >= 0x7f || c == ':') token = 0; /* RFC 9113 §8.2.1 */
  }
  if (upper) {
    Heron_HTTP2_RequestFields_malformed(r, rb_sprintf("field name %+" PRIsVALUE " is not lower-case", Heron_HTTP2_RequestFields_name(name, len)));
    return Qfalse;
  }
  if (!token) {
    Heron_HTTP2_RequestFields_malformed(r, rb_sprintf("field name %+" PRIsVALUE " is not a token", Heron_HTTP2_RequestFields_name(name, len)));
    return Qfalse;
  }
  if (Heron_HTTP2_RequestFields_connection_specific(name, len)) {
    Heron_HTTP2_RequestFields_malformed(r, rb_sprintf("connection-specific field %" PRIsVALUE, Heron_HTTP2_RequestFields_name(name, len)));
    return Qfalse;
  }
  return Heron_HTTP2_RequestFields_new_key(name, len);
}

/* :method's value: a shared frozen String for the common methods. */
static VALUE Heron_HTTP2_RequestFields_method(VALUE value)
{
  size_t i;
  for (i = 0; i < METHODS_COUNT; i++)
    if ((size_t)RSTRING_LEN(value) == strlen(methods[i]) && memcmp(RSTRING_PTR(value), methods[i], strlen(methods[i])) == 0)
      return method_values[i];
  return value;
}

static void Heron_HTTP2_RequestFields_pseudo(Heron_HTTP2_RequestFields *r, const char *name, size_t len, VALUE value)
{
  VALUE *slot = NULL;
  int scheme = 0;
  if (r->regular) {
    Heron_HTTP2_RequestFields_malformed(r, rb_sprintf("pseudo-header %" PRIsVALUE " after a regular field", Heron_HTTP2_RequestFields_name(name, len)));
    return;
  }
  if (len == 7 && memcmp(name, ":method", 7) == 0) slot = &r->method;
  else if (len == 5 && memcmp(name, ":path", 5) == 0) slot = &r->path;
  else if (len == 10 && memcmp(name, ":authority", 10) == 0) slot = &r->authority;
  else if (len == 7 && memcmp(name, ":scheme", 7) == 0) scheme = 1;
  if ((!slot && !scheme) || (slot && *slot != Qundef) || (scheme && r->scheme)) {
    Heron_HTTP2_RequestFields_malformed(r, rb_sprintf("unknown or repeated pseudo-header %" PRIsVALUE, Heron_HTTP2_RequestFields_name(name, len)));
    return;
  }
  if (scheme) r->scheme = 1;
  else *slot = value;
}

static void Heron_HTTP2_RequestFields_join(Heron_HTTP2_RequestFields *r, VALUE key, VALUE old, VALUE value)
{
  VALUE joined = rb_str_buf_new(RSTRING_LEN(old) + 2 + RSTRING_LEN(value));
  rb_str_buf_cat(joined, RSTRING_PTR(old), RSTRING_LEN(old));
  rb_str_buf_cat(joined, key == k_HTTP_COOKIE ? "; " : ", ", 2);
  rb_str_buf_cat(joined, RSTRING_PTR(value), RSTRING_LEN(value));
  rb_hash_aset(r->env, key, joined);
}

void Heron_HTTP2_RequestFields_add(Heron_HTTP2_RequestFields *r, const char *name, size_t name_len, VALUE key,
                                   VALUE value)
{
  VALUE old;
  if (!NIL_P(r->error)) return;
  if (name_len > 0 && name[0] == ':') return Heron_HTTP2_RequestFields_pseudo(r, name, name_len, value);
  r->regular = 1;
  if (key == Qundef) key = Heron_HTTP2_RequestFields_key(r, name, name_len);
  if (!RTEST(key)) return; /* dropped, or malformed (the error is set) */
  if (key == k_HTTP_TE && !(RSTRING_LEN(value) == 8 && memcmp(RSTRING_PTR(value), "trailers", 8) == 0)) {
    Heron_HTTP2_RequestFields_malformed(r, rb_str_new_cstr("te other than trailers"));
    return;
  }
  old = rb_hash_lookup2(r->env, key, Qundef);
  if (old == Qundef) rb_hash_aset(r->env, key, value);
  else Heron_HTTP2_RequestFields_join(r, key, old, value);
}

/* Well-formed UTF-8 (RFC 3629): no overlong form, surrogate, code point past U+10FFFF or
 * truncated sequence. */
static int Heron_HTTP2_RequestFields_utf8(const unsigned char *s, long n)
{
  long i = 0;
  while (i < n) {
    unsigned char c = s[i];
    long need, k;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else return 0;
    if (i + need >= n) return 0;
    for (k = 1; k <= need; k++) {
      unsigned char b = s[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return 0;
    }
    i += need + 1;
  }
  return 1;
}

VALUE Heron_HTTP2_RequestFields_finish(Heron_HTTP2_RequestFields *r)
{
  VALUE env = r->env, path;
  const char *p, *query;
  long len;
  if (!NIL_P(r->error)) return Heron_HTTP2_RequestFields_error(r);
  if (r->method == Qundef || !r->scheme || r->path == Qundef || RSTRING_LEN(r->path) == 0) {
    Heron_HTTP2_RequestFields_malformed(r, rb_str_new_cstr("missing :method, :scheme or :path"));
    return Heron_HTTP2_RequestFields_error(r);
  }
  path = r->path;
  p = RSTRING_PTR(path);
  len = RSTRING_LEN(path);
  if (!Heron_HTTP2_RequestFields_utf8((const unsigned char *)p, len)) {
    Heron_HTTP2_RequestFields_fail(r, "Heron::HTTP2::EnvBuilder::InvalidTarget", rb_str_new_cstr("invalid UTF-8 in request target"));
    return Heron_HTTP2_RequestFields_error(r);
  }
  query = memchr(p, '?', (size_t)len);
  rb_hash_aset(env, k_REQUEST_METHOD, Heron_HTTP2_RequestFields_method(r->method));
  rb_hash_aset(env, k_REQUEST_URI, path);
  rb_hash_aset(env, k_PATH_INFO, rb_str_new(p, query ? query - p : len));
  rb_hash_aset(env, k_QUERY_STRING, query ? rb_str_new(query + 1, len - (query - p) - 1) : rb_str_new(NULL, 0));
  if (r->authority != Qundef && rb_hash_lookup2(env, k_HTTP_HOST, Qundef) == Qundef) rb_hash_aset(env, k_HTTP_HOST, r->authority);
  return Qnil;
}

/* A field's value as it is when ASCII (a decoded one is tagged UTF-8), else a binary copy. */
static VALUE Heron_HTTP2_RequestFields_binary(VALUE str)
{
  StringValue(str);
  if (ENCODING_GET_INLINED(str) == rb_ascii8bit_encindex() || rb_enc_str_asciionly_p(str)) return str;
  str = rb_str_dup(str);
  rb_enc_associate_index(str, rb_ascii8bit_encindex());
  return str;
}

/*
 * call-seq: RequestFields.fill(env, fields) -> nil or exception
 *
 * Adds the request's decoded fields ([name, value] pairs, pseudo-headers first) to env.
 * Returns nil, or (not raised) the EnvBuilder::Malformed or ::InvalidTarget the request gives.
 */
static VALUE HERON_RAISES_THROUGH Heron_HTTP2_RequestFields_s_fill(VALUE self, VALUE env, VALUE fields)
{
  Heron_HTTP2_RequestFields r;
  long i;
  Check_Type(env, T_HASH);
  Check_Type(fields, T_ARRAY);
  Heron_HTTP2_RequestFields_start(&r, env);
  for (i = 0; i < RARRAY_LEN(fields) && NIL_P(r.error); i++) {
    VALUE pair = rb_ary_entry(fields, i), name;
    Check_Type(pair, T_ARRAY);
    if (RARRAY_LEN(pair) != 2) rb_raise(rb_eArgError, "a field is a [name, value] pair");
    name = rb_ary_entry(pair, 0);
    StringValue(name);
    Heron_HTTP2_RequestFields_add(&r, RSTRING_PTR(name), (size_t)RSTRING_LEN(name), Qundef,
                                  Heron_HTTP2_RequestFields_binary(rb_ary_entry(pair, 1)));
  }
  RB_GC_GUARD(fields);
  return Heron_HTTP2_RequestFields_finish(&r);
}

void Init_Heron_HTTP2_RequestFields(VALUE mHeron)
{
  VALUE mHTTP2 = rb_define_module_under(mHeron, "HTTP2");
  VALUE cRequestFields = rb_define_class_under(mHTTP2, "RequestFields", rb_cObject);
  size_t i;
  k_REQUEST_METHOD = Heron_str("REQUEST_METHOD");
  k_REQUEST_URI = Heron_str("REQUEST_URI");
  k_PATH_INFO = Heron_str("PATH_INFO");
  k_QUERY_STRING = Heron_str("QUERY_STRING");
  k_HTTP_HOST = Heron_str("HTTP_HOST");
  k_HTTP_COOKIE = Heron_str("HTTP_COOKIE");
  k_HTTP_TE = Heron_str("HTTP_TE");
  for (i = 0; i < METHODS_COUNT; i++) method_values[i] = Heron_str(methods[i]);
  rb_undef_alloc_func(cRequestFields);
  rb_define_singleton_method(cRequestFields, "fill", Heron_HTTP2_RequestFields_s_fill, 2);
}
