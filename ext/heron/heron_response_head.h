/*
 * Heron::Response::Head (heron_response_head.c): response heads assembled from a Rack headers Hash.
 */
#ifndef HERON_RESPONSE_HEAD_H
#define HERON_RESPONSE_HEAD_H

#include <ruby.h>

/* Defines Heron::Response::Head under the Heron module (called once, by heron_ext.c). */
void Init_Heron_Response_Head(VALUE mHeron);

#endif
