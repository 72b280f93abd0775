/* Helpers shared by the CPU backends; not part of the public API. */
#ifndef MM_TDMA_INTERNAL_H
#define MM_TDMA_INTERNAL_H

#include <stddef.h>

#include "mm_tdma.h"

/* Per-thread workspace: `nthreads` blocks of `bytes` each, each on pages of
 * its own (4 KiB aligned and padded), so that threads never share a line:
 * blocks sized to the call and only 64-byte aligned made the simd solve 7%
 * slower in single precision (tdma-bench, 100000 x 100, 2 threads). It
 * lives in a backend's ctx, grows when a call needs more threads or more
 * bytes a thread than before (so it is sized by what calls use, not by the
 * most they could), and is therefore not safe to use from two threads at
 * once (as every solver object: one caller at a time). */
typedef struct {
  size_t bytes; /* per thread, a multiple of 4096 */
  int nthreads; /* blocks allocated */
  unsigned char *mem;
} mm_tdma_ws;

void mm_tdma_ws_init(mm_tdma_ws *ws);
/* Ensure at least nthreads blocks of at least bytes_per_thread; MM_TDMA_OK
 * or MM_TDMA_ENOMEM (the blocks held are kept then). */
int mm_tdma_ws_reserve(mm_tdma_ws *ws, int nthreads, size_t bytes_per_thread);
/* The bytes mm_tdma_ws_reserve allocates for nthreads blocks of
 * bytes_per_thread (each rounded up to whole 4 KiB pages, at least one);
 * SIZE_MAX where that overflows. */
size_t mm_tdma_ws_bytes(int nthreads, size_t bytes_per_thread);
void *mm_tdma_ws_block(const mm_tdma_ws *ws, int thread);
void mm_tdma_ws_free(mm_tdma_ws *ws);

/* Threads worth using for a batch of `unknowns` unknowns: 1 for small batches
 * (a parallel region costs a few microseconds), else omp_get_max_threads(). */
int mm_tdma_threads_for(size_t unknowns);

/* OpenMP wrappers that also build without OpenMP. */
int mm_tdma_thread_num(void);

#endif
