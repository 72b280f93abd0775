/* Helpers shared by the CPU backends (tdma_internal.h). */
#include "tdma_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many unknowns a batch is solved by the calling thread alone. */
#define MM_TDMA_PARALLEL_MIN 32768

void mm_tdma_ws_init(mm_tdma_ws *ws) {
  ws->bytes = 0;
  ws->nthreads = 0;
  ws->mem = NULL;
}

/* bytes_per_thread in whole 4 KiB pages, at least one; 0 where that overflows */
static size_t ws_block_bytes(size_t bytes_per_thread) {
  if (bytes_per_thread > SIZE_MAX - 4095) return 0;
  const size_t bytes = (bytes_per_thread + 4095) / 4096 * 4096;
  return bytes ? bytes : 4096;
}

size_t mm_tdma_ws_bytes(int nthreads, size_t bytes_per_thread) {
  if (nthreads < 1) nthreads = 1;
  const size_t bytes = ws_block_bytes(bytes_per_thread);
  if (!bytes || bytes > SIZE_MAX / (size_t)nthreads) return SIZE_MAX;
  return (size_t)nthreads * bytes;
}

int mm_tdma_ws_reserve(mm_tdma_ws *ws, int nthreads, size_t bytes_per_thread) {
  if (nthreads < 1) nthreads = 1;
  size_t bytes = ws_block_bytes(bytes_per_thread);
  if (!bytes) return MM_TDMA_ENOMEM;
  if (nthreads <= ws->nthreads && bytes <= ws->bytes) return MM_TDMA_OK;
  if (nthreads < ws->nthreads) nthreads = ws->nthreads; /* never fewer, never smaller */
  if (bytes < ws->bytes) bytes = ws->bytes;
  if (bytes > SIZE_MAX / (size_t)nthreads) return MM_TDMA_ENOMEM;
  unsigned char *mem = aligned_alloc(4096, (size_t)nthreads * bytes);
  if (!mem) return MM_TDMA_ENOMEM;
  free(ws->mem);
  ws->mem = mem;
  ws->nthreads = nthreads;
  ws->bytes = bytes;
  return MM_TDMA_OK;
}

void *mm_tdma_ws_block(const mm_tdma_ws *ws, int thread) {
  return ws->mem + (size_t)thread * ws->bytes;
}

void mm_tdma_ws_free(mm_tdma_ws *ws) {
  free(ws->mem);
  ws->mem = NULL;
  ws->nthreads = 0;
}

int mm_tdma_check_depths(const mm_tdma_batch *bt) {
  for (size_t col = 0; col < bt->ncol; col++)
    if (bt->depth[col] < 0 || bt->depth[col] > bt->nz) return MM_TDMA_EINVAL;
  return MM_TDMA_OK;
}

int mm_tdma_max_threads(void) {
#ifdef _OPENMP
  const int most = omp_get_max_threads(), limit = omp_get_thread_limit();
  return limit > 0 && limit < most ? limit : most > 1 ? most : 1;
#else
  return 1;
#endif
}

int mm_tdma_threads_for(size_t unknowns) {
  return unknowns < MM_TDMA_PARALLEL_MIN ? 1 : mm_tdma_max_threads();
}

int mm_tdma_thread_num(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}
