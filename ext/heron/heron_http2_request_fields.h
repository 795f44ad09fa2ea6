/*
 * Heron::HTTP2::RequestFields (heron_http2_request_fields.c): the rules that turn a request's
 * HTTP/2 header fields into its Rack env (RFC 9113 §8.3), in one place for the two ways fields
 * come: straight from a header block's bytes (Heron::HTTP2::Decoder#request) and from decoded
 * fields (RequestFields.fill, for HTTP2::EnvBuilder).
 */
#ifndef HERON_HTTP2_REQUEST_FIELDS_H
#define HERON_HTTP2_REQUEST_FIELDS_H

#include <ruby.h>

/* One request's fields being added to its env. On the C stack of the call filling it. */
typedef struct Heron_HTTP2_RequestFields {
  VALUE env;
  VALUE method, path, authority; /* the pseudo-headers' values, Qundef until seen */
  int scheme;                     /* :scheme seen */
  int regular;                    /* a regular field came (no pseudo-header may follow) */
  VALUE error;                    /* the first stream error's message, or Qnil */
  const char *error_class;        /* and its class's name */
} Heron_HTTP2_RequestFields;

void Heron_HTTP2_RequestFields_start(Heron_HTTP2_RequestFields *r, VALUE env);

/* The env key of a regular field's name: Qnil for a name dropped (with "_", as over HTTP/1.1),
 * Qfalse for a malformed one (upper-case, not a token, connection-specific; r's error is set). */
VALUE Heron_HTTP2_RequestFields_key(Heron_HTTP2_RequestFields *r, const char *name, size_t len);

/* Adds a field: a pseudo-header (name starting with ':'), or a regular one whose key is given
 * (Heron_HTTP2_RequestFields_key's, or a cached one: Qundef to have it computed). value is the
 * field's value, a binary String (or an ASCII one). Does nothing once an error is set. */
void Heron_HTTP2_RequestFields_add(Heron_HTTP2_RequestFields *r, const char *name, size_t name_len, VALUE key,
                                   VALUE value);

/* Completes the env from the pseudo-headers (REQUEST_METHOD, REQUEST_URI, PATH_INFO,
 * QUERY_STRING, HTTP_HOST from :authority when no host field came). Returns Qnil, or the stream
 * error: an EnvBuilder::Malformed (reset with PROTOCOL_ERROR) or EnvBuilder::InvalidTarget
 * (answered 400). */
VALUE Heron_HTTP2_RequestFields_finish(Heron_HTTP2_RequestFields *r);

/* Defines Heron::HTTP2::RequestFields (called once, by heron_ext.c). */
void Init_Heron_HTTP2_RequestFields(VALUE mHeron);

#endif
