/* Batched tridiagonal solvers for water columns.
 *
 * Knows nothing of MPI or the model. A batch is `ncol` columns stored
 * column-contiguous: level k of column c is element [c * nz + k]. Column c has
 * depth[c] wet levels (0 = land, skipped); levels at and below depth[c] are
 * never read or written. Every right-hand side is solved in place.
 *
 * Backends are rows of one table (mm_tdma_backends in tdma.c), chosen at run
 * time by name; "auto" picks the fastest correct one for the machine. All CPU
 * backends except `lapack` give results bitwise identical to `reference`
 * (a NaN where reference has one; its sign and payload bits may differ, as
 * the IEEE standard leaves them to the instructions).
 *
 * Device backends (.device_memory = 1: `cuda`, `cusparse`, built with CUDA):
 * every array argument is a GPU device pointer: depth, a, b, c, kappa, each
 * rhs[r], and in the fused calls the geometry arrays geo->inv_h and geo->g
 * too (the caller keeps its own device copy of the geometry). The structures
 * (mm_tdma_batch, mm_tdma_geometry) and the array of nrhs rhs pointers stay
 * in host memory. Work runs on the default stream and a call returns when it
 * is done; a depth outside 0..nz is found on the device before anything is
 * written (EINVAL). available() is 0 without a usable device, so creating
 * one there gives MM_TDMA_EDEVICE; a device backend for host memory (or the
 * reverse) gives MM_TDMA_ENOTSUP.
 *
 * Return values: 0 on success, a positive MM_TDMA_E* code otherwise. */
#ifndef MM_TDMA_H
#define MM_TDMA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  MM_TDMA_OK = 0,
  MM_TDMA_EINVAL = 1,   /* bad argument (nz, depth > nz, nrhs) */
  MM_TDMA_ENOMEM = 2,   /* workspace allocation failed */
  MM_TDMA_ENOTSUP = 3,  /* backend lacks this operation or precision */
  MM_TDMA_EDEVICE = 4,  /* no usable GPU, or a CUDA error (the cuda backend leaves
                           that error for the caller's cudaGetLastError) */
  MM_TDMA_ESINGULAR = 5 /* zero pivot */
};
const char *mm_tdma_strerror(int code);

/* Maximum number of right-hand sides per call. */
#define MM_TDMA_MAX_RHS 8

typedef struct {
  size_t ncol;      /* columns in the batch */
  int nz;           /* levels per column (stride between columns) */
  const int *depth; /* [ncol] wet levels of each column, 0 <= depth <= nz */
} mm_tdma_batch;

/* MM_TDMA_EINVAL if any depth of the batch is outside 0..nz, else
 * MM_TDMA_OK. Every backend checks every depth before it touches any data,
 * so that a bad batch is refused whole. */
int mm_tdma_check_depths(const mm_tdma_batch *bt);

/* Per-level geometry of the fused solve (docs/physics.md, vertical step):
 * the coefficients of level k of a column are
 *   cond_k = kappa[k] * g[k]                  (interface below level k: its conductance, m)
 *   a_k = -cond_{k-1} * inv_h[k], c_k = -cond_k * inv_h[k], b_k = 1 - a_k - c_k
 * with cond_{-1} = cond_{depth-1} = 0. kappa is column-contiguous like the
 * tracers; g and inv_h have nz entries. */
typedef struct {
  const double *inv_h; /* [nz] 1 / layer thickness (1/m) */
  const double *g;     /* [nz] dt / distance between centres k and k+1 (s/m) */
} mm_tdma_geometry;
typedef struct {
  const float *inv_h;
  const float *g;
} mm_tdma_geometry_f;

/* The fused solve of two right-hand sides r0, r1 (the model's T*, S*) whose
 * interface diffusivity comes from r0 and r1 themselves, as they are on
 * entry (convective mixing with a linear equation of state, docs/physics.md):
 *   kappa[k] = kappa_mix  if convect and -alpha (r0[k] - r0[k+1])
 *                                        + beta (r1[k] - r1[k+1]) > 0,
 *              kappa_v    otherwise,
 * then r0[0] += top where top != 0 (a surface term added after kappa is
 * known), then the fused solve with that kappa. No kappa array is read or
 * written: the solve moves the 32 bytes per level of r0 and r1 alone. */
typedef struct {
  double alpha, beta;        /* weights of r0 and r1 in the stability test */
  double kappa_v, kappa_mix; /* diffusivity where stable / unstable (m2/s) */
  int convect;               /* 0: kappa_v everywhere */
  double top;                /* added to r0 at level 0 of every column */
} mm_tdma_mixing;

/* One backend: a row of the table.
 *
 * Required (never NULL): name, description, create, destroy, solve,
 * solve_f, fused, fused_f. Optional: available (NULL: always usable),
 * fused_async (device backends that can queue the fused solve on a stream;
 * NULL elsewhere), fused_mixing (exact backends that build kappa inside the
 * solve, on their own memory; NULL: the caller computes kappa and calls
 * fused), fused_mixing_async (device backends with fused_mixing, queued like
 * fused_async), solve_async and solve_f_async (device backends: the plain
 * solve queued like fused_async). tests/solvers checks this of every
 * compiled-in backend. */
typedef struct mm_tdma_backend {
  const char *name;
  const char *description;
  int device_memory; /* 1: pointers passed to it are GPU device pointers */
  int exact;         /* 1: bitwise identical to reference */
  int (*available)(void);
  int (*create)(void **ctx, int nz);
  void (*destroy)(void *ctx);
  int (*solve)(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
               const double *c, double *const *rhs, int nrhs);
  int (*solve_f)(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b, const float *c,
                 float *const *rhs, int nrhs);
  int (*fused)(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo, const double *kappa,
               double *const *rhs, int nrhs);
  int (*fused_f)(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                 const float *kappa, float *const *rhs, int nrhs);
  /* Device backends only (NULL elsewhere): the fused solve queued on a CUDA
   * stream (a cudaStream_t passed as void *) and returning at once, without
   * the depth check: for a caller whose depths never change, that has made
   * one synchronous call first (which checks them and sizes the workspace).
   * Capturable in a CUDA graph. Launch errors are returned; errors while
   * running show at the caller's next synchronisation. */
  int (*fused_async)(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                     const double *kappa, double *const *rhs, int nrhs, void *stream);
  /* "auto" takes the available backend of the highest priority for the
   * memory asked for (host or device); 0: never chosen by auto. Only exact
   * backends have a priority, so that auto never changes a result. */
  int priority;
  /* Optional: the fused solve of rhs[0], rhs[1] with kappa from
   * mm_tdma_mixing (exact backends, pointers to their own memory; NULL: the
   * caller computes kappa). */
  int (*fused_mixing)(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                      const mm_tdma_mixing *mix, double *const rhs[2]);
  /* Device backends with fused_mixing only (NULL elsewhere): it queued on a
   * stream as fused_async is, with fused_async's conventions. */
  int (*fused_mixing_async)(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                            const mm_tdma_mixing *mix, double *const rhs[2], void *stream);
  /* Device backends only (NULL elsewhere): the plain solve queued on a
   * stream and returning at once, without the depth check (the caller's
   * depths are known to be right). Launch errors are returned; errors while
   * running show at the stream's next synchronisation. The workspace is
   * sized (allocated) inside the call when it must grow: the caller makes
   * sure no earlier solve of this solver still runs then. */
  int (*solve_async)(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
                     const double *c, double *const *rhs, int nrhs, void *stream);
  int (*solve_f_async)(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                       const float *c, float *const *rhs, int nrhs, void *stream);
  /* Optional (NULL: none): the most host memory in bytes that a solver of
   * this backend holds beside the caller's arrays (its context and
   * workspace) after calls of up to nrhs right-hand sides of nz levels, in
   * either precision, on up to nthreads OpenMP threads; SIZE_MAX where that
   * does not fit in a size_t. What mm_tdma_host_bytes reports. */
  size_t (*host_bytes)(int nz, int nrhs, int nthreads);
} mm_tdma_backend;

/* Every compiled-in backend, NULL-terminated. */
const mm_tdma_backend *const *mm_tdma_backends(void);
/* Look a backend up by name (not "auto"); NULL if unknown. */
const mm_tdma_backend *mm_tdma_find(const char *name);

/* A solver: a backend with its workspace for columns of up to nz levels. */
typedef struct mm_tdma mm_tdma;

/* name: a backend name or "auto" (for_device selects among GPU backends).
 * Unknown name: MM_TDMA_EINVAL; known but unusable here: MM_TDMA_EDEVICE. */
int mm_tdma_create(const char *name, int nz, int for_device, mm_tdma **out);
/* The host memory in bytes that the solver mm_tdma_create(name, nz,
 * for_device) would make holds at most beside the caller's arrays, after
 * calls of up to nrhs right-hand sides on up to nthreads threads
 * (mm_tdma_backend.host_bytes; 0 for a backend without it, and for a name
 * mm_tdma_create refuses, which its call then reports): for a caller that
 * checks its memory before it creates the solver. */
size_t mm_tdma_host_bytes(const char *name, int nz, int for_device, int nrhs, int nthreads);
void mm_tdma_destroy(mm_tdma *s);
/* OpenMP threads a parallel region gets: omp_get_max_threads() capped by
 * OMP_THREAD_LIMIT (omp_get_thread_limit(), which omp_get_max_threads
 * alone does not report); 1 without OpenMP. */
int mm_tdma_max_threads(void);
const mm_tdma_backend *mm_tdma_backend_of(const mm_tdma *s);

int mm_tdma_solve(mm_tdma *s, const mm_tdma_batch *bt, const double *a, const double *b,
                  const double *c, double *const *rhs, int nrhs);
int mm_tdma_solve_f(mm_tdma *s, const mm_tdma_batch *bt, const float *a, const float *b,
                    const float *c, float *const *rhs, int nrhs);
int mm_tdma_fused(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                  const double *kappa, double *const *rhs, int nrhs);
int mm_tdma_fused_f(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                    const float *kappa, float *const *rhs, int nrhs);
/* The backend's fused_mixing (see mm_tdma_mixing); MM_TDMA_ENOTSUP where it
 * has none. */
int mm_tdma_fused_mixing(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                         const mm_tdma_mixing *mix, double *const rhs[2]);
/* The backend's fused_async (see mm_tdma_backend); MM_TDMA_ENOTSUP where it
 * has none. */
int mm_tdma_fused_async(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                        const double *kappa, double *const *rhs, int nrhs, void *stream);
/* The backend's solve_async and solve_f_async; MM_TDMA_ENOTSUP where it has
 * none. */
int mm_tdma_solve_async(mm_tdma *s, const mm_tdma_batch *bt, const double *a, const double *b,
                        const double *c, double *const *rhs, int nrhs, void *stream);
int mm_tdma_solve_f_async(mm_tdma *s, const mm_tdma_batch *bt, const float *a, const float *b,
                          const float *c, float *const *rhs, int nrhs, void *stream);
/* The backend's fused_mixing_async; MM_TDMA_ENOTSUP where it has none. */
int mm_tdma_fused_mixing_async(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                               const mm_tdma_mixing *mix, double *const rhs[2], void *stream);

#ifdef __cplusplus
}
#endif
#endif
