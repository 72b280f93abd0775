/* minimodel: an ocean tracer mini-app. Command line and the loop over cases.
 *
 * Exit status: 0 success; 2 usage, configuration or input error; 1 failure
 * while running; 128 + N stopped by signal N (SIGHUP 129, SIGINT 130,
 * SIGTERM 143; app/mm_signal.h lists the stop signals). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mm_bandwidth.h"
#include "mm_config.h"
#include "mm_error.h"
#include "mm_file_watch.h"
#include "mm_io.h"
#include "mm_outputs.h"
#include "mm_report.h"
#include "mm_run.h"
#include "mm_signal.h"

#include "mm_version.h" /* MINIMODEL_VERSION, generated at build time */

static const char usage[] =
    "usage: minimodel [--help] [--version] [--dry-run] [--quiet]\n"
    "                 [--set SECTION.KEY=VALUE]... CONFIG.ini [CONFIG.ini...]\n"
    "\n"
    "Runs each configuration file as a case, one after another, on all MPI\n"
    "ranks:\n"
    "  mpirun -np 4 build/minimodel configs/*.ini\n"
    "\n"
    "  --set S.K=V   override key K of section S in every case (repeatable,\n"
    "                each key once)\n"
    "  --dry-run     validate, print the resolved configuration, the\n"
    "                decomposition and the memory each rank would use, and exit\n"
    "  --quiet       no progress output\n"
    "  --bandwidth GBPS|probe\n"
    "                compare each phase's time with the least bytes it must move\n"
    "                at this memory bandwidth (GB/s), or at one measured at\n"
    "                start-up\n"
    "  --config-reference\n"
    "                print the table of every configuration key (markdown)\n"
    "  --version     print the version\n"
    "  --            what follows is configuration files, also a name that\n"
    "                starts with '-'\n"
    "\n"
    "Exit status: 0 success, 2 usage/configuration/input error, 1 failure\n"
    "  while running, 128+N stopped by signal N: 143 SIGTERM, 130 SIGINT,\n"
    "  129 SIGHUP, and SIGQUIT, SIGUSR1, SIGUSR2, SIGXCPU, SIGALRM of batch\n"
    "  systems, SIGPWR of a failing power supply (every rank stops after the\n"
    "  same step, closes its files and says what it wrote).\n"
    "Keys: docs/configuration.md. Output: <output.dir>/<run.name>.nc and\n"
    "friends.\n"
    "\n"
    "Environment:\n"
    "  OMP_NUM_THREADS   OpenMP threads per rank (every phase of the step)\n"
    "  MINIMODEL_PROGRESS\n"
    "      bar, lines, off or auto (default: a bar on a terminal)\n"
    "  MINIMODEL_MEMORY_LIMIT\n"
    "      bytes a rank may use (default: MemAvailable, or a memory cgroup's\n"
    "      limit less its use where less, shared by the node's ranks)\n"
    "  MINIMODEL_READ_TIMEOUT\n"
    "      seconds allowed for reading an input file (0: no limit)\n"
    "  MINIMODEL_IO_FAIL_WAIT\n"
    "      seconds a case may take to end after a file operation failed\n"
    "      inside netCDF/HDF5 (default 60; 0: no limit)\n"
    "  MINIMODEL_OPEN_TIMEOUT\n"
    "      seconds an MPI-IO open or close of a file may take (default 600;\n"
    "      0: no limit)\n"
    "  MINIMODEL_WRITE_TIMEOUT\n"
    "      seconds one MPI-IO write of a file may take (default 600; 0: no\n"
    "      limit); these four limits are 0 or at least 1 s\n"
    "  MINIMODEL_PROBE_HELPER\n"
    "      the program that test-reads an input file's metadata (default:\n"
    "      minimodel-probe beside minimodel)\n"
    "  MINIMODEL_CUDA_GRAPH\n"
    "      0: the GPU step's kernels one by one, not as a graph\n"
    "  MINIMODEL_CUDA_KAPPA_IN_SOLVE\n"
    "      0: the GPU step's convective diffusivity by a mixing kernel,\n"
    "      through memory (default: in the solve)\n"
    "  MINIMODEL_CUDA_TILES\n"
    "      0: the GPU step's horizontal kernel per cell, not in tiles\n"
    "  MINIMODEL_CUDA_TILE_LEVELS\n"
    "      1..32: the levels of those tiles (default: nz split evenly into\n"
    "      tiles of at most 32)\n"
    "  MINIMODEL_CUDA_TILE_FACES\n"
    "      1: in those tiles each face computed once, for both its cells\n"
    "  MINIMODEL_CUDA_TILE_MIN_BLOCKS\n"
    "      3 or 4: the blocks per SM the tiles' kernel is compiled for\n"
    "      (default 3)\n"
    "  MINIMODEL_CUDA_AWARE_MPI\n"
    "      0: the GPU step's halo through the host even where MPI takes device\n"
    "      memory; 1: hand the emulated device's memory to MPI\n"
    "  MINIMODEL_EMULATED_THREADS\n"
    "      forward or reverse: the emulated device's thread order\n"
    "  MINIMODEL_DEBUG   any value: where an error was raised, as a trace\n"
    "  MINIMODEL_FAULT_* fault injection for the tests (docs/reliability.md)\n";

/* Bytes of the character at c that can be shown as they are: a UTF-8
 * character that is not a control character; 0 for a byte to write as
 * \xNN (a control character, a byte of no UTF-8 character: a Latin-1 file
 * name, which a terminal showed as garbage and a reader of the history as
 * U+FFFD). */
static size_t shown_bytes(const unsigned char *c) {
  if (*c < ' ' || *c == 0x7f) return 0;
  return mm_utf8_sequence(c, strnlen((const char *)c, 4));
}

/* text with its control characters written as \n, \t or \xNN (a file name
 * with a newline must not break the summary's lines or the files' history
 * line), and so each byte of no UTF-8 character; malloc'd, NULL when out of
 * memory. */
static char *printable(const char *text) {
  char *out = malloc(4 * strlen(text) + 1), *o = out;
  for (const unsigned char *c = (const unsigned char *)text; out && *c;) {
    const size_t len = shown_bytes(c);
    if (len) {
      memcpy(o, c, len);
      o += len, c += len;
      continue;
    }
    if (*c == '\n')
      o += sprintf(o, "\\n");
    else if (*c == '\t')
      o += sprintf(o, "\\t");
    else
      o += sprintf(o, "\\x%02x", *c);
    c++;
  }
  if (out) *o = '\0';
  return out;
}

/* Columns that UTF-8 text takes on a terminal, one a character (its bytes
 * less the continuation bytes; wide characters are rare in file names). */
static size_t text_width(const char *text) {
  size_t w = 0;
  for (const unsigned char *c = (const unsigned char *)text; *c; c++)
    w += (*c & 0xC0) != 0x80;
  return w;
}

/* The command line argv[0..argc) as a shell reads it back (malloc'd, NULL
 * when out of memory): an argument of letters, digits and _@%+=:,./- as it
 * is (the program's name without an '='); one with a control character or
 * a byte of no UTF-8 character in bash's $'...' (\n, \t, \xNN); any other
 * (blanks, quotes, $, *, an empty one) in '...', a ' in it as '\''.
 * So the files' history attribute can be pasted into a shell, and stays one
 * line. */
static char *shell_words(int argc, char **argv) {
  size_t n = 1;
  for (int a = 0; a < argc; a++)
    n += 4 * strlen(argv[a]) + 4; /* \xNN per byte at most, quotes, a blank */
  char *out = malloc(n), *o = out;
  for (int a = 0; a < argc && out; a++) {
    const unsigned char *w = (const unsigned char *)argv[a];
    bool plain = *w != '\0', control = false;
    for (const unsigned char *c = w; *c;) {
      /* an '=' in the program's name would make it an assignment */
      plain = plain && (isalnum(*c) || strchr(a ? "_@%+=:,./-" : "_@%+:,./-", *c));
      const size_t len = shown_bytes(c);
      control = control || len == 0;
      c += len ? len : 1;
    }
    if (a) *o++ = ' ';
    if (plain) {
      o += sprintf(o, "%s", (const char *)w);
      continue;
    }
    o += sprintf(o, control ? "$'" : "'");
    for (const unsigned char *c = w; *c;) {
      const size_t len = shown_bytes(c);
      if (!control && *c == '\'')
        o += sprintf(o, "'\\''");
      else if (control && (*c == '\'' || *c == '\\'))
        o += sprintf(o, "\\%c", *c);
      else if (len) {
        memcpy(o, c, len);
        o += len, c += len;
        continue;
      } else if (*c == '\n')
        o += sprintf(o, "\\n");
      else if (*c == '\t')
        o += sprintf(o, "\\t");
      else
        o += sprintf(o, "\\x%02x", *c);
      c++;
    }
    *o++ = '\'';
  }
  if (out) *o = '\0';
  return out;
}

/* A process started without a launcher (a singleton) has Open MPI make its
 * session directory in MPI_Init, under orte_tmpdir_base where it is set,
 * else the first of TMPDIR, TEMP and TMP that is set (also empty), else
 * /tmp; it joins the names from the root, so "" is "/" and a relative
 * "tmp" is "/tmp". One that cannot be made there (the variable names a
 * file, a path under a file, a link to nothing, a place not writable, a
 * relative path, one without free inodes) ended MPI_Init with pages of
 * Open MPI's errors and exit 1.
 * The message for such a directory into buf, or NULL where it is one, or
 * can be made. */
/* The files and directories of a singleton's MPI session (Open MPI 4.1:
 * it failed with 8 free inodes, ran with 12), with room to spare. */
#define MM_TMPDIR_INODES 16
static const char *tmpdir_problem(char *buf, size_t size) {
  const char *var = "OMPI_MCA_orte_tmpdir_base", *dir = getenv(var);
  static const char *const vars[] = {"TMPDIR", "TEMP", "TMP"};
  if (dir && !dir[0]) dir = NULL;
  for (size_t v = 0; v < sizeof vars / sizeof vars[0] && !dir; v++)
    var = vars[v], dir = getenv(vars[v]);
  if (!dir) return NULL; /* /tmp */
  if (dir[0] && dir[0] != '/') {
    snprintf(buf, size, "%s = %s: not an absolute path (Open MPI would make its files in /%s)", var,
             dir, dir);
    return buf;
  }
  const char *shown = dir[0] ? dir : "'' (empty: the root)";
  char at[4096]; /* dir, or the part of it that exists */
  snprintf(at, sizeof at, "%s", dir[0] ? dir : "/");
  struct stat st, link;
  int got;
  while ((got = stat(at, &st)) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    if (errno == ENOENT && lstat(at, &link) == 0 && S_ISLNK(link.st_mode)) {
      snprintf(buf, size, "%s = %s: %s is a symbolic link to nothing", var, shown, at);
      return buf;
    }
    char *slash = strrchr(at, '/'); /* at is absolute */
    if (slash == at)
      slash[1] = '\0'; /* "/" */
    else
      *slash = '\0';
  }
  if (got != 0) {
    snprintf(buf, size, "%s = %s: %s: %s", var, shown, at, strerror(errno));
    return buf;
  }
  struct statvfs fs; /* f_files 0: a file system without a count of inodes */
  const bool inodes = statvfs(at, &fs) == 0 && fs.f_files > 0;
  if (!S_ISDIR(st.st_mode))
    snprintf(buf, size, "%s = %s: %s is not a directory", var, shown, at);
  else if (access(at, W_OK | X_OK) != 0)
    snprintf(buf, size, "%s = %s: %s is not writable (%s)", var, shown, at, strerror(errno));
  else if (inodes && fs.f_favail < MM_TMPDIR_INODES)
    snprintf(buf, size, "%s = %s: %s has %lu free inodes, fewer than the %d that MPI's files take",
             var, shown, at, (unsigned long)fs.f_favail, MM_TMPDIR_INODES);
  else
    return NULL;
  return buf;
}

/* Report the recorded error once, on rank 0 (the ranks have agreed on it,
 * mm_agree, so every rank holds the same message), on one line: its control
 * characters (from a file name or a value) written as printable() does, so
 * that none reaches the terminal (an escape sequence) or breaks the line. */
static void report_error(mm_err err, int rank, const mm_settings *env) {
  if (err == MM_OK || rank != 0) return;
  char *shown = printable(mm_error_message());
  const char *msg = shown ? shown : mm_error_message();
  /* stderr, or stdout where a launcher's stdout and stderr are one terminal:
   * the message then keeps its place after the bar and before the summary
   * (mm_output_one_terminal) */
  FILE *to = mm_output_one_terminal(env->launched) ? stdout : stderr;
  if (to == stdout) fflush(stdout);
  if (err >= MM_ERR_SIGNAL) /* a stop, not an error: one line */
    fprintf(to, "minimodel: %s; exit status %d\n", msg, (int)err);
  else
    fprintf(to, "minimodel: error: %s\n", msg);
  if (err < MM_ERR_SIGNAL && env->debug) fprintf(to, "  at %s\n", mm_error_where());
  fflush(to);
  free(shown);
}

/* The earlier case whose restart file case f continues from (chain[f]),
 * where that case failed or wrote none: the file there may be an earlier
 * run's, and case f is not run. -1 where case f runs. */
static int chain_broken(const int *chain, const mm_run_summary *sums, int f) {
  const int from = chain[f];
  return from >= 0 && (sums[from].steps < 0 || !sums[from].restart_written) ? from : -1;
}

/* err with its message prefixed by the case it belongs to, "case 2 of 3
 * (b.ini): ...", when there are several cases (every rank holds the message
 * after mm_agree) */
static MM_NODISCARD mm_err in_case(mm_err err, int f, int n_files, const char *file) {
  if (err == MM_OK || n_files < 2) return err;
  char *name = printable(file);
  err = mm_error_prefix(err, "case %d of %d (%s): ", f + 1, n_files, name ? name : file);
  free(name);
  return err;
}

/* The ranks run one invocation: the same arguments after the program's name
 * on every rank (mpirun's form `-np 1 minimodel a.ini : -np 1 minimodel
 * b.ini` starts them with others, and ranks that go different ways wait for
 * each other for ever). Collective; MM_ERR_INPUT on every rank when they
 * differ, with the message of the lowest rank that differs (mm_agree). */
static MM_NODISCARD mm_err args_agree(int argc, char **argv, MPI_Comm comm) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  /* compared: the program's version (ranks of other versions write other
   * attributes into the files they write together), then the arguments
   * after the program's name, each with its '\0' */
  const size_t vlen = strlen(MINIMODEL_VERSION) + 1;
  size_t len = vlen;
  for (int a = 1; a < argc; a++)
    len += strlen(argv[a]) + 1;
  char *mine = malloc(len + 1);
  if (mine) {
    memcpy(mine, MINIMODEL_VERSION, vlen);
    for (int a = 1, at = (int)vlen; a < argc; at += (int)strlen(argv[a]) + 1, a++)
      memcpy(mine + at, argv[a], strlen(argv[a]) + 1);
  }
  char *first = NULL; /* rank 0's */
  size_t n = 0;
  mm_err err = mm_bcast_text(comm, mine, len, &first, &n);
  if (err == MM_OK && !mine) err = MM_ERROR(MM_ERR_RUN, "out of memory");
  if (err == MM_OK && strcmp(first, mine) != 0) { /* the version part */
    err =
        MM_ERROR(MM_ERR_INPUT,
                 "runs minimodel %s, rank 0 minimodel %.64s: every rank must run the same program",
                 MINIMODEL_VERSION, first);
  } else if (err == MM_OK && (n != len || memcmp(first, mine, len) != 0)) {
    /* shown with blanks between the arguments */
    for (size_t i = vlen; i + 1 < len; i++)
      if (mine[i] == '\0') mine[i] = ' ';
    for (size_t i = vlen; i + 1 < n; i++)
      if (first[i] == '\0') first[i] = ' ';
    mine[len - 1] = '\0';
    first[n - 1] = '\0';
    char *shown = printable(mine + vlen), *shown0 = printable(first + vlen);
    err = MM_ERROR(MM_ERR_INPUT,
                   "started with other arguments than rank 0 ('%s' against '%s'): every rank "
                   "must run the same command",
                   shown ? shown : "?", shown0 ? shown0 : "?");
    free(shown);
    free(shown0);
  }
  free(first);
  free(mine);
  return mm_agree(comm, err);
}

int main(int argc, char **argv) {
  /* Open MPI's MPI-IO (OMPIO) opens, for every file, a POSIX semaphore named
   * after the file's base name (/dev/shm/sem.OMPIO_<name>) for its shared
   * file pointer component `sm`. A rank killed while it holds it (kill -9,
   * a node lost mid-write) leaves it taken, and every later run that writes
   * a file of that name, in any directory, then waits on it forever. The
   * model uses no shared file pointer: that component is left out unless
   * the user chose the components (OMPI_MCA_sharedfp set). Other MPI
   * libraries do not read the variable. */
  setenv("OMPI_MCA_sharedfp", "^sm", 0);
  /* A process started without a launcher (a singleton) makes its own PMIx
   * server in MPI_Init, whose data store is by default a shared-memory file
   * of several MB in Open MPI's temporary directory (orte_tmpdir_base, else
   * TMPDIR, TEMP, TMP, /tmp): a full one (it needed 8 to 16 MiB free), or
   * a file-size limit (ulimit -f) below that size, made MPI_Init fail with
   * PMIx's errors before minimodel could say anything. A singleton's server
   * has one client, itself, so it keeps that data in memory instead (PMIx's
   * gds component hash), unless the user chose one (PMIX_MCA_gds set); a
   * limit then meets the model's own writes, which say what they could not
   * write. Under mpirun the launcher's own limit and directory are the
   * user's (docs/reliability.md). */
  const bool launched = mm_under_launcher(); /* before MPI_Init sets its variables */
  if (!launched) setenv("PMIX_MCA_gds", "hash", 0);
  /* A singleton of Open MPI 4 also starts a daemon of its own (orted) in
   * MPI_Init, which writes the singleton's standard error, passes it the
   * signals it gets, and outlives it: under a file-size limit that its
   * standard error (a log file) had met, the daemon's message that it
   * passed SIGXFSZ on raised SIGXFSZ again, and it spun at 70% of a CPU for
   * ever after the run had ended (ulimit -f 0; minimodel ... 2>log). The
   * model spawns no process through MPI, so a singleton runs without the
   * daemon (Open MPI's ess_singleton_isolated), unless the user chose
   * (OMPI_MCA_ess_singleton_isolated set); it also starts faster. */
  if (!launched) setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  char tmp_why[4096 + 256];
  const char *tmp_bad = launched ? NULL : tmpdir_problem(tmp_why, sizeof tmp_why);
  if (tmp_bad) {
    fprintf(stderr,
            "minimodel: error: %s: MPI keeps its session files there; set it to a writable "
            "directory\n",
            tmp_bad);
    return MM_ERR_INPUT;
  }
  mm_signal_defer(); /* until mm_signal_install, after MPI_Init */
  /* the one fault hook read before MPI_Init (the others: mm_settings.h): a
   * stop signal that arrives now, held back while MPI starts */
  const char *init_signal = getenv("MINIMODEL_FAULT_SIGNAL_IN_INIT");
  if (init_signal && *init_signal) { /* a number of a signal, or refused: a typo injects nothing */
    char *end = NULL;
    const long signo = strtol(init_signal, &end, 10);
    if (*end || signo < 1 || signo >= 65) {
      fprintf(stderr,
              "minimodel: error: MINIMODEL_FAULT_SIGNAL_IN_INIT = %.40s: must be a signal number "
              "from 1 to 64\n",
              init_signal);
      return MM_ERR_INPUT;
    }
    raise((int)signo);
  }
  /* OpenMP threads inside a rank; only the main thread calls MPI */
  int thread_level = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level) != MPI_SUCCESS) {
    fprintf(stderr, "minimodel: error: MPI could not be started (MPI_Init_thread)\n");
    return MM_ERR_RUN;
  }
  /* MPI errors come back as codes (MM_MPI names the call), not as an abort;
   * the communicators made from MPI_COMM_WORLD inherit this */
  int rank = 0, nranks = 1;
  if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
      MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(MPI_COMM_WORLD, &nranks) != MPI_SUCCESS) {
    fprintf(stderr, "minimodel: error: MPI_COMM_WORLD is not usable\n");
    MPI_Abort(MPI_COMM_WORLD, MM_ERR_RUN); /* unchecked: does not return */
  }
  mm_signal_install();
  mm_file_watch_install(MPI_COMM_WORLD); /* (every rank) */
  const mm_err args = args_agree(argc, argv, MPI_COMM_WORLD);
  if (args != MM_OK) {
    if (rank == 0) fprintf(stderr, "minimodel: error: %s\n", mm_error_message());
    (void)MPI_Finalize(); /* unchecked: ending anyway */
    return (int)args;
  }

  mm_run_options opt = {.version = MINIMODEL_VERSION};
  /* the command line, as the files' history attribute gives it */
  char *command = shell_words(argc, argv);
  /* rank 0's on every rank: the ranks write it together into the files'
   * history attribute, and the program's name may differ between them (a
   * link, a relative path) */
  char *command0 = NULL;
  size_t command_len0 = 0;
  const mm_err command_err = mm_bcast_text(MPI_COMM_WORLD, command, command ? strlen(command) : 0,
                                           &command0, &command_len0);
  free(command);
  command = command0; /* NULL: the error below */
  opt.command = command;
  const size_t nargs = argc > 0 ? (size_t)argc : 1;
  mm_config_override *ovr = calloc(nargs, sizeof *ovr);
  const char **files = calloc(nargs, sizeof *files);
  int n_ovr = 0, n_files = 0;
  bool bandwidth_probe = false;
  const char *bandwidth_arg = NULL; /* the first --bandwidth's value */
  int done = 0;
  /* the environment's settings, read once (mm_settings.h) */
  mm_settings env;
  /* a bad setting is the run's error, after the options: --help and
   * --version answer whatever the environment */
  const mm_err settings_err = mm_settings_read(&env);
  env.stop_signal = mm_signal_received;
  env.launched = launched;
  mm_err err = command_err;
  if (err == MM_OK && (!ovr || !files)) err = MM_ERROR(MM_ERR_RUN, "out of memory");

  bool options = true; /* until "--" */
  for (int a = 1; a < argc && err == MM_OK && !done; a++) {
    const char *arg = argv[a];
    if (!options) {
      files[n_files++] = arg;
    } else if (!strcmp(arg, "--")) {
      options = false;
    } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      if (rank == 0) fputs(usage, stdout);
      done = 1;
    } else if (!strcmp(arg, "--version")) {
      if (rank == 0) printf("minimodel %s\n", MINIMODEL_VERSION);
      done = 1;
    } else if (!strcmp(arg, "--config-reference")) {
      if (rank == 0) mm_config_write_markdown(stdout);
      if (rank == 0) mm_settings_write_markdown(stdout);
      done = 1;
    } else if (!strcmp(arg, "--dry-run")) {
      opt.dry_run = true;
    } else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) {
      opt.quiet = true;
    } else if (!strcmp(arg, "--bandwidth") || !strncmp(arg, "--bandwidth=", 12)) {
      const char *v = arg[11] == '=' ? arg + 12 : (a + 1 < argc ? argv[++a] : NULL);
      char *end = NULL;
      const double x = v ? strtod(v, &end) : 0.0;
      if (bandwidth_arg) { /* which one would count? as --set of one key twice */
        err = MM_ERROR(MM_ERR_INPUT, "--bandwidth %s and --bandwidth %s: given twice",
                       bandwidth_arg, v ? v : "(nothing)");
      } else if (v && !strcmp(v, "probe")) {
        bandwidth_probe = true;
      } else if (!v || end == v || *end || isspace((unsigned char)*v) || !(x >= 1e-3) ||
                 !(x <= 1e6)) {
        err = MM_ERROR(MM_ERR_INPUT, "--bandwidth %s: expected GB/s from 0.001 to 1e6, or probe",
                       v ? v : "(nothing)");
      } else {
        opt.bandwidth_gbps = x;
        opt.bandwidth_source = "given";
      }
      if (!bandwidth_arg) bandwidth_arg = v;
    } else if (!strcmp(arg, "--set") || !strncmp(arg, "--set=", 6)) {
      const char *v = arg[5] == '=' ? arg + 6 : (a + 1 < argc ? argv[++a] : NULL);
      if (!v)
        err = MM_ERROR(MM_ERR_INPUT, "--set needs SECTION.KEY=VALUE");
      else
        ovr[n_ovr++].text = v;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      err = MM_ERROR(MM_ERR_INPUT, "unknown option %s (see --help)", arg);
    } else {
      files[n_files++] = arg;
    }
  }
  if (err == MM_OK && !done) err = settings_err;
  /* a write that fails inside the libraries ends a stuck run */
  if (err == MM_OK && !done) mm_file_watch_set(&env);
  if (err == MM_OK && !done && n_files == 0) {
    /* a --set that took the file for its value says so, rather than that
     * no file was given */
    mm_config defaults;
    err = n_ovr > 0 ? mm_config_load_string(&defaults, "--set", "", ovr, n_ovr) : MM_OK;
    if (err == MM_OK) err = MM_ERROR(MM_ERR_INPUT, "no configuration file given (see --help)");
  }

  /* every case is validated before any computation */
  mm_config *cfgs = NULL;
  int *chain = NULL; /* [n_files] the earlier case whose restart file a case continues from */
  if (err == MM_OK && !done) {
    cfgs = calloc((size_t)n_files, sizeof *cfgs);
    chain = calloc((size_t)n_files, sizeof *chain);
    if (!cfgs || !chain) err = MM_ERROR(MM_ERR_RUN, "out of memory");
    for (int f = 0; f < n_files && err == MM_OK; f++)
      if ((err = mm_config_load(&cfgs[f], files[f], ovr, n_ovr)) == MM_OK) cfgs[f].env = env;
  }
  err = mm_agree(MPI_COMM_WORLD, err);
  /* and the files of every case: no two write one file, none reads its own
   * output, every input file is there and fits */
  if (err == MM_OK && !done)
    err = mm_cases_check(cfgs, (const char *const *)files, n_files, MPI_COMM_WORLD, chain);
  /* and that no output file is where the run's own output goes */
  if (err == MM_OK && !done && !opt.dry_run)
    err = mm_streams_check(cfgs, (const char *const *)files, n_files, MPI_COMM_WORLD);
  /* and, with several cases, the model of every case, as its run will
   * build it (decomposition, memory, stability, solver, device): a later
   * case that cannot run is refused before the first one runs for hours,
   * and a first case that cannot run stops the invocation as a later one
   * does (its run refused it, and the cases after it ran). A single case's
   * run makes these checks at once. */
  mm_config *check = NULL; /* the case without its fault hooks: they are for its run */
  if (err == MM_OK && !done && !opt.dry_run && n_files > 1)
    err = mm_agree(MPI_COMM_WORLD,
                   (check = malloc(sizeof *check)) ? MM_OK : MM_ERROR(MM_ERR_RUN, "out of memory"));
  for (int f = 0; err == MM_OK && check && f < n_files; f++) {
    int signo = 0; /* a stop signal: no more checks; the cases' loop says it */
    err = mm_agree_with_signal(MPI_COMM_WORLD, MM_OK, &signo);
    if (err != MM_OK || signo) break;
    *check = cfgs[f];
    memset(&check->env.fault, 0, sizeof check->env.fault);
    err = in_case(mm_run_check_model(check, MPI_COMM_WORLD), f, n_files, files[f]);
  }
  free(check);
  if (err != MM_OK && !done) report_error(err, rank, &env);     /* messages point to --help */
  if (err == MM_OK && !done) (void)mm_settings_start_threads(); /* before any file is made */

  /* --bandwidth probe: measured once, before the cases, on every rank at once */
  if (err == MM_OK && !done && bandwidth_probe && !opt.dry_run) {
    err = mm_agree(MPI_COMM_WORLD, mm_bandwidth_probe(MPI_COMM_WORLD, &opt.bandwidth_gbps));
    opt.bandwidth_source = "probe";
    if (err != MM_OK) report_error(err, rank, &env);
  }

  int first_code = MM_OK;
  mm_run_summary *sums = NULL;
  if (err == MM_OK && !done) {
    sums = calloc((size_t)n_files, sizeof *sums);
    /* each rank alone: they agree before the first case */
    err = mm_agree(MPI_COMM_WORLD, sums ? MM_OK : MM_ERROR(MM_ERR_RUN, "out of memory"));
    if (err != MM_OK) report_error(err, rank, &env);
  }
  if (err == MM_OK && !done) {
    mm_err stop = MM_OK; /* a signal: no further case, no summary */
    for (int f = 0; f < n_files && stop == MM_OK; f++) {
      mm_error_clear();
      int signo = 0;
      mm_err e = mm_agree_with_signal(MPI_COMM_WORLD, MM_OK, &signo);
      const int from = opt.dry_run ? -1 : chain_broken(chain, sums, f);
      if (signo)
        e = MM_ERROR((mm_err)(MM_ERR_SIGNAL + signo), "stopped by %s before case %d (%s)",
                     mm_signal_name(signo), f + 1, files[f]);
      else if (from >= 0)
        e = in_case(MM_ERROR(MM_ERR_RUN,
                             "not run: initial.restart = %s is the restart file of case %d (%s), "
                             "which %s: the file there may be of an earlier run",
                             cfgs[f].initial_restart, from + 1, files[from],
                             sums[from].steps < 0 ? "did not end well"
                                                  : "wrote none (no multiple of "
                                                    "output.restart_interval among its steps)"),
                    f, n_files, files[f]);
      else
        e = in_case(mm_agree(MPI_COMM_WORLD, mm_run_case(&cfgs[f], &opt, MPI_COMM_WORLD, &sums[f])),
                    f, n_files, files[f]);
      if (e != MM_OK) {
        report_error(e, rank, &env);
        if (first_code == MM_OK || e >= MM_ERR_SIGNAL) first_code = e;
        sums[f].steps = -(long)e;
      }
      if (e >= MM_ERR_SIGNAL) stop = e;
    }
    if (rank == 0 && !opt.dry_run && stop == MM_OK) {
      printf("\nsummary of %d case%s on %d rank%s:\n", n_files, n_files == 1 ? "" : "s", nranks,
             nranks == 1 ? "" : "s");
      /* in a terminal too narrow for a case's line: the case, its figures
       * and its history on lines of their own */
      const int columns = mm_output_columns(env.launched);
      for (int f = 0; f < n_files; f++) {
        char *name = printable(files[f]), *history = printable(sums[f].history);
        const char *shown = name ? name : files[f], *to = history ? history : sums[f].history;
        /* the name padded to 32 columns: by its characters, not its bytes
         * (a name in UTF-8 stood out of line by its extra bytes) */
        const size_t shown_w = text_width(shown);
        const int pad = shown_w < 32 ? (int)(32 - shown_w) : 0;
        if (sums[f].steps < 0) {
          char fate[64];
          const int up = chain_broken(chain, sums, f); /* not run: the case it continues from */
          if (up >= 0)
            snprintf(fate, sizeof fate, "NOT RUN (case %d %s)", up + 1,
                     sums[up].steps < 0 ? "failed" : "wrote no restart file");
          else
            snprintf(fate, sizeof fate, "FAILED (exit %ld)", -sums[f].steps);
          const size_t width = 2 + (shown_w > 32 ? shown_w : 32) + 1 + strlen(fate);
          if (columns > 0 && width > (size_t)columns) /* the case, then its fate */
            printf("  %s\n      %s\n", shown, fate);
          else
            printf("  %s%*s %s\n", shown, pad, "", fate);
        } else {
          char stats[128];
          snprintf(stats, sizeof stats, "ok  %ld step%s  %.3g s  %.3g points/s  solve %.1f%%",
                   sums[f].steps, sums[f].steps == 1 ? "" : "s", sums[f].wall_s,
                   sums[f].points_per_s, 100.0 * sums[f].solve_share);
          const size_t width =
              2 + (shown_w > 32 ? shown_w : 32) + 1 + strlen(stats) + 5 + text_width(to);
          if (columns > 0 && width > (size_t)columns) {
            /* the case, its figures (broken between them where they do not
             * fit), its history; a file's name is left whole, blanks and all,
             * to be copied from the terminal */
            char line[256], wrapped[320];
            snprintf(line, sizeof line, "      %s", stats);
            (void)mm_report_wrap(wrapped, sizeof wrapped, line, columns);
            printf("  %s\n%s\n      -> %s\n", shown, wrapped, to);
          } else
            printf("  %s%*s %s  -> %s\n", shown, pad, "", stats, to);
        }
        free(name);
        free(history);
      }
    }
    err = (mm_err)first_code;
  }
  free(sums);
  free(cfgs);
  free(chain);
  free(files);
  free(ovr);
  free(command);
  /* A file the netCDF/HDF5 libraries still hold after a write failed in
   * them (io/mm_io.h): MPI_Finalize would have HDF5 close it, over the
   * records it holds, and crash. End without the libraries' clean-up. */
  if (mm_io_files_left_open(MPI_COMM_WORLD)) {
    fflush(stdout);
    fflush(stderr);
    (void)MPI_Barrier(MPI_COMM_WORLD);        /* unchecked: ending anyway */
    if (rank == 0) mm_io_remove_left_locks(); /* MPI-IO's, named by rank 0's pid */
    _exit(err != MM_OK ? (int)err : MM_ERR_RUN);
  }
  /* --help, --version, --config-reference and --dry-run make nothing but
   * their text: one that could not be written (a full disk, a closed pipe)
   * is a failure, not a success. A run's progress and table are dropped
   * instead: its product is its files (docs/reliability.md). */
  if (rank == 0 && err == MM_OK && (done || opt.dry_run) &&
      (fflush(stdout) != 0 || ferror(stdout))) {
    const int e = errno;
    if (e != EPIPE) /* a reader that left wanted no more */
      fprintf(stderr, "minimodel: error: cannot write the standard output: %s\n",
              e ? strerror(e) : "a write failed");
    err = MM_ERR_RUN;
  }
  if (env.fault.signal_launcher && env.launched && mm_fault_here(&env, rank)) {
    const long launcher = mm_output_owner(true); /* mpirun, told to stop too late */
    if (launcher > 1) kill((pid_t)launcher, SIGINT);
  }
  /* every rank stopped by a signal, its files closed; or done, a signal
   * that comes now too late to change anything */
  fflush(NULL);
  mm_signal_exit_guard((int)err);
  (void)MPI_Finalize(); /* unchecked: ending anyway */
  return (int)err;
}
