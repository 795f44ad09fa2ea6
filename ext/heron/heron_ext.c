/*
 * The Heron core extension (heron/heron_ext.so): its Init defines each C class, one file each,
 * whose header declares the class's Init_ function.
 *
 *   Heron::Clock            heron_clock.c (the monotonic clock; documented in clock.rb)
 *   Heron::HTTPParser       heron_http_parser.c (the binding; the grammar is http_parser.c)
 *   Heron::Response::Head   heron_response_head.c
 *   Heron::Connection::IdleSet  heron_connection_idle_set.c (epoll, for parked connections)
 *   Heron::Connection::StackScrub  heron_connection_stack_scrub.c (before a fiber waits)
 *   Heron::Connection::ReadBuffer  heron_connection_read_buffer.c (drops parsed bytes in place)
 *   Heron::Log::RequestId   heron_log_request_id.c (generate and assign; the rest is Ruby)
 *   Heron::Server::EnvTemplate  heron_server_env_template.c (with_room; the rest is Ruby)
 *   Heron::WebSocket::Mask  heron_websocket_mask.c (unmasking client frames)
 *   Heron::HTTP2::Decoder   heron_http2_decoder.c (the binding; HPACK itself is hpack_decoder.c)
 *   Heron::HTTP2::RequestFields  heron_http2_request_fields.c (HTTP/2 fields into the env)
 *   Heron::HTTP2::Encoder   heron_http2_encoder.c (HPACK, response headers)
 *   Heron::HTTP2::FrameReader  heron_http2_frame_reader.c (the binding; reading a frame header
 *                              and its checks are http2_frame.c)
 *
 * The profiler's C classes are the heron-profiler gem's extension
 * (heron-profiler/ext/heron_profiler), loaded only when profiling is on.
 */
#include <ruby.h>
#include "heron_clock.h"
#include "heron_http_parser.h"
#include "heron_response_head.h"
#include "heron_connection_idle_set.h"
#include "heron_connection_stack_scrub.h"
#include "heron_connection_read_buffer.h"
#include "heron_log_request_id.h"
#include "heron_server_env_template.h"
#include "heron_websocket_mask.h"
#include "heron_http2_request_fields.h"
#include "heron_http2_decoder.h"
#include "heron_http2_encoder.h"
#include "heron_http2_frame_reader.h"

/* Called by Ruby when heron/heron_ext.so is required. */
void Init_heron_ext(void);

void Init_heron_ext(void)
{
  VALUE mHeron = rb_define_module("Heron");
  Init_Heron_Clock(mHeron);
  Init_Heron_HTTPParser(mHeron);
  Init_Heron_Response_Head(mHeron);
  Init_Heron_Connection_IdleSet(mHeron);
  Init_Heron_Connection_StackScrub(mHeron);
  Init_Heron_Connection_ReadBuffer(mHeron);
  Init_Heron_Log_RequestId(mHeron);
  Init_Heron_Server_EnvTemplate(mHeron);
  Init_Heron_WebSocket_Mask(mHeron);
  Init_Heron_HTTP2_RequestFields(mHeron);
  Init_Heron_HTTP2_Decoder(mHeron);
  Init_Heron_HTTP2_Encoder(mHeron);
  Init_Heron_HTTP2_FrameReader(mHeron);
}
