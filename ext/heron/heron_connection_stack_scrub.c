/*
 * Heron::Connection::StackScrub: keeps a connection whose fiber waits on its client from keeping
 * its last response alive. Two primitives; Ruby decides when each is used (Heron::Exchange,
 * Connection::BufferedSocket).
 *
 * Ruby scans a suspended fiber's machine stack conservatively at every collection: any word
 * between the fiber's saved stack pointer and its base that looks like an object's address
 * keeps that object. Two ways a response's objects stay there (gc_per_request_test counts the
 * responses 30 waiting connections keep):
 *
 * - A wait that goes through a C method calling back into Ruby (IO#wait_readable: the
 *   scheduler's io_wait is entered from C, about 1.5 KiB of frames) lands where the app's C
 *   frames were (JSON.generate's, say) and leaves most of its slots as it found them: 30 of 30
 *   kept, YJIT off and on, without a scrub. .clear, called just before such a wait, zeroes
 *   HERON_STACK_SCRUB_BYTES below its caller, where the wait's frames are about to go. The wait
 *   between two requests of a busy connection (a hot wait: Fiber#transfer from Ruby, about 400
 *   bytes) keeps none of the app's values (0 of 30).
 * - Under a JIT (YJIT), the app's values also reach the slots where the connection's own
 *   interpreter loop enters JIT code, near the fiber's base, live while it waits, where no
 *   zeroing reaches: 30 of 30 kept. .around runs the app's call one VM entry deeper (rb_yield
 *   starts a new interpreter loop below that frame), so everything the app touched is below it
 *   and dead once it returns, then zeroes what it left. Without a JIT the interpreter keeps
 *   none of the app's values there (0 of 30 kept with a plain call), and the extra VM entry
 *   (about 960 bytes of stack, cold again at each request at many connections) cost 1-3% of
 *   hello world's requests per CPU-second at 256 connections (bench/builds_ab.rb; per_core.md,
 *   "The scrub only under a JIT"), so Heron::Exchange calls the app through .around only under
 *   a JIT.
 *
 * After .around the zeroing stops at the first line it finds zero already (see
 * Heron_Connection_StackScrub_clear_used): a connection's fiber stack was pushed out of L2 by
 * the other connections' requests since its last request, and zeroing all of it cost 108 of the
 * 270 L2 data misses a request had at 256 connections (callgrind's cache simulation,
 * bench/connections_cache.rb; with the early stop 1.021x the whole 4 KiB's requests per
 * CPU-second, 0.988x no scrub at all). .clear zeroes the whole region: a wait through C is
 * rare on a busy connection, and the dead frames below it need not be contiguous.
 * Still kept with YJIT (as on main): the header values of the last request of an idle
 * connection (idle_memory_test.rb fails under --yjit).
 *
 *   Heron::Connection::StackScrub.around { ... } -> the block's value
 *   Heron::Connection::StackScrub.clear          -> nil
 */
#include "heron_connection_stack_scrub.h"
#include <stdint.h>
#include <string.h>

#define HERON_STACK_SCRUB_BYTES (4 * 1024)

/* Not inlined, so its array is below the caller's frame. From the top of the region (nearest the
 * caller, where the app's frames began) down, each 64-byte line is zeroed until one is found
 * zero already: below it lies what an earlier scrub cleared and no frame has written since (the
 * app's frames are contiguous from the top), so a call that used 1 KiB of stack costs 1 KiB of
 * lines it has just warmed and one cold read, not 4 KiB of cold writes (the lines a connection's
 * fiber last touched a request ago, pushed out of L2 by the other connections' requests). The
 * reads are volatile, so they are made; the stores are handed to an opaque barrier, so they stay. */
static void __attribute__((noinline)) Heron_Connection_StackScrub_clear_used(void)
{
  uint64_t region[HERON_STACK_SCRUB_BYTES / sizeof(uint64_t)];
  volatile uint64_t *words = region;
  long line;
  for (line = (long)(HERON_STACK_SCRUB_BYTES / sizeof(uint64_t)) - 8; line >= 0; line -= 8) {
    if (!(words[line] | words[line + 1] | words[line + 2] | words[line + 3] | words[line + 4] | words[line + 5] |
          words[line + 6] | words[line + 7]))
      break;
    memset(region + line, 0, 8 * sizeof(uint64_t));
  }
  __asm__ __volatile__("" : : "r"(region) : "memory");
}

/* Runs the block one VM entry deeper, zeroes what it left below this frame, returns its value. */
static VALUE Heron_Connection_StackScrub_around(VALUE self)
{
  VALUE result = rb_yield(Qnil);
  Heron_Connection_StackScrub_clear_used();
  return result;
}

/* Not inlined, so its array is below the caller's frame: zeroes all of it. */
static void __attribute__((noinline)) Heron_Connection_StackScrub_clear_all(void)
{
  uint64_t region[HERON_STACK_SCRUB_BYTES / sizeof(uint64_t)];
  memset(region, 0, sizeof(region));
  __asm__ __volatile__("" : : "r"(region) : "memory");
}

/* Zeroes the stack below its caller, before a wait whose frames go there. */
static VALUE Heron_Connection_StackScrub_clear(VALUE self)
{
  Heron_Connection_StackScrub_clear_all();
  return Qnil;
}

void Init_Heron_Connection_StackScrub(VALUE mHeron)
{
  VALUE cConnection = rb_define_class_under(mHeron, "Connection", rb_cObject);
  VALUE mStackScrub = rb_define_module_under(cConnection, "StackScrub");
  rb_define_module_function(mStackScrub, "around", Heron_Connection_StackScrub_around, 0);
  rb_define_module_function(mStackScrub, "clear", Heron_Connection_StackScrub_clear, 0);
}
