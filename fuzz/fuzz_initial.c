/* libFuzzer harness: the initial-state reader (mm_initial_read). Each input
 * is written to a temporary file and read on a 6 x 5 x 3 grid with land, on
 * MPI_COMM_SELF. Any input must be read or refused with a message; nothing
 * may crash, leak or touch memory it should not. */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_setup(argc, argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_write(data, size) != 0) return 0;
  mm_error_clear();
  mm_err err = mm_initial_read(&fuzz_grid, fuzz_path, fuzz_temp, fuzz_salt);
  fuzz_check_refusal(err, "mm_initial_read");
  return 0;
}
