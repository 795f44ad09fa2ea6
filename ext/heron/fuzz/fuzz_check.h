/*
 * CHECK(cond): the harnesses' assertion. A failed check prints itself and aborts, which
 * libFuzzer reports as a crash (with the input that made it).
 */
#ifndef HERON_FUZZ_CHECK_H
#define HERON_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      abort();                                                               \
    }                                                                        \
  } while (0)

#endif
