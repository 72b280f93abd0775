/* mm_io_probe: the metadata of an input file read first in a process of its
 * own (nc_util.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mm_io.h"
#include "nc_util.h"
#include "probe_walk.h"
#ifdef MM_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

extern char **environ;

double mm_io_read_timeout(const mm_settings *env, const char *path) {
  struct stat st;
  const double by_size = 600.0 + (stat(path, &st) == 0 ? (double)st.st_size / 20e6 : 0.0);
  return mm_settings_seconds(env->read_timeout, by_size);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The helper program into out: MINIMODEL_PROBE_HELPER where set, else
 * minimodel-probe beside the running executable, else the one of the build
 * (MM_PROBE_HELPER). false when none is an executable file. */
static bool helper_path(const mm_settings *env, char *out, size_t n) {
  if (env->probe_helper[0]) {
    snprintf(out, n, "%s", env->probe_helper);
    return access(out, X_OK) == 0;
  }
#ifdef __linux__
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    const char *slash = strrchr(exe, '/');
    if (slash && snprintf(out, n, "%.*s/minimodel-probe", (int)(slash - exe), exe) < (int)n &&
        access(out, X_OK) == 0)
      return true;
  }
#endif
#ifdef MM_PROBE_HELPER
  snprintf(out, n, "%s", MM_PROBE_HELPER);
  return access(out, X_OK) == 0;
#else
  return false;
#endif
}

/* The signals a library's crash raises. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGSYS, SIGTRAP};

/* The helper started on path: its pid, or -1 when it cannot be started;
 * its path in helper[n].
 * In a process group of its own, so that a stop signal sent to the run's
 * group (a terminal's Ctrl-C, Open MPI's signals to a rank) does not end
 * the test read half-way: the run stops after it, by its own handlers. The
 * crash signals and SIGALRM at their default actions and none blocked,
 * whatever the caller's handlers and mask; a signal the run ignores (nohup)
 * stays ignored. */
static pid_t spawn_helper(const mm_settings *env, const char *path, double limit, char *helper,
                          size_t n) {
  char parent[32], seconds[64];
  if (!helper_path(env, helper, n)) return -1;
  snprintf(parent, sizeof parent, "%ld", (long)getpid());
  snprintf(seconds, sizeof seconds, "%.17g", limit > 0.0 ? limit : 0.0);
  char *const argv[] = {helper, (char *)path, parent, seconds, NULL};
  posix_spawnattr_t attr;
  if (posix_spawnattr_init(&attr) != 0) return -1;
  sigset_t none, deflt;
  sigemptyset(&none);
  sigemptyset(&deflt);
  for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
    sigaddset(&deflt, crash_signals[i]);
  sigaddset(&deflt, SIGALRM);
  pid_t pid = -1;
  if (posix_spawnattr_setsigmask(&attr, &none) != 0 ||
      posix_spawnattr_setsigdefault(&attr, &deflt) != 0 || posix_spawnattr_setpgroup(&attr, 0) ||
      posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                          POSIX_SPAWN_SETPGROUP) != 0 ||
      posix_spawn(&pid, helper, NULL, &attr, argv, environ) != 0)
    pid = -1;
  posix_spawnattr_destroy(&attr);
  return pid;
}

/* Without the helper: a forked copy of this process reads the metadata.
 * Safe only as far as the libraries' fork handlers make it (glibc's malloc
 * has them; a sanitizer's allocator may not), hence the helper first. */
static pid_t fork_walker(const char *path, double limit) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  /* the child never outlives the limit or its parent (whose read watchdog
   * may end it first): a library that loops must not go on spinning as an
   * orphan; -1: no child to spare */
  if (pid != 0) return pid;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (getppid() != parent) _exit(MM_PROBE_REFUSED);
  if (limit > 0.0) alarm((unsigned)fmin(ceil(limit) + 1.0, 1e9));
  /* a crash here is the answer, not a finding of the process's own
   * handlers (a fuzzer's or an MPI library's): the default actions, and
   * under a sanitizer no death callback */
  for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
    signal(crash_signals[i], SIG_DFL);
#ifdef MM_SANITIZED
  __sanitizer_set_death_callback(NULL);
#endif
  _exit(mm_io_probe_walk(path));
}

/* The time the test read may go on after a stop signal (env->stop_signal)
 * before it is ended and the run stops through its errors: shorter than the
 * read watchdog's MM_WATCH_STOP_S (app/run.c), which ends the process. */
#define MM_PROBE_STOP_S 0.1

/* The test read's process, waited for within limit seconds (0: none):
 * MM_PROBE_READ or MM_PROBE_REFUSED as it exits, -1 when it was ended at
 * the limit, -3 when it was ended MM_PROBE_STOP_S after a stop signal
 * (*signo), else its wait status in *status. */
static int wait_probe(const mm_settings *env, pid_t pid, double limit, int *status, int *signo) {
  const double t0 = now();
  double stop_by = INFINITY;
  for (;;) {
    const pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return MM_PROBE_READ; /* lost: the read itself follows */
    const double t = now();
    if (!*signo && env->stop_signal && (*signo = env->stop_signal()) != 0)
      stop_by = t + MM_PROBE_STOP_S;
    const bool stop = t >= stop_by;
    if (stop || (limit > 0.0 && t - t0 > limit)) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return stop ? -3 : -1;
    }
    struct timespec nap = {0, 2000000}; /* 2 ms */
    nanosleep(&nap, NULL);
  }
  if (WIFEXITED(*status) &&
      (WEXITSTATUS(*status) == MM_PROBE_READ || WEXITSTATUS(*status) == MM_PROBE_REFUSED))
    return WEXITSTATUS(*status);
  return -2;
}

/* A signal that a library's crash raises. */
static bool crash_signal(int sig) {
  for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
    if (sig == crash_signals[i]) return true;
  return false;
}

/* Rank 0's part: start the test read (the helper, or a fork without it),
 * wait with the time limit, judge. */
static MM_NODISCARD mm_err probe(const mm_settings *env, const char *path) {
  const double limit = mm_io_read_timeout(env, path);
  fflush(NULL);
  /* SIGCHLD at its default meanwhile: ignored (by whoever started the run),
   * the child would be reaped unseen and its verdict lost */
  struct sigaction chld_dfl = {.sa_handler = SIG_DFL}, chld_old;
  sigemptyset(&chld_dfl.sa_mask);
  const bool chld_set = sigaction(SIGCHLD, &chld_dfl, &chld_old) == 0;
  char helper[PATH_MAX + 32] = "a forked copy of the run";
  pid_t pid = spawn_helper(env, path, limit, helper, sizeof helper);
  int status = 0, got = 0, signo = 0;
  if (pid > 0) {
    got = wait_probe(env, pid, limit, &status, &signo);
    /* 127: the helper was found but could not start (its loader failed) */
    if (got == -2 && WIFEXITED(status) && WEXITSTATUS(status) == 127) pid = -1;
  }
  if (pid <= 0) {
    snprintf(helper, sizeof helper, "a forked copy of the run");
    pid = fork_walker(path, limit);
    got = pid < 0 ? MM_PROBE_READ : wait_probe(env, pid, limit, &status, &signo);
  }
  if (chld_set) sigaction(SIGCHLD, &chld_old, NULL);
  if (pid < 0) return MM_OK; /* no process to spare: the read itself follows */
  if (got == -3)
    return MM_ERROR((mm_err)(MM_ERR_SIGNAL + signo),
                    "stopped by signal %d (%s) while test-reading %s: the test read had not "
                    "ended %g s after the signal",
                    signo, strsignal(signo), path, MM_PROBE_STOP_S);
  /* SIGALRM: the test read's own limit (limit + 1 s) came first */
  if (got == -2 && WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) got = -1;
  if (got == -1)
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: still not read after %g s: a damaged file (the netCDF/HDF5 libraries "
                    "do not finish reading its metadata) or a stalled file system; "
                    "MINIMODEL_READ_TIMEOUT sets the limit in seconds",
                    path, limit);
  if (got >= 0) return MM_OK;
  /* a signal that someone sent (a stop asked for at the terminal, the
   * kernel's out-of-memory killer) says nothing of the file: the read
   * itself follows, and the run's own handlers see the stop */
  if (WIFSIGNALED(status) && !crash_signal(WTERMSIG(status))) return MM_OK;
  /* a crash, or another exit status: a sanitizer's report (a crash it
   * caught), an abort, a helper that fails */
  char how[64];
  if (WIFSIGNALED(status))
    snprintf(how, sizeof how, "signal %d", WTERMSIG(status));
  else
    snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
  return MM_ERROR(MM_ERR_INPUT,
                  "%s: damaged file: the netCDF/HDF5 libraries %s reading its metadata (%s in a "
                  "test read by %s); refused",
                  path, WIFSIGNALED(status) ? "crash" : "crash or fail", how, helper);
}

mm_err mm_io_probe(MPI_Comm comm, const mm_settings *env, const char *path) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  return mm_agree(comm, rank == 0 ? probe(env, path) : MM_OK);
}
