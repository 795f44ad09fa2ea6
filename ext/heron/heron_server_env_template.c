/*
 * Heron::Server::EnvTemplate.with_room(entries, capacity): the server's env template as a Hash
 * with room for a whole request's env. Each request's env starts as a copy of the template
 * (Request::EnvBuilder#fresh), and a Hash copy keeps the table's size. Ruby keeps a Hash of up
 * to 8 entries in a small array; the 9th entry converts it to a hash table, hashing every key
 * again, and the table then grows twice more (to 16, to 32 entries) before a request's env is
 * complete. A template made here is a hash table of `capacity` entries already, so its copies
 * never convert or grow for an ordinary request (about 2,000 instructions a request on Ruby
 * 3.1). The rest of the template is Ruby (lib/heron/server/env_template.rb).
 */
#include "heron_server_env_template.h"
#include <ruby.h>

#if defined(HAVE_RB_HASH_NEW_CAPA)
#define Heron_Server_EnvTemplate_sized_hash(capacity) rb_hash_new_capa(capacity)
#elif defined(HAVE_RB_HASH_NEW_WITH_SIZE)
/* Exported by libruby 3.1 but declared only in its internal headers. */
VALUE rb_hash_new_with_size(st_index_t size);
#define Heron_Server_EnvTemplate_sized_hash(capacity) rb_hash_new_with_size((st_index_t)(capacity))
#else
#define Heron_Server_EnvTemplate_sized_hash(capacity) rb_hash_new()
#endif

static int Heron_Server_EnvTemplate_copy_entry(VALUE key, VALUE value, VALUE hash)
{
  rb_hash_aset(hash, key, value);
  return ST_CONTINUE;
}

/*
 * call-seq: Heron::Server::EnvTemplate.with_room(entries, capacity) -> Hash
 *
 * A new frozen Hash holding entries' entries, made with room for `capacity` entries in all
 * (where the Ruby build allows it: else an ordinary Hash).
 */
static VALUE Heron_Server_EnvTemplate_with_room(VALUE self, VALUE entries, VALUE capacity)
{
  long room = NUM2LONG(capacity);
  VALUE hash;
  Check_Type(entries, T_HASH);
  if (room < (long)RHASH_SIZE(entries)) room = (long)RHASH_SIZE(entries);
  hash = Heron_Server_EnvTemplate_sized_hash(room);
  rb_hash_foreach(entries, Heron_Server_EnvTemplate_copy_entry, hash);
  return rb_obj_freeze(hash);
}

void Init_Heron_Server_EnvTemplate(VALUE heron)
{
  VALUE cServer = rb_define_class_under(heron, "Server", rb_cObject);
  VALUE mEnvTemplate = rb_define_module_under(cServer, "EnvTemplate");
  rb_define_singleton_method(mEnvTemplate, "with_room", Heron_Server_EnvTemplate_with_room, 2);
}
