/*
 * Heron::Response::Head.assemble(status_line, headers, ...): writes a Rack 3 headers Hash into a
 * response head, one "name: value\r\n" line per value, validating as it goes. Every response
 * goes through it, once per header; in Ruby (a regexp for the name, two scans of the value, four appends)
 * it cost about half a microsecond per header. assemble builds the whole head around the
 * fields, Head.fields gives the same fields as pairs (HTTP/2), and Head.append_parts and Head.bytesize_of handle an Array body, so a small response is made
 * in one String without a Ruby call per line or per part (lib/heron/response/head.rb).
 */
#include "heron_response_head.h"
#include <ruby.h>
#include <ruby/encoding.h>
#include <string.h>
#include "heron_asan.h"

static VALUE mHeron_Response, cHeron_Response_Head;
static ID id_Invalid;

/* RFC 9110 tchar. Names of any case are valid; Heron::Response::Head.normalize lower-cases them
 * before they get here, so a head has one spelling per name. */
static unsigned char Heron_Response_Head_name_chars[256];

static void Heron_Response_Head_init_name_chars(void)
{
  const char *others = "!#$%&'*+-.^_`|~";
  int c;
  for (c = '0'; c <= '9'; c++) Heron_Response_Head_name_chars[c] = 1;
  for (c = 'a'; c <= 'z'; c++) Heron_Response_Head_name_chars[c] = 1;
  for (c = 'A'; c <= 'Z'; c++) Heron_Response_Head_name_chars[c] = 1;
  for (; *others; others++) Heron_Response_Head_name_chars[(unsigned char)*others] = 1;
}

static void Heron_Response_Head_invalid(const char *format, VALUE name)
{
  VALUE error = rb_const_get(mHeron_Response, id_Invalid);
  rb_raise(error, format, RSTRING_PTR(rb_inspect(name)));
}

/* Fields the server writes itself (framing, connection management) or that are not fields:
 * Rack reserves names starting with "rack." for talking to the server (rack.hijack, ...). */
static int Heron_Response_Head_skipped(const char *name, long len)
{
  if (len >= 5 && memcmp(name, "rack.", 5) == 0) return 1;
  switch (len) {
  case 10: return memcmp(name, "connection", 10) == 0;
  case 17: return memcmp(name, "transfer-encoding", 17) == 0;
  default: return 0;
  }
}

static void Heron_Response_Head_check_name(VALUE name)
{
  const unsigned char *p;
  long i, len;
  if (!RB_TYPE_P(name, T_STRING) || RSTRING_LEN(name) == 0) Heron_Response_Head_invalid("invalid header name %s", name);
  p = (const unsigned char *)RSTRING_PTR(name);
  len = RSTRING_LEN(name);
  for (i = 0; i < len; i++) {
    if (!Heron_Response_Head_name_chars[p[i]]) Heron_Response_Head_invalid("invalid header name %s", name);
  }
}

/* The head being written: its String, and where its bytes end, set as the String's length once
 * at the end (Heron_Response_Head_done) rather than after every line (rb_str_set_len looks up
 * the encoding each time). */
typedef struct {
  VALUE str;
  long len;
  long capa;
  VALUE pairs; /* Head.fields: an Array of [name, value] receives the fields instead (str unused) */
} Heron_Response_Head_buffer;

/* Starts writing at the end of `head`, made modifiable once (not frozen, not shared, code range
 * cleared). */
static void Heron_Response_Head_begin(Heron_Response_Head_buffer *buffer, VALUE head)
{
  Check_Type(head, T_STRING); /* not StringValue: taking head's address would put it in ASan's stack redzones */
  rb_str_modify(head);
  buffer->str = head;
  buffer->len = RSTRING_LEN(head);
  buffer->capa = (long)rb_str_capacity(head);
  buffer->pairs = Qnil;
}

/* Makes room for `need` more bytes and returns where they go; the caller writes them and adds
 * `need` to buffer->len. rb_str_modify_expand reallocates to exactly the size asked: it is
 * called only when the bytes do not fit, and then to at least double the buffer. */
static char *Heron_Response_Head_reserve(Heron_Response_Head_buffer *buffer, long need)
{
  if (buffer->capa - buffer->len < need) {
    rb_str_set_len(buffer->str, buffer->len);
    rb_str_modify_expand(buffer->str, need + buffer->len);
    buffer->capa = (long)rb_str_capacity(buffer->str);
  }
  return RSTRING_PTR(buffer->str) + buffer->len;
}

static VALUE Heron_Response_Head_done(Heron_Response_Head_buffer *buffer)
{
  rb_str_set_len(buffer->str, buffer->len);
  return buffer->str;
}

static void Heron_Response_Head_append_raw(Heron_Response_Head_buffer *buffer, const char *bytes, long len)
{
  memcpy(Heron_Response_Head_reserve(buffer, len), bytes, (size_t)len);
  buffer->len += len;
}

/* Appends "name: value\r\n" with one capacity check (rb_str_cat would check the encodings four
 * times; head is binary). */
static void Heron_Response_Head_append_line(Heron_Response_Head_buffer *buffer, VALUE name, const char *value, long value_len)
{
  long name_len = RSTRING_LEN(name), need = name_len + value_len + 4;
  char *out = Heron_Response_Head_reserve(buffer, need);
  memcpy(out, RSTRING_PTR(name), (size_t)name_len);
  out += name_len;
  *out++ = ':';
  *out++ = ' ';
  memcpy(out, value, (size_t)value_len);
  out += value_len;
  *out++ = '\r';
  *out = '\n';
  buffer->len += need;
}

/* Emits one field: a "name: value\r\n" line in the head, or a [name, value] pair when the
 * buffer collects HTTP/2's field list (Head.fields). */
static void Heron_Response_Head_emit(Heron_Response_Head_buffer *buffer, VALUE name, const char *value, long value_len)
{
  if (!NIL_P(buffer->pairs)) rb_ary_push(buffer->pairs, rb_assoc_new(name, rb_str_new(value, value_len)));
  else Heron_Response_Head_append_line(buffer, name, value, value_len);
}

/* One line per value; a value with LF in it is several values joined the Rack 2 way
 * ("a=1\nb=2" for two Set-Cookie fields), so each part gets its own line. CR and NUL are
 * refused: they are what splits or smuggles a response. */
static void Heron_Response_Head_add_line(Heron_Response_Head_buffer *buffer, VALUE name, VALUE value)
{
  const char *p, *end, *newline;
  long len;
  value = rb_obj_as_string(value);
  p = RSTRING_PTR(value);
  len = RSTRING_LEN(value);
  if (memchr(p, '\r', (size_t)len)) Heron_Response_Head_invalid("header %s contains a carriage return", name);
  if (memchr(p, '\0', (size_t)len)) Heron_Response_Head_invalid("header %s contains a NUL byte", name);
  end = p + len;
  while ((newline = memchr(p, '\n', (size_t)(end - p)))) {
    Heron_Response_Head_emit(buffer, name, p, newline - p);
    p = newline + 1;
  }
  Heron_Response_Head_emit(buffer, name, p, end - p);
}

static int Heron_Response_Head_add_field(VALUE name, VALUE value, VALUE arg)
{
  Heron_Response_Head_buffer *buffer = (Heron_Response_Head_buffer *)arg;
  long i;
  if (RB_TYPE_P(name, T_STRING) && Heron_Response_Head_skipped(RSTRING_PTR(name), RSTRING_LEN(name))) return ST_CONTINUE;
  Heron_Response_Head_check_name(name);
  if (!RB_TYPE_P(value, T_ARRAY)) {
    Heron_Response_Head_add_line(buffer, name, value);
    return ST_CONTINUE;
  }
  for (i = 0; i < RARRAY_LEN(value); i++) Heron_Response_Head_add_line(buffer, name, RARRAY_AREF(value, i));
  return ST_CONTINUE;
}

static void Heron_Response_Head_add_fields(Heron_Response_Head_buffer *buffer, VALUE headers)
{
  if (!RB_TYPE_P(headers, T_HASH)) headers = rb_convert_type(headers, T_HASH, "Hash", "to_h");
  rb_hash_foreach(headers, Heron_Response_Head_add_field, (VALUE)buffer);
}

/* Appends a String's bytes as they are (head is binary: no encoding check or conversion). */
static void Heron_Response_Head_append_bytes(Heron_Response_Head_buffer *buffer, VALUE part)
{
  Check_Type(part, T_STRING);
  Heron_Response_Head_append_raw(buffer, RSTRING_PTR(part), RSTRING_LEN(part));
}

static int Heron_Response_Head_has_upper(VALUE name)
{
  const char *p = RSTRING_PTR(name);
  long i, len = RSTRING_LEN(name);
  for (i = 0; i < len; i++) {
    if (p[i] >= 'A' && p[i] <= 'Z') return 1;
  }
  return 0;
}

static int Heron_Response_Head_find_upper(VALUE name, VALUE value, VALUE found)
{
  if (!RB_TYPE_P(name, T_STRING) || !Heron_Response_Head_has_upper(name)) return ST_CONTINUE;
  *(int *)found = 1;
  return ST_STOP;
}

static VALUE Heron_Response_Head_downcase(VALUE name)
{
  VALUE lower = rb_enc_str_new(RSTRING_PTR(name), RSTRING_LEN(name), rb_enc_get(name));
  char *p = RSTRING_PTR(lower);
  long i, len = RSTRING_LEN(lower);
  for (i = 0; i < len; i++) {
    if (p[i] >= 'A' && p[i] <= 'Z') p[i] = (char)(p[i] + ('a' - 'A'));
  }
  return rb_str_freeze(lower);
}

static VALUE Heron_Response_Head_values(VALUE value)
{
  return RB_TYPE_P(value, T_ARRAY) ? rb_ary_dup(value) : rb_ary_new_from_args(1, value);
}

/* Adds one field to the lower-cased Hash; names that differ only in case are merged into an
 * Array of values, except content-length, where two spellings are two lengths. */
static int Heron_Response_Head_add_lower(VALUE name, VALUE value, VALUE lower)
{
  VALUE key = RB_TYPE_P(name, T_STRING) ? Heron_Response_Head_downcase(name) : name;
  VALUE seen = rb_hash_lookup2(lower, key, Qundef);
  if (seen == Qundef) {
    rb_hash_aset(lower, key, value);
    return ST_CONTINUE;
  }
  if (RB_TYPE_P(key, T_STRING) && RSTRING_LEN(key) == 14 && memcmp(RSTRING_PTR(key), "content-length", 14) == 0) {
    Heron_Response_Head_invalid("header %s is given twice, in different cases", name);
  }
  rb_hash_aset(lower, key, rb_ary_concat(Heron_Response_Head_values(seen), Heron_Response_Head_values(value)));
  return ST_CONTINUE;
}

/*
 * call-seq: Heron::Response::Head.normalize(headers) -> Hash
 *
 * Returns headers itself when every String name is lower-case (what Rack 3 asks for, and the
 * cost is one scan), else a new Hash with lower-cased names, so the writer's framing decisions
 * (content-length, connection, ...) see the app's fields whatever their case and each name is
 * written once, lower-cased. Anything that is not a Hash is converted with #to_h first.
 */
static VALUE Heron_Response_Head_normalize(VALUE self, VALUE headers)
{
  int found = 0;
  VALUE lower;
  if (!RB_TYPE_P(headers, T_HASH)) headers = rb_convert_type(headers, T_HASH, "Hash", "to_h");
  rb_hash_foreach(headers, Heron_Response_Head_find_upper, (VALUE)&found);
  if (!found) return headers;
  lower = rb_hash_new();
  rb_hash_foreach(headers, Heron_Response_Head_add_lower, lower);
  return lower;
}

/*
 * call-seq: Heron::Response::Head.fields(headers) -> Array
 *
 * The fields assemble would write, as [name, value] pairs: one per value, the same
 * skipped names and the same checks (Heron::Response::Invalid naming the header). HTTP/2
 * sends these as its header list, so both protocols refuse and split values by one rule.
 */
HERON_RAISES_THROUGH static VALUE Heron_Response_Head_fields(VALUE self, VALUE headers)
{
  Heron_Response_Head_buffer buffer = {Qnil, 0, 0, Qnil};
  buffer.pairs = rb_ary_new();
  Heron_Response_Head_add_fields(&buffer, headers);
  return buffer.pairs;
}

/* A new binary String holding status_line with room for a typical head (512 bytes), so the
 * header lines appended to it do not reallocate it. */
static VALUE Heron_Response_Head_new_head(VALUE status_line)
{
  VALUE head;
  StringValue(status_line);
  head = rb_str_buf_new(512);
  rb_enc_associate_index(head, rb_ascii8bit_encindex());
  rb_str_buf_cat(head, RSTRING_PTR(status_line), RSTRING_LEN(status_line));
  return head;
}

/* After the status line: the app's fields, the server's lines and the blank line. */
HERON_RAISES_THROUGH static VALUE Heron_Response_Head_finish(Heron_Response_Head_buffer *buffer, VALUE headers, VALUE extra,
                                        VALUE date, VALUE connection)
{
  Heron_Response_Head_add_fields(buffer, headers);
  Heron_Response_Head_append_bytes(buffer, extra);
  Heron_Response_Head_append_bytes(buffer, date);
  Heron_Response_Head_append_bytes(buffer, connection);
  Heron_Response_Head_append_raw(buffer, "\r\n", 2);
  return Heron_Response_Head_done(buffer);
}

/*
 * call-seq: Heron::Response::Head.assemble(status_line, headers, extra, date, connection) -> String
 *
 * The whole head in one new binary String with room for a typical head (512 bytes): the status
 * line, the app's fields, then extra, date and connection (the lines the server adds, each a
 * String, "" for none) and the blank line. headers: the app's (see normalize), a Hash of names
 * to a String (or anything with #to_s) or an Array of them, one line each; a String with LF in
 * it is one line per part, as Rack 2 joined them; anything else answering #to_h is converted
 * first. `connection`, `transfer-encoding` and names starting with `rack.` are skipped: the
 * server writes its own framing. Raises Heron::Response::Invalid, naming the header, for a name
 * that is not a token, or a value holding CR or NUL. In Ruby this was a new String, the fields
 * appended, then four `String#<<`, each checking encodings (about 3,000 instructions a response).
 */
HERON_RAISES_THROUGH static VALUE Heron_Response_Head_assemble(VALUE self, VALUE status_line, VALUE headers, VALUE extra, VALUE date,
                                          VALUE connection)
{
  Heron_Response_Head_buffer buffer;
  Heron_Response_Head_begin(&buffer, Heron_Response_Head_new_head(status_line));
  return Heron_Response_Head_finish(&buffer, headers, extra, date, connection);
}

/*
 * call-seq: Heron::Response::Head.assemble_into(buffer, status_line, headers, extra, date, connection) -> buffer
 *
 * As assemble, into `buffer` (a binary String, emptied first, its memory kept) instead of a new
 * String: Response::Writer reuses one buffer per reactor thread for its heads (see
 * Server::Context#head_buffer), so a response costs neither a String nor a malloc for its head.
 */
HERON_RAISES_THROUGH static VALUE Heron_Response_Head_assemble_into(VALUE self, VALUE head, VALUE status_line, VALUE headers,
                                               VALUE extra, VALUE date, VALUE connection)
{
  Heron_Response_Head_buffer buffer;
  Heron_Response_Head_begin(&buffer, head);
  buffer.len = 0;
  Heron_Response_Head_append_bytes(&buffer, status_line);
  return Heron_Response_Head_finish(&buffer, headers, extra, date, connection);
}

/*
 * call-seq: Heron::Response::Head.append_parts(head, parts) -> head
 *
 * Appends each String of parts (an Array body) to head as bytes, whatever their encoding
 * (Response::Bytes.append for a whole Array, without a block call per part). Raises TypeError
 * for a part that is not a String.
 */
HERON_RAISES_THROUGH static VALUE Heron_Response_Head_append_parts(VALUE self, VALUE head, VALUE parts)
{
  Heron_Response_Head_buffer buffer;
  long i;
  Check_Type(parts, T_ARRAY);
  Heron_Response_Head_begin(&buffer, head);
  for (i = 0; i < RARRAY_LEN(parts); i++) Heron_Response_Head_append_bytes(&buffer, RARRAY_AREF(parts, i));
  return Heron_Response_Head_done(&buffer);
}

/*
 * call-seq: Heron::Response::Head.bytesize_of(parts) -> Integer
 *
 * The bytes of all of parts (an Array body of Strings): `parts.sum(&:bytesize)` without a block
 * call per part. Raises TypeError for a part that is not a String.
 */
static VALUE Heron_Response_Head_bytesize_of(VALUE self, VALUE parts)
{
  long i, total = 0;
  Check_Type(parts, T_ARRAY);
  for (i = 0; i < RARRAY_LEN(parts); i++) {
    VALUE part = RARRAY_AREF(parts, i);
    Check_Type(part, T_STRING);
    total += RSTRING_LEN(part);
  }
  return LONG2NUM(total);
}

void Init_Heron_Response_Head(VALUE heron)
{
  mHeron_Response = rb_define_module_under(heron, "Response");
  cHeron_Response_Head = rb_define_class_under(mHeron_Response, "Head", rb_cObject);
  id_Invalid = rb_intern("Invalid");
  Heron_Response_Head_init_name_chars();
  rb_define_singleton_method(cHeron_Response_Head, "fields", Heron_Response_Head_fields, 1);
  rb_define_singleton_method(cHeron_Response_Head, "normalize", Heron_Response_Head_normalize, 1);
  rb_define_singleton_method(cHeron_Response_Head, "assemble", Heron_Response_Head_assemble, 5);
  rb_define_singleton_method(cHeron_Response_Head, "assemble_into", Heron_Response_Head_assemble_into, 6);
  rb_define_singleton_method(cHeron_Response_Head, "append_parts", Heron_Response_Head_append_parts, 2);
  rb_define_singleton_method(cHeron_Response_Head, "bytesize_of", Heron_Response_Head_bytesize_of, 1);
}
