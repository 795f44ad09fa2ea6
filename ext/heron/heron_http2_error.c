/* The HTTP/2 connection error the C classes raise: see heron_http2_error.h. */
#include "heron_http2_error.h"

void Heron_HTTP2_raise_protocol_error(VALUE message, int code)
{
  VALUE args[2];
  args[0] = message;
  args[1] = INT2FIX(code);
  rb_exc_raise(rb_class_new_instance(2, args, rb_path2class("Protocol::HTTP2::ProtocolError")));
}
