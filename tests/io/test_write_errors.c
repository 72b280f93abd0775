/* Files that cannot be written: MM_ERR_RUN on every rank with a message
 * naming the file, and no rank left waiting (the test has a timeout).
 * Cases: a missing output directory (on all ranks, or on one rank only), an
 * output "directory" that is a file,
 * a history file name taken by a directory (the parallel create itself
 * fails), a restart .tmp name taken by a directory, a restart name taken by
 * a non-empty directory (the rename fails; the .tmp file is removed).
 *
 * usage: test_write_errors output.dir=DIR [SECTION.KEY=VALUE ...]   (2 ranks) */
#include "io_test.h"

static void expect_run_error(const mm_grid *g, mm_err err, const char *what,
                             const char *const *words) {
  TEST_CHECK(err == MM_ERR_RUN, "rank %d: %s: code %d, message '%s'", g->rank, what, err,
             mm_error_message());
  TEST_CHECK(io_test_message_has(words), "rank %d: %s: message '%s' lacks '%s'", g->rank, what,
             mm_error_message(), words[0]);
  if (g->rank == 0) printf("%s: failed as expected: %s\n", what, mm_error_message());
  mm_error_clear();
}

/* All three writers into the output directory of cfg. */
static void expect_all_fail(const mm_grid *g, const mm_config *cfg, const char *const *words) {
  double *f = io_test_field(g, 1.0, 0.0);
  mm_history *h = (mm_history *)1;
  mm_err err = mm_history_create(g, cfg, &(mm_io_origin){"test", NULL}, &h);
  TEST_CHECK(h == NULL, "history handle not NULL after a failure");
  expect_run_error(g, err, "history", words);
  expect_run_error(g, mm_restart_write(g, cfg, NULL, f, f, 3, 1800.0), "restart", words);
  expect_run_error(g, mm_crash_write(g, cfg, NULL, f, f, 3, 1800.0), "crash", words);
  free(f);
}

int main(int argc, char **argv) {
  mm_config cfg;
  mm_grid g;
  io_test_start(&argc, &argv, &cfg, &g);
  char base[MM_STR_MAX], path[2 * MM_STR_MAX];
  IO_TEST_FMT(base, "%s", cfg.output_dir);

  /* (d) a missing directory (and its parent) */
  IO_TEST_FMT(cfg.output_dir, "%s/no/such/dir", base);
  expect_all_fail(&g, &cfg, (const char *const[]){"no/such/dir", "does not exist", NULL});

  /* only the last rank lacks the directory: all fail, the others with its message */
  if (g.rank == g.nranks - 1)
    IO_TEST_FMT(cfg.output_dir, "%s/no/such/dir", base);
  else
    IO_TEST_FMT(cfg.output_dir, "%s", base);
  if (g.nranks > 1) {
    char reported[64];
    IO_TEST_FMT(reported, "rank %d: ", g.nranks - 1);
    expect_all_fail(&g, &cfg,
                    (const char *const[]){"no/such/dir", "does not exist",
                                          g.rank == g.nranks - 1 ? "cannot create" : reported,
                                          NULL});
  }

  /* output.dir is a regular file */
  IO_TEST_FMT(cfg.output_dir, "%s/plain_file", base);
  io_test_write_text(cfg.output_dir, "");
  expect_all_fail(&g, &cfg, (const char *const[]){"plain_file", "not a directory", NULL});

  /* the file names are taken by directories: the parallel create fails */
  IO_TEST_FMT(cfg.output_dir, "%s", base);
  IO_TEST_FMT(cfg.run_name, "blocked");
  IO_TEST_FMT(path, "%s/blocked.nc", base);
  io_test_mkdir(path);
  IO_TEST_FMT(path, "%s/blocked.restart.nc.tmp", base);
  io_test_mkdir(path);
  IO_TEST_FMT(path, "%s/blocked.crash.nc.tmp", base);
  io_test_mkdir(path);
  expect_all_fail(&g, &cfg, (const char *const[]){"blocked.", "cannot create", NULL});

  /* the restart name is a non-empty directory: the rename fails, no .tmp is left */
  IO_TEST_FMT(cfg.run_name, "no_rename");
  IO_TEST_FMT(path, "%s/no_rename.restart.nc", base);
  io_test_mkdir(path);
  IO_TEST_FMT(path, "%s/no_rename.restart.nc/keep", base);
  io_test_mkdir(path);
  double *f = io_test_field(&g, 1.0, 0.0);
  expect_run_error(&g, mm_restart_write(&g, &cfg, NULL, f, f, 3, 1800.0), "restart rename",
                   (const char *const[]){"no_rename.restart.nc", "cannot rename", NULL});
  IO_TEST_FMT(path, "%s/no_rename.restart.nc.tmp", base);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_CHECK(!io_test_exists(path), "%s left behind", path);
  free(f);

  return io_test_finish(&g);
}
