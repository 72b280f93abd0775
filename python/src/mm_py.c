/* The C API of the Python package (mm_py.h). */
#include "mm_py.h"

#include <stddef.h>

#include "mm_tdma.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int mm_py_abi(void) {
  return MM_PY_ABI;
}

int mm_py_solve(const char *backend, int single, size_t ncol, int nz, const int *depth,
                const void *a, const void *b, const void *c, void *rhs, int threads,
                int for_device) {
  if (!backend || nz < 1 || (ncol > 0 && (!depth || !a || !b || !c || !rhs))) return MM_TDMA_EINVAL;
  if (ncol == 0) return MM_TDMA_OK;
  mm_tdma *s;
  int rc = mm_tdma_create(backend, nz, for_device, &s);
  if (rc) return rc;
  rc = mm_py_solve_with(s, single, ncol, nz, depth, a, b, c, rhs, threads);
  mm_tdma_destroy(s);
  return rc;
}

int mm_py_solve_with(mm_tdma *s, int single, size_t ncol, int nz, const int *depth, const void *a,
                     const void *b, const void *c, void *rhs, int threads) {
  if (!s || nz < 1 || (ncol > 0 && (!depth || !a || !b || !c || !rhs))) return MM_TDMA_EINVAL;
  if (ncol == 0) return MM_TDMA_OK;
  int rc;
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  if (single) {
    float *x = rhs;
    rc = mm_tdma_solve_f(s, &bt, a, b, c, &x, 1);
  } else {
    double *x = rhs;
    rc = mm_tdma_solve(s, &bt, a, b, c, &x, 1);
  }
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(before);
#endif
  return rc;
}

int mm_py_solve_async(mm_tdma *s, int single, size_t ncol, int nz, const int *depth, const void *a,
                      const void *b, const void *c, void *rhs, void *stream) {
  if (!s || nz < 1 || (ncol > 0 && (!depth || !a || !b || !c || !rhs))) return MM_TDMA_EINVAL;
  if (ncol == 0) return MM_TDMA_OK;
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
  if (single) {
    float *x = rhs;
    return mm_tdma_solve_f_async(s, &bt, a, b, c, &x, 1, stream);
  }
  double *x = rhs;
  return mm_tdma_solve_async(s, &bt, a, b, c, &x, 1, stream);
}

static const mm_tdma_backend *backend_at(int i) {
  if (i < 0) return NULL;
  const mm_tdma_backend *const *b = mm_tdma_backends();
  for (int k = 0; b[k]; k++)
    if (k == i) return b[k];
  return NULL;
}

int mm_py_backend_count(void) {
  int n = 0;
  for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b; b++)
    n++;
  return n;
}

const char *mm_py_backend_name(int i) {
  const mm_tdma_backend *be = backend_at(i);
  return be ? be->name : NULL;
}

const char *mm_py_backend_description(int i) {
  const mm_tdma_backend *be = backend_at(i);
  return be ? be->description : NULL;
}

int mm_py_backend_flags(int i) {
  const mm_tdma_backend *be = backend_at(i);
  return be ? (be->device_memory ? 1 : 0) | (be->exact ? 2 : 0) : 0;
}

const char *mm_py_auto_backend(int for_device) {
  mm_tdma *s;
  if (mm_tdma_create("auto", 1, for_device, &s)) return NULL;
  const char *name = mm_tdma_backend_of(s)->name;
  mm_tdma_destroy(s);
  return name;
}

const char *mm_py_strerror(int code) {
  return mm_tdma_strerror(code);
}

int mm_py_max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int mm_py_ffi(void) {
#if defined(MINIMODEL_FFI_CUDA)
  return 2;
#elif defined(MINIMODEL_FFI)
  return 1;
#else
  return 0;
#endif
}
