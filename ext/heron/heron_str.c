#include "heron_str.h"
#include <ruby/encoding.h>
#include <string.h>

/* A frozen (binary) String kept alive for good: env keys and shared values. Interned, so
 * every caller gets the same object for the same text, and a hash lookup with it matches by
 * identity. */
VALUE Heron_str(const char *s)
{
  VALUE str = rb_enc_interned_str(s, (long)strlen(s), rb_ascii8bit_encoding());
  rb_gc_register_mark_object(str);
  return str;
}
