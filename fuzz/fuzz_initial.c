/* libFuzzer harness: the initial-state reader (mm_initial_read). Each input
 * is written to a temporary file and read on a 6 x 5 x 3 grid with land, on
 * MPI_COMM_SELF. Any input must be read or refused with a message; nothing
 * may crash, leak or touch memory it should not. */
#define FUZZ_FILE_READER
#include "fuzz_common.h"

static void fuzz_read_input(void) {
  mm_err err = mm_initial_read(&fuzz_grid, &(mm_settings){0}, fuzz_path, fuzz_temp, fuzz_salt);
  fuzz_check_refusal(err, "mm_initial_read");
}
