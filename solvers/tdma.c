/* The backend table and the solver object around it. */
#include "mm_tdma.h"

#include <stdlib.h>
#include <string.h>

/* Each backend file defines one of these; add a line here and one in
 * CMakeLists.txt to add a backend. Order: as tdma-bench --list shows them; "auto" goes
 * by each backend's priority (mm_tdma_backend). */
extern const mm_tdma_backend mm_tdma_reference;
extern const mm_tdma_backend mm_tdma_simd;
extern const mm_tdma_backend mm_tdma_omp;
#ifdef MINIMODEL_HAVE_LAPACKE
extern const mm_tdma_backend mm_tdma_lapack;
#endif
#ifdef MINIMODEL_HAVE_CUDA
extern const mm_tdma_backend mm_tdma_cuda;
extern const mm_tdma_backend mm_tdma_cusparse;
#endif

static const mm_tdma_backend *const mm_tdma_table[] = {
    &mm_tdma_simd,
    &mm_tdma_omp,
    &mm_tdma_reference,
#ifdef MINIMODEL_HAVE_LAPACKE
    &mm_tdma_lapack,
#endif
#ifdef MINIMODEL_HAVE_CUDA
    &mm_tdma_cuda,
    &mm_tdma_cusparse,
#endif
    NULL,
};

struct mm_tdma {
  const mm_tdma_backend *backend;
  void *ctx;
  int nz;
};

const char *mm_tdma_strerror(int code) {
  switch (code) {
  case MM_TDMA_OK: return "success";
  case MM_TDMA_EINVAL: return "invalid argument";
  case MM_TDMA_ENOMEM: return "out of memory";
  case MM_TDMA_ENOTSUP: return "operation not supported by this backend";
  case MM_TDMA_EDEVICE: return "no usable GPU device, or a CUDA error";
  case MM_TDMA_ESINGULAR: return "zero pivot";
  default: return "unknown error";
  }
}

const mm_tdma_backend *const *mm_tdma_backends(void) {
  return mm_tdma_table;
}

const mm_tdma_backend *mm_tdma_find(const char *name) {
  for (const mm_tdma_backend *const *b = mm_tdma_table; *b; b++)
    if (!strcmp((*b)->name, name)) return *b;
  return NULL;
}

/* The backend that `name` selects for this memory ("auto": the available
 * one of the highest priority), or the error mm_tdma_create returns. */
static int select_backend(const char *name, int for_device, const mm_tdma_backend **out) {
  const mm_tdma_backend *be = NULL;
  if (!strcmp(name, "auto")) {
    for (const mm_tdma_backend *const *p = mm_tdma_table; *p; p++) {
      const mm_tdma_backend *cand = *p;
      if (cand->priority <= 0 || cand->device_memory != (for_device != 0)) continue;
      if (cand->available && !cand->available()) continue;
      if (!be || cand->priority > be->priority) be = cand;
    }
    if (!be) return MM_TDMA_EDEVICE;
  } else {
    be = mm_tdma_find(name);
    if (!be) return MM_TDMA_EINVAL;
    if (be->available && !be->available()) return MM_TDMA_EDEVICE;
    if (be->device_memory != (for_device != 0)) return MM_TDMA_ENOTSUP;
  }
  *out = be;
  return MM_TDMA_OK;
}

size_t mm_tdma_host_bytes(const char *name, int nz, int for_device, int nrhs, int nthreads) {
  const mm_tdma_backend *be = NULL;
  if (nz < 1 || nrhs < 1 || select_backend(name, for_device, &be) || !be->host_bytes) return 0;
  return be->host_bytes(nz, nrhs, nthreads < 1 ? 1 : nthreads);
}

int mm_tdma_create(const char *name, int nz, int for_device, mm_tdma **out) {
  *out = NULL;
  if (nz < 1) return MM_TDMA_EINVAL;
  const mm_tdma_backend *be = NULL;
  const int rc = select_backend(name, for_device, &be);
  if (rc) return rc;
  mm_tdma *s = calloc(1, sizeof *s);
  if (!s) return MM_TDMA_ENOMEM;
  s->backend = be;
  s->nz = nz;
  if (be->create) {
    int rc = be->create(&s->ctx, nz);
    if (rc) {
      free(s);
      return rc;
    }
  }
  *out = s;
  return MM_TDMA_OK;
}

void mm_tdma_destroy(mm_tdma *s) {
  if (!s) return;
  if (s->backend->destroy) s->backend->destroy(s->ctx);
  free(s);
}

const mm_tdma_backend *mm_tdma_backend_of(const mm_tdma *s) {
  return s->backend;
}

static int check_batch(const mm_tdma *s, const mm_tdma_batch *bt, int nrhs) {
  if (!bt || bt->nz < 1 || bt->nz > s->nz || nrhs < 1 || nrhs > MM_TDMA_MAX_RHS)
    return MM_TDMA_EINVAL;
  if (bt->ncol > 0 && !bt->depth) return MM_TDMA_EINVAL;
  return MM_TDMA_OK;
}

int mm_tdma_solve(mm_tdma *s, const mm_tdma_batch *bt, const double *a, const double *b,
                  const double *c, double *const *rhs, int nrhs) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->solve) return MM_TDMA_ENOTSUP;
  return s->backend->solve(s->ctx, bt, a, b, c, rhs, nrhs);
}

int mm_tdma_solve_f(mm_tdma *s, const mm_tdma_batch *bt, const float *a, const float *b,
                    const float *c, float *const *rhs, int nrhs) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->solve_f) return MM_TDMA_ENOTSUP;
  return s->backend->solve_f(s->ctx, bt, a, b, c, rhs, nrhs);
}

int mm_tdma_fused(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                  const double *kappa, double *const *rhs, int nrhs) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->fused) return MM_TDMA_ENOTSUP;
  return s->backend->fused(s->ctx, bt, geo, kappa, rhs, nrhs);
}

int mm_tdma_fused_mixing(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                         const mm_tdma_mixing *mix, double *const rhs[2]) {
  int rc = check_batch(s, bt, 2);
  if (rc) return rc;
  if (!mix) return MM_TDMA_EINVAL;
  if (!s->backend->fused_mixing) return MM_TDMA_ENOTSUP;
  return s->backend->fused_mixing(s->ctx, bt, geo, mix, rhs);
}

int mm_tdma_fused_async(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                        const double *kappa, double *const *rhs, int nrhs, void *stream) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->fused_async) return MM_TDMA_ENOTSUP;
  return s->backend->fused_async(s->ctx, bt, geo, kappa, rhs, nrhs, stream);
}

int mm_tdma_solve_async(mm_tdma *s, const mm_tdma_batch *bt, const double *a, const double *b,
                        const double *c, double *const *rhs, int nrhs, void *stream) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->solve_async) return MM_TDMA_ENOTSUP;
  return s->backend->solve_async(s->ctx, bt, a, b, c, rhs, nrhs, stream);
}

int mm_tdma_solve_f_async(mm_tdma *s, const mm_tdma_batch *bt, const float *a, const float *b,
                          const float *c, float *const *rhs, int nrhs, void *stream) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->solve_f_async) return MM_TDMA_ENOTSUP;
  return s->backend->solve_f_async(s->ctx, bt, a, b, c, rhs, nrhs, stream);
}

int mm_tdma_fused_mixing_async(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                               const mm_tdma_mixing *mix, double *const rhs[2], void *stream) {
  int rc = check_batch(s, bt, 2);
  if (rc) return rc;
  if (!mix) return MM_TDMA_EINVAL;
  if (!s->backend->fused_mixing_async) return MM_TDMA_ENOTSUP;
  return s->backend->fused_mixing_async(s->ctx, bt, geo, mix, rhs, stream);
}

int mm_tdma_fused_f(mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                    const float *kappa, float *const *rhs, int nrhs) {
  int rc = check_batch(s, bt, nrhs);
  if (rc) return rc;
  if (!s->backend->fused_f) return MM_TDMA_ENOTSUP;
  return s->backend->fused_f(s->ctx, bt, geo, kappa, rhs, nrhs);
}
