/*
 * Heron::HTTP2::Encoder: one HTTP/2 connection's HPACK encoder (RFC 7541) for its response
 * headers, a block in one C call. A field in the static table (name and value) or in the
 * dynamic table goes out as its index (§6.1); any other as a literal, its name by its static
 * index when it has one, added to the dynamic table (§6.2.1) unless it is one of the fields
 * whose values are (nearly) never sent twice (x-request-id, ...: §6.2.2, without indexing, so
 * that they do not evict the fields that repeat). Strings go out without Huffman coding.
 * #frames packs the block straight into the connection's output as a response's HEADERS (and
 * CONTINUATION) frames, then its DATA frame: one call per response.
 *
 * The dynamic table is this encoder's own copy of each entry's bytes (no Ruby objects: a
 * caller's String may change after the call), within the client's SETTINGS_HEADER_TABLE_SIZE
 * and never past MAX_TABLE bytes (a client may allow gigabytes; the decoder follows the size
 * we announce, §6.3).
 */
#include "heron_http2_encoder.h"
#include <stdint.h>
#include <string.h>
#include "hpack_decoder.h"
#include "heron_asan.h"

#define MAX_TABLE 4096
#define MAX_ENTRIES (MAX_TABLE / HERON_HPACK_ENTRY_OVERHEAD)
#define FIRST_DYNAMIC (HERON_HPACK_STATIC_COUNT + 1)

static const char *const unique_names[] = {"x-request-id", "x-runtime", "etag", "set-cookie", "last-modified"};
#define UNIQUE_COUNT (sizeof(unique_names) / sizeof(unique_names[0]))

typedef struct {
  size_t name_len, value_len;
  uint64_t inserted; /* the how-manieth entry added: its index is 62 + entries added since */
  char *bytes;       /* name, then value */
} Heron_HTTP2_Encoder_entry;

typedef struct {
  Heron_HTTP2_Encoder_entry ring[MAX_ENTRIES]; /* oldest at `first` */
  size_t first, count, size, limit;
  uint64_t inserted;
} Heron_HTTP2_Encoder;

static void Heron_HTTP2_Encoder_evict(Heron_HTTP2_Encoder *e, size_t room)
{
  while (e->count > 0 && e->size > room) {
    Heron_HTTP2_Encoder_entry *old = &e->ring[e->first];
    e->size -= old->name_len + old->value_len + HERON_HPACK_ENTRY_OVERHEAD;
    xfree(old->bytes);
    old->bytes = NULL;
    e->first = (e->first + 1) % MAX_ENTRIES;
    e->count--;
  }
}

static void Heron_HTTP2_Encoder_free(void *ptr)
{
  Heron_HTTP2_Encoder *e = ptr;
  Heron_HTTP2_Encoder_evict(e, 0);
  xfree(e);
}

static size_t Heron_HTTP2_Encoder_memsize(const void *ptr)
{
  const Heron_HTTP2_Encoder *e = ptr;
  return sizeof(*e) + e->size;
}

/* Write-barrier protected: the struct holds no Ruby objects. */
static const rb_data_type_t Heron_HTTP2_Encoder_type = {
  "Heron::HTTP2::Encoder",
  {NULL, Heron_HTTP2_Encoder_free, Heron_HTTP2_Encoder_memsize},
  NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED
};

static VALUE Heron_HTTP2_Encoder_alloc(VALUE klass)
{
  Heron_HTTP2_Encoder *e;
  VALUE self = TypedData_Make_Struct(klass, Heron_HTTP2_Encoder, &Heron_HTTP2_Encoder_type, e);
  e->limit = MAX_TABLE;
  return self;
}

static Heron_HTTP2_Encoder *Heron_HTTP2_Encoder_get(VALUE self)
{
  Heron_HTTP2_Encoder *e;
  TypedData_Get_Struct(self, Heron_HTTP2_Encoder, &Heron_HTTP2_Encoder_type, e);
  return e;
}

static size_t Heron_HTTP2_Encoder_capped(VALUE size)
{
  size_t n = NUM2SIZET(size);
  return n < MAX_TABLE ? n : MAX_TABLE;
}

/*
 * call-seq: new(table_size = 4096)
 *
 * table_size:: the dynamic table's size at first (the protocol's default).
 */
static VALUE Heron_HTTP2_Encoder_initialize(int argc, VALUE *argv, VALUE self)
{
  VALUE size;
  rb_scan_args(argc, argv, "01", &size);
  if (!NIL_P(size)) Heron_HTTP2_Encoder_get(self)->limit = Heron_HTTP2_Encoder_capped(size);
  return self;
}

/* The block being written: bytes gathered on the stack, appended to the Ruby String when full
 * and at the end (one append per block, not one per byte or string). */
typedef struct {
  VALUE str;
  size_t n;
  char bytes[512];
} Heron_HTTP2_Encoder_out;

static void Heron_HTTP2_Encoder_flush(Heron_HTTP2_Encoder_out *out)
{
  if (out->n) rb_str_buf_cat(out->str, out->bytes, (long)out->n);
  out->n = 0;
}

static void Heron_HTTP2_Encoder_put(Heron_HTTP2_Encoder_out *out, const char *s, size_t len)
{
  if (len > sizeof(out->bytes) - out->n) {
    Heron_HTTP2_Encoder_flush(out);
    if (len > sizeof(out->bytes)) {
      rb_str_buf_cat(out->str, s, (long)len);
      return;
    }
  }
  memcpy(out->bytes + out->n, s, len);
  out->n += len;
}

/* §5.1: value on a bits-bit prefix, pattern in the first byte's high bits. */
static void Heron_HTTP2_Encoder_integer(Heron_HTTP2_Encoder_out *out, size_t value, unsigned bits, unsigned char pattern)
{
  unsigned char b[16];
  size_t limit = ((size_t)1 << bits) - 1, n = 0;
  if (value < limit) {
    b[n++] = (unsigned char)(pattern | value);
  } else {
    b[n++] = (unsigned char)(pattern | limit);
    value -= limit;
    while (value >= 128) {
      b[n++] = (unsigned char)((value & 0x7f) | 0x80);
      value >>= 7;
    }
    b[n++] = (unsigned char)value;
  }
  Heron_HTTP2_Encoder_put(out, (const char *)b, n);
}

/* §5.2: a raw string. */
static void Heron_HTTP2_Encoder_string(Heron_HTTP2_Encoder_out *out, const char *s, size_t len)
{
  Heron_HTTP2_Encoder_integer(out, len, 7, 0);
  Heron_HTTP2_Encoder_put(out, s, len);
}

/* The static index of name and value (exact), or of the first entry with the name
 * (*name_index); 0 when none. The entries of one name are together in the table. */
static size_t Heron_HTTP2_Encoder_static(const char *name, size_t nlen, const char *value, size_t vlen, size_t *name_index)
{
  size_t i;
  *name_index = 0;
  if (nlen == 0) return 0;
  for (i = 0; i < HERON_HPACK_STATIC_COUNT; i++) {
    const heron_hpack_static_entry *s = &heron_hpack_static_table[i];
    if (s->name_len != nlen || s->name[0] != name[0] || memcmp(s->name, name, nlen) != 0) {
      if (*name_index) break; /* past the name's entries */
      continue;
    }
    if (!*name_index) *name_index = i + 1;
    if (s->value_len == vlen && memcmp(s->value, value, vlen) == 0) return i + 1;
  }
  return 0;
}

/* The index of the dynamic entry with name and value, or 0. */
static size_t Heron_HTTP2_Encoder_dynamic(const Heron_HTTP2_Encoder *e, const char *name, size_t nlen, const char *value, size_t vlen)
{
  size_t i;
  for (i = 0; i < e->count; i++) {
    const Heron_HTTP2_Encoder_entry *x = &e->ring[(e->first + i) % MAX_ENTRIES];
    if (x->name_len == nlen && x->value_len == vlen && memcmp(x->bytes, name, nlen) == 0 && memcmp(x->bytes + nlen, value, vlen) == 0)
      return FIRST_DYNAMIC + (size_t)(e->inserted - 1 - x->inserted);
  }
  return 0;
}

static int Heron_HTTP2_Encoder_unique(const char *name, size_t nlen)
{
  size_t i;
  for (i = 0; i < UNIQUE_COUNT; i++)
    if (strlen(unique_names[i]) == nlen && memcmp(unique_names[i], name, nlen) == 0) return 1;
  return 0;
}

/* §4.4: evicts the oldest entries until the new one fits, then adds it (newest). */
static void Heron_HTTP2_Encoder_add(Heron_HTTP2_Encoder *e, const char *name, size_t nlen, const char *value, size_t vlen, size_t size)
{
  Heron_HTTP2_Encoder_entry *x;
  Heron_HTTP2_Encoder_evict(e, e->limit - size);
  x = &e->ring[(e->first + e->count) % MAX_ENTRIES];
  x->bytes = ALLOC_N(char, nlen + vlen);
  memcpy(x->bytes, name, nlen);
  memcpy(x->bytes + nlen, value, vlen);
  x->name_len = nlen;
  x->value_len = vlen;
  x->inserted = e->inserted++;
  e->count++;
  e->size += size;
}

static void Heron_HTTP2_Encoder_field(Heron_HTTP2_Encoder *e, Heron_HTTP2_Encoder_out *buffer, VALUE name, VALUE value)
{
  const char *n = RSTRING_PTR(name), *v = RSTRING_PTR(value);
  size_t nlen = (size_t)RSTRING_LEN(name), vlen = (size_t)RSTRING_LEN(value), name_index, size;
  size_t index = Heron_HTTP2_Encoder_static(n, nlen, v, vlen, &name_index);
  int indexed;
  if (!index) index = Heron_HTTP2_Encoder_dynamic(e, n, nlen, v, vlen);
  if (index) return Heron_HTTP2_Encoder_integer(buffer, index, 7, 0x80);
  size = nlen + vlen + HERON_HPACK_ENTRY_OVERHEAD;
  indexed = size <= e->limit && !Heron_HTTP2_Encoder_unique(n, nlen);
  if (name_index) {
    Heron_HTTP2_Encoder_integer(buffer, name_index, indexed ? 6 : 4, indexed ? 0x40 : 0x00);
  } else {
    Heron_HTTP2_Encoder_integer(buffer, 0, 4, indexed ? 0x40 : 0x00);
    Heron_HTTP2_Encoder_string(buffer, n, nlen);
  }
  Heron_HTTP2_Encoder_string(buffer, v, vlen);
  if (indexed) Heron_HTTP2_Encoder_add(e, n, nlen, v, vlen, size);
}

/*
 * call-seq: encode(fields, buffer = "".b, table_size = nil) -> buffer
 *
 * fields:: [name, value] pairs, lower-case names.
 * buffer:: a binary String the block is appended to.
 * table_size:: the client's SETTINGS_HEADER_TABLE_SIZE: a change (within 4096) is announced at
 *              the block's start (§6.3) and the table shrunk to fit.
 */
/* Appends `reserve` zero bytes (a frame header to come), then the header block of fields, to
 * buffer; the fields are checked before anything is written (a raise halfway would leave the
 * output and the table out of step with the client's). */
static void HERON_RAISES_THROUGH Heron_HTTP2_Encoder_block(Heron_HTTP2_Encoder *e, VALUE buffer, VALUE fields, VALUE table_size,
                                                           size_t reserve)
{
  Heron_HTTP2_Encoder_out out;
  long i;
  Check_Type(fields, T_ARRAY);
  out.str = buffer;
  out.n = 0;
  for (i = 0; i < RARRAY_LEN(fields); i++) {
    VALUE pair = RARRAY_AREF(fields, i);
    if (!RB_TYPE_P(pair, T_ARRAY) || RARRAY_LEN(pair) != 2 || !RB_TYPE_P(RARRAY_AREF(pair, 0), T_STRING) ||
        !RB_TYPE_P(RARRAY_AREF(pair, 1), T_STRING))
      rb_raise(rb_eArgError, "a field is a [name, value] pair of Strings");
  }
  memset(out.bytes, 0, reserve);
  out.n = reserve;
  if (!NIL_P(table_size) && Heron_HTTP2_Encoder_capped(table_size) != e->limit) {
    e->limit = Heron_HTTP2_Encoder_capped(table_size);
    Heron_HTTP2_Encoder_evict(e, e->limit);
    Heron_HTTP2_Encoder_integer(&out, e->limit, 5, 0x20);
  }
  for (i = 0; i < RARRAY_LEN(fields); i++) {
    VALUE pair = RARRAY_AREF(fields, i);
    Heron_HTTP2_Encoder_field(e, &out, RARRAY_AREF(pair, 0), RARRAY_AREF(pair, 1));
  }
  Heron_HTTP2_Encoder_flush(&out);
}

static VALUE Heron_HTTP2_Encoder_encode(int argc, VALUE *argv, VALUE self)
{
  VALUE fields, buffer, table_size;
  rb_scan_args(argc, argv, "12", &fields, &buffer, &table_size);
  if (NIL_P(buffer)) buffer = rb_str_buf_new(0);
  StringValue(buffer);
  rb_str_modify(buffer);
  Heron_HTTP2_Encoder_block(Heron_HTTP2_Encoder_get(self), buffer, fields, table_size, 0);
  return buffer;
}

#define FRAME_DATA 0x0
#define FRAME_HEADERS 0x1
#define FRAME_CONTINUATION 0x9
#define FLAG_END_HEADERS 0x4

/* RFC 9113 §4.1: a frame's 9-byte header. */
static void Heron_HTTP2_Encoder_frame_header(char *h, size_t length, unsigned type, unsigned flags, uint32_t id)
{
  h[0] = (char)(length >> 16);
  h[1] = (char)(length >> 8);
  h[2] = (char)length;
  h[3] = (char)type;
  h[4] = (char)flags;
  h[5] = (char)((id >> 24) & 0x7f);
  h[6] = (char)(id >> 16);
  h[7] = (char)(id >> 8);
  h[8] = (char)id;
}

/* The block written at out[start + 9 ..] as a HEADERS frame, or (past max bytes) split into a
 * HEADERS frame and CONTINUATION frames, the last with END_HEADERS. */
static void Heron_HTTP2_Encoder_frame_block(VALUE out, long start, unsigned flags, uint32_t id, size_t max)
{
  size_t length = (size_t)(RSTRING_LEN(out) - start - 9), offset;
  char *block, h[9];
  if (length <= max) {
    Heron_HTTP2_Encoder_frame_header(RSTRING_PTR(out) + start, length, FRAME_HEADERS, flags | FLAG_END_HEADERS, id);
    return;
  }
  block = ALLOC_N(char, length);
  memcpy(block, RSTRING_PTR(out) + start + 9, length);
  rb_str_set_len(out, start);
  for (offset = 0; offset < length; offset += max) {
    size_t n = length - offset < max ? length - offset : max;
    unsigned last = offset + n == length ? FLAG_END_HEADERS : 0;
    Heron_HTTP2_Encoder_frame_header(h, n, offset ? FRAME_CONTINUATION : FRAME_HEADERS, (offset ? 0 : flags) | last, id);
    rb_str_buf_cat(out, h, 9);
    rb_str_buf_cat(out, block + offset, (long)n);
  }
  xfree(block);
}

/*
 * call-seq: frames(out, id, fields, flags, max_frame_size, table_size, data = nil) -> out
 *
 * Appends a response's frames to out (the connection's output): the header block of fields as
 * a HEADERS frame (CONTINUATION frames past max_frame_size, each on the stream), then, given
 * data, one DATA frame of it (the caller keeps it within the windows and the frame size).
 * flags (END_STREAM or 0) go on the last frame.
 */
static VALUE HERON_RAISES_THROUGH Heron_HTTP2_Encoder_frames(int argc, VALUE *argv, VALUE self)
{
  VALUE out, id, fields, flags, max, table_size, data;
  uint32_t stream;
  unsigned last;
  long start;
  size_t limit;
  rb_scan_args(argc, argv, "61", &out, &id, &fields, &flags, &max, &table_size, &data);
  StringValue(out);
  rb_str_modify(out);
  if (!NIL_P(data)) StringValue(data);
  stream = NUM2UINT(id);
  last = NUM2UINT(flags);
  limit = NUM2SIZET(max);
  if (limit == 0) rb_raise(rb_eArgError, "max_frame_size must be positive");
  start = RSTRING_LEN(out);
  /* room for the HEADERS frame's header, written once the block's length is known */
  Heron_HTTP2_Encoder_block(Heron_HTTP2_Encoder_get(self), out, fields, table_size, 9);
  Heron_HTTP2_Encoder_frame_block(out, start, NIL_P(data) ? last : 0, stream, limit);
  if (!NIL_P(data)) {
    char h[9];
    Heron_HTTP2_Encoder_frame_header(h, (size_t)RSTRING_LEN(data), FRAME_DATA, last, stream);
    rb_str_buf_cat(out, h, 9);
    rb_str_buf_cat(out, RSTRING_PTR(data), RSTRING_LEN(data));
  }
  return out;
}

void Init_Heron_HTTP2_Encoder(VALUE mHeron)
{
  VALUE mHTTP2 = rb_define_module_under(mHeron, "HTTP2");
  VALUE cEncoder = rb_define_class_under(mHTTP2, "Encoder", rb_cObject);
  rb_define_alloc_func(cEncoder, Heron_HTTP2_Encoder_alloc);
  rb_define_method(cEncoder, "initialize", Heron_HTTP2_Encoder_initialize, -1);
  rb_define_method(cEncoder, "encode", Heron_HTTP2_Encoder_encode, -1);
  rb_define_method(cEncoder, "frames", Heron_HTTP2_Encoder_frames, -1);
}
