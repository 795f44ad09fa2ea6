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
 * 2) is left as it comes: protocol-http2 ignores it. The reading and the checks are plain C
 * (http2_frame.c, fuzzed by fuzz/fuzz_http2_frame.c); this file is the binding.
 */
#include "heron_http2_frame_reader.h"
#include "heron_connection_read_buffer.h"
#include "http2_frame.h"
#include "heron_http2_error.h"

typedef struct Heron_HTTP2_FrameReader {
  size_t max_frame_size, block_limit;
  long keep;
  heron_http2_frame frame; /* the last one #read took */
  int read;                /* whether there was one */
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
  r->max_frame_size = r->block_limit = HERON_HTTP2_MIN_FRAME_SIZE;
  return self;
}

static Heron_HTTP2_FrameReader *Heron_HTTP2_FrameReader_get(VALUE self)
{
  Heron_HTTP2_FrameReader *r;
  TypedData_Get_Struct(self, Heron_HTTP2_FrameReader, &Heron_HTTP2_FrameReader_type, r);
  return r;
}

static size_t Heron_HTTP2_FrameReader_frame_size(VALUE size)
{
  long n = NUM2LONG(size);
  if (n < (long)HERON_HTTP2_MIN_FRAME_SIZE || n > (long)HERON_HTTP2_MAX_FRAME_SIZE)
    rb_raise(rb_eArgError, "max_frame_size %ld out of 16384..16777215", n);
  return (size_t)n;
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
  long limit = NUM2LONG(block_limit);
  r->max_frame_size = Heron_HTTP2_FrameReader_frame_size(max_frame_size);
  r->keep = NUM2LONG(keep);
  if (limit < 0 || r->keep < 0) rb_raise(rb_eArgError, "negative limit");
  r->block_limit = (size_t)limit;
  return self;
}

NORETURN(static void Heron_HTTP2_FrameReader_raise(heron_http2_frame_result fault, const char *message, const heron_http2_frame *f));
/* Raises what protocol-http2 raises for the fault (Session answers it with GOAWAY). */
static void Heron_HTTP2_FrameReader_raise(heron_http2_frame_result fault, const char *message, const heron_http2_frame *f)
{
  if (fault == HERON_HTTP2_FRAME_SIZE_ERROR)
    rb_raise(rb_path2class("Protocol::HTTP2::FrameSizeError"), "%s (type %u, length %lu)", message, f->type, (unsigned long)f->length);
  Heron_HTTP2_raise_protocol_error(rb_sprintf("%s (type %u, length %lu)", message, f->type, (unsigned long)f->length),
                                   fault == HERON_HTTP2_FRAME_TOO_LARGE ? HERON_HTTP2_ENHANCE_YOUR_CALM : HERON_HTTP2_PROTOCOL_ERROR);
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
  heron_http2_frame frame;
  heron_http2_frame_result result;
  const char *message = "";
  VALUE payload;
  Check_Type(buffer, T_STRING);
  result = heron_http2_frame_read((const uint8_t *)RSTRING_PTR(buffer), (size_t)RSTRING_LEN(buffer), r->max_frame_size,
                                  r->block_limit, &frame, &message);
  if (result == HERON_HTTP2_FRAME_MORE) return Qnil;
  if (result != HERON_HTTP2_FRAME_HEADER && result != HERON_HTTP2_FRAME_WHOLE) Heron_HTTP2_FrameReader_raise(result, message, &frame);
  r->frame = frame;
  r->read = 1;
  if (result == HERON_HTTP2_FRAME_HEADER) {
    Heron_Connection_ReadBuffer_drop(buffer, HERON_HTTP2_FRAME_HEADER_SIZE, r->keep);
    return Qfalse;
  }
  /* buffer is on this stack: a GC while the payload is made does not move it */
  payload = rb_str_new(RSTRING_PTR(buffer) + HERON_HTTP2_FRAME_HEADER_SIZE, (long)frame.length);
  Heron_Connection_ReadBuffer_drop(buffer, HERON_HTTP2_FRAME_HEADER_SIZE + (long)frame.length, r->keep);
  RB_GC_GUARD(buffer);
  return payload;
}

/* call-seq: type -> Integer (the last frame #read took; -1 before any) */
static VALUE Heron_HTTP2_FrameReader_type_of(VALUE self)
{
  Heron_HTTP2_FrameReader *r = Heron_HTTP2_FrameReader_get(self);
  return r->read ? UINT2NUM(r->frame.type) : INT2FIX(-1);
}

/* call-seq: flags -> Integer */
static VALUE Heron_HTTP2_FrameReader_flags(VALUE self)
{
  return UINT2NUM(Heron_HTTP2_FrameReader_get(self)->frame.flags);
}

/* call-seq: stream_id -> Integer (its reserved bit cleared) */
static VALUE Heron_HTTP2_FrameReader_stream_id(VALUE self)
{
  return UINT2NUM(Heron_HTTP2_FrameReader_get(self)->frame.stream_id);
}

/* call-seq: length -> Integer (the payload's, from the header) */
static VALUE Heron_HTTP2_FrameReader_length(VALUE self)
{
  return SIZET2NUM(Heron_HTTP2_FrameReader_get(self)->frame.length);
}

/* call-seq: max_frame_size -> Integer */
static VALUE Heron_HTTP2_FrameReader_max_frame_size(VALUE self)
{
  return SIZET2NUM(Heron_HTTP2_FrameReader_get(self)->max_frame_size);
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
  rb_define_const(cFrameReader, "HEADER_SIZE", INT2FIX(HERON_HTTP2_FRAME_HEADER_SIZE));
}
