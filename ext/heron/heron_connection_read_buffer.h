#ifndef HERON_CONNECTION_READ_BUFFER_H
#define HERON_CONNECTION_READ_BUFFER_H 1

#include <ruby.h>

void Init_Heron_Connection_ReadBuffer(VALUE mHeron);

/* Drops the first `drop` bytes of the String `buffer` in place (all when it has fewer); an
 * emptied buffer with more than `room` bytes of memory gives it back. Returns buffer. */
VALUE Heron_Connection_ReadBuffer_drop(VALUE buffer, long drop, long room);

#endif
