/*
 * The ring buffer under Heron::Profiler::Store: every profiled request pushes its record, so
 * pushing is a C call that the GVL makes atomic (no Mutex, no block). Readers take a snapshot
 * with #entries; lib/heron/profiler/store.rb builds #recent, #find and #update on it.
 *
 *   Store.new(capacity = 200)
 *   #push(record) #entries(limit = nil) #size #capacity #clear
 */
#include "profiler.h"

#define DEFAULT_CAPACITY 200

typedef struct Heron_Profiler_Store {
  VALUE ring; /* Array of `capacity` slots */
  long capacity, next, size;
} Heron_Profiler_Store;

static void Heron_Profiler_Store_mark(void *ptr)
{
  rb_gc_mark(((Heron_Profiler_Store *)ptr)->ring);
}

static const rb_data_type_t Heron_Profiler_Store_type = {
  "Heron::Profiler::Store",
  { Heron_Profiler_Store_mark, RUBY_TYPED_DEFAULT_FREE, NULL, },
  0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static Heron_Profiler_Store *Heron_Profiler_Store_get(VALUE self)
{
  Heron_Profiler_Store *store = rb_check_typeddata(self, &Heron_Profiler_Store_type);
  if (NIL_P(store->ring)) rb_raise(rb_eRuntimeError, "Heron::Profiler::Store not initialized");
  return store;
}

static VALUE Heron_Profiler_Store_alloc(VALUE klass)
{
  Heron_Profiler_Store *store;
  VALUE self = TypedData_Make_Struct(klass, Heron_Profiler_Store, &Heron_Profiler_Store_type, store);
  store->ring = Qnil;
  return self;
}

/*
 * call-seq: Store.new(capacity = 200)
 *
 * An empty store that keeps the last `capacity` records (a positive Integer, else ArgumentError).
 */
static VALUE Heron_Profiler_Store_initialize(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_Store *store = rb_check_typeddata(self, &Heron_Profiler_Store_type);
  VALUE capacity;
  rb_scan_args(argc, argv, "01", &capacity);
  store->capacity = NIL_P(capacity) ? DEFAULT_CAPACITY : NUM2LONG(capacity);
  if (store->capacity <= 0) rb_raise(rb_eArgError, "capacity must be positive");
  RB_OBJ_WRITE(self, &store->ring, rb_ary_new_capa(store->capacity));
  store->next = store->size = 0;
  return self;
}

/* call-seq: push(record) -> record. Adds a record, dropping the oldest when full. */
static VALUE Heron_Profiler_Store_push(VALUE self, VALUE record)
{
  Heron_Profiler_Store *store = Heron_Profiler_Store_get(self);
  rb_ary_store(store->ring, store->next, record);
  store->next = (store->next + 1) % store->capacity;
  if (store->size < store->capacity) store->size++;
  return record;
}

/*
 * call-seq: entries(limit = nil) -> Array
 *
 * The records held (at most `limit` of them), newest first, as they are: a snapshot that
 * later pushes do not change.
 */
static VALUE Heron_Profiler_Store_entries(int argc, VALUE *argv, VALUE self)
{
  Heron_Profiler_Store *store = Heron_Profiler_Store_get(self);
  VALUE limit, entries;
  long count, i;
  rb_scan_args(argc, argv, "01", &limit);
  count = NIL_P(limit) ? store->size : NUM2LONG(limit);
  if (count > store->size) count = store->size;
  if (count < 0) count = 0;
  entries = rb_ary_new_capa(count);
  for (i = 0; i < count; i++) {
    long slot = ((store->next - 1 - i) % store->capacity + store->capacity) % store->capacity;
    rb_ary_push(entries, rb_ary_entry(store->ring, slot));
  }
  return entries;
}

/* call-seq: size -> Integer. How many records are held. */
static VALUE Heron_Profiler_Store_size(VALUE self)
{
  return LONG2NUM(Heron_Profiler_Store_get(self)->size);
}

/* call-seq: capacity -> Integer. How many records the store keeps. */
static VALUE Heron_Profiler_Store_capacity(VALUE self)
{
  return LONG2NUM(Heron_Profiler_Store_get(self)->capacity);
}

/* call-seq: clear -> nil. Forgets every record. */
static VALUE Heron_Profiler_Store_clear(VALUE self)
{
  Heron_Profiler_Store *store = Heron_Profiler_Store_get(self);
  rb_ary_clear(store->ring);
  store->next = store->size = 0;
  return Qnil;
}

void Init_Heron_Profiler_Store(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "Store", rb_cObject);
  rb_define_const(klass, "DEFAULT_SIZE", INT2FIX(DEFAULT_CAPACITY));
  rb_define_alloc_func(klass, Heron_Profiler_Store_alloc);
  rb_define_method(klass, "initialize", Heron_Profiler_Store_initialize, -1);
  rb_define_method(klass, "push", Heron_Profiler_Store_push, 1);
  rb_define_method(klass, "entries", Heron_Profiler_Store_entries, -1);
  rb_define_method(klass, "size", Heron_Profiler_Store_size, 0);
  rb_define_method(klass, "capacity", Heron_Profiler_Store_capacity, 0);
  rb_define_method(klass, "clear", Heron_Profiler_Store_clear, 0);
}
