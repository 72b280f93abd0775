/* fail_write.so: loaded with LD_PRELOAD into the ranks of a run, it makes
 * the writes to one file fail with ENOSPC on one rank, as a file system that
 * fails a write inside the room reserved for it (an I/O error, a
 * copy-on-write file system), beneath MPI-IO and HDF5. For file_watch.sh.
 *   FAIL_WRITE_SUFFIX=NAME  the file: its path ends with NAME (unset: none)
 *   FAIL_WRITE_RANK=R       the rank (OMPI_COMM_WORLD_RANK) whose writes fail
 *   FAIL_WRITE_AFTER=N      the first N writes to the file succeed (default 0)
 *   FAIL_OPEN_MATCH=TEXT    on that rank, an open that would create a file
 *                           whose path holds TEXT fails (ENOSPC)
 *   FAIL_WRITE_HANG=1       the first write after them never returns instead
 *                           (a file system that stalls: a hard-mounted NFS
 *                           whose server is gone), signals or not
 *   FAIL_WRITE_STALL=S      the first write after them returns S seconds
 *                           after it began (of the monotonic clock, which a
 *                           stop of the process does not hold up), and
 *                           succeeds, as every write after it does
 *   FAIL_STALL_SUFFIX=NAME  besides, on that rank, the first write to a file
 *   FAIL_STALL_SECONDS=S    whose path ends with NAME returns S seconds after
 *                           it began, and succeeds: a case that lasts that
 *                           long whatever the disk's speed
 *   FAIL_TRUNCATE_KILL=NAME an ftruncate that shortens a file whose path
 *                           ends with NAME, to a length > 0, is made, and then
 *                           the process kills itself (SIGKILL), on any rank:
 *                           a kill between HDF5's cut of a file and its
 *                           rewrite of the superblock
 * Otherwise every write after them fails; each failure is counted on stderr
 * ("fail_write: ..."), and the rank's writes to the file in all at its exit
 * ("fail_write: rank R: N writes"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long writes; /* to the file, on this rank */

__attribute__((destructor)) static void count(void) {
  const char *rank = getenv("FAIL_WRITE_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
  if (rank && me && !strcmp(rank, me))
    fprintf(stderr, "fail_write: rank %s: %ld writes\n", me, writes);
}

/* Whether the path of the file open at fd ends with suffix; the path into
 * path[size]. */
static int path_ends_with(int fd, const char *suffix, char *path, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, size - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const size_t len = strlen(suffix);
  return (size_t)n >= len && strcmp(path + n - len, suffix) == 0;
}

/* Write n (to path, on rank me) returns `seconds` after it began. */
static void stall_write(const char *me, long n, const char *path, const char *seconds) {
  fprintf(stderr, "fail_write: rank %s: write %ld to %s stalls\n", me, n, path);
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += atol(seconds);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
  }
  fprintf(stderr, "fail_write: rank %s: write %ld to %s returns\n", me, n, path);
}

static int fails(int fd) {
  const char *suffix = getenv("FAIL_WRITE_SUFFIX");
  const char *rank = getenv("FAIL_WRITE_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
  const char *stall = getenv("FAIL_WRITE_STALL");
  const char *stall_suffix = getenv("FAIL_STALL_SUFFIX"), *stall_s = getenv("FAIL_STALL_SECONDS");
  if (!rank || !me || strcmp(rank, me) != 0) return 0;
  char path[4096];
  static int stalled; /* the write to FAIL_STALL_SUFFIX's file made to stall */
  if (!stalled && stall_s && *stall_s && stall_suffix && *stall_suffix &&
      path_ends_with(fd, stall_suffix, path, sizeof path)) {
    stalled = 1;
    stall_write(me, 1, path, stall_s);
    return 0;
  }
  if (!suffix || !*suffix) return 0;
  if (!path_ends_with(fd, suffix, path, sizeof path)) return 0;
  const char *after = getenv("FAIL_WRITE_AFTER");
  if (writes++ < (after ? atol(after) : 0)) return 0;
  if (stall && *stall) {
    if (writes == (after ? atol(after) : 0) + 1) stall_write(me, writes, path, stall);
    return 0;
  }
  const char *hang = getenv("FAIL_WRITE_HANG");
  if (hang && !strcmp(hang, "1")) {
    fprintf(stderr, "fail_write: rank %s: write %ld to %s hangs\n", me, writes, path);
    for (;;)
      pause(); /* a signal's handler returns here, and it waits again */
  }
  fprintf(stderr, "fail_write: rank %s: write %ld to %s failed\n", me, writes, path);
  errno = ENOSPC;
  return 1;
}

/* The C library's function `name` (a function pointer from dlsym's object
 * pointer through memcpy: ISO C has no cast between them). */
static void next(const char *name, void *fn, size_t size) {
  void *found = dlsym(RTLD_NEXT, name);
  memcpy(fn, &found, size);
}
#define NEXT(name, ...)                                                                            \
  do {                                                                                             \
    __typeof__(&name) next_;                                                                       \
    next(#name, &next_, sizeof next_);                                                             \
    return fails(fd) ? -1 : next_(__VA_ARGS__);                                                    \
  } while (0)

ssize_t write(int fd, const void *buf, size_t n) {
  NEXT(write, fd, buf, n);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) {
  NEXT(pwrite, fd, buf, n, at);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) {
  NEXT(pwrite64, fd, buf, n, at);
}
ssize_t writev(int fd, const struct iovec *v, int count) {
  NEXT(writev, fd, v, count);
}
ssize_t pwritev(int fd, const struct iovec *v, int count, off_t at) {
  NEXT(pwritev, fd, v, count, at);
}

/* An open that would create a file: fails where FAIL_OPEN_MATCH says. */
static int open_fails(const char *path, int flags) {
  const char *match = getenv("FAIL_OPEN_MATCH");
  const char *rank = getenv("FAIL_WRITE_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
  if (!match || !*match || !rank || !me || strcmp(rank, me) != 0 || !(flags & O_CREAT) ||
      !strstr(path, match))
    return 0;
  fprintf(stderr, "fail_write: rank %s: open of %s failed\n", me, path);
  errno = ENOSPC;
  return 1;
}

#define OPEN(name)                                                                                 \
  int name(const char *path, int flags, ...) {                                                     \
    va_list args;                                                                                  \
    va_start(args, flags);                                                                         \
    const mode_t mode = (flags & O_CREAT) ? (mode_t)va_arg(args, int) : 0;                         \
    va_end(args);                                                                                  \
    if (open_fails(path, flags)) return -1;                                                        \
    int (*next_)(const char *, int, ...);                                                          \
    next(#name, &next_, sizeof next_);                                                             \
    return next_(path, flags, mode);                                                               \
  }
OPEN(open)
OPEN(open64)

/* FAIL_TRUNCATE_KILL: the cut made, then SIGKILL. */
static int truncate_kills(int fd, off_t length) {
  const char *suffix = getenv("FAIL_TRUNCATE_KILL");
  struct stat st;
  if (!suffix || !*suffix || length <= 0 || fstat(fd, &st) != 0 || st.st_size <= length) return 0;
  char path[4096];
  return path_ends_with(fd, suffix, path, sizeof path);
}

#define TRUNCATE(name)                                                                             \
  int name(int fd, off_t length) {                                                                 \
    const int kill_after = truncate_kills(fd, length);                                             \
    int (*next_)(int, off_t);                                                                      \
    next(#name, &next_, sizeof next_);                                                             \
    const int rc = next_(fd, length);                                                              \
    if (kill_after && rc == 0) {                                                                   \
      fprintf(stderr, "fail_write: cut to %lld bytes, killed\n", (long long)length);               \
      raise(SIGKILL);                                                                              \
    }                                                                                              \
    return rc;                                                                                     \
  }
TRUNCATE(ftruncate)
TRUNCATE(ftruncate64)
