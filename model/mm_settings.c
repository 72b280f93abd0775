#include "mm_settings.h"

#include "mm_gpu_kernels.h" /* MM_GPU_TILE_MIN_BLOCKS */

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef _OPENMP
/* OMP_NUM_THREADS as the OpenMP runtime takes it: whole numbers from 1 (a +
 * allowed), separated by commas, blanks around them; false for anything
 * else, which the runtime only warns about ("Invalid value for environment
 * variable") and then starts a thread per CPU on every rank. *big, *big_len:
 * the largest number of the list as written, without its leading zeros (a
 * number too large for the runtime's unsigned long, which it also refuses,
 * is among those: the caller refuses more than MM_MAX_THREADS). */
static bool omp_threads_parse(const char *v, const char **big, int *big_len) {
  *big = NULL, *big_len = 0;
  for (;;) {
    while (*v == ' ' || *v == '\t')
      v++;
    if (*v == '+') v++;
    if (*v < '0' || *v > '9') return false;
    while (*v == '0')
      v++;
    const char *digits = v;
    while (*v >= '0' && *v <= '9')
      v++;
    const int len = (int)(v - digits);
    if (len == 0) return false; /* 0 threads */
    if (!*big || len > *big_len || (len == *big_len && strncmp(digits, *big, (size_t)len) > 0))
      *big = digits, *big_len = len;
    while (*v == ' ' || *v == '\t')
      v++;
    if (!*v) return true;
    if (*v++ != ',') return false;
  }
}
#endif

/* A number of a fault hook (a step, a rank, a call's count): 0 when unset
 * or empty; anything but a whole number from 0 to `most` is refused, so
 * that a typo cannot let a fault test pass with no fault injected. */
static MM_NODISCARD mm_err env_count(const char *name, long most, long *out) {
  const char *v = getenv(name);
  *out = 0;
  if (!v || !*v) return MM_OK;
  char *end = NULL;
  errno = 0;
  const long x = strtol(v, &end, 10);
  MM_REQUIRE(v[0] >= '0' && v[0] <= '9' && !*end && errno == 0 && x <= most, MM_ERR_INPUT,
             "%s = %.40s: must be a whole number from 0 to %ld", name, v, most);
  *out = x;
  return MM_OK;
}

/* A 0-or-1 setting: `off` when unset or empty; any other value than 0 or 1
 * is refused, not taken as the default. */
static MM_NODISCARD mm_err env_switch(const char *name, long off, long *out) {
  const char *v = getenv(name);
  *out = off;
  if (!v || !*v) return MM_OK;
  MM_REQUIRE(!strcmp(v, "0") || !strcmp(v, "1"), MM_ERR_INPUT, "%s = %.40s: must be 0 or 1", name,
             v);
  *out = v[0] - '0';
  return MM_OK;
}

/* A text setting as written; "" when unset. */
static MM_NODISCARD mm_err env_text_n(const char *name, char *out, size_t size) {
  const char *v = getenv(name);
  out[0] = '\0';
  if (!v) return MM_OK;
  MM_REQUIRE(strlen(v) < size, MM_ERR_INPUT, "%s: a value of %zu characters, at most %zu expected",
             name, strlen(v), size - 1);
  snprintf(out, size, "%s", v);
  return MM_OK;
}
static MM_NODISCARD mm_err env_text(const char *name, char out[MM_SETTING_MAX]) {
  return env_text_n(name, out, MM_SETTING_MAX);
}

mm_err mm_settings_read(mm_settings *s) {
  memset(s, 0, sizeof *s);
  MM_CHECK(env_text("MINIMODEL_PROGRESS", s->progress));
  MM_REQUIRE(!s->progress[0] || !strcmp(s->progress, "bar") || !strcmp(s->progress, "lines") ||
                 !strcmp(s->progress, "off") || !strcmp(s->progress, "auto"),
             MM_ERR_INPUT, "MINIMODEL_PROGRESS = %s: expected bar, lines, off or auto",
             s->progress);
  MM_CHECK(env_text("MINIMODEL_MEMORY_LIMIT", s->memory_limit));
  /* seconds settings: a typo must not turn a watchdog off */
  static const struct {
    const char *name;
    size_t offset;
  } seconds[] = {{"MINIMODEL_READ_TIMEOUT", offsetof(mm_settings, read_timeout)},
                 {"MINIMODEL_IO_FAIL_WAIT", offsetof(mm_settings, io_fail_wait)},
                 {"MINIMODEL_OPEN_TIMEOUT", offsetof(mm_settings, open_timeout)},
                 {"MINIMODEL_WRITE_TIMEOUT", offsetof(mm_settings, write_timeout)}};
  for (size_t i = 0; i < sizeof seconds / sizeof seconds[0]; i++) {
    char *text = (char *)s + seconds[i].offset;
    MM_CHECK(env_text(seconds[i].name, text));
    if (!text[0]) continue;
    char *end = NULL;
    errno = 0;
    const double value = strtod(text, &end);
    /* 1e-400: a limit above 0 that strtod takes for 0 (no limit) */
    const bool underflow = errno == ERANGE && value < MM_SETTINGS_MIN_SECONDS;
    /* decimal as written: no blank, sign or hexadecimal that strtod takes */
    const bool decimal = ((text[0] >= '0' && text[0] <= '9') || text[0] == '.' || text[0] == 'i' ||
                          text[0] == 'I') &&
                         !strpbrk(text, "xX");
    MM_REQUIRE(decimal && end != text && !*end && value >= 0.0, MM_ERR_INPUT,
               "%s = %s: must be a number of seconds >= 0 (0 or inf: no limit)", seconds[i].name,
               text);
    /* a limit under a second ends runs whose files are healthy (1e-6: the
     * first open of the history "had not returned", and ranks still inside
     * that open could leave Open MPI's lock file beside it) */
    MM_REQUIRE((value == 0.0 && !underflow) || value >= MM_SETTINGS_MIN_SECONDS, MM_ERR_INPUT,
               "%s = %s: must be 0 (no limit) or at least %g s: a shorter limit ends runs "
               "whose files and ranks are healthy",
               seconds[i].name, text, MM_SETTINGS_MIN_SECONDS);
  }
  MM_CHECK(env_text_n("MINIMODEL_PROBE_HELPER", s->probe_helper, sizeof s->probe_helper));
  long graph, aware, kappa_in_solve, tiles;
  MM_CHECK(env_switch("MINIMODEL_CUDA_GRAPH", 1, &graph));
  MM_CHECK(env_switch("MINIMODEL_CUDA_KAPPA_IN_SOLVE", 1, &kappa_in_solve));
  s->no_kappa_in_solve = kappa_in_solve == 0;
  MM_CHECK(env_switch("MINIMODEL_CUDA_TILES", 1, &tiles));
  s->no_tiles = tiles == 0;
  long faces;
  MM_CHECK(env_switch("MINIMODEL_CUDA_TILE_FACES", 0, &faces));
  s->tile_faces = faces == 1;
  /* the two instances of the tiles' kernel compiled: the build's
   * MM_GPU_TILE_MIN_BLOCKS (3 unless the build says otherwise) and 4 */
  const char *min_blocks = getenv("MINIMODEL_CUDA_TILE_MIN_BLOCKS");
  if (min_blocks && *min_blocks) {
    char built[16], allowed[32];
    snprintf(built, sizeof built, "%d", MM_GPU_TILE_MIN_BLOCKS);
    if (MM_GPU_TILE_MIN_BLOCKS == 4)
      snprintf(allowed, sizeof allowed, "4");
    else
      snprintf(allowed, sizeof allowed, "%d or 4", MM_GPU_TILE_MIN_BLOCKS);
    MM_REQUIRE(!strcmp(min_blocks, built) || !strcmp(min_blocks, "4"), MM_ERR_INPUT,
               "MINIMODEL_CUDA_TILE_MIN_BLOCKS = %.40s: must be %s", min_blocks, allowed);
    s->tile_min_blocks = atoi(min_blocks);
  }
  const char *levels = getenv("MINIMODEL_CUDA_TILE_LEVELS");
  if (levels && *levels) {
    char *end = NULL;
    errno = 0;
    const long x = strtol(levels, &end, 10);
    MM_REQUIRE(levels[0] >= '0' && levels[0] <= '9' && !*end && errno == 0 && x >= 1 &&
                   x <= MM_SETTING_TILE_LEVELS_MAX,
               MM_ERR_INPUT,
               "MINIMODEL_CUDA_TILE_LEVELS = %.40s: must be a whole number from 1 to %d", levels,
               MM_SETTING_TILE_LEVELS_MAX);
    s->tile_levels = (int)x;
  }
  MM_CHECK(env_switch("MINIMODEL_CUDA_AWARE_MPI", -1, &aware));
  s->no_graph = graph == 0;
  s->cuda_aware_mpi = aware == 0 ? MM_ASK_OFF : aware == 1 ? MM_ASK_ON : MM_ASK_AUTO;
  MM_CHECK(env_text("MINIMODEL_EMULATED_THREADS", s->emulated_threads));
  /* refused before any case, not by each case that makes the device */
  MM_REQUIRE(!s->emulated_threads[0] || !strcmp(s->emulated_threads, "forward") ||
                 !strcmp(s->emulated_threads, "reverse"),
             MM_ERR_INPUT, "MINIMODEL_EMULATED_THREADS = %s: expected forward or reverse",
             s->emulated_threads);
  s->debug = getenv("MINIMODEL_DEBUG") != NULL;
#ifdef _OPENMP
  /* the OpenMP runtime crashes in its first parallel region when asked for
   * tens of thousands of threads (and takes 2^32 + 1 as 1: its count is an
   * unsigned long, its omp_get_max_threads an int); unset, it takes the
   * machine's CPUs */
  const char *omp = getenv("OMP_NUM_THREADS"), *big = NULL;
  int big_len = 0;
  MM_REQUIRE(!omp || omp_threads_parse(omp, &big, &big_len), MM_ERR_INPUT,
             "OMP_NUM_THREADS = '%.40s': not a number of threads (a whole number from 1, or a "
             "list such as 4,2): set it to the threads each rank should have, or unset it for "
             "one per CPU",
             omp);
  MM_REQUIRE(!omp || (big_len < 10 && strtol(big, NULL, 10) <= MM_MAX_THREADS), MM_ERR_INPUT,
             "OMP_NUM_THREADS = %.40s: %.*s threads per rank, more than %d: give each rank at "
             "most as many threads as it has cores",
             omp, big_len > 40 ? 40 : big_len, big ? big : "", MM_MAX_THREADS);
#endif

  mm_faults *f = &s->fault;
  long rank = 0, no_reserve = 0;
  MM_CHECK(env_count("MINIMODEL_FAULT_RANK", INT_MAX, &rank));
  f->rank = (int)rank;
  MM_CHECK(env_count("MINIMODEL_FAULT_NAN_STEP", LONG_MAX, &f->nan_step));
  MM_CHECK(env_text("MINIMODEL_FAULT_ALLOC", f->alloc));
  MM_CHECK(env_text("MINIMODEL_FAULT_OPEN", f->open));
  MM_CHECK(env_text("MINIMODEL_FAULT_READ_HANG", f->read_hang));
  const struct {
    const char *name, *value, *words;
  } texts[] = {{"MINIMODEL_FAULT_ALLOC", f->alloc, " model last_good "},
               {"MINIMODEL_FAULT_OPEN", f->open, " history restart initial "},
               {"MINIMODEL_FAULT_READ_HANG", f->read_hang, " history "}};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char word[MM_SETTING_MAX + 2];
    snprintf(word, sizeof word, " %s ", texts[i].value);
    MM_REQUIRE(!texts[i].value[0] || (!strchr(texts[i].value, ' ') && strstr(texts[i].words, word)),
               MM_ERR_INPUT, "%s = %.40s: expected one of %.*s", texts[i].name, texts[i].value,
               (int)strlen(texts[i].words) - 2, texts[i].words + 1);
  }
  MM_CHECK(env_count("MINIMODEL_FAULT_SOLVE_STEP", LONG_MAX, &f->solve_step));
  MM_CHECK(env_count("MINIMODEL_FAULT_MPI_STEP", LONG_MAX, &f->mpi_step));
  MM_CHECK(env_count("MINIMODEL_FAULT_HALO_STEP", LONG_MAX, &f->halo_step));
  MM_CHECK(env_count("MINIMODEL_FAULT_KILL_IN_RESTART", LONG_MAX, &f->kill_in_restart));
  MM_CHECK(env_switch("MINIMODEL_FAULT_NO_RESERVE", 0, &no_reserve));
  f->no_reserve = no_reserve == 1;
  MM_CHECK(env_count("MINIMODEL_FAULT_DEVICE_OP", LONG_MAX, &f->device_op));
  MM_CHECK(env_count("MINIMODEL_FAULT_SIGNAL_STEP", LONG_MAX, &f->signal_step));
  long signal_launcher = 0;
  MM_CHECK(env_switch("MINIMODEL_FAULT_SIGNAL_LAUNCHER", 0, &signal_launcher));
  f->signal_launcher = signal_launcher == 1;
  return MM_OK;
}

int mm_settings_start_threads(void) {
  int started = 1;
#ifdef _OPENMP
  started = 0; /* (a region with nothing in it is compiled away) */
#pragma omp parallel reduction(+ : started)
  started += 1;
#endif
  return started;
}

double mm_settings_seconds(const char *text, double unset) {
  if (!*text) return unset;
  char *end = NULL;
  const double s = strtod(text, &end);
  return *end || !(s > 0.0) || !(s < 1e9) ? 0.0 : s;
}

/* Every variable, for docs/configuration.md (--config-reference). */
static const struct {
  const char *name, *value, *meaning;
} mm_settings_vars[] = {
    {"OMP_NUM_THREADS", "n", "OpenMP threads per rank, for every phase of the step"},
    {"MINIMODEL_PROGRESS", "bar, lines, off, auto",
     "progress display (default auto: a bar on a terminal, lines otherwise)"},
    {"MINIMODEL_MEMORY_LIMIT", "bytes",
     "memory a rank may use (default: MemAvailable, or a memory cgroup's limit less its use "
     "where that is less, shared by the node's ranks); `tdma-bench` checks its arrays against "
     "it too (default: the same, not shared)"},
    {"MINIMODEL_READ_TIMEOUT", "0, or seconds >= 1",
     "time allowed for reading an input file; 0: no limit (default 600 s + 1 s per 20 MB)"},
    {"MINIMODEL_IO_FAIL_WAIT", "0, or seconds >= 1",
     "time a case may take to end after a file operation failed inside netCDF/HDF5 on a rank, "
     "before that rank ends the run (parallel HDF5 can leave the ranks waiting for each other "
     "then); 0: no limit (default 60 s)"},
    {"MINIMODEL_OPEN_TIMEOUT", "0, or seconds >= 1",
     "time an MPI-IO open or close of a file may take before the rank ends the run (the ranks "
     "can wait for each other in one that failed on one rank); 0: no limit (default 600 s)"},
    {"MINIMODEL_WRITE_TIMEOUT", "0, or seconds >= 1",
     "time one MPI-IO write, resize or sync of a file may take before the rank ends the run (a "
     "file system that stalls, such as a hard-mounted NFS whose server is gone; a stop signal "
     "during one ends the rank 5 s after it); 0: no limit (default 600 s)"},
    {"MINIMODEL_PROBE_HELPER", "path",
     "the program that test-reads an input file's metadata first (default: minimodel-probe "
     "beside minimodel, else the build's); not an executable: a forked copy of the run reads it"},
    {"MINIMODEL_CUDA_GRAPH", "0, 1",
     "0: the GPU step's kernels launched one by one, not as a graph; 1 (default): a graph"},
    {"MINIMODEL_CUDA_KAPPA_IN_SOLVE", "0, 1",
     "0: the GPU step's convective diffusivity by a mixing kernel of its own, through memory; 1 "
     "(default): built inside the solve where the solver can (cuda; simd on the emulated "
     "device)"},
    {"MINIMODEL_CUDA_TILES", "0, 1",
     "0: the GPU step's horizontal kernel one thread per cell everywhere; 1 (default): the "
     "block interior's in tiles marched through shared memory"},
    {"MINIMODEL_CUDA_TILE_LEVELS", "1..32",
     "levels of a tile of the GPU step's horizontal kernel (default: nz split evenly into tiles "
     "of at most 32)"},
    {"MINIMODEL_CUDA_TILE_FACES", "0, 1",
     "1: in those tiles each face's fluxes computed once, shared by its two cells; 0 (default): "
     "each cell computes its own four faces, as the per-cell kernel does"},
    {"MINIMODEL_CUDA_TILE_MIN_BLOCKS", "3, 4",
     "blocks per SM the tiles' CUDA kernel is compiled for (__launch_bounds__; default 3): 4 "
     "takes fewer registers a thread, for timing"},
    {"MINIMODEL_CUDA_AWARE_MPI", "0, 1",
     "0: the GPU step's halo through the host even where MPI takes device memory; 1: the "
     "emulated device's memory handed to MPI"},
    {"MINIMODEL_EMULATED_THREADS", "forward, reverse", "the emulated device's thread order"},
    {"MINIMODEL_DEBUG", "any", "where an error was raised, printed after its message"},
    {"MINIMODEL_FAULT_RANK", "rank", "tests: the rank where an injected fault happens (default 0)"},
    {"MINIMODEL_FAULT_NAN_STEP", "step", "tests: a NaN in temp after that step"},
    {"MINIMODEL_FAULT_ALLOC", "model, last_good", "tests: that allocation fails"},
    {"MINIMODEL_FAULT_OPEN", "history, restart, initial", "tests: that file cannot be opened"},
    {"MINIMODEL_FAULT_READ_HANG", "history",
     "tests: that read never ends (the check of the history a continued run appends to)"},
    {"MINIMODEL_FAULT_SOLVE_STEP", "step", "tests: the tridiagonal solve of that step fails"},
    {"MINIMODEL_FAULT_MPI_STEP", "step", "tests: an MPI call of that step fails on every rank"},
    {"MINIMODEL_FAULT_HALO_STEP", "step",
     "tests: a send of that step's halo exchange fails on one rank"},
    {"MINIMODEL_FAULT_KILL_IN_RESTART", "n",
     "tests: SIGKILL in the middle of the n-th restart write"},
    {"MINIMODEL_FAULT_NO_RESERVE", "1", "tests: no file space reserved before a write"},
    {"MINIMODEL_FAULT_SIGNAL_STEP", "step",
     "tests: SIGTERM raised on one rank at the end of that step"},
    {"MINIMODEL_FAULT_SIGNAL_LAUNCHER", "1",
     "tests: SIGINT sent to mpirun by one rank once its cases are done"},
    {"MINIMODEL_FAULT_SIGNAL_IN_INIT", "signal number",
     "tests: every process raises that signal before MPI starts (app/main.c)"},
    {"MINIMODEL_FAULT_DEVICE_OP", "n",
     "tests: the n-th call of a fallible operation of the emulated device fails"},
};

void mm_settings_write_markdown(FILE *out) {
  fprintf(out, "\n## Environment\n\nRead once at start-up (model/mm_settings.h); the "
               "MINIMODEL_FAULT_* variables are for the reliability tests "
               "(docs/reliability.md).\n\n| variable | value | meaning |\n|---|---|---|\n");
  for (size_t i = 0; i < sizeof mm_settings_vars / sizeof mm_settings_vars[0]; i++)
    fprintf(out, "| `%s` | %s | %s |\n", mm_settings_vars[i].name, mm_settings_vars[i].value,
            mm_settings_vars[i].meaning);
}

bool mm_fault_is(const mm_settings *s, const char *value, const char *what, int rank) {
  return value[0] && !strcmp(value, what) && mm_fault_here(s, rank);
}
