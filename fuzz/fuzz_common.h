/* Shared set-up of the file-reader harnesses (fuzz_initial.c, fuzz_restart.c,
 * and fuzz_seeds.c, which writes their seed corpus): MPI on one rank, a small
 * grid with land (bowl bathymetry) on MPI_COMM_SELF, state arrays, and a
 * temporary file that holds each input.
 *
 * A harness defines FUZZ_FILE_READER before it includes this file and
 * defines fuzz_read_input(), its read of fuzz_path and the checks of the
 * outcome; the libFuzzer entry points below do the rest. */
#ifndef MM_FUZZ_COMMON_H
#define MM_FUZZ_COMMON_H

#include <mpi.h>
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm_config.h"
#include "mm_error.h"
#include "mm_grid.h"
#include "mm_io.h"

/* The grid every seed is written for and every input is read on. */
#define FUZZ_GRID_INI "[grid]\nnx = 6\nny = 5\nnz = 3\nbathymetry = bowl\n"

static mm_config fuzz_cfg;
static mm_grid fuzz_grid;
static double *fuzz_temp, *fuzz_salt;
static char fuzz_path[64];

static inline void fuzz_cleanup(void) {
  if (fuzz_path[0]) unlink(fuzz_path);
}

/* MPI_Init, the configuration and grid, the state arrays, the file name.
 * Exits on failure: nothing can be fuzzed without them. */
static inline void fuzz_setup(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(argc, argv);
  /* libnetcdf's one-time set-up (curl, OpenSSL) here, not inside the first
   * input, where its thread-local allocations would count as a leak */
  nc_initialize();
  if (mm_config_load_string(&fuzz_cfg, "fuzz", FUZZ_GRID_INI, NULL, 0) != MM_OK ||
      mm_grid_create(&fuzz_cfg, MPI_COMM_SELF, &fuzz_grid) != MM_OK) {
    fprintf(stderr, "fuzz set-up: %s\n", mm_error_message());
    exit(1);
  }
  const size_t n = fuzz_grid.ncol_h * (size_t)fuzz_grid.nz;
  fuzz_temp = calloc(n, sizeof *fuzz_temp);
  fuzz_salt = calloc(n, sizeof *fuzz_salt);
  if (!fuzz_temp || !fuzz_salt) exit(1);
  const char *dir = getenv("TMPDIR");
  snprintf(fuzz_path, sizeof fuzz_path, "%.30s/mm-fuzz-%ld.nc", dir && *dir ? dir : "/tmp",
           (long)getpid());
  atexit(fuzz_cleanup);
}

/* Write the input to the temporary file; 0 on success. */
static inline int fuzz_write(const uint8_t *data, size_t size) {
  FILE *f = fopen(fuzz_path, "wb");
  if (!f) return -1;
  const size_t n = size ? fwrite(data, 1, size, f) : 0;
  return fclose(f) == 0 && n == size ? 0 : -1;
}

/* A refused input must come with an error code the program can exit with
 * and a message; anything else is a bug worth stopping for. */
static inline void fuzz_check_refusal(mm_err err, const char *what) {
  if (getenv("MINIMODEL_FUZZ_VERBOSE")) /* for triage: what became of the input */
    fprintf(stderr, "%s: %s\n", what, err == MM_OK ? "accepted" : mm_error_message());
  if (err == MM_OK) return;
  if ((err != MM_ERR_INPUT && err != MM_ERR_RUN) || !mm_error_message()[0]) {
    fprintf(stderr, "%s: error %d without a proper message: '%s'\n", what, (int)err,
            mm_error_message());
    abort();
  }
}

#ifdef FUZZ_FILE_READER
/* The harness's own part: read fuzz_path, which holds the input, and check
 * the outcome (abort on a finding). Called with the error state clear. */
static void fuzz_read_input(void);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_setup(argc, argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_write(data, size) != 0) return 0;
  mm_error_clear();
  fuzz_read_input();
  return 0;
}
#endif

#endif
