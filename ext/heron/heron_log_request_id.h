/*
 * Heron::Log::RequestId (heron_log_request_id.c): request ids kept or generated.
 */
#ifndef HERON_LOG_REQUESTID_H
#define HERON_LOG_REQUESTID_H

#include <ruby.h>

/* Defines Heron::Log::RequestId under the Heron module (called once, by heron_ext.c). */
void Init_Heron_Log_RequestId(VALUE mHeron);

#endif
