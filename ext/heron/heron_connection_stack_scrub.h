#ifndef HERON_CONNECTION_STACK_SCRUB_H
#define HERON_CONNECTION_STACK_SCRUB_H 1

#include <ruby.h>

void Init_Heron_Connection_StackScrub(VALUE mHeron);

#endif
