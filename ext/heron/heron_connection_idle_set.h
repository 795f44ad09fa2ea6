/*
 * Heron::Connection::IdleSet (heron_connection_idle_set.c): the epoll set of parked connections.
 */
#ifndef HERON_CONNECTION_IDLESET_H
#define HERON_CONNECTION_IDLESET_H

#include <ruby.h>

/* Defines Heron::Connection::IdleSet under the Heron module (called once, by heron_ext.c). */
void Init_Heron_Connection_IdleSet(VALUE mHeron);

#endif
