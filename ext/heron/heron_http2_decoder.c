/*
 * Heron::HTTP2::Decoder: one HTTP/2 connection's HPACK decoder (RFC 7541, hpack_decoder.c) for
 * Ruby. #decode gives a block's fields as frozen [name, value] pairs; #request reads a request's
 * block straight into its Rack env (Heron::HTTP2::RequestFields' rules), without a String or an
 * Array per field in between.
 *
 * The objects made for a table entry (its pair, its name's env key, its value) are kept in the
 * entry and handed out again while it stays in the table: a client's repeated fields (indexed,
 * as every request after a connection's first sends most of them) cost a lookup. A block of
 * one-byte indexed fields only, the same bytes as the last one, gives #decode the same frozen
 * Array again, and #request a copy of the env it gave: such a block cannot change the table.
 *
 * Errors: a malformed block raises Protocol::HPACK::CompressionError (the connection ends with
 * COMPRESSION_ERROR), a header list past the limit given (max_header_bytes, counted as RFC 9113
 * §6.5.2 does, or past MAX_FIELDS fields) Protocol::HTTP2::ProtocolError with ENHANCE_YOUR_CALM,
 * looked up when raised (Ruby classes of protocol-hpack and protocol-http2).
 */
#include "heron_http2_decoder.h"
#include <ruby/encoding.h>
#include <string.h>
#include "hpack_decoder.h"
#include "heron_http2_request_fields.h"
#include "heron_http2_error.h"
#include "heron_asan.h"

#define MAX_FIELDS 200
enum { SLOT_PAIR, SLOT_KEY, SLOT_VALUE }; /* an entry's user slots; 0: not made yet */
enum { TOO_LARGE = HERON_HPACK_ERRORS };

typedef struct Heron_HTTP2_Decoder {
  heron_hpack_decoder hpack;
  VALUE last_block, last_fields; /* #decode's last block of indexed fields, and its fields */
  VALUE last_request, last_env;  /* #request's, and the env it gave (frozen) */
} Heron_HTTP2_Decoder;

/* The static table's objects: [name, value] pairs (UTF-8, as protocol-hpack tags strings),
 * names' env keys (0: a name that is refused, computed each time to fail), binary values. */
static VALUE static_pairs[HERON_HPACK_STATIC_COUNT], static_keys[HERON_HPACK_STATIC_COUNT],
    static_values[HERON_HPACK_STATIC_COUNT];

static void Heron_HTTP2_Decoder_mark(void *ptr)
{
  Heron_HTTP2_Decoder *d = ptr;
  size_t i;
  int s;
  rb_gc_mark(d->last_block);
  rb_gc_mark(d->last_fields);
  rb_gc_mark(d->last_request);
  rb_gc_mark(d->last_env);
  for (i = 0; i < d->hpack.count; i++) {
    heron_hpack_entry *e = heron_hpack_entry_at(&d->hpack, i);
    for (s = 0; s < HERON_HPACK_USER_SLOTS; s++)
      if (e->user[s]) rb_gc_mark((VALUE)e->user[s]);
  }
}

static void Heron_HTTP2_Decoder_free(void *ptr)
{
  Heron_HTTP2_Decoder *d = ptr;
  heron_hpack_decoder_free(&d->hpack);
  xfree(d);
}

static size_t Heron_HTTP2_Decoder_memsize(const void *ptr)
{
  const Heron_HTTP2_Decoder *d = ptr;
  return sizeof(*d) + d->hpack.size + d->hpack.ring_cap * sizeof(void *) + d->hpack.scratch_cap;
}

/* Write-barrier protected: every object stored in it goes through RB_OBJ_WRITE. */
static const rb_data_type_t Heron_HTTP2_Decoder_type = {
  "Heron::HTTP2::Decoder",
  {Heron_HTTP2_Decoder_mark, Heron_HTTP2_Decoder_free, Heron_HTTP2_Decoder_memsize},
  NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED
};

static VALUE Heron_HTTP2_Decoder_alloc(VALUE klass)
{
  Heron_HTTP2_Decoder *d;
  VALUE self = TypedData_Make_Struct(klass, Heron_HTTP2_Decoder, &Heron_HTTP2_Decoder_type, d);
  heron_hpack_decoder_init(&d->hpack, 4096);
  d->last_block = d->last_fields = d->last_request = d->last_env = Qnil;
  return self;
}

static Heron_HTTP2_Decoder *Heron_HTTP2_Decoder_get(VALUE self)
{
  Heron_HTTP2_Decoder *d;
  TypedData_Get_Struct(self, Heron_HTTP2_Decoder, &Heron_HTTP2_Decoder_type, d);
  return d;
}

/*
 * call-seq: new(table_size = 4096)
 *
 * table_size:: the dynamic table's size at first (the protocol's default).
 */
static VALUE Heron_HTTP2_Decoder_initialize(int argc, VALUE *argv, VALUE self)
{
  Heron_HTTP2_Decoder *d = Heron_HTTP2_Decoder_get(self);
  VALUE size;
  rb_scan_args(argc, argv, "01", &size);
  if (!NIL_P(size)) d->hpack.max = NUM2SIZET(size);
  return self;
}

/* What one call's callback needs. */
typedef struct Heron_HTTP2_Decoder_call {
  VALUE self;
  size_t list_size, list_limit; /* list_limit 0: none */
  long count;
  VALUE fields;                 /* #decode: the Array filled */
  Heron_HTTP2_RequestFields *request; /* #request: the env filled */
} Heron_HTTP2_Decoder_call;

static VALUE Heron_HTTP2_Decoder_utf8(const char *s, size_t len)
{
  return rb_obj_freeze(rb_enc_str_new(s, (long)len, rb_utf8_encoding()));
}

static VALUE Heron_HTTP2_Decoder_pair(VALUE name, VALUE value)
{
  return rb_obj_freeze(rb_assoc_new(name, value));
}

/* Keeps obj in an entry's slot (under the write barrier). */
static VALUE Heron_HTTP2_Decoder_keep(Heron_HTTP2_Decoder_call *c, heron_hpack_entry *e, int slot, VALUE obj)
{
  RB_OBJ_WRITE(c->self, (VALUE *)&e->user[slot], obj);
  return obj;
}

/* #decode's field: the table's pair when indexed, else a new one (kept by the entry it adds). */
static void Heron_HTTP2_Decoder_emit_pair(Heron_HTTP2_Decoder_call *c, const heron_hpack_field *f)
{
  VALUE name, pair;
  if (f->indexed && f->static_index) {
    pair = static_pairs[f->static_index - 1];
  } else if (f->indexed) {
    pair = (VALUE)f->entry->user[SLOT_PAIR];
    if (!pair) pair = Heron_HTTP2_Decoder_keep(c, f->entry, SLOT_PAIR, Heron_HTTP2_Decoder_pair(
        Heron_HTTP2_Decoder_utf8(f->name, f->name_len), Heron_HTTP2_Decoder_utf8(f->value, f->value_len)));
  } else {
    if (f->static_index) name = RARRAY_AREF(static_pairs[f->static_index - 1], 0);
    else if (f->entry && f->entry->user[SLOT_PAIR]) name = RARRAY_AREF((VALUE)f->entry->user[SLOT_PAIR], 0);
    else name = Heron_HTTP2_Decoder_utf8(f->name, f->name_len);
    pair = Heron_HTTP2_Decoder_pair(name, Heron_HTTP2_Decoder_utf8(f->value, f->value_len));
    if (f->added) Heron_HTTP2_Decoder_keep(c, f->added, SLOT_PAIR, pair);
  }
  rb_ary_push(c->fields, pair);
}

/* A regular field's env key: the static table's, or the one its entry keeps, else computed
 * (and kept by the entries that name it). Qundef for a pseudo-header. */
static VALUE Heron_HTTP2_Decoder_key(Heron_HTTP2_Decoder_call *c, const heron_hpack_field *f)
{
  VALUE key = 0;
  if (f->name_len > 0 && f->name[0] == ':') return Qundef;
  if (f->static_index) key = static_keys[f->static_index - 1];
  else if (f->entry) key = (VALUE)f->entry->user[SLOT_KEY];
  if (key) return key;
  key = Heron_HTTP2_RequestFields_key(c->request, f->name, f->name_len);
  if (key == Qfalse) return Qfalse;
  if (f->entry) Heron_HTTP2_Decoder_keep(c, f->entry, SLOT_KEY, key);
  if (f->added) Heron_HTTP2_Decoder_keep(c, f->added, SLOT_KEY, key);
  return key;
}

/* A field's value for the env (binary): the table's frozen one when indexed, else new. */
static VALUE Heron_HTTP2_Decoder_value(Heron_HTTP2_Decoder_call *c, const heron_hpack_field *f)
{
  VALUE value;
  if (f->indexed && f->static_index) return static_values[f->static_index - 1];
  if (f->indexed && f->entry->user[SLOT_VALUE]) return (VALUE)f->entry->user[SLOT_VALUE];
  value = rb_str_new(f->value, (long)f->value_len);
  if (f->indexed) return Heron_HTTP2_Decoder_keep(c, f->entry, SLOT_VALUE, rb_obj_freeze(value));
  if (f->added) return Heron_HTTP2_Decoder_keep(c, f->added, SLOT_VALUE, rb_obj_freeze(value));
  return value;
}

static void Heron_HTTP2_Decoder_emit_env(Heron_HTTP2_Decoder_call *c, const heron_hpack_field *f)
{
  VALUE key;
  if (!NIL_P(c->request->error)) return; /* the block is still decoded, for the table */
  key = Heron_HTTP2_Decoder_key(c, f);
  if (key == Qfalse) return;
  Heron_HTTP2_RequestFields_add(c->request, f->name, f->name_len, key, Heron_HTTP2_Decoder_value(c, f));
}

static int Heron_HTTP2_Decoder_emit(void *userdata, const heron_hpack_field *f)
{
  Heron_HTTP2_Decoder_call *c = userdata;
  c->list_size += f->name_len + f->value_len + HERON_HPACK_ENTRY_OVERHEAD;
  c->count++;
  if (c->list_limit && (c->list_size > c->list_limit || c->count > MAX_FIELDS)) return TOO_LARGE;
  if (c->request) Heron_HTTP2_Decoder_emit_env(c, f);
  else Heron_HTTP2_Decoder_emit_pair(c, f);
  return HERON_HPACK_OK;
}

static void Heron_HTTP2_Decoder_raise(int code, const Heron_HTTP2_Decoder_call *c)
{
  if (code != TOO_LARGE) rb_raise(rb_path2class("Protocol::HPACK::CompressionError"), "%s", heron_hpack_error_message(code));
  Heron_HTTP2_raise_protocol_error(rb_sprintf("header list of more than %zu bytes or %d fields", c->list_limit, MAX_FIELDS),
                                   HERON_HTTP2_ENHANCE_YOUR_CALM);
}

/* A block of one-byte indexed fields only (0x81..0xfe each): it leaves the table as it is. */
static int Heron_HTTP2_Decoder_plain(VALUE data)
{
  const unsigned char *p = (const unsigned char *)RSTRING_PTR(data);
  long i, n = RSTRING_LEN(data);
  for (i = 0; i < n; i++)
    if (p[i] <= 0x80 || p[i] == 0xff) return 0;
  return 1;
}

static size_t Heron_HTTP2_Decoder_limit(VALUE limit)
{
  return NIL_P(limit) ? 0 : NUM2SIZET(limit);
}

static void Heron_HTTP2_Decoder_run(Heron_HTTP2_Decoder *d, VALUE data, VALUE table_size_limit, Heron_HTTP2_Decoder_call *c)
{
  int r = heron_hpack_decode(&d->hpack, (const unsigned char *)RSTRING_PTR(data), (size_t)RSTRING_LEN(data),
                             NIL_P(table_size_limit) ? 4096 : NUM2SIZET(table_size_limit), Heron_HTTP2_Decoder_emit, c);
  if (r != HERON_HPACK_OK) Heron_HTTP2_Decoder_raise(r, c);
}

/*
 * call-seq: decode(data, table_size_limit = 4096, header_limit = nil) -> Array
 *
 * data:: a whole header block.
 * table_size_limit:: our SETTINGS_HEADER_TABLE_SIZE: the most a table size update may ask for.
 * header_limit:: the most bytes the header list may have (nil: no limit).
 *
 * Returns the fields, frozen [name, value] pairs of frozen UTF-8 Strings; the same frozen Array
 * again for a repeated block of indexed fields.
 */
static VALUE HERON_RAISES_THROUGH Heron_HTTP2_Decoder_decode(int argc, VALUE *argv, VALUE self)
{
  Heron_HTTP2_Decoder *d = Heron_HTTP2_Decoder_get(self);
  Heron_HTTP2_Decoder_call c;
  VALUE data, table_size_limit, header_limit;
  int plain;
  rb_scan_args(argc, argv, "12", &data, &table_size_limit, &header_limit);
  StringValue(data);
  plain = Heron_HTTP2_Decoder_plain(data);
  if (plain && !NIL_P(d->last_block) && rb_str_equal(data, d->last_block) == Qtrue) return d->last_fields;
  RB_OBJ_WRITE(self, &d->last_block, Qnil);
  RB_OBJ_WRITE(self, &d->last_request, Qnil); /* the table may change */
  memset(&c, 0, sizeof(c));
  c.self = self;
  c.list_limit = Heron_HTTP2_Decoder_limit(header_limit);
  c.fields = rb_ary_new();
  Heron_HTTP2_Decoder_run(d, data, table_size_limit, &c);
  if (!plain) return c.fields;
  /* a frozen copy (copy-on-write): a caller reusing its String cannot make another block match */
  RB_OBJ_WRITE(self, &d->last_block, rb_str_new_frozen(data));
  RB_OBJ_WRITE(self, &d->last_fields, rb_obj_freeze(c.fields));
  RB_GC_GUARD(data);
  return c.fields;
}

static VALUE k_PATH_INFO, k_QUERY_STRING;

typedef struct {
  VALUE template;
  int shared;
} Heron_HTTP2_Decoder_sharing;

/* rb_hash_foreach: stops at a String that is not frozen, but PATH_INFO, QUERY_STRING and the
 * template's own values (shared by every request already). */
static int Heron_HTTP2_Decoder_all_frozen_i(VALUE key, VALUE value, VALUE arg)
{
  Heron_HTTP2_Decoder_sharing *sharing = (Heron_HTTP2_Decoder_sharing *)arg;
  if (!RB_TYPE_P(value, T_STRING) || OBJ_FROZEN(value) || key == k_PATH_INFO || key == k_QUERY_STRING) return ST_CONTINUE;
  if (rb_hash_lookup2(sharing->template, key, Qundef) == value) return ST_CONTINUE;
  sharing->shared = 0;
  return ST_STOP;
}

/* A repeated request's env: a copy of the last one (a Hash copy keeps its keys' hashes: no key
 * is hashed again) with a PATH_INFO and QUERY_STRING of its own (the app's to change). */
static VALUE Heron_HTTP2_Decoder_replay(Heron_HTTP2_Decoder *d)
{
  VALUE env = rb_hash_dup(d->last_env);
  rb_hash_aset(env, k_PATH_INFO, rb_str_dup(rb_hash_aref(env, k_PATH_INFO)));
  rb_hash_aset(env, k_QUERY_STRING, rb_str_dup(rb_hash_aref(env, k_QUERY_STRING)));
  return env;
}

/* Keeps env for a block of indexed fields (it cannot change the table, so the same bytes give
 * the same env), when every String in it but PATH_INFO, QUERY_STRING and the template's is
 * frozen (shared by the requests that replay it; a joined cookie, for one, is not). */
static void Heron_HTTP2_Decoder_remember(VALUE self, Heron_HTTP2_Decoder *d, VALUE data, VALUE env, VALUE template)
{
  Heron_HTTP2_Decoder_sharing sharing = {template, 1};
  VALUE kept;
  rb_hash_foreach(env, Heron_HTTP2_Decoder_all_frozen_i, (VALUE)&sharing);
  if (!sharing.shared) return;
  kept = rb_hash_dup(env); /* with copies of this request's PATH_INFO and QUERY_STRING (the app's to change) */
  rb_hash_aset(kept, k_PATH_INFO, rb_obj_freeze(rb_str_dup(rb_hash_aref(env, k_PATH_INFO))));
  rb_hash_aset(kept, k_QUERY_STRING, rb_obj_freeze(rb_str_dup(rb_hash_aref(env, k_QUERY_STRING))));
  RB_OBJ_WRITE(self, &d->last_env, rb_obj_freeze(kept));
  RB_OBJ_WRITE(self, &d->last_request, rb_str_new_frozen(data));
}

/*
 * call-seq: request(data, table_size_limit, header_limit, template) -> env or exception
 *
 * Decodes a request's header block into a copy of template (RequestFields' rules: the request
 * line, HTTP_* keys). Returns the env, or the stream error the request gives
 * (EnvBuilder::Malformed or ::InvalidTarget, not raised: the whole block is decoded all the
 * same). A block of indexed fields only, the same bytes as the last one, gives a copy of the
 * last env, with a PATH_INFO and QUERY_STRING of its own.
 */
static VALUE HERON_RAISES_THROUGH Heron_HTTP2_Decoder_request(VALUE self, VALUE data, VALUE table_size_limit, VALUE header_limit, VALUE template)
{
  Heron_HTTP2_Decoder *d = Heron_HTTP2_Decoder_get(self);
  Heron_HTTP2_Decoder_call c;
  Heron_HTTP2_RequestFields request;
  VALUE error, env;
  int plain;
  StringValue(data);
  Check_Type(template, T_HASH);
  plain = Heron_HTTP2_Decoder_plain(data);
  if (plain && !NIL_P(d->last_request) && rb_str_equal(data, d->last_request) == Qtrue) return Heron_HTTP2_Decoder_replay(d);
  RB_OBJ_WRITE(self, &d->last_request, Qnil);
  if (!plain) RB_OBJ_WRITE(self, &d->last_block, Qnil); /* the table may change */
  memset(&c, 0, sizeof(c));
  c.self = self;
  c.list_limit = Heron_HTTP2_Decoder_limit(header_limit);
  c.request = &request;
  env = rb_hash_dup(template);
  Heron_HTTP2_RequestFields_start(&request, env);
  Heron_HTTP2_Decoder_run(d, data, table_size_limit, &c);
  error = Heron_HTTP2_RequestFields_finish(&request);
  if (!NIL_P(error)) return error;
  if (plain) Heron_HTTP2_Decoder_remember(self, d, data, env, template);
  RB_GC_GUARD(data);
  return env;
}

static VALUE Heron_HTTP2_Decoder_static_str(const char *s, size_t len, rb_encoding *enc)
{
  VALUE str = rb_enc_interned_str(s, (long)len, enc);
  rb_gc_register_mark_object(str);
  return str;
}

static void Heron_HTTP2_Decoder_init_static(void)
{
  Heron_HTTP2_RequestFields probe;
  size_t i;
  heron_hpack_init();
  k_PATH_INFO = Heron_HTTP2_Decoder_static_str("PATH_INFO", 9, rb_ascii8bit_encoding());
  k_QUERY_STRING = Heron_HTTP2_Decoder_static_str("QUERY_STRING", 12, rb_ascii8bit_encoding());
  Heron_HTTP2_RequestFields_start(&probe, Qnil);
  for (i = 0; i < HERON_HPACK_STATIC_COUNT; i++) {
    const heron_hpack_static_entry *s = &heron_hpack_static_table[i];
    static_pairs[i] = Heron_HTTP2_Decoder_pair(Heron_HTTP2_Decoder_static_str(s->name, s->name_len, rb_utf8_encoding()),
                                               Heron_HTTP2_Decoder_static_str(s->value, s->value_len, rb_utf8_encoding()));
    rb_gc_register_mark_object(static_pairs[i]);
    static_values[i] = Heron_HTTP2_Decoder_static_str(s->value, s->value_len, rb_ascii8bit_encoding());
    static_keys[i] = 0;
    if (s->name[0] == ':') continue;
    probe.error = Qnil;
    static_keys[i] = Heron_HTTP2_RequestFields_key(&probe, s->name, s->name_len); /* transfer-encoding: refused */
    if (static_keys[i] == Qfalse) static_keys[i] = 0;
    else rb_gc_register_mark_object(static_keys[i]);
  }
}

void Init_Heron_HTTP2_Decoder(VALUE mHeron)
{
  VALUE mHTTP2 = rb_define_module_under(mHeron, "HTTP2");
  VALUE cDecoder = rb_define_class_under(mHTTP2, "Decoder", rb_cObject);
  Heron_HTTP2_Decoder_init_static();
  rb_define_alloc_func(cDecoder, Heron_HTTP2_Decoder_alloc);
  rb_define_method(cDecoder, "initialize", Heron_HTTP2_Decoder_initialize, -1);
  rb_define_method(cDecoder, "decode", Heron_HTTP2_Decoder_decode, -1);
  rb_define_method(cDecoder, "request", Heron_HTTP2_Decoder_request, 4);
  rb_define_const(cDecoder, "MAX_FIELDS", INT2FIX(MAX_FIELDS));
}
