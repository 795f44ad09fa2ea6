/*
 * Heron::HTTP2::Decoder (heron_http2_decoder.c): the Ruby binding of the HPACK decoder (the
 * decoding itself, with no Ruby in it, is hpack_decoder.h).
 */
#ifndef HERON_HTTP2_DECODER_H
#define HERON_HTTP2_DECODER_H

#include <ruby.h>

/* Defines Heron::HTTP2::Decoder (called once, by heron_ext.c). */
void Init_Heron_HTTP2_Decoder(VALUE mHeron);

#endif
