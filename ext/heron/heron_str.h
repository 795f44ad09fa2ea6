/*
 * Frozen, interned binary Strings kept alive for good (env keys, shared values): Ruby's
 * deduplicated-string table gives every caller the same object for the same text. And the
 * Rack env key of a header field name, which both protocols' parsers make.
 */
#ifndef HERON_STR_H
#define HERON_STR_H

#include <ruby.h>

VALUE Heron_str(const char *s);

/* Writes the env key of the field name `name` (`len` bytes) into `out`, which has room for
 * len + 5 bytes: "HTTP_" and the name upcased with '-' as '_' (CONTENT_TYPE and CONTENT_LENGTH
 * without the prefix). Returns the key's length. */
size_t Heron_env_key_bytes(char *out, const char *name, size_t len);

#endif
