/*
 * Heron::Connection::StackScrub: zeroes the machine stack just below its caller, so a fiber
 * about to wait (for a client's next request, or the rest of one) does not keep what its last
 * request left there alive.
 *
 * Ruby scans a suspended fiber's machine stack conservatively at every collection: any word
 * between the fiber's saved stack pointer and its base that looks like an object's address
 * keeps that object. The frames a wait puts on the stack (IO#wait_readable, the scheduler's
 * io_wait, Fiber#transfer) land where the app's C frames were a moment before (JSON.generate's,
 * say) and leave most of their slots as they found them, so stale pointers to the last
 * response's objects are scanned for as long as the connection waits: a connection waiting in
 * its fiber for its next request kept about 250 objects (its last JSON response's records and
 * String) alive and promoted to the old generation (bench/results/per_core.md). Zeroing the
 * region first removes them. Only the region the wait's own frames cover is scanned (down to
 * the stack pointer saved at the switch), so HERON_STACK_SCRUB_BYTES need only exceed that:
 * 4 KiB already cleared all of it with bench/records.ru; 8 KiB leaves room, at one memset of
 * 8 KiB per wait (a wait, not a request: a client whose next request is already there skips it).
 * With YJIT on Ruby 3.1 a word nearer the fiber's base, above any scrub, still keeps most
 * responses (per_core.md).
 *
 *   Heron::Connection::StackScrub.call  -> nil
 */
#include "heron_connection_stack_scrub.h"
#include <string.h>

#define HERON_STACK_SCRUB_BYTES (8 * 1024)

/* Not inlined, so its array is below the caller's frame; the memset is not elided (the array is
 * handed to an opaque barrier). */
static void __attribute__((noinline)) Heron_Connection_StackScrub_clear(void)
{
  char region[HERON_STACK_SCRUB_BYTES];
  memset(region, 0, sizeof(region));
  __asm__ __volatile__("" : : "r"(region) : "memory");
}

static VALUE Heron_Connection_StackScrub_call(VALUE self)
{
  Heron_Connection_StackScrub_clear();
  return Qnil;
}

void Init_Heron_Connection_StackScrub(VALUE mHeron)
{
  VALUE cConnection = rb_define_class_under(mHeron, "Connection", rb_cObject);
  VALUE mStackScrub = rb_define_module_under(cConnection, "StackScrub");
  rb_define_module_function(mStackScrub, "call", Heron_Connection_StackScrub_call, 0);
}
