/* mm_io_probe: the metadata of an input file read first in a child process
 * (nc_util.h). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#if defined(__SANITIZE_ADDRESS__)
#define MM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MM_SANITIZED 1
#endif
#endif
#ifdef MM_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mm_io.h"
#include "nc_util.h"

double mm_io_read_timeout(const mm_settings *env, const char *path) {
  const char *text = env->read_timeout;
  if (*text) {
    char *end = NULL;
    const double s = strtod(text, &end);
    return *end || !(s > 0.0) ? 0.0 : s; /* 0 or not a number: no limit */
  }
  struct stat st;
  return 600.0 + (stat(path, &st) == 0 ? (double)st.st_size / 20e6 : 0.0);
}

/* Bytes of one value of an atomic netCDF type; 0 for user-defined types. */
static size_t type_size(nc_type t) {
  switch (t) {
  case NC_BYTE:
  case NC_UBYTE:
  case NC_CHAR: return 1;
  case NC_SHORT:
  case NC_USHORT: return 2;
  case NC_INT:
  case NC_UINT:
  case NC_FLOAT: return 4;
  case NC_INT64:
  case NC_UINT64:
  case NC_DOUBLE: return 8;
  case NC_STRING: return sizeof(char *);
  default: return 0;
  }
}

/* Every attribute of variable var (NC_GLOBAL: of the file), values read;
 * one that fails does not stop the others. 1 when any failed. */
static int walk_atts(int nc, int var, int natts) {
  int bad = 0;
  for (int a = 0; a < natts; a++) {
    char name[NC_MAX_NAME + 1];
    nc_type type;
    size_t len;
    if (nc_inq_attname(nc, var, a, name) || nc_inq_att(nc, var, name, &type, &len)) {
      bad = 1;
      continue;
    }
    const size_t size = type_size(type);
    if (!size || len == 0 || len > ((size_t)16 << 20) / size) continue;
    void *buf = malloc(len * size);
    if (!buf) return 1;
    const int s = nc_get_att(nc, var, name, buf);
    if (s == NC_NOERR && type == NC_STRING) nc_free_string(len, buf);
    free(buf);
    bad |= s != NC_NOERR;
  }
  return bad;
}

/* The child: open, every dimension, variable and attribute, close. Every
 * call the reader may make is made, also after one that the library
 * refused (a damaged file can crash the library in the next one, where the
 * reader, which goes on in another order, would meet it). 0 when all of it
 * reads, 3 when the library refuses something (the real read will say
 * what). */
static int walk(const char *path) {
  int nc, ndims = 0, nvars = 0, ngatts = 0, unlim;
  if (nc_open(path, NC_NOWRITE, &nc)) return 3;
  int bad = nc_inq(nc, &ndims, &nvars, &ngatts, &unlim) != NC_NOERR;
  for (int d = 0; d < ndims; d++) {
    char name[NC_MAX_NAME + 1];
    size_t len;
    bad |= nc_inq_dim(nc, d, name, &len) != NC_NOERR;
  }
  bad |= walk_atts(nc, NC_GLOBAL, ngatts);
  for (int v = 0; v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    nc_type type;
    int nd = 0, natts = 0, dims[NC_MAX_VAR_DIMS];
    if (nc_inq_var(nc, v, name, &type, &nd, dims, &natts) != NC_NOERR) {
      bad = 1;
      continue;
    }
    /* the reader's own lookups: by name, and the names of its dimensions */
    int id = -1;
    bad |= nc_inq_varid(nc, name, &id) != NC_NOERR;
    for (int d = 0; d < nd && d < NC_MAX_VAR_DIMS; d++) {
      char dim[NC_MAX_NAME + 1];
      size_t len;
      bad |= nc_inq_dim(nc, dims[d], dim, &len) != NC_NOERR;
    }
    bad |= walk_atts(nc, v, natts);
  }
  return nc_close(nc) || bad ? 3 : 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 0's part: fork, wait (with the time limit), judge. */
static MM_NODISCARD mm_err probe(const mm_settings *env, const char *path) {
  const double limit = mm_io_read_timeout(env, path);
  fflush(NULL);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return MM_OK; /* no child to spare: the read itself follows */
  if (pid == 0) {
    /* the child never outlives the limit or its parent (whose read
     * watchdog may end it first): a library that loops must not go on
     * spinning as an orphan */
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(3);
    if (limit > 0.0) alarm((unsigned)ceil(limit) + 1);
    /* a crash here is the answer, not a finding of the process's own
     * handlers (a fuzzer's or an MPI library's): the default actions, and
     * under a sanitizer no death callback */
    const int deadly[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++)
      signal(deadly[i], SIG_DFL);
#ifdef MM_SANITIZED
    __sanitizer_set_death_callback(NULL);
#endif
    _exit(walk(path));
  }
  const double t0 = now();
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return MM_OK;
    if (limit > 0.0 && now() - t0 > limit) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return MM_ERROR(MM_ERR_INPUT,
                      "%s: still not read after %g s: a damaged file (the netCDF/HDF5 libraries "
                      "do not finish reading its metadata) or a stalled file system; "
                      "MINIMODEL_READ_TIMEOUT sets the limit in seconds",
                      path, limit);
    }
    struct timespec nap = {0, 2000000}; /* 2 ms */
    nanosleep(&nap, NULL);
  }
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) return MM_OK;
  /* a signal, or another exit status: a sanitizer's report, an abort */
  char how[64];
  if (WIFSIGNALED(status))
    snprintf(how, sizeof how, "signal %d", WTERMSIG(status));
  else
    snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
  return MM_ERROR(MM_ERR_INPUT,
                  "%s: damaged file: the netCDF/HDF5 libraries crash reading its metadata (%s "
                  "in a test read); refused",
                  path, how);
}

mm_err mm_io_probe(MPI_Comm comm, const mm_settings *env, const char *path) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  return mm_agree(comm, rank == 0 ? probe(env, path) : MM_OK);
}
