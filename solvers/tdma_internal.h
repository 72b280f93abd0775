/* Helpers shared by the CPU backends; not part of the public API. */
#ifndef MM_TDMA_INTERNAL_H
#define MM_TDMA_INTERNAL_H

#include <stddef.h>

#include "mm_tdma.h"

/* Per-thread workspace: `nthreads` blocks of `bytes` each, 64-byte aligned
 * and padded to whole cache lines so that threads never share a line. It
 * lives in a backend's ctx, grows when a call is given more threads than
 * before, and is therefore not safe to use from two threads at once (as
 * every solver object: one caller at a time). */
typedef struct {
  size_t bytes; /* per thread, a multiple of 64 */
  int nthreads; /* blocks allocated */
  unsigned char *mem;
} mm_tdma_ws;

void mm_tdma_ws_init(mm_tdma_ws *ws, size_t bytes_per_thread);
/* Ensure at least nthreads blocks; MM_TDMA_OK or MM_TDMA_ENOMEM. */
int mm_tdma_ws_reserve(mm_tdma_ws *ws, int nthreads);
void *mm_tdma_ws_block(const mm_tdma_ws *ws, int thread);
void mm_tdma_ws_free(mm_tdma_ws *ws);

/* MM_TDMA_EINVAL if any depth is outside 0..nz, else MM_TDMA_OK. Backends
 * check every depth before touching any data, so that a bad batch is
 * rejected whole. */
int mm_tdma_check_depths(const mm_tdma_batch *bt);

/* Threads worth using for a batch of `unknowns` unknowns: 1 for small batches
 * (a parallel region costs a few microseconds), else omp_get_max_threads(). */
int mm_tdma_threads_for(size_t unknowns);

/* OpenMP wrappers that also build without OpenMP. */
int mm_tdma_thread_num(void);

#endif
