/* mm_calloc_aligned (mm_error.h): zeroed; a small array aligned to a cache
 * line; an array of 4 MB or more aligned to 2 MB, its length a whole number
 * of 2 MB pages, and (where the kernel takes the request, which this test
 * only reports) in transparent huge pages. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_model_common.h"

/* The kB of AnonHugePages of the mapping that holds p, or -1. */
static long huge_kb(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int in = 0;
  long kb = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
      in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
      break;
  }
  fclose(f);
  return kb;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const size_t sizes[] = {1, 7, 1000, (size_t)4 << 20, ((size_t)5 << 20) + 8, (size_t)40 << 20};
  for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
    const size_t n = sizes[q];
    unsigned char *p = mm_calloc_aligned(n, 1);
    TEST_CHECK(p != NULL, "%zu bytes: allocation failed", n);
    if (!p) continue;
    const int big = n >= ((size_t)4 << 20);
    const uintptr_t align = big ? MM_HUGE_PAGE : 64;
    TEST_CHECK((uintptr_t)p % align == 0, "%zu bytes at %p: not aligned to %zu", n, (void *)p,
               (size_t)align);
    size_t nonzero = 0;
    for (size_t e = 0; e < n; e++)
      nonzero += p[e] != 0;
    TEST_CHECK(nonzero == 0, "%zu bytes: %zu not zero", n, nonzero);
    p[n - 1] = 1; /* the whole length is usable (ASan: no overflow) */
    if (big) printf("%zu bytes: %ld kB in huge pages\n", n, huge_kb(p));
    free(p);
  }
  return test_finish();
}
