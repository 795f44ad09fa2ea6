/*
 * The HTTP/2 connection error the C classes raise, as protocol-http2 raises it
 * (Protocol::HTTP2::ProtocolError with its error code), which Session answers with GOAWAY.
 */
#ifndef HERON_HTTP2_ERROR_H
#define HERON_HTTP2_ERROR_H

#include <ruby.h>

#define HERON_HTTP2_PROTOCOL_ERROR 0x1
#define HERON_HTTP2_ENHANCE_YOUR_CALM 0xb

/* Raises Protocol::HTTP2::ProtocolError.new(message, code). */
NORETURN(void Heron_HTTP2_raise_protocol_error(VALUE message, int code));

#endif
