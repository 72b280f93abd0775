/* The C API of the Python package (mm_py.h). */
#include "mm_py.h"

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mm_tdma.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int mm_py_abi(void) {
  return MM_PY_ABI;
}

/* Fork: libgomp keeps its thread team across parallel regions and has no
 * fork handler, so in a child forked after the parent started the team the
 * first parallel region waits for threads that the child does not have.
 * team_maybe: this process (or a parent before fork) solved here with more
 * than one thread, so libgomp may have started its team; fork_single: this
 * process is a child forked from such a process, and solves on one thread
 * (with one thread the solvers open no parallel region). Both are inherited
 * by further children. */
static int team_maybe, fork_single;

static void after_fork_child(void) {
  if (__atomic_load_n(&team_maybe, __ATOMIC_RELAXED))
    __atomic_store_n(&fork_single, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void mm_py_init(void) {
  pthread_atfork(NULL, NULL, after_fork_child);
}

int mm_py_fork_single(void) {
  return __atomic_load_n(&fork_single, __ATOMIC_RELAXED);
}

#ifdef _OPENMP
/* The most threads a solve opens: the CPUs this process may use
 * (omp_get_num_procs: its affinity), and no more than OMP_THREAD_LIMIT.
 * More could not make a solve faster (it is bound by memory, and its bits
 * are the same for any count), and a team of hundreds can fail to start
 * under a limit on address space or processes, which the OpenMP runtime
 * answers by ending the process. */
static int threads_cap(void) {
  const int procs = omp_get_num_procs(), limit = omp_get_thread_limit();
  const int cap = procs > 0 ? procs : 1;
  return limit > 0 && limit < cap ? limit : cap;
}
#endif

/* Sets this thread's OpenMP threads for one call (threads > 0: that many,
 * 0: the default; at most threads_cap(); one in a forked child, see above);
 * returns the value to restore, or 0 when nothing was changed. */
static int threads_enter(int threads) {
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  if (mm_py_fork_single()) {
    if (before == 1) return 0;
    omp_set_num_threads(1);
    return before;
  }
  int want = threads > 0 ? threads : before;
  const int cap = threads_cap();
  if (want > cap) want = cap;
  if (want > 1) __atomic_store_n(&team_maybe, 1, __ATOMIC_RELAXED);
  if (want == before) return 0;
  omp_set_num_threads(want);
  return before;
#else
  (void)threads;
  return 0;
#endif
}

static void threads_leave(int before) {
#ifdef _OPENMP
  if (before > 0) omp_set_num_threads(before);
#else
  (void)before;
#endif
}

static int solve_in(mm_tdma *s, int single, size_t ncol, int nz, const int *depth, const void *a,
                    const void *b, const void *c, void *x) {
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
  if (single) {
    float *xf = x;
    return mm_tdma_solve_f(s, &bt, a, b, c, &xf, 1);
  }
  double *xd = x;
  return mm_tdma_solve(s, &bt, a, b, c, &xd, 1);
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

int mm_py_solve_from(const char *backend, int single, size_t ncol, int nz, const int *depth,
                     const void *a, const void *b, const void *c, const void *src, void *x,
                     int threads) {
  if (!backend || nz < 1 || (ncol > 0 && (!depth || !a || !b || !c || !x))) return MM_TDMA_EINVAL;
  if (ncol == 0) return MM_TDMA_OK;
  if (!src || src == x)
    return mm_py_solve(backend, single, ncol, nz, depth, a, b, c, x, threads, 0);
  /* depths out of range: refused before x is filled (the solve would refuse
   * them after), so that a call that fails leaves x as it was */
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
  if (mm_tdma_check_depths(&bt)) return MM_TDMA_EINVAL;
  mm_tdma *s;
  int rc = mm_tdma_create(backend, nz, 0, &s);
  if (rc) return rc;
  const int before = threads_enter(threads);
  /* the reserving solve: the call's shape and arrays, every column of depth
   * 0, so no level is touched; a backend sizes its workspace by the call's
   * columns, levels and threads (simd: one column alone, or tiles), so the
   * workspace reserved is the one the solve will use */
  int *none = calloc(ncol, sizeof *none);
  rc = none ? solve_in(s, single, ncol, nz, none, a, b, c, x) : MM_TDMA_ENOMEM;
  free(none);
  if (!rc) {
    memcpy(x, src, ncol * (size_t)nz * (single ? sizeof(float) : sizeof(double)));
    rc = solve_in(s, single, ncol, nz, depth, a, b, c, x);
  }
  threads_leave(before);
  mm_tdma_destroy(s);
  return rc;
}

int mm_py_solve_with(mm_tdma *s, int single, size_t ncol, int nz, const int *depth, const void *a,
                     const void *b, const void *c, void *rhs, int threads) {
  if (!s || nz < 1 || (ncol > 0 && (!depth || !a || !b || !c || !rhs))) return MM_TDMA_EINVAL;
  if (ncol == 0) return MM_TDMA_OK;
  const int before = threads_enter(threads);
  const int rc = solve_in(s, single, ncol, nz, depth, a, b, c, rhs);
  threads_leave(before);
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
  if (mm_py_fork_single()) return 1;
  const int n = omp_get_max_threads(), cap = threads_cap();
  return n < cap ? n : cap;
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
