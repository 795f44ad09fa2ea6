#ifndef HERON_CLOCK_H
#define HERON_CLOCK_H 1

#include <ruby.h>

void Init_Heron_Clock(VALUE mHeron);

#endif
