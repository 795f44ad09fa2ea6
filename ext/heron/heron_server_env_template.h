/*
 * Heron::Server::EnvTemplate (heron_server_env_template.c): the env template, a Hash with room
 * for a whole request's env.
 */
#ifndef HERON_SERVER_ENVTEMPLATE_H
#define HERON_SERVER_ENVTEMPLATE_H

#include <ruby.h>

/* Defines Heron::Server::EnvTemplate under the Heron module (called once, by heron_ext.c). */
void Init_Heron_Server_EnvTemplate(VALUE mHeron);

#endif
