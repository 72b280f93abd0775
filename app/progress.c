/* Progress of a case on rank 0: step/total, model time, wall time, ETA and
 * throughput, as a bar redrawn in place on a terminal or as periodic lines
 * in logs. See mm_progress_choose for how the two are told apart. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mm_report.h"

/* The variables by which an MPI launcher tells each process it starts for
 * a job what it is (rank, size, job): OpenMPI (mpirun/orterun), PMIx
 * (OpenMPI >= 4, PRRTE, Slurm with PMIx), MPICH/Hydra and Intel MPI (PMI).
 * A process the launcher started for this job, and a wrapper between it and
 * minimodel, have them with this process's values; the launcher has none
 * (or, started from within another job, other ones). */
static const char *const job_vars[] = {"OMPI_COMM_WORLD_SIZE",
                                       "OMPI_COMM_WORLD_RANK",
                                       "OMPI_MCA_ess_base_jobid",
                                       "PMIX_NAMESPACE",
                                       "PMIX_RANK",
                                       "PMI_RANK",
                                       "PMI_SIZE"};
enum { MM_NJOB = sizeof job_vars / sizeof job_vars[0] };

bool mm_under_launcher(void) {
  for (int v = 0; v < MM_NJOB; v++)
    if (getenv(job_vars[v])) return true;
  return false;
}

#ifdef __linux__
/* The parent of process pid (/proc/PID/stat: the field after the command's
 * closing parenthesis and the state), or -1. */
static long parent_of(long pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *close = strrchr(text, ')');
  long ppid = -1;
  if (!close || sscanf(close + 1, " %*c %ld", &ppid) != 1) return -1;
  return ppid;
}

enum { MM_JOB_VALUE = 256 };
typedef struct {
  bool set[MM_NJOB];
  char value[MM_NJOB][MM_JOB_VALUE];
} job_env;

/* The job variables of process pid (its environment as it started:
 * /proc/PID/environ); false when not readable (another user's process). */
static bool read_job_env(long pid, job_env *je) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/environ", pid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  memset(je, 0, sizeof *je);
  char entry[MM_JOB_VALUE + 64];
  size_t len = 0;
  for (int c; (c = fgetc(f)) != EOF;) { /* NUL-separated NAME=value */
    if (c != '\0') {
      if (len < sizeof entry - 1) entry[len++] = (char)c;
      continue;
    }
    entry[len] = '\0';
    for (int v = 0; v < MM_NJOB; v++) {
      const size_t n = strlen(job_vars[v]) + 1; /* NAME= */
      if (strncmp(entry, job_vars[v], n - 1) == 0 && entry[n - 1] == '=') {
        je->set[v] = true;
        size_t m = strlen(entry + n); /* a longer value: its start */
        if (m > MM_JOB_VALUE - 1) m = MM_JOB_VALUE - 1;
        memcpy(je->value[v], entry + n, m);
        je->value[v][m] = '\0';
      }
    }
    len = 0;
  }
  fclose(f);
  return true;
}

/* Whether `other` was started for the job of `mine`: it has every job
 * variable that mine has, with the same value, and mine has one. */
static bool same_job(const job_env *mine, const job_env *other) {
  bool any = false;
  for (int v = 0; v < MM_NJOB; v++) {
    if (!mine->set[v]) continue;
    if (!other->set[v] || strcmp(mine->value[v], other->value[v]) != 0) return false;
    any = true;
  }
  return any;
}
#endif

long mm_output_owner(bool launched) {
  if (!launched) return (long)getpid();
#ifdef __linux__
  /* up from the parent past the processes the launcher started for this
   * job (a wrapper such as time, perf or a shell, which carries our job's
   * variables), to the first one it did not: the launcher, or its daemon
   * (process 1 too: a launcher that is a container's first process) */
  job_env mine, other;
  if (!read_job_env((long)getpid(), &mine)) return -1;
  long pid = (long)getppid();
  for (int hops = 0; hops < 64 && pid >= 1; hops++) {
    if (!read_job_env(pid, &other)) return -1;
    if (!same_job(&mine, &other)) return pid;
    pid = parent_of(pid);
  }
#endif
  return -1;
}

/* Whether the stdout of the process our output ends up on is a terminal:
 * under a launcher, the launcher's (mm_output_owner). Only Linux exposes
 * this (/proc/PID/fd/1); elsewhere, or when unreadable (another user, a
 * remote daemon), the answer is no. */
static bool launcher_stdout_is_terminal(void) {
#ifdef __linux__
  const long owner = mm_output_owner(true);
  if (owner < 0) return false;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/%ld/fd/1", owner);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return strncmp(target, "/dev/pts/", 9) == 0 || strncmp(target, "/dev/tty", 8) == 0 ||
         strcmp(target, "/dev/console") == 0;
#else
  return false;
#endif
}

bool mm_output_one_terminal(bool launched) {
#ifdef __linux__
  if (!launched || !launcher_stdout_is_terminal()) return false;
  const long owner = mm_output_owner(true);
  char out[64], err[64];
  snprintf(out, sizeof out, "/proc/%ld/fd/1", owner);
  snprintf(err, sizeof err, "/proc/%ld/fd/2", owner);
  struct stat so, se;
  return stat(out, &so) == 0 && stat(err, &se) == 0 && S_ISCHR(so.st_mode) && S_ISCHR(se.st_mode) &&
         so.st_rdev == se.st_rdev;
#else
  (void)launched;
  return false;
#endif
}

int mm_output_columns(bool launched) {
  struct winsize ws;
  if (!launched)
    return isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
#ifdef __linux__
  if (!launcher_stdout_is_terminal()) return 0;
  char link[64];
  snprintf(link, sizeof link, "/proc/%ld/fd/1", mm_output_owner(true));
  const int fd = open(link, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  const int cols = ioctl(fd, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
  close(fd);
  return cols;
#else
  return 0;
#endif
}

mm_progress_mode mm_progress_choose(const mm_settings *settings) {
  /* (any other value than these and auto is refused by mm_settings_read) */
  const char *env = settings->progress;
  if (strcmp(env, "bar") == 0) return MM_PROGRESS_BAR;
  if (strcmp(env, "lines") == 0) return MM_PROGRESS_LINES;
  if (strcmp(env, "off") == 0) return MM_PROGRESS_OFF;
  if (!isatty(STDOUT_FILENO)) return MM_PROGRESS_LINES;
  /* under a launcher, what is forwarded ends up on the launcher's stdout */
  if (settings->launched && !launcher_stdout_is_terminal()) return MM_PROGRESS_LINES;
  return MM_PROGRESS_BAR;
}

void mm_progress_init(mm_progress *p, const mm_config *cfg, bool on, long first_step) {
  memset(p, 0, sizeof *p);
  p->mode = on ? mm_progress_choose(&cfg->env) : MM_PROGRESS_OFF;
  p->total = cfg->run_steps;
  p->first = first_step;
  const long remaining = cfg->run_steps - first_step;
  p->every =
      cfg->progress_interval > 0 ? cfg->progress_interval : (remaining >= 10 ? remaining / 10 : 1);
  p->last_draw = -1.0;
  p->last_step = -1;
  p->points = (double)cfg->nx * (double)cfg->ny * (double)cfg->nz;
  p->dt = cfg->run_dt;
  p->launched = cfg->env.launched;
}

/* A duration for people: "42.0 s", "3m07s", "2h15m", "12.5 d". */
static const char *human_time(char *buf, size_t n, double s) {
  if (s < 0) s = 0;
  if (s < 60)
    snprintf(buf, n, "%.1f s", s);
  else if (s < 3600)
    snprintf(buf, n, "%ldm%02lds", (long)s / 60, (long)s % 60);
  else if (s < 86400)
    snprintf(buf, n, "%ldh%02ldm", (long)s / 3600, (long)s % 3600 / 60);
  else
    snprintf(buf, n, "%.1f d", s / 86400);
  return buf;
}

/* Columns of the terminal the bar is drawn on: the window size of stdout,
 * or under a launcher of the launcher's stdout (a rank's own terminal is the
 * launcher's copy, of the size it had at the start: a window narrowed
 * mid-run got bars of the old width), else $COLUMNS, else 0 (not known: the
 * bar is not fitted). */
static int terminal_columns(bool launched) {
  const int here = mm_output_columns(launched);
  if (here > 0) return here;
  const char *env = getenv("COLUMNS");
  const int cols = env ? atoi(env) : 0;
  return cols > 0 ? cols : 0;
}

/* The bar in at most `width` characters (so that a redraw never wraps; no
 * limit when width < 0): fields are dropped from the right, then the bar
 * itself narrows, then it goes, leaving the percentage and the step; what
 * still does not fit is cut, and below the percentage's 4 characters
 * nothing is shown. Returns the length. */
static int bar_line(char *line, size_t n, int width, int pct, long done, long planned, long step,
                    long total, const char *model_t, const char *wall_t, const char *eta_t,
                    double rate) {
  char fields[5][64];
  snprintf(fields[0], sizeof fields[0], "  step %ld/%ld", step, total);
  snprintf(fields[1], sizeof fields[1], "  model %s", model_t);
  snprintf(fields[2], sizeof fields[2], "  wall %s", wall_t);
  snprintf(fields[3], sizeof fields[3], "  ETA %s", eta_t);
  snprintf(fields[4], sizeof fields[4], "  %.3g points/s", rate);
  int nfield = 5, bar_width = 30, len = 0;
  for (;;) {
    len = (bar_width > 0 ? bar_width + 3 : 0) + 4; /* "[" bar "] " pct "%" */
    for (int f = 0; f < nfield; f++)
      len += (int)strlen(fields[f]);
    if (width < 0 || len <= width) break;
    if (nfield > 1)
      nfield--;
    else if (bar_width > 5)
      bar_width = width - 7 - (int)strlen(fields[0]) > 5 ? width - 7 - (int)strlen(fields[0]) : 5;
    else if (bar_width > 0)
      bar_width = 0;
    else if (nfield > 0)
      nfield = 0; /* the step too: a field goes whole ("step 1090/300" of 3000 misread) */
    else
      break;
  }
  char bar[31];
  const int fill = planned > 0 ? (int)(bar_width * done / planned) : bar_width;
  for (int i = 0; i < bar_width; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[bar_width] = '\0';
  int at =
      bar_width > 0 ? snprintf(line, n, "[%s] %3d%%", bar, pct) : snprintf(line, n, "%3d%%", pct);
  for (int f = 0; f < nfield && at > 0 && (size_t)at < n; f++)
    at += snprintf(line + at, n - (size_t)at, "%s", fields[f]);
  /* narrower than the percentage itself: nothing ("100%" cut to "10"
   * would read as 10 %) */
  if (width >= 0 && at > width) line[at = 0] = '\0';
  return at;
}

/* The bar, or a line, for step (model time `model_s`) after elapsed s. */
static void draw(mm_progress *p, long step, double model_s, double elapsed) {
  const long done = step - p->first, planned = p->total - p->first;
  const double eta = done > 0 ? elapsed / (double)done * (double)(planned - done) : 0.0;
  const double rate = elapsed > 0 ? (double)done * p->points / elapsed : 0.0;
  char model_t[32], wall_t[32], eta_t[32];
  human_time(model_t, sizeof model_t, model_s);
  human_time(wall_t, sizeof wall_t, elapsed);
  human_time(eta_t, sizeof eta_t, eta);
  const int pct = planned > 0 ? (int)(100 * done / planned) : 100;
  if (p->mode == MM_PROGRESS_BAR) {
    char line[256];
    const int columns = terminal_columns(p->launched);
    const int len = bar_line(line, sizeof line, columns - 1, pct, done, planned, step, p->total,
                             model_t, wall_t, eta_t, rate);
    /* pad with blanks over the tail of a longer previous line, within the
     * width: after the terminal was narrowed, blanks past it would wrap */
    int pad = p->last_len > len ? p->last_len - len : 0;
    if (columns > 0 && len + pad > columns - 1) pad = columns - 1 > len ? columns - 1 - len : 0;
    printf("\r%s%*s", line, pad, "");
    p->last_len = len;
    p->last_step = step;
  } else {
    printf("step %ld/%ld (%d%%)  model %s  wall %s  ETA %s  %.3g points/s\n", step, p->total, pct,
           model_t, wall_t, eta_t, rate);
  }
  fflush(stdout);
}

void mm_progress_update(mm_progress *p, const mm_model *m, double elapsed) {
  if (p->mode == MM_PROGRESS_OFF) return;
  const long step = mm_model_steps_done(m);
  const long done = step - p->first;
  const bool last = step >= p->total;
  if (p->mode == MM_PROGRESS_BAR) {
    /* redraw at most 10 times a second: a terminal is slow, steps can be fast */
    if (!last && p->last_draw >= 0 && elapsed - p->last_draw < 0.1) return;
    p->last_draw = elapsed;
  } else if (!last && done % p->every != 0) {
    return;
  }
  draw(p, step, mm_model_time(m), elapsed);
}

void mm_progress_finish(mm_progress *p, long step, double elapsed) {
  if (p->mode != MM_PROGRESS_BAR || p->last_len <= 0) return;
  /* the bar at the case's last step (a blow-up or a stop left the bar of an
   * earlier one above its message), then its line ended, so that the report
   * or a message starts on a fresh one */
  if (step != p->last_step && step >= p->first) draw(p, step, (double)step * p->dt, elapsed);
  printf("\n");
  fflush(stdout);
}
