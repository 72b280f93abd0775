/* mm_agree and mm_agree_with: every rank returns the worst code of any rank
 * and the message of the lowest rank that failed with that code (so the
 * exit status and the message it prints belong together), and the largest
 * `extra`. Run on 3 ranks. */
#include <string.h>

#include "mm_error.h"
#include "mm_test.h"

/* Each rank fails with code[rank] (MM_OK: not at all), message "rank R";
 * all must agree on `want` and on the message of rank `from`. */
static void expect(int rank, const mm_err code[3], mm_err want, int from) {
  mm_error_clear();
  const mm_err mine =
      code[rank] != MM_OK ? MM_ERROR(code[rank], "failure of rank %d", rank) : MM_OK;
  int extra = -1;
  const mm_err got = mm_agree_with(MPI_COMM_WORLD, mine, 10 * rank + 1, &extra);
  TEST_CHECK(got == want, "rank %d: code %d, want %d", rank, (int)got, (int)want);
  TEST_CHECK(extra == 21, "rank %d: extra %d, want 21", rank, extra);
  if (want == MM_OK) return;
  char msg[64];
  if (rank == from || from == 0)
    snprintf(msg, sizeof msg, "failure of rank %d", from);
  else
    snprintf(msg, sizeof msg, "rank %d: failure of rank %d", from, from);
  TEST_CHECK(!strcmp(mm_error_message(), msg), "rank %d: message '%s', want '%s'", rank,
             mm_error_message(), msg);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  TEST_CHECK(size == 3, "run on 3 ranks, not %d", size);
  if (size == 3) {
    expect(rank, (const mm_err[3]){MM_OK, MM_OK, MM_OK}, MM_OK, -1);
    expect(rank, (const mm_err[3]){MM_OK, MM_OK, MM_ERR_RUN}, MM_ERR_RUN, 2);
    expect(rank, (const mm_err[3]){MM_ERR_RUN, MM_ERR_RUN, MM_OK}, MM_ERR_RUN, 0);
    /* a run error on rank 0, input errors on 1 and 2: exit 2, rank 1's words */
    expect(rank, (const mm_err[3]){MM_ERR_RUN, MM_ERR_INPUT, MM_ERR_INPUT}, MM_ERR_INPUT, 1);
    expect(rank, (const mm_err[3]){MM_ERR_INPUT, MM_ERR_SIGNAL + 15, MM_ERR_RUN},
           MM_ERR_SIGNAL + 15, 1);
  }
  MPI_Finalize();
  return mm_test_failures ? 1 : 0;
}
