/*
 * HERON_RAISES_THROUGH marks a function that keeps a struct on its stack across calls that may
 * raise. Ruby raises with longjmp, which AddressSanitizer does not see when Ruby itself is not
 * built with it (bin/test's ASan run, ext/heron/fuzz/ruby_asan): a frame left that way keeps its
 * stack redzones poisoned, and the next call that reuses that stack reports a false
 * stack-buffer-underflow. Such functions are built without ASan's instrumentation; the
 * functions they call are still checked.
 */
#ifndef HERON_ASAN_H
#define HERON_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define HERON_RAISES_THROUGH __attribute__((no_sanitize_address))
#else
#define HERON_RAISES_THROUGH
#endif

#endif
