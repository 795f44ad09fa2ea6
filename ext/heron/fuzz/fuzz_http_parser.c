/*
 * libFuzzer harness for the pure-C request parser (../http_parser.c).
 *
 * For each input it checks that
 *  - the head parser gives the same outcome fed in one call, split in two at
 *    a data-derived point, and byte by byte (resumable parsing is exact);
 *  - every span it reports lies inside the head and obeys the grammar, and an
 *    accepted target is well-formed UTF-8 (checked by decoding each code point,
 *    not by the parser's lead-byte ranges);
 *  - the chunked decoder gives the same output and outcome in one call and
 *    split in two, never emits more bytes than it consumed, and consumes
 *    every byte unless it finished.
 * Any mismatch aborts, which libFuzzer reports as a crash. Built and run by
 * ./run (clang -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parser.h"
#include "fuzz_check.h"

#define MAX_TARGET 256
#define MAX_HEADER_BYTES 2048
#define MAX_FIELDS 24
#define MAX_CHUNK_EXT 64
#define MAX_CHUNK_EXT_TOTAL 256

typedef struct {
  char *data;
  size_t len;
} Heron_Fuzz_output;

static void Heron_Fuzz_append(void *userdata, const char *data, size_t len)
{
  Heron_Fuzz_output *out = userdata;
  memcpy(out->data + out->len, data, len);
  out->len += len;
}

static int Heron_Fuzz_parse_in_steps(heron_http_parser *p, const char *buf, size_t size,
                                     size_t split, int bytewise)
{
  size_t i;
  int r = HERON_HTTP_NEED_MORE;
  if (bytewise) {
    for (i = 1; i <= size && r == HERON_HTTP_NEED_MORE; i++) r = heron_http_parser_execute(p, buf, i);
    return r;
  }
  r = heron_http_parser_execute(p, buf, split);
  if (r != HERON_HTTP_NEED_MORE) return r;
  return heron_http_parser_execute(p, buf, size);
}

static void Heron_Fuzz_check_span(heron_http_span s, size_t limit)
{
  CHECK(s.off <= limit && s.len <= limit - s.off);
}

/* Decodes the n bytes at s and checks each code point is one UTF-8 may carry in
 * that many bytes: no overlong form, no surrogate, nothing past U+10FFFF. */
static void Heron_Fuzz_check_utf8(const unsigned char *s, size_t n)
{
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  size_t i = 0, len, k;
  uint32_t cp;
  while (i < n) {
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    len = (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : (s[i] & 0xf8) == 0xf0 ? 4 : 0;
    CHECK(len != 0 && i + len <= n);
    cp = s[i] & (0x7f >> len);
    for (k = 1; k < len; k++) {
      CHECK((s[i + k] & 0xc0) == 0x80);
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    CHECK(cp >= least[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff));
    i += len;
  }
}

static void Heron_Fuzz_check_head(const heron_http_parser *p, const char *buf, size_t size)
{
  size_t i, j, n = p->head_length;
  CHECK(n >= 16 && n <= size);
  CHECK(buf[n - 1] == '\n' && buf[n - 2] == '\r');
  CHECK(p->method.len > 0 && p->target.len > 0 && p->target.len <= MAX_TARGET);
  Heron_Fuzz_check_span(p->method, n);
  Heron_Fuzz_check_span(p->target, n);
  Heron_Fuzz_check_utf8((const unsigned char *)buf + p->target.off, p->target.len);
  Heron_Fuzz_check_span(p->path, n);
  if (p->has_query) Heron_Fuzz_check_span(p->query, n);
  CHECK(p->http_major == 1 && (p->http_minor == 0 || p->http_minor == 1));
  CHECK(p->nfields <= MAX_FIELDS);
  CHECK(n - p->header_start <= MAX_HEADER_BYTES);
  for (i = 0; i < p->nfields; i++) {
    const heron_http_field *f = &p->fields[i];
    Heron_Fuzz_check_span(f->name, n);
    Heron_Fuzz_check_span(f->value, n);
    CHECK(f->name.len > 0);
    for (j = 0; j < f->value.len; j++) {
      unsigned char c = (unsigned char)buf[f->value.off + j];
      CHECK(c == '\t' || (c >= 0x20 && c != 0x7f));
    }
  }
  CHECK(!(p->chunked && p->content_length >= 0));
}

static void Heron_Fuzz_same_head(const heron_http_parser *a, const heron_http_parser *b)
{
  CHECK(a->error_status == b->error_status);
  CHECK(a->error == b->error);
  CHECK(a->head_length == b->head_length);
  CHECK(a->nfields == b->nfields);
  CHECK(memcmp(a->fields, b->fields, a->nfields * sizeof(heron_http_field)) == 0);
  CHECK(a->content_length == b->content_length && a->chunked == b->chunked);
  CHECK(a->keepalive == b->keepalive);
  CHECK(memcmp(&a->path, &b->path, sizeof(a->path)) == 0);
}

static void Heron_Fuzz_head(const char *buf, size_t size, size_t split, heron_http_parser *whole)
{
  heron_http_parser halves, bytes;
  int r1, r2, r3;
  CHECK(heron_http_parser_init(whole, MAX_TARGET, MAX_HEADER_BYTES, MAX_FIELDS) == 0);
  CHECK(heron_http_parser_init(&halves, MAX_TARGET, MAX_HEADER_BYTES, MAX_FIELDS) == 0);
  CHECK(heron_http_parser_init(&bytes, MAX_TARGET, MAX_HEADER_BYTES, MAX_FIELDS) == 0);
  r1 = heron_http_parser_execute(whole, buf, size);
  r2 = Heron_Fuzz_parse_in_steps(&halves, buf, size, split, 0);
  r3 = Heron_Fuzz_parse_in_steps(&bytes, buf, size, split, 1);
  CHECK(r1 == r2 && r1 == r3);
  Heron_Fuzz_same_head(whole, &halves);
  Heron_Fuzz_same_head(whole, &bytes);
  if (r1 == HERON_HTTP_DONE) Heron_Fuzz_check_head(whole, buf, size);
  if (r1 == HERON_HTTP_ERROR) CHECK(whole->error && whole->error_status >= 400);
  heron_http_parser_free(&halves);
  heron_http_parser_free(&bytes);
}

/* Decodes buf in one call and in two; returns the one-call result. */
static void Heron_Fuzz_chunked(const char *buf, size_t size, size_t split)
{
  heron_chunked_decoder d1, d2;
  Heron_Fuzz_output o1 = {malloc(size + 1), 0}, o2 = {malloc(size + 1), 0};
  size_t c1 = 0, c2a = 0, c2b = 0;
  int r1, r2;
  heron_chunked_decoder_init(&d1, MAX_HEADER_BYTES, MAX_FIELDS);
  heron_chunked_decoder_init(&d2, MAX_HEADER_BYTES, MAX_FIELDS);
  /* small enough that inputs under -max_len reach both extension limits */
  heron_chunked_decoder_limit_extensions(&d1, MAX_CHUNK_EXT, MAX_CHUNK_EXT_TOTAL);
  heron_chunked_decoder_limit_extensions(&d2, MAX_CHUNK_EXT, MAX_CHUNK_EXT_TOTAL);
  r1 = heron_chunked_decoder_execute(&d1, buf, size, &c1, Heron_Fuzz_append, &o1);
  r2 = heron_chunked_decoder_execute(&d2, buf, split, &c2a, Heron_Fuzz_append, &o2);
  CHECK(c2a <= split);
  if (r2 == HERON_HTTP_NEED_MORE) {
    CHECK(c2a == split);
    r2 = heron_chunked_decoder_execute(&d2, buf + split, size - split, &c2b, Heron_Fuzz_append, &o2);
  }
  CHECK(r1 == r2);
  CHECK(o1.len == o2.len && memcmp(o1.data, o2.data, o1.len) == 0);
  CHECK(o1.len <= c1 && c1 <= size);
  if (r1 == HERON_HTTP_NEED_MORE) CHECK(c1 == size);
  if (r1 != HERON_HTTP_ERROR) CHECK(c1 == c2a + c2b);
  else CHECK(d1.error == d2.error);
  free(o1.data);
  free(o2.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *buf = (const char *)data;
  size_t split = size ? (size_t)data[size - 1] * size / 256 : 0;
  heron_http_parser p;
  Heron_Fuzz_head(buf, size, split, &p);
  Heron_Fuzz_chunked(buf, size, split);
  if (p.chunked && p.head_length > 0) {
    size_t rest = size - p.head_length;
    Heron_Fuzz_chunked(buf + p.head_length, rest, split % (rest + 1));
  }
  heron_http_parser_free(&p);
  return 0;
}
