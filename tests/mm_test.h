/* Minimal assertions for the C tests: count failures, report file:line. */
#ifndef MM_TEST_H
#define MM_TEST_H

#include <stdio.h>

static int mm_test_failures = 0;

#define TEST_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      mm_test_failures++;                                                                          \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* A call that returns an mm_err (0 = MM_OK) must succeed. */
#define TEST_OK(call)                                                                              \
  do {                                                                                             \
    const int mm_test_rc_ = (int)(call);                                                           \
    TEST_CHECK(mm_test_rc_ == 0, "returned %d", mm_test_rc_);                                      \
  } while (0)

#endif
