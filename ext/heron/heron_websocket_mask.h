/*
 * Heron::WebSocket::Mask (heron_websocket_mask.c): unmasking of client frame payloads.
 */
#ifndef HERON_WEBSOCKET_MASK_H
#define HERON_WEBSOCKET_MASK_H

#include <ruby.h>

/* Defines Heron::WebSocket::Mask under the Heron module (called once, by heron_ext.c). */
void Init_Heron_WebSocket_Mask(VALUE mHeron);

#endif
