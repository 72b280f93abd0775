/* The configuration loader: defaults, round trip of the resolved text, the
 * solution hash, and hostile input (over-long lines, non-UTF-8 bytes, odd
 * numbers and paths). */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mm_config.h"
#include "mm_test.h"

static MM_NODISCARD mm_err load(mm_config *c, const char *text) {
  mm_error_clear();
  return mm_config_load_string(c, "t.ini", text, NULL, 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  mm_config a, b;
  /* an empty file is all defaults, and valid */
  TEST_CHECK(load(&a, "") == MM_OK, "defaults: %s", mm_error_message());
  /* the resolved text parses back to the same configuration */
  char *text = mm_config_to_string(&a);
  TEST_CHECK(load(&b, text) == MM_OK, "round trip: %s", mm_error_message());
  char *text2 = mm_config_to_string(&b);
  TEST_CHECK(!strcmp(text, text2), "round trip changed the text");
  free(text2);
  free(text);
  /* a value that is not the default round-trips exactly */
  TEST_CHECK(load(&a, "[physics]\nkappa_h = 0.1\n") == MM_OK, "%s", mm_error_message());
  TEST_CHECK(a.kappa_h == 0.1, "kappa_h = %.17g", a.kappa_h);
  /* the hash follows the physics, not the length of the run or the output */
  mm_config c;
  TEST_OK(load(&a, "[run]\nsteps = 10\n"));
  TEST_OK(load(&b, "[run]\nsteps = 20\n[output]\ndir = elsewhere\ninterval = 3\n"));
  TEST_OK(load(&c, "[physics]\nkappa_v = 2e-5\n"));
  TEST_CHECK(mm_config_solution_hash(&a) == mm_config_solution_hash(&b), "steps changed the hash");
  TEST_CHECK(mm_config_solution_hash(&a) != mm_config_solution_hash(&c), "kappa_v did not");
  /* -0 is 0; 1e-400 underflows to 0 harmlessly */
  TEST_CHECK(load(&a, "[forcing]\nheat_flux = -0\n") == MM_OK && !signbit(a.heat_flux), "-0: %s",
             mm_error_message());
  TEST_CHECK(load(&a, "[physics]\nkappa_h = 1e-400\n") == MM_OK && a.kappa_h == 0.0, "1e-400");
  /* over-long line */
  char longline[400];
  memset(longline, 'x', sizeof longline);
  memcpy(longline, "[run]\nname = ", 13);
  longline[sizeof longline - 1] = '\0';
  TEST_CHECK(load(&a, longline) == MM_ERR_INPUT &&
                 strstr(mm_error_message(), "t.ini:2: line too long"),
             "long line: %s", mm_error_message());
  /* non-UTF-8 bytes */
  TEST_CHECK(load(&a, "[run]\nname = caf\xe9\n") == MM_ERR_INPUT &&
                 strstr(mm_error_message(), "t.ini:2: not valid UTF-8"),
             "latin-1: %s", mm_error_message());
  /* valid UTF-8 in a comment is fine */
  TEST_CHECK(load(&a, "; température\n[run]\nsteps = 1\n") == MM_OK, "utf-8 comment: %s",
             mm_error_message());
  /* paths with spaces and .. are taken as they are */
  TEST_CHECK(load(&a, "[output]\ndir = ../some dir/out put\n") == MM_OK &&
                 !strcmp(a.output_dir, "../some dir/out put"),
             "path: '%s'", a.output_dir);
  /* a value starting with ';' would read back as a comment in the resolved
   * configuration */
  TEST_CHECK(
      load(&a, "[output]\ndir =;x\n") == MM_ERR_INPUT &&
          strstr(mm_error_message(), "t.ini:2: output.dir = ;x: a value must not start with ';'"),
      "';' value: %s", mm_error_message());
  /* trailing slashes of output.dir are dropped ("/" stays) */
  TEST_CHECK(load(&a, "[output]\ndir = out//\n") == MM_OK && !strcmp(a.output_dir, "out"),
             "out//: '%s'", a.output_dir);
  TEST_CHECK(load(&a, "[output]\ndir = ///\n") == MM_OK && !strcmp(a.output_dir, "/"), "///: '%s'",
             a.output_dir);
  /* the files' names: one slash between output.dir and run.name, also
   * where output.dir is "/" */
  {
    char path[64];
    TEST_CHECK(mm_dir_file(path, sizeof path, "/", "x", ".nc") == 5 && !strcmp(path, "/x.nc"),
               "/ + x.nc: '%s'", path);
    TEST_CHECK(mm_dir_file(path, sizeof path, "out", "x", ".lock") == 10 &&
                   !strcmp(path, "out/x.lock"),
               "out + x.lock: '%s'", path);
    TEST_CHECK(mm_dir_file(path, 6, "out", "x", ".lock") == 10 && !strcmp(path, "out/x"),
               "cut: '%s'", path);
  }
  /* a refusal after the configuration is read names where its key was set;
   * a message that starts with a path that looks like a key does not */
  {
    TEST_CHECK(load(&a, "[run]\nsteps = 2\n[grid]\nnx = 20\n") == MM_OK, "load: %s",
               mm_error_message());
    mm_error_clear();
    mm_err e = mm_error_set(MM_ERR_INPUT, __FILE__, __LINE__, "grid.nx = 20: too few");
    e = mm_config_name_origin(&a, e);
    TEST_CHECK(e == MM_ERR_INPUT && !strcmp(mm_error_message(), "t.ini:4: grid.nx = 20: too few"),
               "origin: '%s'", mm_error_message());
    mm_error_clear();
    e = mm_error_set(MM_ERR_INPUT, __FILE__, __LINE__, "grid.nx/h.nc: not a history");
    e = mm_config_name_origin(&a, e);
    TEST_CHECK(!strcmp(mm_error_message(), "grid.nx/h.nc: not a history"), "a path: '%s'",
               mm_error_message());
    mm_error_clear();
    e = mm_error_set(MM_ERR_INPUT, __FILE__, __LINE__, "grid.ny = 10: too few");
    e = mm_config_name_origin(&a, e);
    TEST_CHECK(!strcmp(mm_error_message(), "grid.ny = 10: too few"), "a default: '%s'",
               mm_error_message());
    mm_error_clear();
  }
  /* ... but not a slash after a blank: the resolved text would lose the
   * blank (fuzz_config found it) */
  TEST_CHECK(load(&a, "[output]\ndir = x /\n") == MM_OK && !strcmp(a.output_dir, "x /"),
             "x /: '%s'", a.output_dir);
  /* numbers with trailing garbage, hex, inf */
  TEST_CHECK(load(&a, "[grid]\nnx = 12abc\n") == MM_ERR_INPUT, "12abc accepted");
  TEST_CHECK(load(&a, "[run]\ndt = inf\n") == MM_ERR_INPUT, "inf accepted");
  TEST_CHECK(load(&a, "[grid]\nnx = 99999999999999999999\n") == MM_ERR_INPUT, "overflow accepted");
  /* a huge grid is refused before anything is allocated */
  TEST_CHECK(load(&a, "[grid]\nnx = 1000000\nny = 1000000\nnz = 10000\n") == MM_ERR_INPUT &&
                 strstr(mm_error_message(), "cells: at most"),
             "huge grid: %s", mm_error_message());
  MPI_Finalize();
  if (!mm_test_failures) printf("PASS\n");
  return mm_test_failures ? 1 : 0;
}
