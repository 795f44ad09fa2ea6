/*
 * Ruby binding of Heron's HTTP/1.1 request parser: class Heron::HTTPParser.
 * The grammar itself lives in http_parser.c (no Ruby there); this file only
 * turns its spans into a Rack env and its errors into Ruby exceptions.
 *
 * Ruby API (see also lib/heron/http_parser.rb):
 *
 *   Heron::HTTPParser.new(max_target_bytes: 8192, max_header_bytes: 65536,
 *                         max_header_fields: 100, max_chunk_extension_bytes: 4096,
 *                         max_total_chunk_extension_bytes: 65536)
 *   #parse(env, buf)        -> nil (head incomplete) or Integer (head length)
 *   #content_length         -> Integer or nil
 *   #chunked?               -> true/false
 *   #keepalive?             -> true/false
 *   #http_minor             -> 0 or 1
 *   #filter_body(dst, buf)  -> true (chunked body finished) or false
 *   #reset                  -> self
 */
#include "heron_http_parser.h"
#include <ruby.h>
#include <ruby/encoding.h>
#include <string.h>
#include "http_parser.h"
#include "heron_str.h"

static VALUE cHeron_HTTPParser;
static VALUE eHeron_HTTPParser_Error;
static VALUE eHeron_HTTPParser_BadRequest;
static VALUE eHeron_HTTPParser_URITooLong;
static VALUE eHeron_HTTPParser_HeaderFieldsTooLarge;
static VALUE eHeron_HTTPParser_NotImplemented;
static VALUE eHeron_HTTPParser_VersionNotSupported;
static ID id_STATUS;

typedef struct Heron_HTTPParser {
  heron_http_parser head;
  heron_chunked_decoder chunked;
  size_t max_chunk_ext_bytes, max_chunk_ext_total; /* applied to each new body */
  int env_filled; /* parse already returned the head length for this request */
} Heron_HTTPParser;

static VALUE k_REQUEST_METHOD, k_REQUEST_URI, k_PATH_INFO, k_QUERY_STRING, k_SERVER_PROTOCOL,
    k_HTTP_HOST, k_HTTP_COOKIE, v_HTTP_1_1, v_HTTP_1_0, v_slash, v_asterisk;

/* Common field names: lowercase name -> env key. */
typedef struct { const char *name; size_t len; VALUE key; } Heron_HTTPParser_known_field;

static Heron_HTTPParser_known_field known_fields[] = {
  {"host"}, {"user-agent"}, {"accept"}, {"accept-encoding"}, {"accept-language"},
  {"accept-charset"}, {"connection"}, {"cookie"}, {"content-type"}, {"content-length"},
  {"cache-control"}, {"referer"}, {"origin"}, {"upgrade-insecure-requests"},
  {"x-forwarded-for"}, {"x-forwarded-proto"}, {"x-forwarded-host"}, {"x-real-ip"},
  {"x-request-id"}, {"x-requested-with"}, {"x-csrf-token"}, {"if-none-match"},
  {"if-modified-since"}, {"authorization"}, {"expect"}, {"transfer-encoding"}, {"pragma"},
  {"upgrade"}, {"te"}, {"dnt"}, {"range"}, {"keep-alive"}, {"priority"}, {"via"},
  {"sec-fetch-site"}, {"sec-fetch-mode"}, {"sec-fetch-user"}, {"sec-fetch-dest"},
  {"sec-ch-ua"}, {"sec-ch-ua-mobile"}, {"sec-ch-ua-platform"},
  {"sec-websocket-key"}, {"sec-websocket-version"}, {"sec-websocket-extensions"},
  {"sec-websocket-protocol"}, {"x-request-start"}, {"x-queue-start"},
};
#define KNOWN_FIELDS_COUNT (sizeof(known_fields) / sizeof(known_fields[0]))

static const char *const known_methods[] = {
  "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE",
};
#define KNOWN_METHODS_COUNT (sizeof(known_methods) / sizeof(known_methods[0]))
static VALUE known_method_values[KNOWN_METHODS_COUNT];

static VALUE Heron_HTTPParser_new_key(const char *name, size_t len)
{
  char small[256];
  VALUE key;
  if (len + 5 <= sizeof(small)) {
    size_t n = Heron_env_key_bytes(small, name, len);
#ifdef HAVE_RB_INTERNED_STR
    return rb_interned_str(small, (long)n);
#else
    return rb_obj_freeze(rb_str_new(small, (long)n));
#endif
  }
  key = rb_str_new(NULL, (long)(len + 5));
  rb_str_set_len(key, (long)Heron_env_key_bytes(RSTRING_PTR(key), name, len));
  return rb_obj_freeze(key);
}

static VALUE Heron_HTTPParser_field_key(const char *name, size_t len);
static void Heron_HTTPParser_index_known_fields(void);

static void Heron_HTTPParser_init_strings(void)
{
  size_t i;
  k_REQUEST_METHOD = Heron_str("REQUEST_METHOD");
  k_REQUEST_URI = Heron_str("REQUEST_URI");
  k_PATH_INFO = Heron_str("PATH_INFO");
  k_QUERY_STRING = Heron_str("QUERY_STRING");
  k_SERVER_PROTOCOL = Heron_str("SERVER_PROTOCOL");
  v_HTTP_1_1 = Heron_str("HTTP/1.1");
  v_HTTP_1_0 = Heron_str("HTTP/1.0");
  v_slash = Heron_str("/");
  v_asterisk = Heron_str("*");
  Heron_HTTPParser_index_known_fields();
  for (i = 0; i < KNOWN_FIELDS_COUNT; i++) {
    Heron_HTTPParser_known_field *f = &known_fields[i];
    f->key = Heron_HTTPParser_new_key(f->name, f->len);
    rb_gc_register_mark_object(f->key);
  }
  for (i = 0; i < KNOWN_METHODS_COUNT; i++) known_method_values[i] = Heron_str(known_methods[i]);
  k_HTTP_HOST = Heron_HTTPParser_field_key("host", 4);
  k_HTTP_COOKIE = Heron_HTTPParser_field_key("cookie", 6);
}

/* Field names are tokens: only letters change under | 0x20, so this is exact. */
static int Heron_HTTPParser_name_is(const char *name, size_t len, const Heron_HTTPParser_known_field *f)
{
  size_t i;
  if (len != f->len) return 0;
  for (i = 0; i < len; i++)
    if (((unsigned char)name[i] | 0x20) != (unsigned char)f->name[i]) return 0;
  return 1;
}

/* known_fields sorted by length; known_by_len[n] = index of the first of length n. */
#define KNOWN_MAX_LEN 32
static size_t known_by_len[KNOWN_MAX_LEN + 2];

static int Heron_HTTPParser_known_cmp(const void *a, const void *b)
{
  size_t la = ((const Heron_HTTPParser_known_field *)a)->len;
  size_t lb = ((const Heron_HTTPParser_known_field *)b)->len;
  return la < lb ? -1 : la > lb;
}

static void Heron_HTTPParser_index_known_fields(void)
{
  size_t i, n = 0;
  for (i = 0; i < KNOWN_FIELDS_COUNT; i++) known_fields[i].len = strlen(known_fields[i].name);
  qsort(known_fields, KNOWN_FIELDS_COUNT, sizeof(known_fields[0]), Heron_HTTPParser_known_cmp);
  for (i = 0; i <= KNOWN_MAX_LEN + 1; i++) {
    while (n < KNOWN_FIELDS_COUNT && known_fields[n].len < i) n++;
    known_by_len[i] = n;
  }
}

/* The env key for a field name: a shared one for common names, else a new frozen String. */
static VALUE Heron_HTTPParser_field_key(const char *name, size_t len)
{
  size_t i;
  if (len <= KNOWN_MAX_LEN) {
    for (i = known_by_len[len]; i < known_by_len[len + 1]; i++)
      if (Heron_HTTPParser_name_is(name, len, &known_fields[i])) return known_fields[i].key;
  }
  return Heron_HTTPParser_new_key(name, len);
}

/* ---- object lifecycle ---------------------------------------------------- */

static void Heron_HTTPParser_free(void *ptr)
{
  Heron_HTTPParser *parser = ptr;
  heron_http_parser_free(&parser->head);
  xfree(parser);
}

static size_t Heron_HTTPParser_memsize(const void *ptr)
{
  const Heron_HTTPParser *parser = ptr;
  return sizeof(*parser) + parser->head.fields_capacity * sizeof(heron_http_field);
}

/* Write-barrier protected: the struct holds no Ruby objects (no mark function), so it never
 * needs a barrier. Unprotected, each one a connection keeps would be remembered once old and
 * re-marked by every minor GC (bench/gc_anatomy.rb). */
static const rb_data_type_t Heron_HTTPParser_type = {
  "Heron::HTTPParser",
  {NULL, Heron_HTTPParser_free, Heron_HTTPParser_memsize},
  NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED
};

static VALUE Heron_HTTPParser_alloc(VALUE klass)
{
  Heron_HTTPParser *parser;
  return TypedData_Make_Struct(klass, Heron_HTTPParser, &Heron_HTTPParser_type, parser);
}

/* Forgets the values kept from the previous head. */
static void Heron_HTTPParser_forget_request(Heron_HTTPParser *parser)
{
  parser->env_filled = 0;
}

static Heron_HTTPParser *Heron_HTTPParser_get(VALUE self)
{
  Heron_HTTPParser *parser;
  TypedData_Get_Struct(self, Heron_HTTPParser, &Heron_HTTPParser_type, parser);
  if (!parser->head.fields) rb_raise(rb_eRuntimeError, "Heron::HTTPParser not initialized");
  return parser;
}

/* A limit given to #initialize: required (their defaults live in Ruby, with every other
 * setting's, in Heron::Config::Settings; lib/heron/http_parser.rb fills in the missing ones). */
static size_t Heron_HTTPParser_limit(VALUE value, const char *name)
{
  long n;
  if (value == Qundef || NIL_P(value)) rb_raise(rb_eArgError, "missing keyword: %s", name);
  n = NUM2LONG(value);
  if (n <= 0) rb_raise(rb_eArgError, "%s must be a positive Integer", name);
  return (size_t)n;
}

static void Heron_HTTPParser_reset_chunked(Heron_HTTPParser *parser)
{
  heron_chunked_decoder_init(&parser->chunked, parser->head.max_header_bytes,
                             parser->head.max_header_fields);
  heron_chunked_decoder_limit_extensions(&parser->chunked, parser->max_chunk_ext_bytes,
                                         parser->max_chunk_ext_total);
}

/*
 * call-seq: Heron::HTTPParser.new(max_target_bytes: 8192, max_header_bytes: 65536,
 *                                 max_header_fields: 100, max_chunk_extension_bytes: 4096,
 *                                 max_total_chunk_extension_bytes: 65536)
 *
 * max_target_bytes:: longest request target (414 URITooLong beyond it)
 * max_header_bytes:: longest header section, i.e. everything after the request
 *                    line up to and including the empty line (431 beyond it);
 *                    also bounds a chunked body's trailer section
 * max_header_fields:: most header fields (431 beyond it); also bounds trailers
 * max_chunk_extension_bytes:: longest chunk-extension text on one chunk-size
 *                             line (400 BadRequest beyond it)
 * max_total_chunk_extension_bytes:: most chunk-extension bytes in one body
 *                                   (400 BadRequest beyond it)
 */
static VALUE Heron_HTTPParser_initialize(int argc, VALUE *argv, VALUE self)
{
  static ID keys[5];
  VALUE opts, values[5];
  Heron_HTTPParser *parser;
  size_t target, header, fields;
  if (!keys[0]) {
    keys[0] = rb_intern("max_target_bytes");
    keys[1] = rb_intern("max_header_bytes");
    keys[2] = rb_intern("max_header_fields");
    keys[3] = rb_intern("max_chunk_extension_bytes");
    keys[4] = rb_intern("max_total_chunk_extension_bytes");
  }
  rb_scan_args(argc, argv, ":", &opts);
  values[0] = values[1] = values[2] = values[3] = values[4] = Qundef;
  if (!NIL_P(opts)) rb_get_kwargs(opts, keys, 0, 5, values);
  target = Heron_HTTPParser_limit(values[0], "max_target_bytes");
  header = Heron_HTTPParser_limit(values[1], "max_header_bytes");
  fields = Heron_HTTPParser_limit(values[2], "max_header_fields");
  TypedData_Get_Struct(self, Heron_HTTPParser, &Heron_HTTPParser_type, parser);
  parser->max_chunk_ext_bytes =
    Heron_HTTPParser_limit(values[3], "max_chunk_extension_bytes");
  parser->max_chunk_ext_total =
    Heron_HTTPParser_limit(values[4], "max_total_chunk_extension_bytes");
  heron_http_parser_free(&parser->head);
  if (heron_http_parser_init(&parser->head, target, header, fields) != 0) rb_memerror();
  Heron_HTTPParser_reset_chunked(parser);
  Heron_HTTPParser_forget_request(parser);
  return self;
}

/* call-seq: reset -> self
 * Forgets the current request (head and chunked-body state) so the parser can
 * read the next request on the same connection. Limits are kept. */
static VALUE Heron_HTTPParser_reset(VALUE self)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  heron_http_parser_reset(&parser->head);
  Heron_HTTPParser_reset_chunked(parser);
  Heron_HTTPParser_forget_request(parser);
  return self;
}

/* ---- errors -------------------------------------------------------------- */

static void Heron_HTTPParser_raise(int status, const char *message)
{
  VALUE klass;
  switch (status) {
  case 414: klass = eHeron_HTTPParser_URITooLong; break;
  case 431: klass = eHeron_HTTPParser_HeaderFieldsTooLarge; break;
  case 501: klass = eHeron_HTTPParser_NotImplemented; break;
  case 505: klass = eHeron_HTTPParser_VersionNotSupported; break;
  default: klass = eHeron_HTTPParser_BadRequest; break;
  }
  rb_raise(klass, "%s", message ? message : "bad request");
}

/* call-seq: status -> Integer
 * The HTTP status code to answer with (the STATUS constant of the error's class). */
static VALUE Heron_HTTPParser_Error_status(VALUE self)
{
  return rb_const_get(rb_obj_class(self), id_STATUS);
}

/* ---- env ------------------------------------------------------------------- */

static VALUE Heron_HTTPParser_span_str(const char *buf, heron_http_span span)
{
  return rb_str_new(buf + span.off, (long)span.len);
}

static VALUE Heron_HTTPParser_method_value(const char *buf, heron_http_span m)
{
  size_t i;
  for (i = 0; i < KNOWN_METHODS_COUNT; i++) {
    const char *name = known_methods[i];
    if (strlen(name) == m.len && memcmp(name, buf + m.off, m.len) == 0) return known_method_values[i];
  }
  return Heron_HTTPParser_span_str(buf, m);
}

static VALUE Heron_HTTPParser_path_value(const heron_http_parser *hp, const char *buf)
{
  if (hp->target_form == HERON_TARGET_ASTERISK) return rb_str_dup(v_asterisk);
  if (hp->path.len > 0) return Heron_HTTPParser_span_str(buf, hp->path);
  /* absolute-form with an empty path: "*" for OPTIONS (RFC 9112 §3.2.4), else "/" */
  if (hp->method.len == 7 && memcmp(buf + hp->method.off, "OPTIONS", 7) == 0)
    return rb_str_dup(v_asterisk);
  return rb_str_dup(v_slash);
}

static void Heron_HTTPParser_fill_request_line(Heron_HTTPParser *parser, VALUE env, const char *buf)
{
  const heron_http_parser *hp = &parser->head;
  rb_hash_aset(env, k_REQUEST_METHOD, Heron_HTTPParser_method_value(buf, hp->method));
  rb_hash_aset(env, k_REQUEST_URI, Heron_HTTPParser_span_str(buf, hp->target));
  rb_hash_aset(env, k_PATH_INFO, Heron_HTTPParser_path_value(hp, buf));
  rb_hash_aset(env, k_QUERY_STRING, hp->has_query ? Heron_HTTPParser_span_str(buf, hp->query) : rb_str_new(NULL, 0));
  rb_hash_aset(env, k_SERVER_PROTOCOL, hp->http_minor ? v_HTTP_1_1 : v_HTTP_1_0);
  if (hp->target_form == HERON_TARGET_ABSOLUTE)
    rb_hash_aset(env, k_HTTP_HOST, Heron_HTTPParser_span_str(buf, hp->authority));
}

/* Repeated fields are combined into one list value (RFC 9110 §5.3); Cookie
 * uses "; " (RFC 6265 §5.4). */
static void Heron_HTTPParser_add_field(VALUE env, VALUE key, const char *buf, const heron_http_field *f)
{
  VALUE old = rb_hash_lookup2(env, key, Qundef);
  if (old == Qundef || !RB_TYPE_P(old, T_STRING)) {
    rb_hash_aset(env, key, Heron_HTTPParser_span_str(buf, f->value));
    return;
  }
  if (OBJ_FROZEN(old)) {
    old = rb_str_dup(old);
    rb_hash_aset(env, key, old);
  }
  if (key == k_HTTP_COOKIE) rb_str_cat(old, "; ", 2);
  else rb_str_cat(old, ", ", 2);
  rb_str_cat(old, buf + f->value.off, (long)f->value.len);
}

/* Whether an earlier field of this head has the same name, so its key may be in the env
 * already: only then does a field pay the Hash lookup that joins repeated values. The env holds
 * no field before the head's own (the template and the request line give no HTTP_* key but an
 * absolute-form target's Host, whose fields are skipped), and two names give one key exactly
 * when they are equal but for case (names with "_" are dropped). Comparing the names in the
 * buffer needs no memory (a list of the keys seen, 264 bytes on the C stack, left an idle
 * fiber's stack holding its last env for the GC's conservative scan; in the parser, it grew
 * every parser). */
static int Heron_HTTPParser_repeated(const heron_http_parser *hp, const char *buf, size_t i)
{
  const heron_http_field *f = &hp->fields[i];
  size_t j;
  for (j = 0; j < i; j++) {
    const heron_http_field *g = &hp->fields[j];
    if (g->name.len == f->name.len && strncasecmp(buf + g->name.off, buf + f->name.off, f->name.len) == 0) return 1;
  }
  return 0;
}

static void Heron_HTTPParser_fill_fields(Heron_HTTPParser *parser, VALUE env, const char *buf)
{
  const heron_http_parser *hp = &parser->head;
  size_t i;
  for (i = 0; i < hp->nfields; i++) {
    const heron_http_field *f = &hp->fields[i];
    const char *name = buf + f->name.off;
    VALUE key;
    /* Names with "_" are dropped: in the env "-" and "_" both become "_", so
     * "X_Forwarded_For" would otherwise pass for "X-Forwarded-For" behind a
     * proxy that only filters the dashed spelling (header spoofing). */
    if (memchr(name, '_', f->name.len)) continue;
    key = Heron_HTTPParser_field_key(name, f->name.len);
    /* absolute-form: the target's authority wins over Host (RFC 9112 §3.2.2) */
    if (key == k_HTTP_HOST && hp->target_form == HERON_TARGET_ABSOLUTE) continue;
    if (!Heron_HTTPParser_repeated(hp, buf, i)) rb_hash_aset(env, key, Heron_HTTPParser_span_str(buf, f->value));
    else Heron_HTTPParser_add_field(env, key, buf, f);
  }
}

/*
 * call-seq: parse(env, buf) -> nil or Integer
 *
 * env:: the Rack env Hash to fill (only written once the head is complete)
 * buf:: everything received so far for this request; call again with a longer
 *       buf (same prefix) while the result is nil. Parsing resumes where the
 *       previous call stopped: no byte is scanned twice.
 *
 * Returns nil while the head is incomplete, else the byte length of the head
 * (request line, fields and the empty line); bytes after it (body, pipelined
 * requests) are not looked at. Once complete, further calls return the same
 * length without touching env. Raises a Heron::HTTPParser::Error subclass as
 * soon as the input is known to be bad.
 */
static VALUE Heron_HTTPParser_parse(VALUE self, VALUE env, VALUE buf)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  heron_http_parser *hp = &parser->head;
  int result;
  Check_Type(env, T_HASH);
  StringValue(buf);
  if (parser->env_filled) return SIZET2NUM(hp->head_length);
  if ((size_t)RSTRING_LEN(buf) < hp->nread)
    rb_raise(rb_eArgError, "buf is shorter than what was already parsed");
  result = heron_http_parser_execute(hp, RSTRING_PTR(buf), (size_t)RSTRING_LEN(buf));
  if (result == HERON_HTTP_ERROR) Heron_HTTPParser_raise(hp->error_status, hp->error);
  if (result == HERON_HTTP_NEED_MORE) return Qnil;
  Heron_HTTPParser_fill_request_line(parser, env, RSTRING_PTR(buf));
  Heron_HTTPParser_fill_fields(parser, env, RSTRING_PTR(buf));
  RB_GC_GUARD(buf);
  parser->env_filled = 1;
  return SIZET2NUM(hp->head_length);
}

/* call-seq: content_length -> Integer or nil
 * The Content-Length of the parsed head, nil when absent or not parsed yet. */
static VALUE Heron_HTTPParser_content_length(VALUE self)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  if (!parser->env_filled || parser->head.content_length < 0) return Qnil;
  return LL2NUM(parser->head.content_length);
}

/* call-seq: chunked? -> true or false
 * True when the body uses the chunked transfer coding (read it with #filter_body). */
static VALUE Heron_HTTPParser_chunked_p(VALUE self)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  return parser->env_filled && parser->head.chunked ? Qtrue : Qfalse;
}

/* call-seq: keepalive? -> true or false
 * HTTP/1.1: true unless "Connection: close". HTTP/1.0: true only with
 * "Connection: keep-alive" (and no "close"). False before the head is complete. */
static VALUE Heron_HTTPParser_keepalive_p(VALUE self)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  return parser->env_filled && parser->head.keepalive ? Qtrue : Qfalse;
}

/* call-seq: http_minor -> Integer or nil
 * 0 for HTTP/1.0, 1 for HTTP/1.1; nil before the head is complete. */
static VALUE Heron_HTTPParser_http_minor(VALUE self)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  return parser->env_filled ? INT2FIX(parser->head.http_minor) : Qnil;
}

/* ---- chunked body ---------------------------------------------------------- */

static void Heron_HTTPParser_append(void *dst, const char *data, size_t len)
{
  rb_str_cat(*(VALUE *)dst, data, (long)len);
}

/*
 * call-seq: filter_body(dst, buf) -> true or false
 *
 * dst:: String the decoded body data is appended to
 * buf:: String of received body bytes; consumed from the front in place
 *
 * Decodes the chunked body incrementally: any split of the input across calls
 * gives the same result. Returns true once the last chunk and the trailer
 * section (parsed, bounded like the header section, discarded) are consumed;
 * buf then holds only what follows the body (e.g. a pipelined request).
 * Returns false when more input is needed (buf is then empty). Raises a
 * Heron::HTTPParser::Error subclass on malformed chunked framing.
 */
/* Removes the first n bytes of buf in place, keeping its memory: the connection's read buffer is
 * then not freed and reallocated for every piece of a streamed chunked body. What stays is a
 * partial chunk line or the next pipelined request, so the move is short. */
static void Heron_HTTPParser_drop_front(VALUE buf, size_t n)
{
  long rest = RSTRING_LEN(buf) - (long)n;
  if (rest > 0) memmove(RSTRING_PTR(buf), RSTRING_PTR(buf) + n, (size_t)rest);
  rb_str_set_len(buf, rest);
}

static VALUE Heron_HTTPParser_filter_body(VALUE self, VALUE dst, VALUE buf)
{
  Heron_HTTPParser *parser = Heron_HTTPParser_get(self);
  size_t consumed = 0;
  int result;
  StringValue(dst);
  StringValue(buf);
  if (dst == buf) rb_raise(rb_eArgError, "dst and buf must be different Strings");
  rb_str_modify(dst);
  rb_str_modify(buf);
  result = heron_chunked_decoder_execute(&parser->chunked, RSTRING_PTR(buf),
                                         (size_t)RSTRING_LEN(buf), &consumed,
                                         Heron_HTTPParser_append, &dst);
  if (consumed > 0) Heron_HTTPParser_drop_front(buf, consumed);
  if (result == HERON_HTTP_ERROR)
    Heron_HTTPParser_raise(parser->chunked.error_status, parser->chunked.error);
  return result == HERON_HTTP_DONE ? Qtrue : Qfalse;
}

/* ---- Init ------------------------------------------------------------------ */

static VALUE Heron_HTTPParser_define_error(const char *name, VALUE super, int status)
{
  VALUE klass = rb_define_class_under(cHeron_HTTPParser, name, super);
  rb_define_const(klass, "STATUS", INT2FIX(status));
  return klass;
}

static void Heron_HTTPParser_init_errors(void)
{
  id_STATUS = rb_intern("STATUS");
  eHeron_HTTPParser_Error = Heron_HTTPParser_define_error("Error", rb_eStandardError, 400);
  rb_define_method(eHeron_HTTPParser_Error, "status", Heron_HTTPParser_Error_status, 0);
  eHeron_HTTPParser_BadRequest = Heron_HTTPParser_define_error("BadRequest", eHeron_HTTPParser_Error, 400);
  eHeron_HTTPParser_URITooLong = Heron_HTTPParser_define_error("URITooLong", eHeron_HTTPParser_Error, 414);
  eHeron_HTTPParser_HeaderFieldsTooLarge =
      Heron_HTTPParser_define_error("HeaderFieldsTooLarge", eHeron_HTTPParser_Error, 431);
  eHeron_HTTPParser_NotImplemented =
      Heron_HTTPParser_define_error("NotImplemented", eHeron_HTTPParser_Error, 501);
  eHeron_HTTPParser_VersionNotSupported =
      Heron_HTTPParser_define_error("VersionNotSupported", eHeron_HTTPParser_Error, 505);
}

void Init_Heron_HTTPParser(VALUE mHeron)
{
  cHeron_HTTPParser = rb_define_class_under(mHeron, "HTTPParser", rb_cObject);
  rb_define_alloc_func(cHeron_HTTPParser, Heron_HTTPParser_alloc);
  rb_define_method(cHeron_HTTPParser, "initialize", Heron_HTTPParser_initialize, -1);
  rb_define_method(cHeron_HTTPParser, "parse", Heron_HTTPParser_parse, 2);
  rb_define_method(cHeron_HTTPParser, "content_length", Heron_HTTPParser_content_length, 0);
  rb_define_method(cHeron_HTTPParser, "chunked?", Heron_HTTPParser_chunked_p, 0);
  rb_define_method(cHeron_HTTPParser, "keepalive?", Heron_HTTPParser_keepalive_p, 0);
  rb_define_method(cHeron_HTTPParser, "http_minor", Heron_HTTPParser_http_minor, 0);
  rb_define_method(cHeron_HTTPParser, "filter_body", Heron_HTTPParser_filter_body, 2);
  rb_define_method(cHeron_HTTPParser, "reset", Heron_HTTPParser_reset, 0);
  Heron_HTTPParser_init_errors();
  Heron_HTTPParser_init_strings();
}
