/*
 * Heron::Connection::IdleSet: the sockets of parked keep-alive connections (and requests
 * waiting for their body) in one epoll set, so they wait for their next bytes with no fiber each.
 * One watcher fiber per reactor thread waits on the set's own descriptor through the fiber
 * scheduler (an epoll descriptor is readable when one of its sockets is), then asks #ready which
 * ones. Each socket is added one-shot: once reported, it is not reported again until added again,
 * so a socket a connection is serving in its fiber is left to that fiber. Ruby's IO and io-event
 * offer no way to watch a socket without a fiber blocked on it, hence this class (see the README,
 * "What Heron writes itself"). Linux only: elsewhere IdleSet.supported? is false and connections
 * are not parked. lib/heron/server/parking_lot.rb uses it.
 *
 *   Heron::Connection::IdleSet.supported?  -> true where epoll exists
 *   Heron::Connection::IdleSet.new         -> a new, empty set (an epoll descriptor, close-on-exec)
 *   #fileno                                -> Integer, the epoll descriptor
 *   #add(fd)                               -> self; reported once when readable or hung up
 *   #delete(fd)                            -> self; a descriptor not in the set is ignored
 *   #ready                                 -> Array of descriptors ready now (never waits)
 *   #close                                 -> nil
 */
#include "heron_connection_idle_set.h"
#include <ruby.h>
#include <errno.h>
#include <unistd.h>
#ifdef HAVE_SYS_EPOLL_H
#include <sys/epoll.h>
#endif

#define HERON_IDLE_SET_BATCH 256

static VALUE cHeron_Connection_IdleSet;

typedef struct Heron_Connection_IdleSet {
  int fd; /* the epoll descriptor, -1 once closed */
} Heron_Connection_IdleSet;

static void Heron_Connection_IdleSet_free(void *pointer)
{
  Heron_Connection_IdleSet *set = pointer;
  if (set->fd >= 0) close(set->fd);
  xfree(set);
}

static size_t Heron_Connection_IdleSet_memsize(const void *pointer)
{
  return sizeof(Heron_Connection_IdleSet);
}

/* Write-barrier protected: the struct holds no Ruby objects (no mark function), so it never
 * needs a barrier. Unprotected, each one a connection keeps would be remembered once old and
 * re-marked by every minor GC (bench/gc_anatomy.rb). */
static const rb_data_type_t Heron_Connection_IdleSet_type = {
  "Heron::Connection::IdleSet",
  {NULL, Heron_Connection_IdleSet_free, Heron_Connection_IdleSet_memsize},
  NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED
};

static VALUE Heron_Connection_IdleSet_alloc(VALUE klass)
{
  Heron_Connection_IdleSet *set;
  VALUE self = TypedData_Make_Struct(klass, Heron_Connection_IdleSet, &Heron_Connection_IdleSet_type, set);
  set->fd = -1;
  return self;
}

/* The open epoll descriptor of `self`; IOError once closed. */
static int Heron_Connection_IdleSet_fd(VALUE self)
{
  Heron_Connection_IdleSet *set;
  TypedData_Get_Struct(self, Heron_Connection_IdleSet, &Heron_Connection_IdleSet_type, set);
  if (set->fd < 0) rb_raise(rb_eIOError, "closed idle set");
  return set->fd;
}

/* IdleSet.supported? -> whether this platform has epoll (Linux). */
static VALUE Heron_Connection_IdleSet_supported_p(VALUE klass)
{
#ifdef HAVE_SYS_EPOLL_H
  return Qtrue;
#else
  return Qfalse;
#endif
}

#ifdef HAVE_SYS_EPOLL_H

/* IdleSet.new: an empty set. Raises SystemCallError when no descriptor is left. */
static VALUE Heron_Connection_IdleSet_initialize(VALUE self)
{
  Heron_Connection_IdleSet *set;
  TypedData_Get_Struct(self, Heron_Connection_IdleSet, &Heron_Connection_IdleSet_type, set);
  set->fd = epoll_create1(EPOLL_CLOEXEC);
  if (set->fd < 0) rb_sys_fail("epoll_create1");
  return self;
}

/* #add(fd): reports fd once, when it is readable or its peer hung up. Adding a descriptor that
 * is already in the set (reported, or not yet) arms it again. */
static VALUE Heron_Connection_IdleSet_add(VALUE self, VALUE fd)
{
  int epfd = Heron_Connection_IdleSet_fd(self), socket = NUM2INT(fd);
  struct epoll_event event = {0};
  event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  event.data.fd = socket;
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, socket, &event) == 0) return self;
  if (errno == EEXIST && epoll_ctl(epfd, EPOLL_CTL_MOD, socket, &event) == 0) return self;
  rb_sys_fail("epoll_ctl");
  return self;
}

/* #delete(fd): forgets fd; one that is not in the set (or already closed) is ignored. */
static VALUE Heron_Connection_IdleSet_delete(VALUE self, VALUE fd)
{
  int epfd = Heron_Connection_IdleSet_fd(self);
  struct epoll_event event = {0};
  if (epoll_ctl(epfd, EPOLL_CTL_DEL, NUM2INT(fd), &event) != 0 && errno != ENOENT && errno != EBADF) {
    rb_sys_fail("epoll_ctl");
  }
  return self;
}

/* #ready -> the descriptors reported now, at most 256 per call (call again for more); never
 * waits. Each is disarmed until added again. */
static VALUE Heron_Connection_IdleSet_ready(VALUE self)
{
  int epfd = Heron_Connection_IdleSet_fd(self), count, i;
  struct epoll_event events[HERON_IDLE_SET_BATCH];
  VALUE ready;
  do {
    count = epoll_wait(epfd, events, HERON_IDLE_SET_BATCH, 0);
  } while (count < 0 && errno == EINTR);
  if (count < 0) rb_sys_fail("epoll_wait");
  ready = rb_ary_new_capa(count);
  for (i = 0; i < count; i++) rb_ary_push(ready, INT2FIX(events[i].data.fd));
  return ready;
}

#else

static VALUE Heron_Connection_IdleSet_initialize(VALUE self)
{
  rb_raise(rb_eNotImpError, "Heron::Connection::IdleSet needs epoll (Linux)");
  return self;
}

static VALUE Heron_Connection_IdleSet_add(VALUE self, VALUE fd) { return Heron_Connection_IdleSet_initialize(self); }
static VALUE Heron_Connection_IdleSet_delete(VALUE self, VALUE fd) { return Heron_Connection_IdleSet_initialize(self); }
static VALUE Heron_Connection_IdleSet_ready(VALUE self) { return Heron_Connection_IdleSet_initialize(self); }

#endif

/* #fileno -> the set's descriptor, for IO.for_fd(fileno, autoclose: false).wait_readable. */
static VALUE Heron_Connection_IdleSet_fileno(VALUE self)
{
  return INT2FIX(Heron_Connection_IdleSet_fd(self));
}

/* #close: closes the set's descriptor (the sockets in it stay open); later calls do nothing. */
static VALUE Heron_Connection_IdleSet_close(VALUE self)
{
  Heron_Connection_IdleSet *set;
  TypedData_Get_Struct(self, Heron_Connection_IdleSet, &Heron_Connection_IdleSet_type, set);
  if (set->fd >= 0) close(set->fd);
  set->fd = -1;
  return Qnil;
}

void Init_Heron_Connection_IdleSet(VALUE mHeron)
{
  VALUE cHeron_Connection = rb_define_class_under(mHeron, "Connection", rb_cObject);
  cHeron_Connection_IdleSet = rb_define_class_under(cHeron_Connection, "IdleSet", rb_cObject);
  rb_define_alloc_func(cHeron_Connection_IdleSet, Heron_Connection_IdleSet_alloc);
  rb_define_singleton_method(cHeron_Connection_IdleSet, "supported?", Heron_Connection_IdleSet_supported_p, 0);
  rb_define_method(cHeron_Connection_IdleSet, "initialize", Heron_Connection_IdleSet_initialize, 0);
  rb_define_method(cHeron_Connection_IdleSet, "fileno", Heron_Connection_IdleSet_fileno, 0);
  rb_define_method(cHeron_Connection_IdleSet, "add", Heron_Connection_IdleSet_add, 1);
  rb_define_method(cHeron_Connection_IdleSet, "delete", Heron_Connection_IdleSet_delete, 1);
  rb_define_method(cHeron_Connection_IdleSet, "ready", Heron_Connection_IdleSet_ready, 0);
  rb_define_method(cHeron_Connection_IdleSet, "close", Heron_Connection_IdleSet_close, 0);
}
