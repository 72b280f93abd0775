/* pthread_setname_np: the watches' threads are named (in ps -L, top -H, gdb,
 * and for the tests, which wait for one in /proc) */
#define _GNU_SOURCE
#include "mm_file_watch.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mm_io.h"
#include "mm_signal.h"
#include "mm_watch_clock.h"

/* The watch of this process (see mm_file_watch.h for why it is static).
 * `lock` guards every field the watch's thread reads. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  double seconds; /* 0: no time limit (still a watch for a stop signal) */
  bool usable;    /* the condition variables were made */
  bool set;       /* the limits were set (mm_file_watch_set): watching */
  int rank;
  const mm_config *cfg;      /* the case's configuration; NULL between cases and
                              * after the case's lock is released */
  mm_output_lock *case_lock; /* released before the rank ends; NULL: none */
  bool failed;               /* a call failed since the last settlement */
  bool settled;              /* the ranks agreed since: the thread ends */
  bool running;              /* the thread runs (to be joined) */
  bool stopping;             /* a stop signal had come before the failure */
  long pid0; /* the process id of rank 0 of MPI_COMM_WORLD: it names the MPI-IO lock files */
  pthread_t thread;
  char error[MPI_MAX_ERROR_STRING + 64]; /* what failed: the call and its outcome */
  char path[PATH_MAX];                   /* the file it failed on; "" unknown */
  char name[MM_STR_MAX];                 /* the case's run.name, at the failure */
  char dir[MM_STR_MAX];                  /* its output.dir */
  char during[MM_ERROR_MAX];             /* what the case was doing (mm_file_watch_during); "" */
  /* the files open through MPI-IO (main thread only), by which a failure
   * names its file */
  struct mm_open_file {
    MPI_File fh;
    char path[PATH_MAX]; /* "" for a free entry */
  } open[8];
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A stop signal (mm_signal.h) during a watch ends the rank when the case
 * (or the call) has not ended MM_FILE_WATCH_STOP_S after it, with 128 + N,
 * as the read watchdog does (app/run.c); looked for every
 * MM_FILE_WATCH_POLL_S. */
#define MM_FILE_WATCH_POLL_S 0.05
#define MM_FILE_WATCH_STOP_S 0.5
/* The same for a write (a resize, a sync) under way at the signal: a
 * write of a large record on a busy file system may take seconds and
 * still end well, and then the run stops after its step as usual, its
 * files closed and its restart at the stop written. */
#define MM_FILE_WATCH_WRITE_STOP_S 5.0

/* How much later than rank 0 another rank's call watch ends it: more than
 * the second between mpirun's SIGTERM and SIGKILL to the other ranks after
 * one ends, so that one message is printed where rank 0 waits too. */
#define MM_FILE_WATCH_AFTER_0_S 3.0

/* The watch over the calls that can stall (mm_file_watch.h): one thread,
 * made at the first call and kept, that waits for each call to return
 * within its time. `lock` guards the fields. */
typedef enum { MM_CALL_OPEN, MM_CALL_WRITE } mm_call_kind;
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  double open_seconds;   /* an open or a close (MINIMODEL_OPEN_TIMEOUT); 0: no time limit */
  double write_seconds;  /* a write, a resize, a sync (MINIMODEL_WRITE_TIMEOUT); 0: none */
  bool made;             /* the thread was made */
  bool idle;             /* it waits for a call to begin (else it looks every
                          * MM_FILE_WATCH_POLL_S: a call's end wakes nothing) */
  bool active;           /* a call is under way (begun, not returned) */
  unsigned long calls;   /* the calls begun so far */
  unsigned long watched; /* the one the thread watches */
  double start;          /* when the call began (mm_monotonic_now()) */
  mm_call_kind kind;
  bool stopping; /* a stop signal had come before the call */
  const char *call;
  char path[PATH_MAX];                    /* the file */
  char name[MM_STR_MAX], dir[MM_STR_MAX]; /* the case's run.name and output.dir; "" none */
  mm_output_lock *case_lock;              /* the case's lock; NULL none */
} call_watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Name a watch's thread (at most 15 characters; where the C library can) */
static void name_thread(pthread_t thread, const char *name) {
#ifdef __GLIBC__
  (void)pthread_setname_np(thread, name); /* unchecked: a name is for people */
#else
  (void)thread;
  (void)name;
#endif
}

/* End the rank for a watch (exit 1, after its message, `ending` held): what the case
 * leaves that a run ended by the libraries' close would not is removed: a
 * restart or crash file's .tmp (never complete: it is renamed once closed),
 * the MPI-IO lock files (named by rank 0's process) beside the case's files
 * (name, dir: its run.name and output.dir; "" for none), and the case's
 * lock, where this rank holds it. */
/* Taken by the watch that ends the rank, never released: a second one
 * (a failed write in a close that does not return) says nothing more. */
static pthread_mutex_t ending = PTHREAD_MUTEX_INITIALIZER;

_Noreturn static void end_rank(const char *name, const char *dir, mm_output_lock *case_lock,
                               int status) {
  fflush(stderr);
  static const char *const files[] = {".nc", ".restart.nc.tmp", ".crash.nc.tmp"};
  for (size_t f = 0; name[0] && f < sizeof files / sizeof files[0]; f++) {
    char path[2 * MM_STR_MAX + 32];
    if (mm_dir_file(path, sizeof path, dir, name, files[f]) >= (int)sizeof path) continue;
    mm_io_remove_mpi_lock_of(path, watch.pid0);
    struct stat st;
    if (f > 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
      (void)unlink(path); /* unchecked: the rank is ending; at worst the .tmp stays */
  }
  if (case_lock) mm_output_lock_destroy(case_lock);
  _exit(status);
}

/* "; " and what the case was doing (mm_file_watch_during), for a
 * message; "" when nothing was said. Read with the ending lock held. */
static const char *during_sep(void) {
  return watch.during[0] ? "; " : "";
}

/* Wait on cond, `mutex` held, at most until the time `wake`
 * (mm_monotonic_now()'s clock). */
static void wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, double wake) {
  struct timespec until = {.tv_sec = (time_t)wake};
  until.tv_nsec = (long)((wake - (double)until.tv_sec) * 1e9);
  pthread_cond_timedwait(cond, mutex, &until);
}

/* Wait, `mutex` held, until over() (read under it), until `limit` seconds
 * after the time `start` (mm_monotonic_now()'s; 0: no limit) on the watch's
 * clock (mm_watch_clock.h: a stop of the process does not count), or until
 * `grace` seconds after a stop signal (mm_signal.h; looked for every
 * MM_FILE_WATCH_POLL_S, and not where one came before the watch began,
 * `stopping`): 0 when over, -1 at the limit, the signal's number at a stop
 * (also where the limit comes after the signal: a signal that came first is
 * the reason, as for the read watchdog). A signal before the watch began is
 * the run's stop under way (a restart written at the stop,
 * output.restart_at_stop): its calls are left their time limit. */
static int watch_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, bool (*over)(void),
                      double start, double limit, double grace, bool stopping) {
  mm_watch_clock clock;
  mm_watch_clock_begin(&clock, start);
  const double end = limit > 0.0 ? start + limit : INFINITY;
  double stop_by = INFINITY;
  int signo = 0;
  while (!over()) {
    const double now = mm_monotonic_now(), t = mm_watch_clock_at(&clock, now);
    if (!stopping && !signo && (signo = mm_signal_received()) != 0) stop_by = t + grace;
    if (t >= stop_by || t >= end) return signo ? signo : -1;
    wait_until(cond, mutex, now + fmin(fmin(end, stop_by) - t, MM_FILE_WATCH_POLL_S));
  }
  return 0;
}

static bool watch_settled(void) {
  return watch.settled;
}

/* The thread started at a failure: ends the rank unless the ranks agree
 * within the time allowed. */
static void *watch_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&watch.lock);
  const int why = watch_wait(&watch.cond, &watch.lock, watch_settled, mm_monotonic_now(),
                             watch.seconds, MM_FILE_WATCH_STOP_S, watch.stopping);
  if (why == 0) {
    pthread_mutex_unlock(&watch.lock);
    return NULL;
  }
  /* the lock stays held: nothing changes the state any more */
  pthread_mutex_lock(&ending);
  /* the history's record being written may have reached the file in part */
  char history[2 * MM_STR_MAX + 8];
  const bool in_history =
      mm_dir_file(history, sizeof history, watch.dir, watch.name, ".nc") < (int)sizeof history &&
      !strcmp(history, watch.path);
  const char *record = in_history ? "; the history's last record, the one being written, may be "
                                    "incomplete: the records before it are whole"
                                  : "";
  if (why > 0)
    fprintf(stderr,
            "minimodel: stopped by %s (rank %d) in case %s while the ranks waited for each other "
            "after a write that failed inside the netCDF/HDF5 libraries (%s%s%s): they had not "
            "ended %g s after the signal%s%s%s; exit status %d\n",
            mm_signal_name(why), watch.rank, watch.name, watch.path, watch.path[0] ? ": " : "",
            watch.error, MM_FILE_WATCH_STOP_S, record, during_sep(), watch.during,
            (int)MM_ERR_SIGNAL + why);
  else
    fprintf(stderr,
            "minimodel: error (rank %d): %s%sa write failed inside the netCDF/HDF5 libraries (%s), "
            "and the ranks had not ended case %s %g s after it: parallel HDF5 leaves them "
            "waiting for each other after such a failure; the run ends here, its files as their "
            "last flush left them%s (MINIMODEL_IO_FAIL_WAIT sets the wait in seconds)%s%s; exit "
            "status %d\n",
            watch.rank, watch.path, watch.path[0] ? ": " : "", watch.error, watch.name,
            watch.seconds, record, during_sep(), watch.during, (int)MM_ERR_RUN);
  end_rank(watch.name, watch.dir, watch.case_lock,
           why > 0 ? (int)MM_ERR_SIGNAL + why : (int)MM_ERR_RUN);
}

/* The call the thread watches has returned (or another has begun). */
static bool call_over(void) {
  return !call_watch.active || call_watch.calls != call_watch.watched;
}

/* The thread of the calls' watch: waits for a call to begin, then ends the
 * rank when it has not returned within its time; for ever. A call's
 * beginning wakes it only where it is idle, and its end not at all: it
 * sees that at its next look, MM_FILE_WATCH_POLL_S later at most, so that
 * the many short writes of a record cost no thread switch each. */
static void *call_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&call_watch.lock);
  for (;;) {
    if (!call_watch.active) {
      call_watch.idle = true;
      while (!call_watch.active)
        pthread_cond_wait(&call_watch.cond, &call_watch.lock);
      call_watch.idle = false;
    }
    call_watch.watched = call_watch.calls;
    const bool write = call_watch.kind == MM_CALL_WRITE;
    const double limit = write ? call_watch.write_seconds : call_watch.open_seconds;
    /* rank 0 first: where it waits too, its end ends the others (mpirun) */
    const double grace = write ? MM_FILE_WATCH_WRITE_STOP_S : MM_FILE_WATCH_STOP_S;
    const int why =
        watch_wait(&call_watch.cond, &call_watch.lock, call_over, call_watch.start,
                   limit > 0.0 && watch.rank > 0 ? limit + MM_FILE_WATCH_AFTER_0_S : limit, grace,
                   call_watch.stopping);
    if (why == 0) continue;
    /* a write that failed in the call: that watch ends the rank, with its
     * own message; this call is not watched further */
    pthread_mutex_lock(&watch.lock);
    const bool failing = watch.running;
    pthread_mutex_unlock(&watch.lock);
    if (failing) {
      while (!call_over()) /* looked at every MM_FILE_WATCH_POLL_S: no end wakes it */
        wait_until(&call_watch.cond, &call_watch.lock, mm_monotonic_now() + MM_FILE_WATCH_POLL_S);
      continue;
    }
    /* call_watch.lock stays held: the call's state no longer changes */
    pthread_mutex_lock(&ending);
    if (why > 0)
      fprintf(stderr,
              "minimodel: stopped by %s (rank %d) while %s of %s had not returned %g s after the "
              "signal%s%s; exit status %d\n",
              mm_signal_name(why), watch.rank, call_watch.call, call_watch.path, grace,
              during_sep(), watch.during, (int)MM_ERR_SIGNAL + why);
    else if (write)
      fprintf(stderr,
              "minimodel: error (rank %d): %s: %s has not returned after %g s: the file system "
              "has stalled, or the ranks are waiting for each other inside MPI-IO; the run ends "
              "here, its files as their last flush left them (MINIMODEL_WRITE_TIMEOUT sets the "
              "limit in seconds)%s%s; exit status %d\n",
              watch.rank, call_watch.path, call_watch.call, limit, during_sep(), watch.during,
              (int)MM_ERR_RUN);
    else
      fprintf(stderr,
              "minimodel: error (rank %d): %s: %s has not returned after %g s: the ranks are "
              "waiting for each other inside MPI-IO (after a step of the call that failed on one "
              "rank alone, such as Open MPI's making of its lock file beside the file), or the "
              "file system has stalled; the run ends here (MINIMODEL_OPEN_TIMEOUT sets the limit "
              "in seconds)%s%s; exit status %d\n",
              watch.rank, call_watch.path, call_watch.call, limit, during_sep(), watch.during,
              (int)MM_ERR_RUN);
    end_rank(call_watch.name, call_watch.dir, call_watch.case_lock,
             why > 0 ? (int)MM_ERR_SIGNAL + why : (int)MM_ERR_RUN);
  }
  return NULL;
}

/* The entry of the open files that holds fh; NULL for none (a file opened
 * while the table was full). watch.lock held. */
static struct mm_open_file *open_file(MPI_File fh) {
  for (size_t f = 0; f < sizeof watch.open / sizeof watch.open[0]; f++)
    if (watch.open[f].path[0] && watch.open[f].fh == fh) return &watch.open[f];
  return NULL;
}

/* Begin the watch over a call (the main thread) on path, or where path is
 * NULL on the open file fh; false where none watches it (no watch set up,
 * or its thread could not be made: the call goes on unwatched, and the
 * next call tries again). */
static bool call_begin(const char *call, const char *path, MPI_File fh, mm_call_kind kind) {
  if (!watch.usable || !watch.set) return false;
  pthread_mutex_lock(&call_watch.lock);
  if (!call_watch.made) {
    pthread_t thread;
    call_watch.made = pthread_create(&thread, NULL, call_main, NULL) == 0;
    if (!call_watch.made) {
      pthread_mutex_unlock(&call_watch.lock);
      return false;
    }
    name_thread(thread, "mm-call-watch");
    (void)pthread_detach(thread); /* unchecked: it runs until the process ends */
  }
  call_watch.kind = kind;
  call_watch.call = call;
  /* taken after call_watch.lock, as call_main does */
  pthread_mutex_lock(&watch.lock);
  const struct mm_open_file *file = path ? NULL : open_file(fh);
  snprintf(call_watch.path, sizeof call_watch.path, "%s",
           path   ? path
           : file ? file->path
                  : "(a file)");
  const mm_config *cfg = watch.cfg;
  snprintf(call_watch.name, sizeof call_watch.name, "%s", cfg ? cfg->run_name : "");
  snprintf(call_watch.dir, sizeof call_watch.dir, "%s", cfg ? cfg->output_dir : "");
  call_watch.case_lock = watch.case_lock;
  pthread_mutex_unlock(&watch.lock);
  /* told here, in the calling thread: the watch's may look later */
  call_watch.stopping = mm_signal_received() != 0;
  call_watch.start = mm_monotonic_now();
  call_watch.calls++;
  call_watch.active = true;
  if (call_watch.idle) pthread_cond_signal(&call_watch.cond);
  pthread_mutex_unlock(&call_watch.lock);
  return true;
}

static void call_end(void) {
  pthread_mutex_lock(&call_watch.lock);
  call_watch.active = false; /* the thread sees it at its next look */
  pthread_mutex_unlock(&call_watch.lock);
}

/* A failed call on a file, seen by the wrappers below (in the thread that
 * made it: the main thread, MPI_THREAD_FUNNELED): the first of a case
 * starts the watch. */
static void watch_failed(MPI_File fh, const char *what) {
  if (!watch.usable || !watch.set) return;
  pthread_mutex_lock(&watch.lock);
  if (!watch.failed && !watch.running && watch.cfg) {
    watch.failed = true;
    watch.settled = false;
    snprintf(watch.error, sizeof watch.error, "%s", what);
    /* copied: the case's rank may leave run_model (and the configuration
     * be cleared here) while another rank is still inside the libraries */
    snprintf(watch.name, sizeof watch.name, "%s", watch.cfg->run_name);
    snprintf(watch.dir, sizeof watch.dir, "%s", watch.cfg->output_dir);
    const struct mm_open_file *file = open_file(fh);
    snprintf(watch.path, sizeof watch.path, "%s", file ? file->path : "");
    /* told here, in the thread that failed: the watch's may start later,
     * after a signal that came since */
    watch.stopping = mm_signal_received() != 0;
    watch.running = pthread_create(&watch.thread, NULL, watch_main, NULL) == 0;
    if (watch.running) name_thread(watch.thread, "mm-file-watch");
    if (!watch.running)
      fprintf(stderr,
              "minimodel: warning (rank %d): no watch over the failed file operation (a thread "
              "cannot be started): should the ranks wait for each other, the run is not ended\n",
              watch.rank);
  }
  pthread_mutex_unlock(&watch.lock);
}

/* A call's return code: MPI's text of an error. */
static void watch_code(MPI_File fh, const char *call, int code) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING + 1];
  int len = 0;
  if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "code %d", code);
  char what[MPI_MAX_ERROR_STRING + 64];
  snprintf(what, sizeof what, "%s: %s", call, text);
  watch_failed(fh, what);
}

/* A write's: an error, or fewer items written than asked for. Open MPI's
 * OMPIO returns MPI_SUCCESS from a write that failed in the file system
 * (it prints "error in writev"), with a status of 0 bytes written, which
 * HDF5 takes for the failure. */
static void watch_write(MPI_File fh, const char *call, int code, int count, MPI_Datatype type,
                        const MPI_Status *status) {
  if (code != MPI_SUCCESS) {
    watch_code(fh, call, code);
    return;
  }
  int written = 0;
  if (PMPI_Get_count(status, type, &written) != MPI_SUCCESS || written != count) {
    char what[128];
    snprintf(what, sizeof what, "%s: %d of %d items written", call,
             written == MPI_UNDEFINED ? -1 : written, count);
    watch_failed(fh, what);
  }
}

/* The calls the netCDF/HDF5 libraries make on a file that can fail for
 * the file system, through MPI's profiling interface (MPI 3.1, 14.2): each
 * calls its PMPI_ twin and looks at the outcome. The executable exports
 * them (app/CMakeLists.txt), so that libhdf5's calls reach them. */
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
  const bool watched = call_begin("MPI_File_open", filename, MPI_FILE_NULL, MM_CALL_OPEN);
  const int code = PMPI_File_open(comm, filename, amode, info, fh);
  if (watched) call_end();
  if (code == MPI_SUCCESS) {
    pthread_mutex_lock(&watch.lock);
    for (size_t f = 0; f < sizeof watch.open / sizeof watch.open[0]; f++)
      if (!watch.open[f].path[0]) {
        watch.open[f].fh = *fh;
        snprintf(watch.open[f].path, sizeof watch.open[f].path, "%s", filename);
        break;
      }
    pthread_mutex_unlock(&watch.lock);
  }
  return code;
}

int MPI_File_close(MPI_File *fh) {
  /* the file leaves the table: its handle may be another file's next */
  char path[PATH_MAX] = "(a file)";
  pthread_mutex_lock(&watch.lock);
  struct mm_open_file *file = open_file(*fh);
  if (file) {
    snprintf(path, sizeof path, "%s", file->path);
    file->path[0] = '\0';
  }
  pthread_mutex_unlock(&watch.lock);
  const bool watched = call_begin("MPI_File_close", path, *fh, MM_CALL_OPEN);
  const int code = PMPI_File_close(fh);
  if (watched) call_end();
  return code;
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                      MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  const bool watched = call_begin("MPI_File_write_at", NULL, fh, MM_CALL_WRITE);
  const int code = PMPI_File_write_at(fh, offset, buf, count, type, st);
  if (watched) call_end();
  watch_write(fh, "MPI_File_write_at", code, count, type, st);
  return code;
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  const bool watched = call_begin("MPI_File_write_at_all", NULL, fh, MM_CALL_WRITE);
  const int code = PMPI_File_write_at_all(fh, offset, buf, count, type, st);
  if (watched) call_end();
  watch_write(fh, "MPI_File_write_at_all", code, count, type, st);
  return code;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  const bool watched = call_begin("MPI_File_set_size", NULL, fh, MM_CALL_WRITE);
  const int code = PMPI_File_set_size(fh, size);
  if (watched) call_end();
  watch_code(fh, "MPI_File_set_size", code);
  return code;
}

int MPI_File_sync(MPI_File fh) {
  const bool watched = call_begin("MPI_File_sync", NULL, fh, MM_CALL_WRITE);
  const int code = PMPI_File_sync(fh);
  if (watched) call_end();
  watch_code(fh, "MPI_File_sync", code);
  return code;
}

void mm_file_watch_install(MPI_Comm comm) {
  watch.seconds = 0.0; /* until mm_file_watch_set */
  if (MPI_Comm_rank(comm, &watch.rank) != MPI_SUCCESS) watch.rank = -1;
  watch.pid0 = (long)getpid();
  if (MPI_Bcast(&watch.pid0, 1, MPI_LONG, 0, comm) != MPI_SUCCESS)
    watch.pid0 = -1; /* no lock file is named so: none removed */
  pthread_condattr_t attr;
  watch.usable = pthread_condattr_init(&attr) == 0;
  if (watch.usable) {
    (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* as mm_monotonic_now() */
    watch.usable = pthread_cond_init(&watch.cond, &attr) == 0 &&
                   pthread_cond_init(&call_watch.cond, &attr) == 0;
    pthread_condattr_destroy(&attr);
  }
}

void mm_file_watch_set(const mm_settings *env) {
  watch.seconds = mm_settings_seconds(env->io_fail_wait, MM_FILE_WATCH_FAIL_S);
  call_watch.open_seconds = mm_settings_seconds(env->open_timeout, MM_FILE_WATCH_OPEN_S);
  call_watch.write_seconds = mm_settings_seconds(env->write_timeout, MM_FILE_WATCH_WRITE_S);
  watch.set = true;
}

void mm_file_watch_case(const mm_config *cfg, mm_output_lock *lock) {
  pthread_mutex_lock(&watch.lock);
  watch.cfg = cfg;
  watch.case_lock = lock;
  pthread_mutex_unlock(&watch.lock);
  mm_file_watch_during(NULL); /* a new case, or none */
}

void mm_file_watch_during(const char *what) {
  pthread_mutex_lock(&ending); /* the messages read it under this lock */
  snprintf(watch.during, sizeof watch.during, "%s", what ? what : "");
  pthread_mutex_unlock(&ending);
}

void mm_file_watch_settle(void) {
  pthread_mutex_lock(&watch.lock);
  const bool running = watch.running;
  watch.settled = true;
  if (running) pthread_cond_signal(&watch.cond);
  pthread_mutex_unlock(&watch.lock);
  if (running) pthread_join(watch.thread, NULL);
  pthread_mutex_lock(&watch.lock);
  watch.running = watch.failed = false;
  pthread_mutex_unlock(&watch.lock);
}
