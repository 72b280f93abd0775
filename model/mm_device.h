/* Devices for the GPU-resident time step: a table of operations per device,
 * chosen at run time by name (solver.backend), like the tridiagonal solvers
 * (mm_tdma.h). The orchestration of the step (mm_gpu.c) is written once
 * against this table; a device only moves memory and runs the step's
 * kernels over their index spaces.
 *
 *   cuda      an NVIDIA GPU (cuda/mm_device_cuda.cu; builds with CUDA)
 *   emulated  the host, in every build (mm_device_emulated.c): each kernel's
 *             per-thread function over its index space, one thread after
 *             another, copies with memcpy, the stream a queue that runs only
 *             where the orchestration waits, graphs recorded and replayed.
 *             Slow by design: it exists so that the whole GPU step, the
 *             orchestration included, runs in every test suite.
 *
 * Adding a device: one file defining a mm_device_backend, one line in
 * mm_device.c (and its source in CMakeLists.txt).
 *
 * The device's work is ordered in one stream per context. Operations marked
 * [stream] are queued and may return before they are done; they can also be
 * captured into a graph between capture_begin and capture_end, in which case
 * they do not run then but each time the graph is launched, with the
 * arguments they had when captured. Every operation is required (none may be
 * NULL). Each returns 0 or nonzero with a message in the context's error
 * buffer (error()). */
#ifndef MM_DEVICE_H
#define MM_DEVICE_H

#include <stddef.h>

#include "mm_cell.h"
#include "mm_gpu_kernels.h"
#include "mm_rsum.h"
#include "mm_settings.h"
#include "mm_tdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Direction of a copy. */
typedef enum { MM_DEV_TO_DEVICE, MM_DEV_TO_HOST, MM_DEV_ON_DEVICE } mm_dev_dir;

/* Events of a context: indices 0 .. MM_DEV_EVENTS - 1. */
#define MM_DEV_EVENTS 8

/* The operands of the diagnostics kernel: every wet cell of the rectangles r
 * into per-block parts, parts[b] for block b of `blocks` (device memory),
 * MM_GPU_DIAG_THREADS threads per block (mm_gpu_kernels.h). */
typedef struct {
  mm_cell_rects r;
  int nz;
  long nxh;
  const int *kmt;                  /* [ncol_h] */
  const double *temp, *salt, *vol; /* [ncol_h nz], [ncol_h nz], [nz] */
  mm_diag_part *parts;             /* [blocks] */
  long blocks;
} mm_dev_diag;

typedef struct mm_device_backend {
  const char *name; /* the value of solver.backend */
  const char *description;
  int priority;      /* the table lists higher first */
  int device_memory; /* 1: its memory is not the host's: solvers must be device backends */
  /* 1 when the device a rank of node rank `local_rank` would take (its
   * number mod the number of devices) can run the step. Asked before
   * create, of that device only: a probe of another device would open a
   * context there (on device 0 for every rank of a node, which a GPU in
   * exclusive-process mode refuses to all ranks but one). When 0, `why`
   * (why_size bytes) says what is missing, for the user. */
  int (*available)(int local_rank, char *why, size_t why_size);
  /* 1 when the halo may cross through its memory: the MPI library can send
   * from and receive into it, given `asked`, MINIMODEL_CUDA_AWARE_MPI (an
   * mm_ask: auto, off or on). */
  int (*mpi_takes_device_memory)(int asked);

  /* A context on device (local_rank mod the number of devices): a stream
   * and MM_DEV_EVENTS timing events. */
  int (*create)(const mm_settings *env, int local_rank, void **ctx, char *msg, size_t len);
  void (*destroy)(void *ctx);
  /* The message of the operation that failed last; where none did, the
   * device's own word on a solver's MM_TDMA_EDEVICE (CUDA's last error), or
   * "". */
  const char *(*error)(void *ctx);
  /* "name (details)" of the context's device. */
  void (*describe)(void *ctx, char *out, size_t len);

  /* Memory. */
  int (*alloc)(void *ctx, size_t bytes, void **p);
  void (*free)(void *ctx, void *p);
  int (*alloc_host)(void *ctx, size_t bytes, void **p); /* host memory fast to copy to/from */
  void (*free_host)(void *ctx, void *p);
  int (*register_host)(void *ctx, void *p, size_t bytes); /* make existing host memory so */
  void (*unregister_host)(void *ctx, void *p);

  /* [stream] Copies: bytes, and height rows of width bytes, pitches apart. */
  int (*copy)(void *ctx, void *dst, const void *src, size_t bytes, mm_dev_dir dir);
  int (*copy_2d)(void *ctx, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                 size_t height, mm_dev_dir dir);
  /* [stream] The kernels of the step (mm_gpu_kernels.h), over the index
   * space of their rectangles. */
  int (*horizontal)(void *ctx, const mm_cell_hstep *h, const mm_cell_rects *r);
  /* [stream] The horizontal kernel of one rectangle in tiles marched
   * through shared memory (mm_gpu_tiles; the same cells and bits). */
  int (*horizontal_tiles)(void *ctx, const mm_cell_hstep *h, const mm_gpu_tiles *t);
  int (*mixing)(void *ctx, const mm_cell_mix *x, const mm_cell_rects *r, long nxh);
  int (*diagnostics)(void *ctx, const mm_dev_diag *d);
  /* [stream] The fused tridiagonal solve (mm_tdma_fused) on its memory; with
   * mix (kappa NULL, nrhs 2), the solve that builds kappa from the two
   * right-hand sides (mm_tdma_fused_mixing), which the orchestration asks
   * for only of a solver that has it: fused_mixing_async on a device with
   * memory of its own, fused_mixing on the host's. */
  int (*solve)(void *ctx, mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
               const double *kappa, const mm_tdma_mixing *mix, double *const *rhs, int nrhs);

  /* [stream] Record event e; the host waits until the work before it is done. */
  int (*record)(void *ctx, int e);
  int (*wait)(void *ctx, int e);
  /* Seconds between two recorded events that are done; 0 when unknown. */
  double (*elapsed)(void *ctx, int a, int b);

  /* Graphs: the [stream] operations between capture_begin and capture_end
   * become *graph, which launch queues as a whole. */
  int (*capture_begin)(void *ctx);
  int (*capture_end)(void *ctx, void **graph);
  int (*launch)(void *ctx, void *graph);
  void (*graph_destroy)(void *ctx, void *graph);

  /* The host waits until everything queued is done. */
  int (*synchronize)(void *ctx);
} mm_device_backend;

/* Every compiled-in device, highest priority first, NULL-terminated. */
const mm_device_backend *const *mm_device_backends(void);
/* By name; NULL if unknown or not in this build. */
const mm_device_backend *mm_device_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
