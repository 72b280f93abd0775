/* Error handling: every fallible call returns an mm_err code and goes through
 * MM_CHECK, which records file and line; preconditions through MM_REQUIRE with
 * a formatted message. The error unwinds to main, which reports it. */
#ifndef MM_ERROR_H
#define MM_ERROR_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Error codes double as the program's exit status. */
typedef enum {
  MM_OK = 0,
  MM_ERR_RUN = 1,   /* failure while running (I/O, blow-up, allocation) */
  MM_ERR_INPUT = 2, /* usage, configuration or input-file error */
  /* 128 + N: stopped by signal N (SIGTERM, SIGINT, SIGHUP; app/mm_signal.h) */
  MM_ERR_SIGNAL = 128,
} mm_err;

/* Every function that returns mm_err is declared MM_NODISCARD: a result
 * left unread is a compiler warning (an error with -Werror). */
#define MM_NODISCARD __attribute__((warn_unused_result))

/* The longest message kept, its end included: room for two paths of
 * PATH_MAX (4096) would be more than a terminal shows; this keeps a long
 * path and the reason after it (a message is cut there). */
#define MM_ERROR_MAX 8192

/* Record an error (first one wins until mm_error_clear) and return code. */
MM_NODISCARD mm_err mm_error_set(mm_err code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Put text before the recorded message ("case 2 of 3 (b.ini): "), keeping
 * its code and trace; returns code (MM_OK and no record: nothing done). */
MM_NODISCARD mm_err mm_error_prefix(mm_err code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a frame "file:line" to the record as the error unwinds. */
MM_NODISCARD mm_err mm_error_trace(mm_err code, const char *file, int line);
/* The recorded message (empty if none) and trace. */
const char *mm_error_message(void);
const char *mm_error_where(void);
void mm_error_clear(void);

#define MM_ERROR(code, ...) mm_error_set((code), __FILE__, __LINE__, __VA_ARGS__)

/* Agree on an outcome across the ranks of comm (collective): every rank
 * returns the worst code of any rank, and the message of the lowest rank
 * that failed with that code: the other ranks take it over as "rank N:
 * <message>", or the message alone when N is 0. Without it a rank that failed alone
 * would leave the others waiting in the next collective. */
MM_NODISCARD mm_err mm_agree(MPI_Comm comm, mm_err local);
/* The same, and in the same reduction *extra_max = the largest `extra` of
 * any rank (the per-step agreement carries the signal number this way). */
MM_NODISCARD mm_err mm_agree_with(MPI_Comm comm, mm_err local, int extra, int *extra_max);

/* Rank 0's `len` bytes at `text` on every rank (collective; `text` and
 * `len` are read on rank 0 alone, NULL there: out of memory): *out is
 * malloc'd with a '\0' after the bytes, and *out_len their count. Every
 * rank returns the same code; on an error *out is NULL. */
MM_NODISCARD mm_err mm_bcast_text(MPI_Comm comm, const char *text, size_t len, char **out,
                                  size_t *out_len);

/* An MPI call that failed (its return code rc): an MM_ERR_RUN naming the
 * call and MPI's message. The communicators minimodel uses have
 * MPI_ERRORS_RETURN (set on MPI_COMM_WORLD in main and on every
 * communicator minimodel creates), so a failure comes back as a code. */
MM_NODISCARD mm_err mm_mpi_error(int rc, const char *call, const char *file, int line);

/* The same as a value: MM_OK, or the error of a failed call (for calls whose
 * caller must clean up before it returns). */
MM_NODISCARD mm_err mm_mpi_check(int rc, const char *call, const char *file, int line);
#define MM_MPI_ERR(call) mm_mpi_check((call), #call, __FILE__, __LINE__)

/* Every MPI call: MM_MPI(MPI_Allreduce(...)) returns the error from the
 * enclosing mm_err function when the call fails. */
#define MM_MPI(call)                                                                               \
  do {                                                                                             \
    const int mm_mpi_rc_ = (call);                                                                 \
    if (mm_mpi_rc_ != MPI_SUCCESS) return mm_mpi_error(mm_mpi_rc_, #call, __FILE__, __LINE__);     \
  } while (0)

#define MM_CHECK(call)                                                                             \
  do {                                                                                             \
    mm_err mm_check_err_ = (call);                                                                 \
    if (mm_check_err_ != MM_OK) return mm_error_trace(mm_check_err_, __FILE__, __LINE__);          \
  } while (0)

/* Precondition: if !cond, record code with the message and return it. */
#define MM_REQUIRE(cond, code, ...)                                                                \
  do {                                                                                             \
    if (!(cond)) return MM_ERROR((code), __VA_ARGS__);                                             \
  } while (0)

/* With MINIMODEL_NAN_FILL (the nanfill preset), fresh arrays hold 0xff
 * bytes (NaN doubles, -1 ints) instead of zeros, so that a value read before
 * it is written shows, as MOM6's debug builds do; zeros where zeros are
 * meant are written explicitly. */
#ifdef MINIMODEL_NAN_FILL
#define MM_ALLOC_POISON(ptr, bytes) memset((ptr), 0xff, (bytes))
#else
#define MM_ALLOC_POISON(ptr, bytes) ((void)0)
#endif

/* calloc, but aligned to a cache line: a column of a multiple of 4 levels
 * then starts on a 32-byte boundary, and the vector loads of the
 * horizontal step and the solver do not straddle cache lines (calloc's
 * 16-byte alignment made every other one do so: measured 3-6% of both
 * phases). n * size must not overflow (MM_ALLOC checks).
 *
 * An array of 4 MB or more (a field of a block) is aligned to 2 MB and
 * asked for in transparent huge pages (where the kernel offers them on
 * request, Linux's "madvise" setting): the steps stream through several
 * fields at once, and with 4 KB pages every 4 KB of each stream costs a
 * TLB miss, a page walk that a virtual machine makes twice as long. The
 * horizontal step, the solve and the whole step were each faster in 3 or 4
 * of 4 paired rounds, by 2 to 8% (docs/performance.md). */
#define MM_HUGE_PAGE ((size_t)2 << 20)
static inline void *mm_calloc_aligned(size_t n, size_t size) {
  size_t bytes = (n * size + 63) / 64 * 64;
  const int big = bytes >= 2 * MM_HUGE_PAGE;
  if (big) bytes = (bytes + MM_HUGE_PAGE - 1) / MM_HUGE_PAGE * MM_HUGE_PAGE;
  void *p = aligned_alloc(big ? MM_HUGE_PAGE : 64, bytes);
#ifdef MADV_HUGEPAGE
  if (p && big) (void)madvise(p, bytes, MADV_HUGEPAGE); /* a request: refused, 4 KB pages */
#endif
  if (p) memset(p, 0, bytes);
  return p;
}

/* Allocation that fails with a message naming what and how much. */
#define MM_ALLOC(ptr, count)                                                                       \
  do {                                                                                             \
    size_t mm_alloc_n_ = (size_t)(count);                                                          \
    if (mm_alloc_n_ > (size_t)PTRDIFF_MAX / sizeof(*(ptr)))                                        \
      return MM_ERROR(MM_ERR_RUN, "allocation of %s too large (%zu elements)", #ptr, mm_alloc_n_); \
    (ptr) = mm_alloc_n_ ? mm_calloc_aligned(mm_alloc_n_, sizeof(*(ptr))) : NULL;                   \
    if (mm_alloc_n_ && !(ptr))                                                                     \
      return MM_ERROR(MM_ERR_RUN, "out of memory allocating %s (%zu bytes)", #ptr,                 \
                      mm_alloc_n_ * sizeof(*(ptr)));                                               \
    MM_ALLOC_POISON(ptr, mm_alloc_n_ * sizeof(*(ptr)));                                            \
  } while (0)

#endif
