/* Replays inputs through a libFuzzer harness (fuzz/fuzz_*.c) without
 * libFuzzer, in the normal builds: every crash the fuzzers found is kept as
 * a committed input under fuzz/regress/ and replayed here, under the default
 * and the asan build.
 *
 *   replay_config FILE|DIR...     (likewise replay_initial, replay_restart)
 *
 * Exit 0 when every input was processed (the harness aborts on a finding). */
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: cannot open\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return 1;
  printf("replay: %s (%zu bytes)\n", path, n);
  fflush(stdout);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every regular file of a directory in name order. */
static int replay_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: not found\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) return ++*count, replay_file(path);
  DIR *d = opendir(path);
  if (!d) return 1;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    names = realloc(names, (n + 1) * sizeof *names);
    names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
    sprintf(names[n++], "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_names);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      ++*count;
      bad |= replay_file(names[i]);
    }
    free(names[i]);
  }
  free(names);
  return bad;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int bad = 0, count = 0;
  for (int a = 1; a < argc; a++)
    bad |= replay_path(argv[a], &count);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Finalize();
  printf("replayed %d inputs%s\n", count, bad ? " (some could not be read)" : "");
  return bad || count == 0;
}
