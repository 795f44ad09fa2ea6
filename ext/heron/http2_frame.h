/*
 * An HTTP/2 frame header read and checked (RFC 9113 §4.1, §4.2, §6), in plain C with no Ruby
 * in it, as the HTTP/1.1 grammar (http_parser.h) and HPACK (hpack_decoder.h) are: the Ruby
 * binding is heron_http2_frame_reader.c (Heron::HTTP2::FrameReader), the libFuzzer harness
 * fuzz/fuzz_http2_frame.c.
 */
#ifndef HERON_HTTP2_FRAME_H
#define HERON_HTTP2_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define HERON_HTTP2_FRAME_HEADER_SIZE 9
#define HERON_HTTP2_MIN_FRAME_SIZE 16384UL    /* SETTINGS_MAX_FRAME_SIZE's initial value and least */
#define HERON_HTTP2_MAX_FRAME_SIZE 16777215UL /* its greatest, 2^24 - 1 */

enum {
  HERON_HTTP2_DATA = 0x0, HERON_HTTP2_HEADERS = 0x1, HERON_HTTP2_RST_STREAM = 0x3, HERON_HTTP2_SETTINGS = 0x4,
  HERON_HTTP2_PUSH_PROMISE = 0x5, HERON_HTTP2_PING = 0x6, HERON_HTTP2_GOAWAY = 0x7, HERON_HTTP2_WINDOW_UPDATE = 0x8,
  HERON_HTTP2_CONTINUATION = 0x9
};
enum { HERON_HTTP2_ACK = 0x1, HERON_HTTP2_END_HEADERS = 0x4, HERON_HTTP2_PADDED = 0x8, HERON_HTTP2_PRIORITY = 0x20 };

/* What heron_http2_frame_read found at the front of the bytes it was given. */
typedef enum heron_http2_frame_result {
  HERON_HTTP2_FRAME_MORE = 0,   /* less than the header (and a padded frame's Pad Length): take nothing */
  HERON_HTTP2_FRAME_HEADER,     /* take the header; the payload is still to come, or CONTINUATION follows */
  HERON_HTTP2_FRAME_WHOLE,      /* take the header and the payload */
  HERON_HTTP2_FRAME_SIZE_ERROR, /* FRAME_SIZE_ERROR (0x6): take nothing, end the connection */
  HERON_HTTP2_FRAME_PROTOCOL_ERROR, /* PROTOCOL_ERROR (0x1) */
  HERON_HTTP2_FRAME_TOO_LARGE   /* a field block's first frame past its limit: ENHANCE_YOUR_CALM (0xb) */
} heron_http2_frame_result;

/* A frame header's fields. */
typedef struct heron_http2_frame {
  size_t length;
  unsigned type, flags;
  uint32_t stream_id; /* its reserved bit cleared */
} heron_http2_frame;

/*
 * Reads the frame header at the front of `p` (`have` bytes) into `frame` and checks it: a
 * length past `max_frame_size`, one its type does not allow (RST_STREAM and WINDOW_UPDATE 4,
 * PING 8, SETTINGS a multiple of 6 and an ACK 0, GOAWAY at least 8, room for a Pad Length,
 * priority fields, a promised stream id) is a size error; padding past what those fields
 * leave, SETTINGS, PING or GOAWAY on a stream a protocol error; a HEADERS, PUSH_PROMISE or
 * CONTINUATION frame longer than `block_limit` too large. On an error `*message` (when
 * `message` is given) says which, a static string.
 */
heron_http2_frame_result heron_http2_frame_read(const uint8_t *p, size_t have, size_t max_frame_size, size_t block_limit,
                                                heron_http2_frame *frame, const char **message);

#endif
