/* The C API of the Python package: what minimodel/_lib.py (ctypes) and the
 * JAX FFI handler (mm_tdma_ffi.cc) call. Not part of the solvers' API.
 *
 * The caller has checked every argument: minimodel/tdma.py checks shapes,
 * dtypes, contiguity, aliasing and depths before the call, the FFI handler
 * shapes and dtypes; the solvers check nz and every depth again before
 * anything is written (MM_TDMA_EINVAL). */
#ifndef MM_PY_H
#define MM_PY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MM_PY_EXPORT __attribute__((visibility("default")))

/* Bumped whenever a signature below changes or a function is added;
 * minimodel/_lib.py checks it. */
#define MM_PY_ABI 2
MM_PY_EXPORT int mm_py_abi(void);

/* One solve of ncol columns of nz levels, column-contiguous, one right-hand
 * side solved in place: double (single = 0) or float (single = 1).
 * backend: a name of the table or "auto"; for_device: the pointers are GPU
 * device pointers (depth too). threads > 0: OpenMP threads for this call
 * (restored after); 0: the library's default (OMP_NUM_THREADS). Either is
 * capped at the CPUs this process may use (omp_get_num_procs) and at
 * OMP_THREAD_LIMIT: more threads cannot make the solve faster, and where a
 * team of hundreds fails to start the OpenMP runtime ends the process.
 * Returns 0 or an MM_TDMA_E* code (mm_py_strerror).
 *
 * After fork: libgomp's thread team does not survive fork(), and a child
 * whose parent had started it hangs in its first parallel region. So in a
 * child forked from a process that had solved here with more than one
 * thread (or from such a child), every solve runs on one thread, threads
 * > 0 included, and mm_py_max_threads() is 1 (pthread_atfork). OpenMP
 * started in the parent by other libraries is not seen. */
MM_PY_EXPORT int mm_py_solve(const char *backend, int single, size_t ncol, int nz, const int *depth,
                             const void *a, const void *b, const void *c, void *rhs, int threads,
                             int for_device);
/* The same solve (host memory) of x, filled from src first unless src is
 * NULL or x: the solver is made and its workspace reserved for this call's
 * threads (a solve of the call's shape whose columns all have depth 0, which
 * reads and writes no level) before src is copied, so that a failure to
 * make or reserve either (MM_TDMA_ENOMEM) returns with x as it was. A
 * failure of the solve itself (a backend's MM_TDMA_ESINGULAR, `lapack`) may
 * leave x partly solved. */
MM_PY_EXPORT int mm_py_solve_from(const char *backend, int single, size_t ncol, int nz,
                                  const int *depth, const void *a, const void *b, const void *c,
                                  const void *src, void *x, int threads);

/* The same solve with a solver made once by mm_tdma_create (nz its own).
 * Not exported. */
struct mm_tdma;
int mm_py_solve_with(struct mm_tdma *s, int single, size_t ncol, int nz, const int *depth,
                     const void *a, const void *b, const void *c, void *rhs, int threads);
/* The same solve queued on a CUDA stream (a cudaStream_t as void *) and
 * returning at once (mm_tdma_solve_async, _f_async: no depth check, errors
 * while running show at the stream's next synchronisation), for the FFI
 * handler on a GPU, on XLA's stream. Not exported. */
int mm_py_solve_async(struct mm_tdma *s, int single, size_t ncol, int nz, const int *depth,
                      const void *a, const void *b, const void *c, void *rhs, void *stream);

/* The backend table, by index 0 .. mm_py_backend_count() - 1. */
MM_PY_EXPORT int mm_py_backend_count(void);
MM_PY_EXPORT const char *mm_py_backend_name(int i);
MM_PY_EXPORT const char *mm_py_backend_description(int i);
/* bit 0: works on GPU device memory; bit 1: bitwise equal to reference */
MM_PY_EXPORT int mm_py_backend_flags(int i);
/* The backend "auto" takes for host memory (for_device = 0) or device
 * memory; NULL when there is none. */
MM_PY_EXPORT const char *mm_py_auto_backend(int for_device);
MM_PY_EXPORT const char *mm_py_strerror(int code);
/* OpenMP threads a call with threads = 0 uses (1 without OpenMP, and in a
 * forked child that solves on one thread, see mm_py_solve; within the cap
 * of mm_py_solve). */
MM_PY_EXPORT int mm_py_max_threads(void);
/* 1 in a forked child that solves on one thread (see mm_py_solve), else 0. */
MM_PY_EXPORT int mm_py_fork_single(void);
/* 1 when the JAX FFI handlers are in the library (built where jax was
 * importable), 2 when the CUDA one is too; 0 without. */
MM_PY_EXPORT int mm_py_ffi(void);

#ifdef __cplusplus
}
#endif
#endif
