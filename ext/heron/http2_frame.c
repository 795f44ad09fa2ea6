/*
 * HTTP/2 frame headers, read and checked: see http2_frame.h. Plain C (no Ruby), fuzzed by
 * fuzz/fuzz_http2_frame.c.
 */
#include "http2_frame.h"

/* The bytes a frame's payload must have before its data: Pad Length, the priority fields, the
 * promised stream id. */
static size_t heron_http2_frame_fixed(unsigned type, unsigned flags)
{
  size_t fixed = 0;
  if ((type == HERON_HTTP2_DATA || type == HERON_HTTP2_HEADERS || type == HERON_HTTP2_PUSH_PROMISE) && (flags & HERON_HTTP2_PADDED)) fixed += 1;
  if (type == HERON_HTTP2_HEADERS && (flags & HERON_HTTP2_PRIORITY)) fixed += 5;
  if (type == HERON_HTTP2_PUSH_PROMISE) fixed += 4;
  return fixed;
}

static heron_http2_frame_result heron_http2_frame_fail(heron_http2_frame_result result, const char *why, const char **message)
{
  if (message) *message = why;
  return result;
}

/* The fault of a header no payload can make right, by its type; HERON_HTTP2_FRAME_WHOLE when none. */
static heron_http2_frame_result heron_http2_frame_check(const heron_http2_frame *f, size_t max_frame_size, size_t block_limit,
                                                        const char **message)
{
  heron_http2_frame_result size = HERON_HTTP2_FRAME_SIZE_ERROR, protocol = HERON_HTTP2_FRAME_PROTOCOL_ERROR;
  if (f->length > max_frame_size) return heron_http2_frame_fail(size, "frame longer than SETTINGS_MAX_FRAME_SIZE", message);
  switch (f->type) {
  case HERON_HTTP2_SETTINGS:
    if (f->stream_id != 0) return heron_http2_frame_fail(protocol, "SETTINGS on a stream", message);
    if ((f->flags & HERON_HTTP2_ACK) && f->length != 0) return heron_http2_frame_fail(size, "SETTINGS acknowledgement with a payload", message);
    if (f->length % 6 != 0) return heron_http2_frame_fail(size, "SETTINGS length not a multiple of 6", message);
    break;
  case HERON_HTTP2_PING:
    if (f->stream_id != 0) return heron_http2_frame_fail(protocol, "PING on a stream", message);
    if (f->length != 8) return heron_http2_frame_fail(size, "PING length not 8", message);
    break;
  case HERON_HTTP2_GOAWAY:
    if (f->stream_id != 0) return heron_http2_frame_fail(protocol, "GOAWAY on a stream", message);
    if (f->length < 8) return heron_http2_frame_fail(size, "GOAWAY shorter than 8", message);
    break;
  case HERON_HTTP2_RST_STREAM:
  case HERON_HTTP2_WINDOW_UPDATE:
    if (f->length != 4) return heron_http2_frame_fail(size, "frame length not 4", message);
    break;
  case HERON_HTTP2_HEADERS:
  case HERON_HTTP2_PUSH_PROMISE:
  case HERON_HTTP2_CONTINUATION:
    if (f->length > block_limit) return heron_http2_frame_fail(HERON_HTTP2_FRAME_TOO_LARGE, "header block too large", message);
    break;
  default:
    break;
  }
  if (f->length < heron_http2_frame_fixed(f->type, f->flags)) return heron_http2_frame_fail(size, "frame too short for its fields", message);
  return HERON_HTTP2_FRAME_WHOLE;
}

heron_http2_frame_result heron_http2_frame_read(const uint8_t *p, size_t have, size_t max_frame_size, size_t block_limit,
                                                heron_http2_frame *frame, const char **message)
{
  heron_http2_frame_result fault;
  int padded;
  if (have < HERON_HTTP2_FRAME_HEADER_SIZE) return HERON_HTTP2_FRAME_MORE;
  frame->length = ((size_t)p[0] << 16) | ((size_t)p[1] << 8) | (size_t)p[2];
  frame->type = p[3];
  frame->flags = p[4];
  frame->stream_id = ((uint32_t)(p[5] & 0x7f) << 24) | ((uint32_t)p[6] << 16) | ((uint32_t)p[7] << 8) | (uint32_t)p[8];
  fault = heron_http2_frame_check(frame, max_frame_size, block_limit, message);
  if (fault != HERON_HTTP2_FRAME_WHOLE) return fault;
  padded = (frame->type == HERON_HTTP2_DATA || frame->type == HERON_HTTP2_HEADERS || frame->type == HERON_HTTP2_PUSH_PROMISE) &&
           (frame->flags & HERON_HTTP2_PADDED);
  if (padded) {
    if (have < HERON_HTTP2_FRAME_HEADER_SIZE + 1) return HERON_HTTP2_FRAME_MORE;
    /* fixed <= length: checked above */
    if ((size_t)p[HERON_HTTP2_FRAME_HEADER_SIZE] > frame->length - heron_http2_frame_fixed(frame->type, frame->flags))
      return heron_http2_frame_fail(HERON_HTTP2_FRAME_PROTOCOL_ERROR, "padding longer than the payload", message);
  }
  if (have - HERON_HTTP2_FRAME_HEADER_SIZE < frame->length) return HERON_HTTP2_FRAME_HEADER;
  if ((frame->type == HERON_HTTP2_HEADERS || frame->type == HERON_HTTP2_PUSH_PROMISE || frame->type == HERON_HTTP2_CONTINUATION) &&
      !(frame->flags & HERON_HTTP2_END_HEADERS))
    return HERON_HTTP2_FRAME_HEADER;
  return HERON_HTTP2_FRAME_WHOLE;
}
