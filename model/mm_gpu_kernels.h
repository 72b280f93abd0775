/* The per-thread functions of the GPU step's kernels (mm_gpu.h). Each
 * device runs them over the kernel's index space: the CUDA kernels one
 * thread each (cuda/mm_device_cuda.cu), the emulated device one thread
 * after another (mm_device_emulated.c), and the CPU test model.gpu_emu
 * checks them against the CPU step. A thread maps its index to a (column,
 * level) with mm_cell_rect_index: consecutive threads take consecutive
 * levels of a column, so that loads of the column-contiguous arrays
 * coalesce. Threads past the end of the index space do nothing. */
#ifndef MM_GPU_KERNELS_H
#define MM_GPU_KERNELS_H

#include "mm_cell.h"
#include "mm_rsum.h"

/* Threads per block of the horizontal and mixing kernels. */
#define MM_GPU_THREADS 256
/* The diagnostics kernel: MM_GPU_DIAG_THREADS threads per block, at most
 * MM_GPU_DIAG_MAX_BLOCKS blocks. */
#define MM_GPU_DIAG_THREADS    128
#define MM_GPU_DIAG_MAX_BLOCKS 1024

/* T*, S* of the cell of thread tid (mm_cell_horizontal). */
MM_CELL_FN void mm_gpu_horizontal_thread(const mm_cell_hstep *h, const mm_cell_rects *r, long tid) {
  long col;
  int k;
  if (mm_cell_rect_index(r, h->nz, h->nxh, tid, &col, &k)) mm_cell_horizontal(h, col, k);
}

/* kappa_w and the surface flux at the cell of thread tid (mm_cell_mixing). */
MM_CELL_FN void mm_gpu_mixing_thread(const mm_cell_mix *x, const mm_cell_rects *r, long nxh,
                                     long tid) {
  long col;
  int k;
  if (mm_cell_rect_index(r, x->nz, nxh, tid, &col, &k)) mm_cell_mixing(x, col, k);
}

/* Diagnostics: thread tid of nthreads takes the elements tid, tid +
 * nthreads, ... of the index space into its part p; the parts of a block
 * then merge in shared memory (mm_gpu_diag_tree), the blocks' parts on the
 * host. Merging is exact, so the order does not change the result. */
MM_CELL_FN void mm_gpu_diag_thread(const mm_cell_rects *r, int nz, long nxh, const int *kmt,
                                   const double *temp, const double *salt, const double *vol,
                                   long tid, long nthreads, mm_diag_part *p) {
  mm_diag_part_init(p);
  for (long e = tid; e < r->first[r->n]; e += nthreads) {
    long col;
    int k;
    mm_cell_rect_index(r, nz, nxh, e, &col, &k);
    if (k < kmt[col]) {
      const long pos = col * nz + k;
      mm_diag_part_add(p, temp[pos], salt[pos], vol[k], pos);
    }
  }
}

/* One level of the block's tree: thread t < s merges part t + s into part t
 * (s = MM_GPU_DIAG_THREADS / 2, / 4, ..., 1; a barrier between levels). */
MM_CELL_FN void mm_gpu_diag_tree_thread(mm_diag_part *part, int s, int t) {
  if (t < s) mm_diag_part_merge(&part[t], &part[t + s]);
}

#endif
