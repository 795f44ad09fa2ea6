/*
 * Heron's strict HTTP/1.1 request grammar (RFC 9112), in plain C.
 *
 * No Ruby dependency: the Ruby binding (heron_ext.c) and the libFuzzer
 * harness (fuzz/fuzz_http_parser.c) both link this file alone.
 *
 * Two machines live here:
 *
 *  - heron_http_parser: the request head (request line + header fields).
 *    It is resumable: heron_http_parser_execute() is called with the whole
 *    buffer received so far (same prefix each time) and continues at
 *    parser->nread, so no byte is scanned twice. Every position it keeps is
 *    an offset into that buffer, never a pointer, so the buffer may move
 *    between calls. It records spans (offsets) of the method, target and
 *    each field; the caller builds whatever it wants from them once the
 *    head is complete.
 *
 *  - heron_chunked_decoder: the chunked transfer coding (RFC 9112 §7.1),
 *    consuming input from the front and handing out decoded data spans.
 *
 * Errors carry the HTTP status to answer with (400, 414, 431, 501, 505) and
 * a short static message.
 */
#ifndef HERON_HTTP_PARSER_H
#define HERON_HTTP_PARSER_H

#include <stddef.h>
#include <stdint.h>

enum heron_http_result {
  HERON_HTTP_ERROR = -1,
  HERON_HTTP_NEED_MORE = 0,
  HERON_HTTP_DONE = 1
};

enum heron_http_target_form {
  HERON_TARGET_ORIGIN = 0,   /* /path?query */
  HERON_TARGET_ABSOLUTE = 1, /* http://authority/path?query */
  HERON_TARGET_ASTERISK = 2  /* * (OPTIONS only) */
};

/* A byte range [off, off + len) of the caller's buffer. */
typedef struct heron_http_span {
  size_t off;
  size_t len;
} heron_http_span;

typedef struct heron_http_field {
  heron_http_span name;
  heron_http_span value; /* surrounding OWS already trimmed */
} heron_http_field;

typedef struct heron_http_parser {
  /* limits, set by heron_http_parser_init() */
  size_t max_target_bytes;
  size_t max_header_bytes; /* header section: after the request line, final CRLF included */
  size_t max_header_fields;

  /* progress */
  int state;
  size_t nread;       /* bytes of the buffer consumed so far */
  size_t mark;        /* start of the token being scanned */
  size_t value_end;   /* end of the field value seen so far, trailing OWS excluded */
  size_t header_start;
  unsigned leading_empty_lines;
  unsigned version_index;

  /* request line */
  heron_http_span method;
  heron_http_span target;
  heron_http_span path;      /* for ABSOLUTE may be empty (means "/") */
  heron_http_span query;     /* len 0 and has_query 0 when there is no '?' */
  heron_http_span authority; /* ABSOLUTE only */
  int has_query;
  int target_form;
  int http_major;
  int http_minor;

  /* header fields */
  heron_http_field *fields;
  size_t nfields;
  size_t fields_capacity; /* grows (doubling) up to max_header_fields as requests need it */

  /* semantics, valid once DONE */
  int64_t content_length; /* -1 when absent */
  int chunked;
  int keepalive;
  unsigned host_seen : 1;
  unsigned te_seen : 1;
  unsigned te_last_chunked : 1;
  unsigned te_other : 1;
  unsigned conn_close : 1;
  unsigned conn_keepalive : 1;
  unsigned te_chunked_count;

  /* result */
  size_t head_length; /* set when DONE */
  int error_status;   /* 0, or the HTTP status to answer with */
  const char *error;  /* static message, or NULL */
} heron_http_parser;

/* Allocates a small field table (it grows to max_header_fields when a request has more
 * fields, so an idle parser stays small). Returns 0, or -1 when out of memory. */
int heron_http_parser_init(heron_http_parser *parser, size_t max_target_bytes,
                           size_t max_header_bytes, size_t max_header_fields);
void heron_http_parser_free(heron_http_parser *parser);
/* Forgets the current request; limits and the field table are kept. */
void heron_http_parser_reset(heron_http_parser *parser);
/*
 * Continues parsing buf[parser->nread, len). buf must start with the same
 * bytes as in earlier calls. Returns HERON_HTTP_DONE (head_length set),
 * HERON_HTTP_NEED_MORE, or HERON_HTTP_ERROR (error_status and error set;
 * further calls keep returning the error).
 */
int heron_http_parser_execute(heron_http_parser *parser, const char *buf, size_t len);

typedef void (*heron_chunk_data_cb)(void *userdata, const char *data, size_t len);

typedef struct heron_chunked_decoder {
  int state;
  uint64_t remaining;      /* chunk data bytes still to come */
  unsigned size_digits;
  size_t ext_bytes;        /* bytes of chunk extensions on the current size line */
  size_t ext_total;        /* bytes of chunk extensions over the whole body */
  size_t max_ext_bytes;    /* per size line (400 beyond it) */
  size_t max_ext_total;    /* per body (400 beyond it) */
  size_t trailer_bytes;
  size_t trailer_fields;
  size_t max_trailer_bytes;
  size_t max_trailer_fields;
  int error_status;
  const char *error;
} heron_chunked_decoder;

/* Default limits on chunk extensions (they are parsed and dropped, and count
 * against no body limit, so they need bounds of their own): the bytes after the
 * chunk size on one size line, and the sum of those over the whole body. */
#define HERON_MAX_CHUNK_EXT_BYTES 4096
#define HERON_MAX_CHUNK_EXT_TOTAL 65536

/* Ready to decode a new body; extension limits are the defaults above. */
void heron_chunked_decoder_init(heron_chunked_decoder *dec, size_t max_trailer_bytes,
                                size_t max_trailer_fields);
/* Sets the chunk-extension limits (bytes per size line, bytes per body). */
void heron_chunked_decoder_limit_extensions(heron_chunked_decoder *dec, size_t max_per_chunk,
                                            size_t max_total);
/*
 * Decodes buf[0, len). Data is handed to on_data (spans of buf). *consumed
 * is set to the bytes used: all of len unless the body ended (DONE), in
 * which case the rest belongs to whatever follows. Returns HERON_HTTP_DONE
 * once the last chunk and the trailer section are consumed,
 * HERON_HTTP_NEED_MORE, or HERON_HTTP_ERROR.
 */
int heron_chunked_decoder_execute(heron_chunked_decoder *dec, const char *buf, size_t len,
                                  size_t *consumed, heron_chunk_data_cb on_data, void *userdata);

#endif
