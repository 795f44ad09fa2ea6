/*
 * Heron::Connection::ReadBuffer: drops bytes from the front of a connection's read buffer (a
 * binary String) in place, keeping its memory for the next request's bytes.
 *
 * Connection::BufferedSocket appends what each read brings to its buffer and drops the parsed
 * head from its front. Dropped with String#clear, a buffer that held a whole request gave its
 * heap memory back, so every kept-alive request cost a malloc (the next `<<` of a head longer
 * than an embedded String's 23 bytes) and a free; dropped with a splice, a partial drop made a
 * String. Here the rest moves down (memmove) and the length is set: no allocation, no free.
 * A buffer left empty with more than `keep` bytes of room (a large head, a prebuffered body)
 * gives its memory back as before, so a connection waiting for its next request holds at most
 * `keep` bytes more than an empty String.
 *
 *   Heron::Connection::ReadBuffer.drop_front(buffer, count, keep) -> buffer
 */
#include "heron_connection_read_buffer.h"
#include <string.h>

/* Drops the first `count` bytes of `buffer` (a String) in place, as drop_front does; for the C
 * classes that consume from a connection's read buffer (HTTP2::FrameReader). */
VALUE Heron_Connection_ReadBuffer_drop(VALUE buffer, long drop, long room)
{
  long length = RSTRING_LEN(buffer);
  if (drop >= length) {
    if ((long)rb_str_capacity(buffer) > room) return rb_str_resize(buffer, 0);
    drop = length;
  }
  if (drop == 0) return buffer;
  rb_str_modify(buffer); /* independent of any String that shares its bytes; code range cleared */
  if (length > drop) memmove(RSTRING_PTR(buffer), RSTRING_PTR(buffer) + drop, (size_t)(length - drop));
  rb_str_set_len(buffer, length - drop);
  return buffer;
}

/*
 * call-seq: drop_front(buffer, count, keep) -> buffer
 * Removes the first `count` bytes of `buffer` (all of them when it has fewer), in place. When
 * nothing is left and the buffer's room exceeds `keep` bytes, its memory is released.
 */
static VALUE Heron_Connection_ReadBuffer_drop_front(VALUE self, VALUE buffer, VALUE count, VALUE keep)
{
  long drop = NUM2LONG(count), room = NUM2LONG(keep);
  (void)self;
  Check_Type(buffer, T_STRING);
  if (drop < 0) rb_raise(rb_eArgError, "negative count");
  return Heron_Connection_ReadBuffer_drop(buffer, drop, room);
}

void Init_Heron_Connection_ReadBuffer(VALUE mHeron)
{
  VALUE cConnection = rb_define_class_under(mHeron, "Connection", rb_cObject);
  VALUE mReadBuffer = rb_define_module_under(cConnection, "ReadBuffer");
  rb_define_module_function(mReadBuffer, "drop_front", Heron_Connection_ReadBuffer_drop_front, 3);
}
