#ifndef HERON_CONNECTION_READ_BUFFER_H
#define HERON_CONNECTION_READ_BUFFER_H 1

#include <ruby.h>

void Init_Heron_Connection_ReadBuffer(VALUE mHeron);

#endif
