/*
 * Heron::Profiler::Store::Ring, the ring buffer under Heron::Profiler::Store (Ruby): every
 * profiled request pushes its record, so pushing is a C call that the GVL makes atomic (no
 * Mutex, no block). Readers take a snapshot with #entries; lib/heron/profiler/store.rb builds
 * #recent, #find and #update on it.
 *
 * A RequestProfile is not kept as a Ruby object: its stamps and counters are copied into the
 * slot and its method, path, query and id into a byte buffer the slot reuses; its queries and
 * N+1 findings, when it has any, into one String (Marshal, see Heron_Profiler_Store_Ring_pack). Kept as
 * objects, a few hundred records outlived enough minor GCs to be promoted to the old
 * generation and then died there, which quadrupled the major GCs of a hello world profiled on
 * every request, and cost /users?eager=1 (five Query objects a record) a third of its req/s
 * (docs/profiling.md). #entries rebuilds RequestProfiles from the copies. Any other record (a
 * Hash) is kept as is.
 *
 *   Store::Ring.new(capacity = 200)
 *   #push(record) #amend(profile) #entries(limit = nil) #size #capacity #clear
 */
#include "profiler.h"
#include <ruby/encoding.h>
#include <string.h>

#define DEFAULT_CAPACITY 200

#define MAX_TEXT 2048 /* bytes kept of a path or a query string */

enum { TEXT_METHOD, TEXT_PATH, TEXT_QUERY, TEXT_ID, TEXTS };

typedef struct Heron_Profiler_Store_Ring_slot {
  VALUE record; /* a record kept as given; Qnil when `copied` or empty */
  int copied;   /* whether `copy`, `text` and `packed` hold a RequestProfile */
  VALUE packed; /* its queries and N+1 findings (Query.pack), or Qnil when it had none */
  Heron_Profiler_RequestProfile copy; /* only status, queries and n_plus_one of its VALUEs are set */
  char *text;   /* the TEXTS strings, one after another */
  size_t text_capa;
  long length[TEXTS]; /* -1: nil */
  int encoding[TEXTS];
} Heron_Profiler_Store_Ring_slot;

typedef struct Heron_Profiler_Store_Ring {
  Heron_Profiler_Store_Ring_slot *slots; /* `capacity` of them */
  long capacity, next, size;
} Heron_Profiler_Store_Ring;

static void Heron_Profiler_Store_Ring_mark(void *ptr)
{
  Heron_Profiler_Store_Ring *store = ptr;
  long i;
  for (i = 0; store->slots && i < store->capacity; i++) {
    Heron_Profiler_Store_Ring_slot *slot = &store->slots[i];
    rb_gc_mark(slot->record);
    if (!slot->copied) continue;
    rb_gc_mark(slot->copy.status);
    rb_gc_mark(slot->packed);
  }
}

static void Heron_Profiler_Store_Ring_free_slots(Heron_Profiler_Store_Ring *store)
{
  long i;
  for (i = 0; store->slots && i < store->capacity; i++) ruby_xfree(store->slots[i].text);
  ruby_xfree(store->slots);
  store->slots = NULL;
}

static void Heron_Profiler_Store_Ring_free(void *ptr)
{
  Heron_Profiler_Store_Ring_free_slots(ptr);
  ruby_xfree(ptr);
}

static size_t Heron_Profiler_Store_Ring_memsize(const void *ptr)
{
  const Heron_Profiler_Store_Ring *store = ptr;
  size_t size = sizeof(*store);
  long i;
  for (i = 0; store->slots && i < store->capacity; i++) size += sizeof(store->slots[i]) + store->slots[i].text_capa;
  return size;
}

static const rb_data_type_t Heron_Profiler_Store_Ring_type = {
  "Heron::Profiler::Store::Ring",
  { Heron_Profiler_Store_Ring_mark, Heron_Profiler_Store_Ring_free, Heron_Profiler_Store_Ring_memsize, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static Heron_Profiler_Store_Ring *Heron_Profiler_Store_Ring_get(VALUE self)
{
  Heron_Profiler_Store_Ring *store = rb_check_typeddata(self, &Heron_Profiler_Store_Ring_type);
  if (!store->slots) rb_raise(rb_eRuntimeError, "Heron::Profiler::Store not initialized");
  return store;
}

static VALUE Heron_Profiler_Store_Ring_alloc(VALUE klass)
{
  Heron_Profiler_Store_Ring *store;
  return TypedData_Make_Struct(klass, Heron_Profiler_Store_Ring, &Heron_Profiler_Store_Ring_type, store);
}

/*
 * call-seq: Store.new(capacity = 200)
 *
 * An empty store that keeps the last `capacity` records (a positive Integer, else ArgumentError).
 */
static VALUE Heron_Profiler_Store_Ring_initialize(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_Store_Ring *store = rb_check_typeddata(self, &Heron_Profiler_Store_Ring_type);
  VALUE capacity;
  long i, count;
  rb_scan_args(argc, argv, "01", &capacity);
  count = NIL_P(capacity) ? DEFAULT_CAPACITY : NUM2LONG(capacity);
  if (count <= 0) rb_raise(rb_eArgError, "capacity must be positive");
  Heron_Profiler_Store_Ring_free_slots(store);
  store->slots = ruby_xcalloc((size_t)count, sizeof(Heron_Profiler_Store_Ring_slot));
  store->capacity = count;
  for (i = 0; i < count; i++) store->slots[i].record = store->slots[i].packed = Qnil;
  store->next = store->size = 0;
  return self;
}

/* The strings a slot keeps of a profile: 0 when one is neither a String nor nil. */
static int Heron_Profiler_Store_Ring_texts(const Heron_Profiler_RequestProfile *p, VALUE texts[TEXT_ID])
{
  int i;
  texts[TEXT_METHOD] = p->method;
  texts[TEXT_PATH] = p->path;
  texts[TEXT_QUERY] = p->query;
  for (i = 0; i < TEXT_ID; i++) {
    if (!NIL_P(texts[i]) && !RB_TYPE_P(texts[i], T_STRING)) return 0;
  }
  return 1;
}

/* Copies the strings and the id into the slot's buffer (growing it; may run the GC). */
static void Heron_Profiler_Store_Ring_write_texts(Heron_Profiler_Store_Ring_slot *slot, VALUE texts[TEXT_ID], const char *id, size_t id_length)
{
  size_t need = id_length, at = 0;
  int i;
  for (i = 0; i < TEXT_ID; i++) {
    long length = NIL_P(texts[i]) ? -1 : RSTRING_LEN(texts[i]);
    slot->length[i] = length > MAX_TEXT ? MAX_TEXT : length;
    if (length > 0) need += (size_t)slot->length[i];
  }
  if (need > slot->text_capa) {
    slot->text = ruby_xrealloc(slot->text, need);
    slot->text_capa = need;
  }
  for (i = 0; i < TEXT_ID; i++) {
    if (slot->length[i] < 0) continue;
    slot->encoding[i] = RB_ENCODING_GET_INLINED(texts[i]);
    if (slot->encoding[i] == RUBY_ENCODING_INLINE_MAX) slot->encoding[i] = rb_enc_get_index(texts[i]);
    if (slot->length[i] > 0) memcpy(slot->text + at, RSTRING_PTR(texts[i]), (size_t)slot->length[i]);
    at += (size_t)slot->length[i];
  }
  slot->length[TEXT_ID] = (long)id_length;
  slot->encoding[TEXT_ID] = rb_utf8_encindex();
  memcpy(slot->text + at, id, id_length);
}

/* Marshal.dump of `parts` (for rb_protect). */
static VALUE Heron_Profiler_Store_Ring_dump(VALUE parts)
{
  return rb_marshal_dump(parts, Qnil);
}

/*
 * A profile's queries, N+1 findings and extras (custom steps, per-shape counts) packed into one
 * String (Marshal), or Qnil when it has none: the Store keeps that instead of their hundreds of
 * objects, which would otherwise reach Ruby's old generation and die there, bringing on major
 * GCs (see docs/profiling.md). What cannot be packed (a StandardError from Marshal) is kept as
 * the Array of the three. It runs Ruby code (the objects' marshal_dump), so callers do it
 * before they pick a slot: another thread may push meanwhile.
 */
static VALUE Heron_Profiler_Store_Ring_pack(const Heron_Profiler_RequestProfile *p)
{
  VALUE parts, packed;
  int state = 0;
  if (p->queries == Heron_Profiler_RequestProfile_NONE && p->n_plus_one == Heron_Profiler_RequestProfile_NONE && NIL_P(p->extras)) return Qnil;
  parts = rb_ary_new_from_args(3, p->queries, p->n_plus_one, p->extras);
  packed = rb_protect(Heron_Profiler_Store_Ring_dump, parts, &state);
  if (!state) return packed;
  if (!rb_obj_is_kind_of(rb_errinfo(), rb_eStandardError)) rb_jump_tag(state);
  rb_set_errinfo(Qnil);
  return parts;
}

/* What Heron_Profiler_Store_Ring_pack returned, as [queries, findings, extras]: new copies when it
 * was packed. */
static VALUE Heron_Profiler_Store_Ring_unpack(VALUE packed)
{
  return RB_TYPE_P(packed, T_STRING) ? rb_marshal_load(packed) : packed;
}

/* Copies a RequestProfile into a slot: its numbers, its strings' bytes, its status, and its
 * `packed` queries and findings. Runs no Ruby code. Returns 0, copying nothing, when its
 * strings are not Strings. */
static int Heron_Profiler_Store_Ring_copy(VALUE self, Heron_Profiler_Store_Ring_slot *slot, VALUE profile, const Heron_Profiler_RequestProfile *p, VALUE packed)
{
  VALUE texts[TEXT_ID];
  char id[HERON_PROFILER_ID_MAX];
  if (!Heron_Profiler_Store_Ring_texts(p, texts)) return 0;
  slot->copied = 0;
  slot->record = slot->packed = Qnil;
  Heron_Profiler_Store_Ring_write_texts(slot, texts, id, Heron_Profiler_RequestProfile_id_text(profile, p, id));
  slot->copy = *p; /* from here on nothing allocates until the barriers below */
  slot->copy.method = slot->copy.path = slot->copy.query = slot->copy.id = Qnil;
  slot->copy.fiber = slot->copy.fibers = slot->copy.extras = Qnil;
  slot->copy.queries = slot->copy.n_plus_one = Heron_Profiler_RequestProfile_NONE;
  RB_OBJ_WRITE(self, &slot->copy.status, p->status);
  RB_OBJ_WRITE(self, &slot->packed, packed);
  RB_GC_GUARD(packed);
  slot->copied = 1;
  return 1;
}

/* The slot of the `i`th newest record (0: the newest). */
static Heron_Profiler_Store_Ring_slot *Heron_Profiler_Store_Ring_newest(const Heron_Profiler_Store_Ring *store, long i)
{
  return &store->slots[((store->next - 1 - i) % store->capacity + store->capacity) % store->capacity];
}

/* Whether `value` is a Store. */
int Heron_Profiler_Store_Ring_p(VALUE value)
{
  return rb_typeddata_is_kind_of(value, &Heron_Profiler_Store_Ring_type);
}

/* Adds a record (`p`: its struct when it is a RequestProfile, else NULL), dropping the oldest
 * when full. */
static void Heron_Profiler_Store_Ring_add(VALUE self, Heron_Profiler_Store_Ring *store, VALUE record, const Heron_Profiler_RequestProfile *p)
{
  VALUE packed = p ? Heron_Profiler_Store_Ring_pack(p) : Qnil;
  Heron_Profiler_Store_Ring_slot *slot = &store->slots[store->next];
  if (!p || !Heron_Profiler_Store_Ring_copy(self, slot, record, p, packed)) {
    slot->copied = 0;
    RB_OBJ_WRITE(self, &slot->record, record);
  }
  store->next = (store->next + 1) % store->capacity;
  if (store->size < store->capacity) store->size++;
}

/* call-seq: push(record) -> record. Adds a record, dropping the oldest when full. */
VALUE Heron_Profiler_Store_Ring_push(VALUE self, VALUE record)
{
  const Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_p(record) ? HERON_PROFILE(record) : NULL;
  Heron_Profiler_Store_Ring_add(self, Heron_Profiler_Store_Ring_get(self), record, p);
  return record;
}

/* #push of a RequestProfile, for a caller that knows `self` is an initialized Store. */
void Heron_Profiler_Store_Ring_push_profile(VALUE self, VALUE profile, const Heron_Profiler_RequestProfile *p)
{
  Heron_Profiler_Store_Ring_add(self, RTYPEDDATA_DATA(self), profile, p);
}

/* Whether a slot holds the copy of the record with this id. */
static int Heron_Profiler_Store_Ring_holds(const Heron_Profiler_Store_Ring_slot *slot, const char *id, size_t id_length)
{
  long at = 0;
  int i;
  if (!slot->copied || slot->length[TEXT_ID] != (long)id_length) return 0;
  for (i = 0; i < TEXT_ID; i++) at += slot->length[i] > 0 ? slot->length[i] : 0;
  return memcmp(slot->text + at, id, id_length) == 0;
}

/*
 * call-seq: amend(profile) -> true or false
 *
 * Copies a pushed RequestProfile again, with what changed since (its after_reply_ms, set once
 * its after-reply callbacks ran). Its queries and N+1 findings are final once it is pushed,
 * so the slot keeps the ones it packed then. False when the store no longer holds it.
 */
static VALUE Heron_Profiler_Store_Ring_amend(VALUE self, VALUE profile)
{
  Heron_Profiler_Store_Ring *store = Heron_Profiler_Store_Ring_get(self);
  char id[HERON_PROFILER_ID_MAX];
  const Heron_Profiler_RequestProfile *p = Heron_Profiler_RequestProfile_get(profile);
  size_t id_length = Heron_Profiler_RequestProfile_id_text(profile, p, id);
  long i;
  for (i = 0; i < store->size; i++) {
    Heron_Profiler_Store_Ring_slot *slot = Heron_Profiler_Store_Ring_newest(store, i);
    if (slot->record == profile) return Qtrue;
    if (Heron_Profiler_Store_Ring_holds(slot, id, id_length)) return Heron_Profiler_Store_Ring_copy(self, slot, profile, p, slot->packed) ? Qtrue : Qfalse;
  }
  return Qfalse;
}

/* The RequestProfile a slot's copy stands for (a new object each time). */
static VALUE Heron_Profiler_Store_Ring_restore(const Heron_Profiler_Store_Ring_slot *slot)
{
  VALUE texts[TEXTS], profile, unpacked;
  long at = 0;
  int i;
  for (i = 0; i < TEXTS; i++) {
    if (slot->length[i] < 0) {
      texts[i] = Qnil;
      continue;
    }
    texts[i] = rb_enc_str_new(slot->text ? slot->text + at : "", slot->length[i], rb_enc_from_index(slot->encoding[i]));
    at += slot->length[i];
  }
  rb_obj_freeze(texts[TEXT_ID]);
  profile = Heron_Profiler_RequestProfile_restore(&slot->copy, texts[TEXT_METHOD], texts[TEXT_PATH], texts[TEXT_QUERY], texts[TEXT_ID]);
  if (NIL_P(slot->packed)) return profile;
  unpacked = Heron_Profiler_Store_Ring_unpack(slot->packed);
  Heron_Profiler_RequestProfile_set_queries(profile, rb_ary_entry(unpacked, 0), rb_ary_entry(unpacked, 1), rb_ary_entry(unpacked, 2));
  return profile;
}

/*
 * call-seq: entries(limit = nil) -> Array
 *
 * The records held (at most `limit` of them), newest first: the pushed objects, and new
 * RequestProfiles in place of pushed ones. A snapshot that later pushes do not change.
 */
static VALUE Heron_Profiler_Store_Ring_entries(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_Store_Ring *store = Heron_Profiler_Store_Ring_get(self);
  VALUE limit, entries;
  long count, i;
  rb_scan_args(argc, argv, "01", &limit);
  count = NIL_P(limit) ? store->size : NUM2LONG(limit);
  if (count > store->size) count = store->size;
  if (count < 0) count = 0;
  entries = rb_ary_new_capa(count);
  for (i = 0; i < count && i < store->size; i++) {
    const Heron_Profiler_Store_Ring_slot *slot = Heron_Profiler_Store_Ring_newest(store, i);
    rb_ary_push(entries, slot->copied ? Heron_Profiler_Store_Ring_restore(slot) : slot->record);
  }
  return entries;
}

/* call-seq: size -> Integer. How many records are held. */
static VALUE Heron_Profiler_Store_Ring_size(VALUE self)
{
  return LONG2NUM(Heron_Profiler_Store_Ring_get(self)->size);
}

/* call-seq: capacity -> Integer. How many records the store keeps. */
static VALUE Heron_Profiler_Store_Ring_capacity(VALUE self)
{
  return LONG2NUM(Heron_Profiler_Store_Ring_get(self)->capacity);
}

/* call-seq: clear -> nil. Forgets every record. */
static VALUE Heron_Profiler_Store_Ring_clear(VALUE self)
{
  Heron_Profiler_Store_Ring *store = Heron_Profiler_Store_Ring_get(self);
  long i;
  for (i = 0; i < store->capacity; i++) {
    store->slots[i].copied = 0;
    store->slots[i].record = store->slots[i].packed = Qnil;
  }
  store->next = store->size = 0;
  return Qnil;
}

void Init_Heron_Profiler_Store_Ring(VALUE mProfiler)
{
  VALUE store = rb_define_class_under(mProfiler, "Store", rb_cObject);
  VALUE klass = rb_define_class_under(store, "Ring", rb_cObject);
  rb_define_const(klass, "DEFAULT_SIZE", INT2FIX(DEFAULT_CAPACITY));
  rb_define_const(klass, "MAX_TEXT", INT2FIX(MAX_TEXT));
  rb_define_alloc_func(klass, Heron_Profiler_Store_Ring_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_Store_Ring_initialize, -1);
  rb_define_method(klass, "push", Heron_Profiler_Store_Ring_push, 1);
  rb_define_method(klass, "amend", Heron_Profiler_Store_Ring_amend, 1);
  rb_define_method(klass, "entries", Heron_Profiler_Store_Ring_entries, -1);
  rb_define_method(klass, "size", Heron_Profiler_Store_Ring_size, 0);
  rb_define_method(klass, "capacity", Heron_Profiler_Store_Ring_capacity, 0);
  rb_define_method(klass, "clear", Heron_Profiler_Store_Ring_clear, 0);
}
