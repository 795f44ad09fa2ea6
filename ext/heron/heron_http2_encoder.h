/*
 * Heron::HTTP2::Encoder (heron_http2_encoder.c): the HPACK encoder (RFC 7541) of one HTTP/2
 * connection's response headers.
 */
#ifndef HERON_HTTP2_ENCODER_H
#define HERON_HTTP2_ENCODER_H

#include <ruby.h>

/* Defines Heron::HTTP2::Encoder (called once, by heron_ext.c). */
void Init_Heron_HTTP2_Encoder(VALUE mHeron);

#endif
