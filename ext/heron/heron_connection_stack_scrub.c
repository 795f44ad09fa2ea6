/*
 * Heron::Connection::StackScrub: runs the app's call one VM entry deeper, then zeroes the
 * machine stack it used, so a connection whose fiber then waits for its client's next request
 * does not keep its last response alive.
 *
 * Ruby scans a suspended fiber's machine stack conservatively at every collection: any word
 * between the fiber's saved stack pointer and its base that looks like an object's address
 * keeps that object. The frames of the wait that follows a response (IO#wait_readable, the
 * scheduler's io_wait, Fiber#transfer) land where the app's C frames were (JSON.generate's, say)
 * and leave most of their slots as they found them; with YJIT, the app's values also reach the
 * slots where the connection's own interpreter loop enters JIT code, near the fiber's base, where
 * no later scrub reaches. A connection waiting in its fiber for its next request so kept about
 * 250 objects (its last JSON response's records and String) alive and promoted to the old
 * generation (bench/results/per_core.md, "GC and waiting fibers"). Without a JIT the interpreter
 * does the same once any c_call TracePoint has run in the process (a profiler, a debugger, a
 * test; Ruby keeps the changed call path after the TracePoint is disabled): a plain call kept 0
 * of 30 responses in a fresh process and 30 of 30 after one TracePoint.new(:c_call) {}.enable { },
 * so the app is always called through .around (per_core.md, "The scrub for every request
 * again").
 *
 * Called through .around, rb_yield starts a new interpreter loop below that frame: everything
 * the app touched is below it, and zeroing HERON_STACK_SCRUB_BYTES there afterwards clears what
 * the wait's frames would have been scanned with (down to the stack pointer saved at the
 * switch). How deep that is: gc_per_request_test's waiting connections kept their responses
 * with 1 KiB zeroed and none with 2 KiB, YJIT off and on; 4 KiB leaves twice that. It was 8 KiB,
 * and the memset is not free at many connections: each request zeroes its own fiber's stack,
 * which the other connections' requests have pushed out of the L2 cache since, so every line
 * written is a miss. Counted under callgrind's cache simulation with a 1 MiB last level
 * (bench/connections_cache.rb, hello world, 256 connections), 8 KiB cost 108 of the 270 L2 data
 * misses per request (16 connections: 50); with 4 KiB the request has 206. So the zeroing stops
 * at the first line it finds zero already (see Heron_Connection_StackScrub_clear): side by side
 * at 256 connections (bench/builds_ab.rb, hello world), 1.021x the whole 4 KiB's requests per
 * CPU-second, 0.988x no scrub at all; records.ru with YJIT, 0.990x the whole 4 KiB, 1.185x no
 * scrub.
 *
 * Cost: one rb_yield and the zeroing of what the app's call used, per request, and one VM entry
 * more on the stack of a fiber whose app is waiting (a sleeping request). Still kept with YJIT:
 * the header values of the last request of an idle connection (idle_memory_test.rb fails under
 * --yjit).
 *
 *   Heron::Connection::StackScrub.around { ... } -> the block's value
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
static void __attribute__((noinline)) Heron_Connection_StackScrub_clear(void)
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
  Heron_Connection_StackScrub_clear();
  return result;
}

void Init_Heron_Connection_StackScrub(VALUE mHeron)
{
  VALUE cConnection = rb_define_class_under(mHeron, "Connection", rb_cObject);
  VALUE mStackScrub = rb_define_module_under(cConnection, "StackScrub");
  rb_define_module_function(mStackScrub, "around", Heron_Connection_StackScrub_around, 0);
}
