/*
 * Test tooling for ruby_asan, never part of the gem: clears AddressSanitizer's stale stack poison.
 *
 * An ASan-built C function poisons red zones around its stack arrays on entry and clears them
 * when it returns. Ruby raises with __builtin_longjmp, which ASan does not intercept, so a frame
 * that an exception (or a break or throw) unwinds never clears its red zones: the dead stack keeps
 * them, and when Ruby's own (uninstrumented) code later puts a buffer there and hands it to
 * memcpy, ASan's interceptor reports a stack-buffer-overflow that is no bug (CI run of stop 35).
 *
 * heron_asan_stack_reset clears the shadow of the current stack (found in /proc/self/maps, so a
 * fiber's stack ends at its guard page) from its low end up to `above` bytes over the caller's
 * frame: with `above` 0 only dead stack, with more also the frames an exception is about to
 * unwind. Clearing the shadow of live frames only loses detection there; it cannot cause a report.
 */
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>

/* Finds the mapping holding `address`; 0 if none. */
static int heron_asan_mapping(uintptr_t address, uintptr_t *low, uintptr_t *high)
{
  char line[512];
  int found = 0;
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  while (!found && fgets(line, sizeof line, maps)) {
    unsigned long from, to;
    if (sscanf(line, "%lx-%lx", &from, &to) == 2 && address >= from && address < to) {
      *low = from;
      *high = to;
      found = 1;
    }
  }
  fclose(maps);
  return found;
}

/* Clears the current stack's shadow from its low end to `above` bytes over this frame. */
void heron_asan_stack_reset(long above)
{
  volatile char here = 0;
  uintptr_t sp = (uintptr_t)&here, low, high, end;
  if (!heron_asan_mapping(sp, &low, &high)) return;
  end = sp + (uintptr_t)above;
  if (end > high) end = high;
  __asan_unpoison_memory_region((void *)low, end - low);
}
