/*
 * Heron::HTTP2::FrameReader: takes HTTP/2 frames (RFC 9113 §4.1) off the front of a
 * connection's read buffer (Connection::BufferedSocket's, the String HTTP/1.1 parses its heads
 * from), one call per frame: the 9-byte header read, every bound of it checked, and the frame,
 * when it is all here, consumed with its payload returned. Session#read_frame drives it; a
 * request's plain HEADERS frame comes back as its header block, ready for Decoder#request.
 *
 *   reader = Heron::HTTP2::FrameReader.new(16_384, 65_536, 1024)
 *   reader.read(buffer)  # => payload (String), false, or nil
 *   reader.type; reader.flags; reader.stream_id; reader.length  # the frame #read took
 *   reader.max_frame_size = 32_768  # our SETTINGS_MAX_FRAME_SIZE, once acknowledged
 *
 * #read returns nil (nothing consumed) while the buffer holds less than a frame header (or, for
 * a padded frame, its Pad Length too); false when it took the header and the payload is still
 * to come, or is a field block that CONTINUATION frames go on (the caller reads the rest, with
 * protocol-http2's frame classes and HeaderBlock's bounds); else the payload, the whole frame
 * consumed. Faults raise what protocol-http2 raises, which Session answers with GOAWAY:
 *
 * - a length past max_frame_size (RFC 9113 §4.2), or one a type does not allow: RST_STREAM
 *   and WINDOW_UPDATE of 4 bytes, PING of 8, SETTINGS a multiple of 6 and an ACK empty, GOAWAY
 *   of 8 or more, a padded or prioritised frame with room for its Pad Length, priority fields
 *   and promised stream id (§6): Protocol::HTTP2::FrameSizeError (FRAME_SIZE_ERROR);
 * - padding longer than what is left of the payload (§6.1, §6.2, §6.6), SETTINGS, PING or
 *   GOAWAY on a stream (§6.5, §6.7, §6.8): Protocol::HTTP2::ProtocolError (PROTOCOL_ERROR);
 * - a field block's first frame longer than block_limit (max_header_bytes; HeaderBlock bounds
 *   the rest of a block): Protocol::HTTP2::ProtocolError with ENHANCE_YOUR_CALM.
 *
 * Checked on the header (and Pad Length) alone, before the payload is waited for: a client
 * cannot make the server wait for, or hold, a frame it may not send. The PRIORITY frame (type
 * 2) is left as it comes: protocol-http2 ignores it.
 */
#include "heron_http2_frame_reader.h"
#include "heron_connection_read_buffer.h"

#define HEADER 9
#define MIN_FRAME_SIZE 16384L     /* SETTINGS_MAX_FRAME_SIZE's initial value and least (§6.5.2) */
#define MAX_FRAME_SIZE 16777215L  /* its greatest, 2^24 - 1 */

enum { DATA = 0x0, HEADERS = 0x1, RST_STREAM = 0x3, SETTINGS = 0x4, PUSH_PROMISE = 0x5, PING = 0x6,
       GOAWAY = 0x7, WINDOW_UPDATE = 0x8, CONTINUATION = 0x9 };
enum { ACK = 0x1, END_HEADERS = 0x4, PADDED = 0x8, PRIORITY = 0x20 };
enum { PROTOCOL_ERROR = 0x1, ENHANCE_YOUR_CALM = 0xb };

typedef struct Heron_HTTP2_FrameReader {
  long max_frame_size, block_limit, keep;
  long length;                /* the last frame's */
  int type, flags;
  unsigned long stream_id;
} Heron_HTTP2_FrameReader;

/* Holds no objects: write-barrier protected as it is. */
static const rb_data_type_t Heron_HTTP2_FrameReader_type = {
  "Heron::HTTP2::FrameReader",
  {NULL, RUBY_TYPED_DEFAULT_FREE, NULL},
  NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED
};

static VALUE Heron_HTTP2_FrameReader_alloc(VALUE klass)
{
  Heron_HTTP2_FrameReader *r;
  VALUE self = TypedData_Make_Struct(klass, Heron_HTTP2_FrameReader, &Heron_HTTP2_FrameReader_type, r);
  r->max_frame_size = MIN_FRAME_SIZE;
  r->block_limit = MIN_FRAME_SIZE;
  r->keep = 0;
  r->type = -1;
  return self;
}

static Heron_HTTP2_FrameReader *Heron_HTTP2_FrameReader_get(VALUE self)
{
  Heron_HTTP2_FrameReader *r;
  TypedData_Get_Struct(self, Heron_HTTP2_FrameReader, &Heron_HTTP2_FrameReader_type, r);
  return r;
}

static long Heron_HTTP2_FrameReader_frame_size(VALUE size)
{
  long n = NUM2LONG(size);
  if (n < MIN_FRAME_SIZE || n > MAX_FRAME_SIZE) rb_raise(rb_eArgError, "max_frame_size %ld out of 16384..16777215", n);
  return n;
}

/*
 * call-seq: new(max_frame_size, block_limit, keep)
 *
 * max_frame_size:: our SETTINGS_MAX_FRAME_SIZE in force (16,384 until one we sent is acknowledged).
 * block_limit:: the most bytes a field block's first frame may have (max_header_bytes).
 * keep:: the room an emptied buffer keeps (Connection::BufferedSocket::KEEP_ROOM).
 */
static VALUE Heron_HTTP2_FrameReader_initialize(VALUE self, VALUE max_frame_size, VALUE block_limit, VALUE keep)
{
  Heron_HTTP2_FrameReader *r = Heron_HTTP2_FrameReader_get(self);
  r->max_frame_size = Heron_HTTP2_FrameReader_frame_size(max_frame_size);
  r->block_limit = NUM2LONG(block_limit);
  r->keep = NUM2LONG(keep);
  if (r->block_limit < 0 || r->keep < 0) rb_raise(rb_eArgError, "negative limit");
  return self;
}

NORETURN(static void Heron_HTTP2_FrameReader_size_error(const char *message, int type, long length));
static void Heron_HTTP2_FrameReader_size_error(const char *message, int type, long length)
{
  rb_raise(rb_path2class("Protocol::HTTP2::FrameSizeError"), "%s (type %d, length %ld)", message, type, length);
}

NORETURN(static void Heron_HTTP2_FrameReader_protocol_error(int code, const char *message, int type));
static void Heron_HTTP2_FrameReader_protocol_error(int code, const char *message, int type)
{
  VALUE args[2];
  args[0] = rb_sprintf("%s (type %d)", message, type);
  args[1] = INT2FIX(code);
  rb_exc_raise(rb_class_new_instance(2, args, rb_path2class("Protocol::HTTP2::ProtocolError")));
}

/* The bytes a frame's payload must have before its data: Pad Length, the priority fields, the
 * promised stream id. */
static long Heron_HTTP2_FrameReader_fixed(int type, int flags)
{
  long fixed = 0;
  if ((type == DATA || type == HEADERS || type == PUSH_PROMISE) && (flags & PADDED)) fixed += 1;
  if (type == HEADERS && (flags & PRIORITY)) fixed += 5;
  if (type == PUSH_PROMISE) fixed += 4;
  return fixed;
}

/* Raises for a header no payload can make right: its length and stream, by its type. */
static void Heron_HTTP2_FrameReader_check(const Heron_HTTP2_FrameReader *r, int type, int flags, unsigned long id, long length)
{
  if (length > r->max_frame_size) Heron_HTTP2_FrameReader_size_error("frame longer than SETTINGS_MAX_FRAME_SIZE", type, length);
  switch (type) {
  case SETTINGS:
    if (id != 0) Heron_HTTP2_FrameReader_protocol_error(PROTOCOL_ERROR, "SETTINGS on a stream", type);
    if ((flags & ACK) && length != 0) Heron_HTTP2_FrameReader_size_error("SETTINGS acknowledgement with a payload", type, length);
    if (length % 6 != 0) Heron_HTTP2_FrameReader_size_error("SETTINGS length not a multiple of 6", type, length);
    break;
  case PING:
    if (id != 0) Heron_HTTP2_FrameReader_protocol_error(PROTOCOL_ERROR, "PING on a stream", type);
    if (length != 8) Heron_HTTP2_FrameReader_size_error("PING length not 8", type, length);
    break;
  case GOAWAY:
    if (id != 0) Heron_HTTP2_FrameReader_protocol_error(PROTOCOL_ERROR, "GOAWAY on a stream", type);
    if (length < 8) Heron_HTTP2_FrameReader_size_error("GOAWAY shorter than 8", type, length);
    break;
  case RST_STREAM:
  case WINDOW_UPDATE:
    if (length != 4) Heron_HTTP2_FrameReader_size_error("frame length not 4", type, length);
    break;
  case HEADERS:
  case PUSH_PROMISE:
  case CONTINUATION:
    if (length > r->block_limit) Heron_HTTP2_FrameReader_protocol_error(ENHANCE_YOUR_CALM, "header block too large", type);
    break;
  default:
    break;
  }
  if (length < Heron_HTTP2_FrameReader_fixed(type, flags)) Heron_HTTP2_FrameReader_size_error("frame too short for its fields", type, length);
}

/*
 * call-seq: read(buffer) -> payload, false or nil
 *
 * Takes the frame at the front of buffer (a binary String, consumed from its front in place):
 * nil while less than its header (and a padded frame's Pad Length) is here, nothing consumed;
 * false when the header is taken and the payload is still to come or a CONTINUATION follows
 * (no END_HEADERS); else the whole frame is taken and its payload (a new binary String)
 * returned. #type, #flags, #stream_id and #length then tell the frame. Raises for a frame no
 * payload can make right (see the file's comment), nothing consumed.
 */
static VALUE Heron_HTTP2_FrameReader_read(VALUE self, VALUE buffer)
{
  Heron_HTTP2_FrameReader *r = Heron_HTTP2_FrameReader_get(self);
  const unsigned char *p;
  long have, length;
  int type, flags;
  unsigned long id;
  VALUE payload;
  Check_Type(buffer, T_STRING);
  have = RSTRING_LEN(buffer);
  if (have < HEADER) return Qnil;
  p = (const unsigned char *)RSTRING_PTR(buffer);
  length = ((long)p[0] << 16) | ((long)p[1] << 8) | (long)p[2];
  type = p[3];
  flags = p[4];
  id = ((unsigned long)(p[5] & 0x7f) << 24) | ((unsigned long)p[6] << 16) | ((unsigned long)p[7] << 8) | (unsigned long)p[8];
  Heron_HTTP2_FrameReader_check(r, type, flags, id, length);
  if ((type == DATA || type == HEADERS || type == PUSH_PROMISE) && (flags & PADDED)) {
    if (have < HEADER + 1) return Qnil;
    if ((long)p[HEADER] > length - Heron_HTTP2_FrameReader_fixed(type, flags))
      Heron_HTTP2_FrameReader_protocol_error(PROTOCOL_ERROR, "padding longer than the payload", type);
  }
  r->length = length;
  r->type = type;
  r->flags = flags;
  r->stream_id = id;
  if (have - HEADER < length || ((type == HEADERS || type == PUSH_PROMISE || type == CONTINUATION) && !(flags & END_HEADERS))) {
    Heron_Connection_ReadBuffer_drop(buffer, HEADER, r->keep);
    return Qfalse;
  }
  payload = rb_str_new((const char *)p + HEADER, length); /* buffer is on this stack: not moved by a GC here */
  Heron_Connection_ReadBuffer_drop(buffer, HEADER + length, r->keep);
  RB_GC_GUARD(buffer);
  return payload;
}

/* call-seq: type -> Integer (the last frame #read took; -1 before any) */
static VALUE Heron_HTTP2_FrameReader_type_of(VALUE self)
{
  return INT2FIX(Heron_HTTP2_FrameReader_get(self)->type);
}

/* call-seq: flags -> Integer */
static VALUE Heron_HTTP2_FrameReader_flags(VALUE self)
{
  return INT2FIX(Heron_HTTP2_FrameReader_get(self)->flags);
}

/* call-seq: stream_id -> Integer (its reserved bit cleared) */
static VALUE Heron_HTTP2_FrameReader_stream_id(VALUE self)
{
  return ULONG2NUM(Heron_HTTP2_FrameReader_get(self)->stream_id);
}

/* call-seq: length -> Integer (the payload's, from the header) */
static VALUE Heron_HTTP2_FrameReader_length(VALUE self)
{
  return LONG2NUM(Heron_HTTP2_FrameReader_get(self)->length);
}

/* call-seq: max_frame_size -> Integer */
static VALUE Heron_HTTP2_FrameReader_max_frame_size(VALUE self)
{
  return LONG2NUM(Heron_HTTP2_FrameReader_get(self)->max_frame_size);
}

/* call-seq: max_frame_size = size (16,384..16,777,215; ArgumentError otherwise) */
static VALUE Heron_HTTP2_FrameReader_set_max_frame_size(VALUE self, VALUE size)
{
  Heron_HTTP2_FrameReader_get(self)->max_frame_size = Heron_HTTP2_FrameReader_frame_size(size);
  return size;
}

void Init_Heron_HTTP2_FrameReader(VALUE mHeron)
{
  VALUE mHTTP2 = rb_define_module_under(mHeron, "HTTP2");
  VALUE cFrameReader = rb_define_class_under(mHTTP2, "FrameReader", rb_cObject);
  rb_define_alloc_func(cFrameReader, Heron_HTTP2_FrameReader_alloc);
  rb_define_method(cFrameReader, "initialize", Heron_HTTP2_FrameReader_initialize, 3);
  rb_define_method(cFrameReader, "read", Heron_HTTP2_FrameReader_read, 1);
  rb_define_method(cFrameReader, "type", Heron_HTTP2_FrameReader_type_of, 0);
  rb_define_method(cFrameReader, "flags", Heron_HTTP2_FrameReader_flags, 0);
  rb_define_method(cFrameReader, "stream_id", Heron_HTTP2_FrameReader_stream_id, 0);
  rb_define_method(cFrameReader, "length", Heron_HTTP2_FrameReader_length, 0);
  rb_define_method(cFrameReader, "max_frame_size", Heron_HTTP2_FrameReader_max_frame_size, 0);
  rb_define_method(cFrameReader, "max_frame_size=", Heron_HTTP2_FrameReader_set_max_frame_size, 1);
  rb_define_const(cFrameReader, "HEADER_SIZE", INT2FIX(HEADER));
}
