#include "heron_str.h"
#include <ruby/encoding.h>
#include <string.h>
#include <strings.h>

/* A frozen (binary) String kept alive for good: env keys and shared values. Interned, so
 * every caller gets the same object for the same text, and a hash lookup with it matches by
 * identity. */
VALUE Heron_str(const char *s)
{
  VALUE str = rb_enc_interned_str(s, (long)strlen(s), rb_ascii8bit_encoding());
  rb_gc_register_mark_object(str);
  return str;
}

size_t Heron_env_key_bytes(char *out, const char *name, size_t len)
{
  size_t i, n = 0;
  int bare = (len == 12 && strncasecmp(name, "content-type", 12) == 0) ||
             (len == 14 && strncasecmp(name, "content-length", 14) == 0);
  if (!bare) {
    memcpy(out, "HTTP_", 5);
    n = 5;
  }
  for (i = 0; i < len; i++) {
    char c = name[i];
    out[n++] = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
  }
  return n;
}
