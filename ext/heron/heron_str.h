/*
 * Frozen, interned binary Strings kept alive for good (env keys, shared values): Ruby's
 * deduplicated-string table gives every caller the same object for the same text.
 */
#ifndef HERON_STR_H
#define HERON_STR_H

#include <ruby.h>

VALUE Heron_str(const char *s);

#endif
