#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mm_signal.h"

/* The one piece of process state besides the error record: a signal
 * handler can only leave a note in a variable of static storage. */
static volatile sig_atomic_t mm_signal_first = 0;

static void mm_signal_handler(int signo) {
  if (mm_signal_first == 0) mm_signal_first = signo;
}

/* The stop signals: those of a user and a terminal, those a batch system
 * sends before it kills a job (SGE's notification, SIGUSR1 and SIGUSR2; a
 * soft CPU-time limit, SIGXCPU; an alarm), and a failing power supply's
 * (SIGPWR, from a UPS daemon through init, where the system has it). */
static const int mm_stop_signals[] = {
    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGXCPU, SIGALRM,
#ifdef SIGPWR
    SIGPWR,
#endif
};
#define MM_N_STOP_SIGNALS (sizeof mm_stop_signals / sizeof mm_stop_signals[0])

static void mm_stop_signal_set(sigset_t *set) {
  sigemptyset(set);
  for (size_t i = 0; i < MM_N_STOP_SIGNALS; i++)
    sigaddset(set, mm_stop_signals[i]);
}

void mm_signal_defer(void) {
  /* A file-size limit (ulimit -f) then makes a write past it fail with
   * EFBIG, which ends the run as any failed write does (exit 1, the files
   * closed), instead of killing the process: mpirun starts its ranks with
   * SIGXFSZ at its default action whatever its own shell set. From before
   * MPI_Init, whose shared-memory files (Open MPI's vader) meet the limit
   * first. */
  signal(SIGXFSZ, SIG_IGN);
  /* Progress and report on a pipe that closes (`minimodel case.ini | head`)
   * then fail with EPIPE and are dropped; the run goes on to write its
   * files, as under mpirun, which keeps its ranks' output from a closed
   * pipe. A broken pipe otherwise killed the process mid-run, leaving its
   * lock and Open MPI's lock file beside the history. */
  signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  mm_stop_signal_set(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void mm_signal_install(void) {
  for (size_t i = 0; i < MM_N_STOP_SIGNALS; i++) {
    struct sigaction old;
    if (sigaction(mm_stop_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = mm_signal_handler;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART; /* the libraries' reads and writes go on */
    sigaction(mm_stop_signals[i], &act, NULL);
  }
  /* a signal held back by mm_signal_defer is delivered now, to the handler
   * (or discarded, when ignored) */
  sigset_t set;
  mm_stop_signal_set(&set);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int mm_signal_received(void) {
  return (int)mm_signal_first;
}

const char *mm_signal_name(int signo) {
  switch (signo) {
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGHUP: return "SIGHUP";
  case SIGQUIT: return "SIGQUIT";
  case SIGUSR1: return "SIGUSR1";
  case SIGUSR2: return "SIGUSR2";
  case SIGXCPU: return "SIGXCPU";
  case SIGALRM: return "SIGALRM";
#ifdef SIGPWR
  case SIGPWR: return "SIGPWR";
#endif
  default: return "a signal";
  }
}

/* The guard's thread: once a stop signal has come (at once for
 * mm_signal_exit_guard, which follows one), after the time, end the
 * process. */
static void *mm_exit_guard_main(void *arg) {
  const intptr_t status = (intptr_t)arg;
  struct timespec tick = {0, 50000000}; /* 0.05 s */
  while (mm_signal_first == 0)
    nanosleep(&tick, NULL);
  struct timespec nap = {0, 250000000}; /* 0.25 s (mm_signal.h) */
  while (nanosleep(&nap, &nap) != 0) {
  }
  _exit((int)status);
  return NULL;
}

void mm_signal_exit_guard(int status) {
  pthread_t thread;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* unchecked: without a thread, no guard; the process ends by its own way
   * out, as it would without the signal */
  (void)pthread_create(&thread, &attr, mm_exit_guard_main, (void *)(intptr_t)status);
  pthread_attr_destroy(&attr);
}
