/*
 * Heron::HTTPParser (heron_http_parser.c): the Ruby binding of the HTTP/1.1 request parser
 * (the grammar, with no Ruby in it, is http_parser.h).
 */
#ifndef HERON_HTTPPARSER_H
#define HERON_HTTPPARSER_H

#include <ruby.h>

/* Defines Heron::HTTPParser under the Heron module (called once, by heron_ext.c). */
void Init_Heron_HTTPParser(VALUE mHeron);

#endif
