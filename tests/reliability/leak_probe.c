/* leak_probe: a block of 4096 bytes from malloc, never freed, on every rank,
 * between MPI_Init and MPI_Finalize. Under the asan preset LeakSanitizer must
 * report it and nothing else (leak_probe.sh): the suppressions
 * (lsan.supp) take Open MPI's leaks and not minimodel's. Exit 77 in a build
 * without AddressSanitizer (nothing to check). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The block; its address is dropped by the caller. */
__attribute__((noinline)) char *mm_probe_leak(void);
__attribute__((noinline)) char *mm_probe_leak(void) {
  char *block = malloc(4096);
  if (block) memset(block, 1, 4096);
  return block;
}

int main(int argc, char **argv) {
#ifndef __SANITIZE_ADDRESS__
  (void)argc;
  (void)argv;
  puts("leak_probe: not built with AddressSanitizer");
  return 77;
#else
  MPI_Init(&argc, &argv);
  char *block = mm_probe_leak();
  const int written = block && block[4095] == 1;
  block = NULL; /* the only pointer to it, gone */
  MPI_Finalize();
  printf("leak_probe: block written: %d\n", written);
  return 0;
#endif
}
