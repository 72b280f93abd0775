/* minimodel-probe FILE [PARENT_PID LIMIT_S]: the test read of an input
 * file's metadata (mm_io_probe_walk) in a fresh process. mm_io_probe
 * (io/probe.c) starts it with posix_spawn, because a forked copy of a
 * process that runs threads (MPI's, the read watchdog) may only make
 * async-signal-safe calls: netCDF and HDF5 allocate, and a lock that
 * another thread held at the fork stays held in the copy for ever.
 *
 * Exit status: 0 when all of the metadata reads, 3 when the library refuses
 * something, 4 for other arguments; a crash of the libraries ends it with
 * their signal (the default actions: a sanitizer build's own handlers are
 * off), and a loop with SIGALRM after LIMIT_S + 1 s. With PARENT_PID it
 * also ends when that process does, so that a library that loops does not
 * go on spinning as an orphan. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "probe_walk.h"

#ifdef MM_SANITIZED
/* A crash of the libraries is the answer, not a finding: no report, and
 * the signal itself; no leak check of the libraries' globals at the end. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:"
         "detect_leaks=0";
}
#endif

int main(int argc, char **argv) {
  static const char usage[] = "usage: minimodel-probe FILE [PARENT_PID LIMIT_S]\n";
  if (argc != 2 && argc != 4) {
    fputs(usage, stderr);
    return MM_PROBE_USAGE;
  }
  if (argc == 4) {
    char *end = NULL;
    errno = 0;
    const long parent = strtol(argv[2], &end, 10);
    /* a pid: 4294967296 as a pid_t was 0, whose kill(0, 0) always succeeds */
    if (*end || errno || parent <= 0 || parent > INT_MAX) {
      fprintf(stderr, "minimodel-probe: PARENT_PID = %s: not a process id\n%s", argv[2], usage);
      return MM_PROBE_USAGE;
    }
    const double limit = strtod(argv[3], &end);
    if (*end || !(limit >= 0.0)) {
      fprintf(stderr, "minimodel-probe: LIMIT_S = %s: not a number of seconds >= 0\n%s", argv[3],
              usage);
      return MM_PROBE_USAGE;
    }
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    /* the caller gone already (a wrapper between it and this program is
     * no reason to stop) */
    if (getppid() != (pid_t)parent && kill((pid_t)parent, 0) != 0 && errno == ESRCH)
      return MM_PROBE_REFUSED;
    if (limit > 0.0) alarm((unsigned)fmin(ceil(limit) + 1.0, 1e9));
  }
  /* _exit: neither the libraries' nor a sanitizer's clean-up at exit */
  _exit(mm_io_probe_walk(argv[1]));
}
