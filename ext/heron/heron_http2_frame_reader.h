/*
 * Heron::HTTP2::FrameReader (heron_http2_frame_reader.c): HTTP/2 frames taken off the front of
 * a connection's read buffer, one call per frame, their bounds checked.
 */
#ifndef HERON_HTTP2_FRAME_READER_H
#define HERON_HTTP2_FRAME_READER_H

#include <ruby.h>

/* Defines Heron::HTTP2::FrameReader (called once, by heron_ext.c). */
void Init_Heron_HTTP2_FrameReader(VALUE mHeron);

#endif
