/* Shared set-up of the io tests: a configuration from a base text plus
 * SECTION.KEY=VALUE arguments, the grid, an analytic field, the check of a
 * state read back, helpers. */
#ifndef MM_IO_TEST_H
#define MM_IO_TEST_H

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <netcdf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mm_config.h"
#include "mm_grid.h"
#include "mm_io.h"
#include "mm_test.h"

/* The base case of the io tests: a small grid with land in the corners
 * (bowl) and blocks of unequal size on 2, 3 and 4 ranks. */
static const char io_test_base[] = "[run]\n"
                                   "name = io_test\n"
                                   "[grid]\n"
                                   "nx = 13\n"
                                   "ny = 9\n"
                                   "nz = 5\n"
                                   "bathymetry = bowl\n";

/* Value written in the halo, never to appear in a file (degC or g/kg). */
#define IO_TEST_HALO -7777.0

/* Load the base configuration with the overrides in argv[1..argc-1]
 * (SECTION.KEY=VALUE) and extra ones, an extra one in place of an argument
 * of the same key (a key may be given once); exits on error. */
static void io_test_config(mm_config *cfg, int argc, char **argv, int n_extra,
                           const char *const *extra) {
  mm_config_override ovr[64];
  int n = 0;
  for (int a = 1; a < argc && n < 64; a++) {
    const size_t key = strcspn(argv[a], "=");
    bool replaced = false;
    for (int e = 0; e < n_extra; e++)
      replaced |= strcspn(extra[e], "=") == key && !strncmp(extra[e], argv[a], key);
    if (!replaced) ovr[n++].text = argv[a];
  }
  for (int e = 0; e < n_extra && n < 64; e++)
    ovr[n++].text = extra[e];
  if (mm_config_load_string(cfg, "io_test", io_test_base, ovr, n) != MM_OK) {
    fprintf(stderr, "configuration: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static void io_test_grid(const mm_config *cfg, mm_grid *g) {
  if (mm_grid_create(cfg, MPI_COMM_WORLD, g) != MM_OK) {
    fprintf(stderr, "grid: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* The analytic value of cell (ig, jg, k): offset + scale (1000 ig + 10 jg + 0.01 k). */
static double io_test_value(int ig, int jg, int k, double scale, double offset) {
  return offset + scale * (1000.0 * ig + 10.0 * jg + 0.01 * k);
}

/* A field in model layout: analytic on every cell of the block, land
 * included (the io library must mask it), IO_TEST_HALO in the halo. */
static double *io_test_field(const mm_grid *g, double scale, double offset) {
  double *f = malloc(g->ncol_h * (size_t)g->nz * sizeof *f);
  if (!f) MPI_Abort(MPI_COMM_WORLD, 3);
  for (int j = -MM_HALO; j < g->nyl + MM_HALO; j++)
    for (int i = -MM_HALO; i < g->nxl + MM_HALO; i++) {
      const bool inside = i >= 0 && i < g->nxl && j >= 0 && j < g->nyl;
      for (int k = 0; k < g->nz; k++)
        f[mm_col(g, i, j) * (size_t)g->nz + (size_t)k] =
            inside ? io_test_value(g->i0 + i, g->j0 + j, k, scale, offset) : IO_TEST_HALO;
    }
  return f;
}

/* Make directory dir on rank 0 (it may exist); all ranks wait. */
static void io_test_mkdir(const char *dir) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "mkdir %s: %s\n", dir, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static inline bool io_test_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The message of the last error contains every word of words (NULL-terminated). */
static inline bool io_test_message_has(const char *const *words) {
  for (const char *const *w = words; *w; w++)
    if (!strstr(mm_error_message(), *w)) return false;
  return true;
}

/* The start of every io test: MPI_Init, the configuration from argv (see
 * io_test_config), its output directory made, the grid. */
static void io_test_start(int *argc, char ***argv, mm_config *cfg, mm_grid *g) {
  MPI_Init(argc, argv);
  io_test_config(cfg, *argc, *argv, 0, NULL);
  io_test_mkdir(cfg->output_dir);
  io_test_grid(cfg, g);
}

/* Rank 0 writes text (may be empty) to path; all ranks wait. */
static inline void io_test_write_text(const char *path, const char *text) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
      fprintf(stderr, "write %s: %s\n", path, strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The number of values of the state (t, s) in model layout that differ from
 * what a read must leave: want_t, want_s on wet cells, 0 on land, the halo
 * untouched (IO_TEST_HALO). bitwise: compare the bits, else with ==. */
static inline long io_test_state_wrong(const mm_grid *g, const double *t, const double *s,
                                       const double *want_t, const double *want_s, bool bitwise) {
  long wrong = 0;
  for (int j = -MM_HALO; j < g->nyl + MM_HALO; j++)
    for (int i = -MM_HALO; i < g->nxl + MM_HALO; i++) {
      const size_t c = mm_col(g, i, j);
      const bool inside = i >= 0 && i < g->nxl && j >= 0 && j < g->nyl;
      for (int k = 0; k < g->nz; k++) {
        const size_t e = c * (size_t)g->nz + (size_t)k;
        const bool wet = inside && k < g->kmt[c];
        const double wt = !inside ? IO_TEST_HALO : wet ? want_t[e] : 0.0;
        const double ws = !inside ? IO_TEST_HALO : wet ? want_s[e] : 0.0;
        if (bitwise ? memcmp(&t[e], &wt, sizeof wt) || memcmp(&s[e], &ws, sizeof ws)
                    : t[e] != wt || s[e] != ws)
          wrong++;
      }
    }
  return wrong;
}

/* The end of every io test: the grid freed, MPI finalized. Exit status of
 * the test: 0 when no rank had a failure (collective). */
static int io_test_finish(mm_grid *g) {
  mm_grid_destroy(g);
  int local = mm_test_failures, total = 0, rank;
  MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%s: %d failed checks\n", total ? "FAILED" : "passed", total);
  MPI_Finalize();
  return total ? 1 : 0;
}

/* snprintf into the array buf; a name too long for it stops the test. */
#define IO_TEST_FMT(buf, ...)                                                                      \
  do {                                                                                             \
    if (snprintf((buf), sizeof(buf), __VA_ARGS__) >= (int)sizeof(buf)) {                           \
      fprintf(stderr, "%s:%d: name too long\n", __FILE__, __LINE__);                               \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                                \
    }                                                                                              \
  } while (0)

/* A netCDF call of the serial read-back that must succeed. */
#define IO_NC(call)                                                                                \
  do {                                                                                             \
    int io_nc_status_ = (call);                                                                    \
    TEST_CHECK(io_nc_status_ == NC_NOERR, "%s", nc_strerror(io_nc_status_));                       \
  } while (0)

#endif
