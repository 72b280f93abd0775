/* libFuzzer harness: the restart reader (mm_restart_read). Each input is
 * written to a temporary file and read on a 6 x 5 x 3 grid with land, on
 * MPI_COMM_SELF, for the configuration the seeds were written with (so that
 * mutations get past the config_hash check). Any input must be read or
 * refused with a message; an accepted one has a step in range and a finite
 * time. */
#include <math.h>

#define FUZZ_FILE_READER
#include "fuzz_common.h"

static void fuzz_read_input(void) {
  long step = -1;
  double time = NAN;
  mm_err err =
      mm_restart_read(&fuzz_grid, &fuzz_cfg, fuzz_path, fuzz_temp, fuzz_salt, &step, &time);
  fuzz_check_refusal(err, "mm_restart_read");
  if (err == MM_OK && (step < 0 || !isfinite(time))) {
    fprintf(stderr, "restart accepted with step %ld, time %g\n", step, time);
    abort();
  }
}
