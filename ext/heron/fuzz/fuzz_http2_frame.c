/*
 * libFuzzer harness for the pure-C HTTP/2 frame header reader (../http2_frame.c).
 *
 * An input is four bytes of limits (SETTINGS_MAX_FRAME_SIZE from 16,384 up, the field block
 * limit), then a connection's bytes, read frame after frame as FrameReader reads them: a whole
 * frame taken with its payload, a header whose payload is to come taken and its payload
 * skipped, until more bytes are needed or a fault ends the connection. For each frame it checks
 * the verdict against the harness's own reading of RFC 9113 (§4.2, §6: each type's lengths, the
 * stream-0 frames, the padded, prioritised and promised fields, the limits), written apart
 * from the reader's, and that a whole frame's payload lies within the input (ASan sees any byte
 * out of bounds). Any mismatch aborts, which libFuzzer reports as a crash. Built and run by ./run.
 */
#include <stdint.h>
#include <string.h>

#include "http2_frame.h"
#include "fuzz_check.h"

/* The verdict RFC 9113 gives a frame header (and its Pad Length when `pad` >= 0), from the
 * harness's own table of rules. */
static heron_http2_frame_result Heron_Fuzz_verdict(const heron_http2_frame *f, int pad, size_t max, size_t block_limit)
{
  static const long exact[10] = {-1, -1, -1, 4, -1, -1, 8, -1, 4, -1}; /* RST_STREAM, PING, WINDOW_UPDATE */
  int padded = (f->flags & 0x8) && (f->type == 0x0 || f->type == 0x1 || f->type == 0x5);
  size_t before = (padded ? 1 : 0) + (f->type == 0x1 && (f->flags & 0x20) ? 5 : 0) + (f->type == 0x5 ? 4 : 0);
  int control = f->type == 0x4 || f->type == 0x6 || f->type == 0x7;
  if (f->length > max) return HERON_HTTP2_FRAME_SIZE_ERROR;
  if (control && f->stream_id != 0) return HERON_HTTP2_FRAME_PROTOCOL_ERROR;
  if (f->type < 10 && exact[f->type] >= 0 && (long)f->length != exact[f->type]) return HERON_HTTP2_FRAME_SIZE_ERROR;
  if (f->type == 0x4 && (f->length % 6 || ((f->flags & 0x1) && f->length))) return HERON_HTTP2_FRAME_SIZE_ERROR;
  if (f->type == 0x7 && f->length < 8) return HERON_HTTP2_FRAME_SIZE_ERROR;
  if ((f->type == 0x1 || f->type == 0x5 || f->type == 0x9) && f->length > block_limit) return HERON_HTTP2_FRAME_TOO_LARGE;
  if (f->length < before) return HERON_HTTP2_FRAME_SIZE_ERROR;
  if (padded && pad >= 0 && (size_t)pad + before > f->length) return HERON_HTTP2_FRAME_PROTOCOL_ERROR;
  return HERON_HTTP2_FRAME_WHOLE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  size_t max, block_limit, at;
  if (size < 4) return 0;
  max = HERON_HTTP2_MIN_FRAME_SIZE + (((size_t)data[0] << 8 | data[1]) & 0x3fff);
  block_limit = (size_t)data[2] << 8 | data[3];
  for (at = 4; at < size;) {
    heron_http2_frame f;
    const char *message = NULL;
    const uint8_t *p = data + at;
    size_t have = size - at;
    heron_http2_frame_result result = heron_http2_frame_read(p, have, max, block_limit, &f, &message);
    heron_http2_frame_result verdict;
    int padded;
    if (result == HERON_HTTP2_FRAME_MORE && have < HERON_HTTP2_FRAME_HEADER_SIZE) return 0;
    CHECK(have >= HERON_HTTP2_FRAME_HEADER_SIZE);
    CHECK(f.length == ((size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2]) && f.type == p[3] && f.flags == p[4]);
    CHECK(f.stream_id == ((uint32_t)(p[5] & 0x7f) << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]));
    padded = (f.flags & 0x8) && (f.type == 0x0 || f.type == 0x1 || f.type == 0x5);
    verdict = Heron_Fuzz_verdict(&f, padded && have > HERON_HTTP2_FRAME_HEADER_SIZE ? p[HERON_HTTP2_FRAME_HEADER_SIZE] : -1, max, block_limit);
    if (result == HERON_HTTP2_FRAME_MORE) { /* only a padded frame's missing Pad Length, the header itself sound */
      CHECK(padded && have == HERON_HTTP2_FRAME_HEADER_SIZE && verdict == HERON_HTTP2_FRAME_WHOLE);
      return 0;
    }
    if (result != HERON_HTTP2_FRAME_HEADER && result != HERON_HTTP2_FRAME_WHOLE) {
      CHECK(result == verdict && message != NULL && strlen(message) > 0);
      return 0;
    }
    CHECK(verdict == HERON_HTTP2_FRAME_WHOLE);
    if (result == HERON_HTTP2_FRAME_HEADER) { /* the payload still to come, or a block that goes on */
      CHECK(have - HERON_HTTP2_FRAME_HEADER_SIZE < f.length ||
            ((f.type == 0x1 || f.type == 0x5 || f.type == 0x9) && !(f.flags & 0x4)));
      at += HERON_HTTP2_FRAME_HEADER_SIZE + (f.length < have - HERON_HTTP2_FRAME_HEADER_SIZE ? f.length : have - HERON_HTTP2_FRAME_HEADER_SIZE);
      continue;
    }
    CHECK(have - HERON_HTTP2_FRAME_HEADER_SIZE >= f.length && f.length <= max);
    {
      volatile uint8_t sum = 0; /* every payload byte read: ASan sees one out of bounds */
      size_t i;
      for (i = 0; i < f.length; i++) sum ^= p[HERON_HTTP2_FRAME_HEADER_SIZE + i];
      (void)sum;
    }
    at += HERON_HTTP2_FRAME_HEADER_SIZE + f.length;
  }
  return 0;
}
