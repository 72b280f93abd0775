/* Shared set-up of the model tests: a config from INI text plus overrides. */
#ifndef TEST_MODEL_COMMON_H
#define TEST_MODEL_COMMON_H

#include <math.h>
#include <stdlib.h>

#include "mm_model_private.h"
#include "mm_test.h"

static inline mm_model *test_model(const char *ini, MPI_Comm comm) {
  mm_config cfg;
  if (mm_config_load_string(&cfg, "test", ini, NULL, 0) != MM_OK) {
    fprintf(stderr, "config: %s\n", mm_error_message());
    exit(1);
  }
  mm_model *m = NULL;
  if (mm_model_create(&cfg, comm, &m) != MM_OK) {
    fprintf(stderr, "model: %s\n", mm_error_message());
    exit(1);
  }
  return m;
}

static inline void test_steps(mm_model *m, int n) {
  for (int s = 0; s < n; s++)
    if (mm_model_step(m, NULL) != MM_OK) {
      fprintf(stderr, "step: %s\n", mm_error_message());
      exit(1);
    }
}

static inline int test_finish(void) {
  int total = 0;
  MPI_Allreduce(&mm_test_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%s: %d failed checks\n", total ? "FAIL" : "PASS", total);
  MPI_Finalize();
  return total ? 1 : 0;
}

#endif
