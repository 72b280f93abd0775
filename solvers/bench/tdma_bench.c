/* tdma-bench: times the tridiagonal backends on a batch of random systems
 * and sets each time against the machine's memory bandwidth.
 *
 *   tdma-bench --systems M --levels N [--precision double|single]
 *              [--backend NAME|all|auto] [--fused] [--nrhs R] [--threads T]
 *              [--repeats R] [--random-depths] [--warm] [--stream-mb MB]
 *              [--seed S] [--json] [--list]
 *
 * Plain solve: M columns of N levels, random diagonally dominant (a, b, c),
 * one right-hand side. Fused (--fused): coefficients from random interface
 * diffusivities and a stretched grid (docs/physics.md, vertical step), two
 * right-hand sides (temperature and salinity). Every backend gets the same
 * data; every repeat starts from the same right-hand sides.
 *
 * Timing: one warm-up call, then --repeats timed calls; best and median are
 * reported. Before each timed call the right-hand sides are restored and,
 * unless --warm, one STREAM triad runs over arrays much larger than the
 * last-level cache: it evicts the solver's data (which then comes from
 * memory, as in a model whose fields do not fit in cache) and samples the
 * bandwidth available at that moment.
 *
 * Bandwidth floor: STREAM triad a = b + s c (OpenMP, same thread count,
 * arrays of --stream-mb MB each, default max(256 MB, 4 x L3); bandwidth
 * counted as STREAM does, 24 bytes per element), best of 5 runs at start-up
 * and of the samples between repeats. The floor of a solve is the bytes it
 * must move over that bandwidth: plain, per wet unknown, a, b, c read + each
 * rhs read and written (8 (3 + 2 nrhs) bytes in double, 40 for nrhs = 1;
 * half in single); fused, kappa read + each rhs read and written (40 bytes
 * per level for T and S in double). floor_ratio = best / floor. On a shared
 * machine the bandwidth changes from second to second, so the run also
 * reports paired_floor_ratio: the median over repeats of the solve's time
 * over the floor from the triad run just before it (none with --warm: 0 in
 * the JSON, "-" in the table; so is speedup_vs_reference, the median of
 * `reference` over the backend's, where `reference` did not run). Solves in
 * place write no fresh lines (no write-allocate traffic) while the triad
 * does, so a solver can come in under its floor.
 *
 * Pass: the same bytes moved by one streaming pass over the problem's own
 * arrays (pass_double: each operand read once, each right-hand side written
 * in place), timed --repeats times as the solves are; pass_ms is its median
 * and pass_ratio a backend's median over it (0 for a GPU row). The pass
 * moves a solve's bytes in a solve's order with the least arithmetic, so a
 * solver that reads its operands once should not beat it (with
 * --random-depths it goes column by column, as the solvers do, and is
 * slower than over full columns), and pass_ratio is how far a solve is
 * from what this machine's memory allows, where the triad floor
 * overstates the floor by the triad's write-allocate reads (on one core of
 * an AMD EPYC, 2026-12-01, the pass took 0.79 to 0.86 of the triad floor:
 * docs/performance.md).
 *
 * max_residual: max over systems and right-hand sides of
 * max_k |(A x - d)_k| / max_k |d_k|, with the original matrix re-multiplied
 * in long double (fused: the matrix rebuilt from kappa by the formulas of
 * docs/physics.md).
 *
 * GPU backends (built with CUDA; `all` includes them when a device is usable,
 * else says on stderr that it skips them): timed on the device with CUDA
 * events, floor from the device's copy bandwidth (reported as stream_gbps),
 * residual computed here from the solution copied back; tdma_bench_cuda.h.
 * A GPU backend named on a machine without a usable device: exit status 2.
 *
 * --list: the backends, a table, or with --json one JSON line each
 * (backend, exact, device_memory, available, auto, description).
 *
 * Bad arguments (also an option with a value given twice), --random-depths
 * that leave no wet level, and sizes whose arrays would not fit in the
 * memory available (mm_host_memory_available: MemAvailable or a memory
 * cgroup's limit; MINIMODEL_MEMORY_LIMIT bytes when set; checked before
 * allocating): a message on stderr and exit status 2. A backend that fails, memory that cannot be
 * had, or results that cannot be written to standard output (a full disk):
 * a message and exit status 1. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mm_host_memory.h"
#include "mm_tdma.h"
#ifdef MINIMODEL_HAVE_CUDA
#include "tdma_bench_cuda.h" /* GPU backends: timed on the device (see there) */
#endif

typedef struct {
  size_t systems;
  int levels, single, fused, nrhs, threads, repeats, json, list, random_depths, warm;
  double stream_mb;
  uint64_t seed;
  const char *backend;
} options;

static void usage(FILE *f) {
  fprintf(f, "usage: tdma-bench --systems M --levels N [--precision double|single]\n"
             "                  [--backend NAME|all|auto] [--fused] [--nrhs R] [--threads T]\n"
             "                  [--repeats R] [--random-depths] [--warm] [--stream-mb MB]\n"
             "                  [--seed S] [--json] [--list]\n");
}

/* Standard output flushed: NULL when all of it was written, else the
 * reason (the flush's own error; an earlier write's failure, which left
 * only the stream's error flag, has no reason to give). */
static const char *stdout_failure(void) {
  if (fflush(stdout) != 0) return strerror(errno);
  return ferror(stdout) ? "a write failed" : NULL;
}

static _Noreturn void bad_args(const char *fmt, const char *arg) {
  fprintf(stderr, "tdma-bench: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  usage(stderr);
  exit(2);
}

/* A whole number in decimal digits, with a '-' at most before them: strtoll
 * alone would also take " 10" and "+10". */
static long long parse_int(const char *opt, const char *s, long long lo, long long hi) {
  char *end;
  errno = 0;
  const char *digits = s && *s == '-' ? s + 1 : s;
  if (!digits || !isdigit((unsigned char)*digits)) bad_args("bad value for %s", opt);
  long long v = strtoll(s, &end, 10);
  if (*end || errno || v < lo || v > hi) bad_args("bad value for %s", opt);
  return v;
}

static options parse(int argc, char **argv) {
  options o = {.levels = 0,
               .nrhs = 0,
               .threads = 0,
               .repeats = 7,
               .stream_mb = 0,
               .seed = 20261121,
               .backend = "all"};
  int have_m = 0, have_n = 0;
  /* an option with a value given twice is refused, as minimodel refuses
   * --bandwidth twice: which one would count? */
  static const char *const valued[] = {"--systems", "--levels",    "--precision",
                                       "--backend", "--nrhs",      "--threads",
                                       "--repeats", "--stream-mb", "--seed"};
  enum { NVALUED = sizeof valued / sizeof valued[0] };
  const char *given[NVALUED] = {NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    for (int k = 0; k < NVALUED; k++)
      if (!strcmp(a, valued[k])) {
        if (given[k]) {
          char twice[512];
          snprintf(twice, sizeof twice, "%s %.200s and %s %.200s", a, given[k], a,
                   v ? v : "(nothing)");
          bad_args("%s: given twice", twice);
        }
        given[k] = v ? v : "(nothing)";
      }
    if (!strcmp(a, "--systems")) {
      o.systems = (size_t)parse_int(a, v, 1, 1LL << 40), have_m = 1, i++;
    } else if (!strcmp(a, "--levels")) {
      o.levels = (int)parse_int(a, v, 1, 1 << 24), have_n = 1, i++;
    } else if (!strcmp(a, "--precision")) {
      if (!v || (strcmp(v, "double") && strcmp(v, "single")))
        bad_args("--precision takes double or single, not %s", v ? v : "nothing");
      o.single = !strcmp(v, "single"), i++;
    } else if (!strcmp(a, "--backend")) {
      if (!v) bad_args("%s needs a value", a);
      o.backend = v, i++;
    } else if (!strcmp(a, "--nrhs")) {
      o.nrhs = (int)parse_int(a, v, 1, MM_TDMA_MAX_RHS), i++;
    } else if (!strcmp(a, "--threads")) {
      o.threads = (int)parse_int(a, v, 1, 4096), i++;
    } else if (!strcmp(a, "--repeats")) {
      o.repeats = (int)parse_int(a, v, 1, 100000), i++;
    } else if (!strcmp(a, "--stream-mb")) {
      o.stream_mb = (double)parse_int(a, v, 1, 1 << 20), i++;
    } else if (!strcmp(a, "--seed")) {
      o.seed = (uint64_t)parse_int(a, v, 0, INT64_MAX), i++;
    } else if (!strcmp(a, "--fused")) {
      o.fused = 1;
    } else if (!strcmp(a, "--random-depths")) {
      o.random_depths = 1;
    } else if (!strcmp(a, "--warm")) {
      o.warm = 1;
    } else if (!strcmp(a, "--json")) {
      o.json = 1;
    } else if (!strcmp(a, "--list")) {
      o.list = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      const char *why = stdout_failure(); /* the text is the point, as minimodel's */
      if (why) {
        fprintf(stderr, "tdma-bench: cannot write the help to standard output: %s\n", why);
        exit(1);
      }
      exit(0);
    } else {
      bad_args("unknown argument %s", a);
    }
  }
  if (!o.list && !(have_m && have_n)) bad_args("%s", "--systems and --levels are required");
  if (!o.nrhs) o.nrhs = o.fused ? 2 : 1;
  if (strcmp(o.backend, "all") && strcmp(o.backend, "auto") && !mm_tdma_find(o.backend))
    bad_args("unknown backend %s (see --list)", o.backend);
  const mm_tdma_backend *be = mm_tdma_find(o.backend);
  if (!o.list && be && be->available && !be->available()) {
    fprintf(stderr, "tdma-bench: backend %s: %s\n", o.backend,
            be->device_memory ? "needs a CUDA device, and none is usable on this machine"
                              : "not available on this machine");
    exit(2);
  }
  return o;
}

/* ---- helpers ------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *xalloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "tdma-bench: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* Uniform in [0, 1) from a counter: deterministic whatever the threads. */
static double u01(uint64_t seed, uint64_t i) {
  return (double)(mix64(seed ^ mix64(i)) >> 11) * 0x1.0p-53;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static size_t l3_bytes(void) {
  long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return v > 0 ? (size_t)v : (size_t)32 << 20;
}

/* Host memory this process may use: MINIMODEL_MEMORY_LIMIT (bytes) when set,
 * as for the model, else what it may still take (mm_host_memory_available:
 * MemAvailable, or a memory cgroup's limit less its use); -1 when the limit
 * is not a number > 0, INFINITY when neither is known. */
static double available_bytes(void) {
  const char *limit = getenv("MINIMODEL_MEMORY_LIMIT");
  if (limit && *limit) return mm_host_memory_limit(limit);
  return mm_host_memory_available(NULL, 0);
}

/* Refuse, before allocating anything, a run whose host arrays would not fit
 * in memory (or overflow a size_t): the triad's 3 arrays, the depths, the
 * coefficients (a, b, c, or kappa when fused), nrhs right-hand sides and
 * their saved copies, and the solver's workspace of (1 + nrhs) nz values per
 * column of a tile of 64 for each thread. Exit status 2. */
static void check_memory(const options *o, int threads) {
  const double es = o->single ? 4.0 : 8.0, n = (double)o->systems * (double)o->levels;
  const double need = 3.0 * o->stream_mb * 1e6 + 4.0 * (double)o->systems +
                      n * es * ((o->fused ? 1.0 : 3.0) + 2.0 * o->nrhs) +
                      (1.0 + o->nrhs) * o->levels * 64.0 * es * threads;
  const double avail = available_bytes();
  if (avail < 0.0) {
    fprintf(stderr,
            "tdma-bench: MINIMODEL_MEMORY_LIMIT = %s: must be a number of bytes > 0 (decimal, and "
            "finite: at most about 1.8e308)\n",
            getenv("MINIMODEL_MEMORY_LIMIT"));
    exit(2);
  }
  if (need > (double)(SIZE_MAX / 4)) { /* beyond what an allocation can ask for */
    fprintf(stderr,
            "tdma-bench: %zu systems x %d levels need about %.3g GB of memory, more than an "
            "allocation can ask for; give fewer systems or levels\n",
            o->systems, o->levels, need / 1e9);
    exit(2);
  }
  if (need > avail) {
    fprintf(stderr,
            "tdma-bench: %zu systems x %d levels (%s, nrhs %d%s) need about %.3g GB of memory, "
            "%.3g GB of it the triad's arrays (--stream-mb %.0f), but %.3g GB are available; "
            "give fewer systems or levels, or a smaller --stream-mb\n",
            o->systems, o->levels, o->single ? "single" : "double", o->nrhs,
            o->fused ? ", fused" : "", need / 1e9, 3.0 * o->stream_mb / 1e3, o->stream_mb,
            avail / 1e9);
    exit(2);
  }
}

/* ---- STREAM triad ------------------------------------------------------------ */

typedef struct {
  double *a, *b, *c;
  size_t n;
  double gbps;
} stream;

/* One triad over the whole arrays; returns GB/s (24 bytes per element). */
static double stream_triad(stream *s) {
  const long n = (long)s->n;
  const double q = 3.0;
  double *restrict a = s->a;
  const double *restrict b = s->b, *restrict c = s->c;
  double t0 = now_s();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++)
    a[i] = b[i] + q * c[i];
  double gbps = 24.0 * (double)s->n / (now_s() - t0) / 1e9;
  if (gbps > s->gbps) s->gbps = gbps;
  return gbps;
}

static void stream_init(stream *s, double mb) {
  s->n = (size_t)(mb * 1e6 / sizeof(double));
  if (s->n < 1024) s->n = 1024;
  s->a = xalloc(s->n * sizeof(double));
  s->b = xalloc(s->n * sizeof(double));
  s->c = xalloc(s->n * sizeof(double));
  s->gbps = 0;
  const long n = (long)s->n;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++)
    s->a[i] = 0, s->b[i] = 1, s->c[i] = 2;
  stream_triad(s); /* warm-up */
  s->gbps = 0;
  for (int rep = 0; rep < 5; rep++)
    stream_triad(s);
}

/* ---- the problem -------------------------------------------------------------- */

typedef struct {
  size_t ncol;
  int nz, nrhs, single, fused;
  int *depth;
  size_t wet; /* wet unknowns per right-hand side */
  /* Arrays of elements of the working precision (double or float). */
  void *a, *b, *c, *kappa, *inv_h, *g;
  void *rhs0[MM_TDMA_MAX_RHS], *rhs[MM_TDMA_MAX_RHS];
} problem;

#define ELEM(p) ((p)->single ? sizeof(float) : sizeof(double))

/* Fills every array of the problem in precision T. */
#define PROBLEM_FILL(T)                                                                            \
  static void fill_##T(problem *p, uint64_t seed) {                                                \
    const long ncol = (long)p->ncol;                                                               \
    const int nz = p->nz;                                                                          \
    T *a = p->a, *b = p->b, *c = p->c, *kappa = p->kappa, *inv_h = p->inv_h, *g = p->g;            \
    /* Stretched grid 5 m .. 200 m, time step one hour. */                                         \
    double zc_prev = 0, zw = 0;                                                                    \
    for (int k = 0; k < nz; k++) {                                                                 \
      double h = 5.0 + 195.0 * (nz > 1 ? (double)k / (nz - 1) : 0.0);                              \
      inv_h[k] = (T)(1.0 / h);                                                                     \
      double zc = zw + 0.5 * h;                                                                    \
      if (k > 0) g[k - 1] = (T)(3600.0 / (zc - zc_prev));                                          \
      zc_prev = zc;                                                                                \
      zw += h;                                                                                     \
    }                                                                                              \
    g[nz - 1] = 0;                                                                                 \
    _Pragma("omp parallel for schedule(static)") for (long col = 0; col < ncol; col++) {           \
      for (int k = 0; k < nz; k++) {                                                               \
        const size_t i = (size_t)col * (size_t)nz + (size_t)k;                                     \
        const uint64_t r = (uint64_t)i * 8;                                                        \
        if (p->fused) {                                                                            \
          /* 1e-5 .. 1e-1 m2/s: background to convective mixing. */                                \
          kappa[i] = (T)exp(log(1e-5) + u01(seed, r) * (log(1e-1) - log(1e-5)));                   \
        } else {                                                                                   \
          a[i] = (T)(2 * u01(seed, r + 1) - 1);                                                    \
          c[i] = (T)(2 * u01(seed, r + 2) - 1);                                                    \
          b[i] = (T)((fabs((double)a[i]) + fabs((double)c[i]) + 1 + u01(seed, r + 3)) *            \
                     (u01(seed, r + 4) < 0.5 ? -1 : 1));                                           \
        }                                                                                          \
        for (int q = 0; q < p->nrhs; q++)                                                          \
          ((T *)p->rhs0[q])[i] =                                                                   \
              (T)(q == 0 ? 30 * u01(seed, r + 5 + q) - 2 : 34 + 2 * u01(seed, r + 5 + q));         \
      }                                                                                            \
    }                                                                                              \
  }
PROBLEM_FILL(double)
PROBLEM_FILL(float)

static void problem_make(problem *p, const options *o) {
  memset(p, 0, sizeof *p);
  p->ncol = o->systems;
  p->nz = o->levels;
  p->nrhs = o->nrhs;
  p->single = o->single;
  p->fused = o->fused;
  const size_t n = p->ncol * (size_t)p->nz, es = ELEM(p);
  p->depth = xalloc(p->ncol * sizeof(int));
  for (size_t col = 0; col < p->ncol; col++) {
    int d = p->nz;
    if (o->random_depths) { /* 10 % land, 30 % shelf 1..nz-1, 60 % full */
      double u = u01(o->seed + 17, col);
      d = u < 0.1 ? 0 : u < 0.4 ? 1 + (int)(u01(o->seed + 18, col) * (p->nz - 1)) : p->nz;
    }
    p->depth[col] = d;
    p->wet += (size_t)d;
  }
  if (p->fused) {
    p->kappa = xalloc(n * es);
  } else {
    p->a = xalloc(n * es);
    p->b = xalloc(n * es);
    p->c = xalloc(n * es);
  }
  p->inv_h = xalloc((size_t)p->nz * es);
  p->g = xalloc((size_t)p->nz * es);
  for (int q = 0; q < p->nrhs; q++) {
    p->rhs0[q] = xalloc(n * es);
    p->rhs[q] = xalloc(n * es);
  }
  if (p->single)
    fill_float(p, o->seed);
  else
    fill_double(p, o->seed);
}

static void problem_free(problem *p) {
  void *arrays[] = {p->depth, p->a, p->b, p->c, p->kappa, p->inv_h, p->g};
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
    free(arrays[i]);
  for (int q = 0; q < p->nrhs; q++) {
    free(p->rhs0[q]);
    free(p->rhs[q]);
  }
}

static void problem_restore(problem *p) {
  const size_t bytes = p->ncol * (size_t)p->nz * ELEM(p);
  const long chunks = (long)((bytes + (1 << 20) - 1) >> 20);
  for (int q = 0; q < p->nrhs; q++) {
    unsigned char *dst = p->rhs[q];
    const unsigned char *src = p->rhs0[q];
#pragma omp parallel for schedule(static)
    for (long i = 0; i < chunks; i++) {
      size_t o = (size_t)i << 20, m = bytes - o < (1u << 20) ? bytes - o : (1u << 20);
      memcpy(dst + o, src + o, m);
    }
  }
}

/* Bytes a solve must move (see the top of the file). */
static double problem_bytes(const problem *p) {
  const double per = p->fused ? 1 + 2.0 * p->nrhs : 3 + 2.0 * p->nrhs;
  return per * (double)ELEM(p) * (double)p->wet;
}

/* max over columns and rhs of max_k |(A x - d)_k| / max_k |d_k|, long double. */
#define RESIDUAL(T)                                                                                \
  static double residual_##T(const problem *p) {                                                   \
    const long ncol = (long)p->ncol;                                                               \
    const int nz = p->nz;                                                                          \
    const T *A = p->a, *B = p->b, *C = p->c, *K = p->kappa, *ih = p->inv_h, *g = p->g;             \
    double worst = 0;                                                                              \
    _Pragma("omp parallel for schedule(static) reduction(max : worst)") for (long col = 0;         \
                                                                             col < ncol; col++) {  \
      const int n = p->depth[col];                                                                 \
      const size_t off = (size_t)col * (size_t)nz;                                                 \
      for (int q = 0; q < p->nrhs; q++) {                                                          \
        const T *x = (const T *)p->rhs[q] + off, *d = (const T *)p->rhs0[q] + off;                 \
        long double rmax = 0, dmax = 0;                                                            \
        for (int k = 0; k < n; k++) {                                                              \
          long double ak, bk, ck;                                                                  \
          if (p->fused) { /* docs/physics.md, in the working precision */                          \
            T up = k > 0 ? K[off + k - 1] * g[k - 1] : (T)0;                                       \
            T dn = k < n - 1 ? K[off + k] * g[k] : (T)0;                                           \
            T at = -up * ih[k], ct = -dn * ih[k];                                                  \
            ak = at, ck = ct, bk = (T)(((T)1 - at) - ct);                                          \
          } else {                                                                                 \
            ak = A[off + k], bk = B[off + k], ck = C[off + k];                                     \
          }                                                                                        \
          long double s = bk * x[k];                                                               \
          if (k > 0) s += ak * x[k - 1];                                                           \
          if (k < n - 1) s += ck * x[k + 1];                                                       \
          long double r = fabsl(s - d[k]);                                                         \
          if (!(r <= rmax)) rmax = r;                                                              \
          if (fabsl((long double)d[k]) > dmax) dmax = fabsl((long double)d[k]);                    \
        }                                                                                          \
        double rel = n == 0 ? 0 : dmax > 0 ? (double)(rmax / dmax) : (double)rmax;                 \
        if (!(rel <= worst)) worst = rel;                                                          \
      }                                                                                            \
    }                                                                                              \
    return worst;                                                                                  \
  }
RESIDUAL(double)
RESIDUAL(float)

/* One streaming pass over the operands of a solve: at every wet level, a, b
 * and c (plain) or kappa (fused) read, and each right-hand side read and
 * written in place, with a multiply and an add per value (problem_bytes'
 * bytes, in the solves' column-contiguous order). Its time is the least
 * that any solver reading its operands once can take on this machine,
 * measured rather than derived from the triad, whose stores also read
 * every line they write (write-allocate) and so count as 24 bytes what moves
 * 32: a solve in place can then run under its triad floor, not under this
 * pass. The values it leaves are restored before every solve. */
#define PASS(T)                                                                                    \
  static void pass_##T(problem *p) {                                                               \
    const long ncol = (long)p->ncol;                                                               \
    const int nz = p->nz, nrhs = p->nrhs, fused = p->fused;                                        \
    const T *A = p->a, *B = p->b, *C = p->c, *K = p->kappa;                                        \
    _Pragma("omp parallel for schedule(static)") for (long col = 0; col < ncol; col++) {           \
      const int n = p->depth[col];                                                                 \
      const size_t off = (size_t)col * (size_t)nz;                                                 \
      for (int q = 0; q < nrhs; q++) {                                                             \
        T *restrict x = (T *)p->rhs[q] + off;                                                      \
        if (fused)                                                                                 \
          for (int k = 0; k < n; k++)                                                              \
            x[k] = x[k] * K[off + k] + (T)1;                                                       \
        else                                                                                       \
          for (int k = 0; k < n; k++)                                                              \
            x[k] = (x[k] + A[off + k]) * B[off + k] + C[off + k];                                  \
      }                                                                                            \
    }                                                                                              \
  }
PASS(double)
PASS(float)

static int call(mm_tdma *s, problem *p) {
  const mm_tdma_batch bt = {.ncol = p->ncol, .nz = p->nz, .depth = p->depth};
  if (p->single) {
    float *const *x = (float *const *)p->rhs;
    if (p->fused) {
      const mm_tdma_geometry_f geo = {.inv_h = p->inv_h, .g = p->g};
      return mm_tdma_fused_f(s, &bt, &geo, p->kappa, x, p->nrhs);
    }
    return mm_tdma_solve_f(s, &bt, p->a, p->b, p->c, x, p->nrhs);
  }
  double *const *x = (double *const *)p->rhs;
  if (p->fused) {
    const mm_tdma_geometry geo = {.inv_h = p->inv_h, .g = p->g};
    return mm_tdma_fused(s, &bt, &geo, p->kappa, x, p->nrhs);
  }
  return mm_tdma_solve(s, &bt, p->a, p->b, p->c, x, p->nrhs);
}

/* ---- main --------------------------------------------------------------------- */

typedef struct {
  char name[64];
  double best_ms, median_ms, residual;
  double paired_ratio;      /* median of time / floor from the triad just before */
  double floor_ms, bw_gbps; /* GPU backends: from the device's copy bandwidth (else 0) */
  int rc;
} result;

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_string(const char *t) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)t; *c; c++)
    if (*c == '"' || *c == '\\')
      printf("\\%c", *c);
    else if (*c < 0x20)
      printf("\\u%04x", *c);
    else
      putchar(*c);
  putchar('"');
}

/* The backends, a table or (json) one JSON line each: backend, exact,
 * device_memory, available (in this build, on this machine), auto (the
 * one "auto" picks), description. */
static void list_backends(int json) {
  mm_tdma *s;
  const char *chosen = NULL;
  if (mm_tdma_create("auto", 1, 0, &s) == 0) {
    chosen = mm_tdma_backend_of(s)->name;
    mm_tdma_destroy(s);
  }
  if (json) {
    for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b; b++) {
      printf("{\"backend\": ");
      json_string((*b)->name);
      printf(", \"exact\": %s, \"device_memory\": %s, \"available\": %s, \"auto\": %s, "
             "\"description\": ",
             (*b)->exact ? "true" : "false", (*b)->device_memory ? "true" : "false",
             !(*b)->available || (*b)->available() ? "true" : "false",
             chosen && !strcmp(chosen, (*b)->name) ? "true" : "false");
      json_string((*b)->description);
      printf("}\n");
    }
    return;
  }
  printf("%-10s %-5s %s\n", "backend", "exact", "description");
  for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b; b++)
    printf("%-10s %-5s %s%s\n", (*b)->name, (*b)->exact ? "yes" : "no", (*b)->description,
           (*b)->device_memory ? " [GPU, device memory]" : "");
  if (chosen) printf("auto -> %s\n", chosen);
}

static double median_of(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#ifdef MINIMODEL_HAVE_CUDA
/* A device backend: tdma_bench_cuda.c times it on the GPU and copies the
 * solution back; the residual is computed here as for the CPU backends. */
static result bench_gpu(const char *name, problem *p, const options *o, double bytes) {
  result r = {.rc = 0};
  snprintf(r.name, sizeof r.name, "%s", name);
  const mm_bench_gpu_problem gp = {.ncol = p->ncol,
                                   .nz = p->nz,
                                   .nrhs = p->nrhs,
                                   .single = p->single,
                                   .fused = p->fused,
                                   .depth = p->depth,
                                   .a = p->a,
                                   .b = p->b,
                                   .c = p->c,
                                   .kappa = p->kappa,
                                   .inv_h = p->inv_h,
                                   .g = p->g,
                                   .rhs0 = p->rhs0,
                                   .rhs = p->rhs};
  mm_bench_gpu_result g;
  r.rc = mm_bench_gpu_run(name, &gp, o->repeats, o->warm, &g);
  if (r.rc) return r;
  r.best_ms = g.best_ms;
  r.median_ms = g.median_ms;
  r.bw_gbps = g.copy_gbps;
  r.floor_ms = g.copy_gbps > 0 ? bytes / (g.copy_gbps * 1e9) * 1e3 : 0;
  r.paired_ratio = r.floor_ms > 0 ? r.median_ms / r.floor_ms : 0;
  r.residual = p->single ? residual_float(p) : residual_double(p);
  return r;
}
#endif

static result bench_one(const char *name, problem *p, const options *o, stream *st, double bytes) {
#ifdef MINIMODEL_HAVE_CUDA
  const mm_tdma_backend *be = mm_tdma_find(name);
  if (be && be->device_memory) return bench_gpu(name, p, o, bytes);
#endif
  result r = {.rc = 0};
  snprintf(r.name, sizeof r.name, "%s", name);
  mm_tdma *s;
  r.rc = mm_tdma_create(name, p->nz, 0, &s);
  if (r.rc) return r;
  if (!strcmp(name, "auto"))
    snprintf(r.name, sizeof r.name, "auto:%s", mm_tdma_backend_of(s)->name);
  double *t = xalloc((size_t)o->repeats * sizeof *t),
         *ratio = xalloc((size_t)o->repeats * sizeof *t);
  problem_restore(p);
  r.rc = call(s, p); /* warm-up: page faults, workspace, threads */
  for (int rep = 0; rep < o->repeats && !r.rc; rep++) {
    problem_restore(p);
    double floor_s = 0;
    if (!o->warm) floor_s = bytes / (stream_triad(st) * 1e9); /* flush + bandwidth sample */
    double t0 = now_s();
    r.rc = call(s, p);
    t[rep] = now_s() - t0;
    ratio[rep] = o->warm ? 0 : t[rep] / floor_s;
  }
  if (!r.rc) {
    r.paired_ratio = median_of(ratio, o->repeats);
    r.median_ms = 1e3 * median_of(t, o->repeats);
    r.best_ms = 1e3 * t[0];
    r.residual = p->single ? residual_float(p) : residual_double(p);
  }
  free(t);
  free(ratio);
  mm_tdma_destroy(s);
  return r;
}

/* The median over --repeats of one pass (pass_double, pass_float), each
 * timed as a solve is: right-hand sides restored, then, unless --warm, a
 * triad that evicts them from the caches. */
static double pass_median_ms(problem *p, const options *o, stream *st) {
  double *t = xalloc((size_t)o->repeats * sizeof *t);
  void (*pass)(problem *) = p->single ? pass_float : pass_double;
  problem_restore(p);
  pass(p); /* warm-up */
  for (int rep = 0; rep < o->repeats; rep++) {
    problem_restore(p);
    if (!o->warm) stream_triad(st);
    double t0 = now_s();
    pass(p);
    t[rep] = now_s() - t0;
  }
  const double ms = 1e3 * median_of(t, o->repeats);
  free(t);
  return ms;
}

int main(int argc, char **argv) {
  options o = parse(argc, argv);
  if (o.list) {
    list_backends(o.json);
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    fprintf(stderr, "tdma-bench: cannot write the list to standard output: %s\n", strerror(errno));
    return 1;
  }
#ifdef _OPENMP
  if (o.threads) omp_set_num_threads(o.threads);
#endif
  const int threads = mm_tdma_max_threads();
  if (threads > 4096) { /* the OpenMP runtime crashes in its first parallel region */
    fprintf(stderr, "tdma-bench: %d OpenMP threads (OMP_NUM_THREADS): at most 4096\n", threads);
    return 2;
  }
  const size_t l3 = l3_bytes();
  if (o.stream_mb == 0) {
    o.stream_mb = 4.0 * (double)l3 / 1e6;
    if (o.stream_mb < 256) o.stream_mb = 256;
  }
  /* a triad that fits in the cache neither evicts the solver's data nor
   * samples memory's bandwidth: said, for its figures are the cache's */
  if (!o.warm && 3.0 * o.stream_mb * 1e6 < 2.0 * (double)l3)
    fprintf(stderr,
            "tdma-bench: note: --stream-mb %.0f: the triad's three arrays (%.0f MB) are less than "
            "twice the last-level cache (%.0f MB): they do not flush the caches between repeats, "
            "and its bandwidth, the floor and the ratios to it are the cache's, not memory's\n",
            o.stream_mb, 3.0 * o.stream_mb, (double)l3 / 1e6);
  check_memory(&o, threads);
  stream st;
  stream_init(&st, o.stream_mb);

  problem p;
  problem_make(&p, &o);
  if (p.wet == 0) { /* no byte to move: a floor of 0 and ratios of inf */
    fprintf(stderr,
            "tdma-bench: --random-depths made all %zu systems land (seed %llu): no wet level to "
            "time; give more systems or another --seed\n",
            p.ncol, (unsigned long long)o.seed);
    problem_free(&p);
    free(st.a), free(st.b), free(st.c);
    return 2;
  }
  const double bytes = problem_bytes(&p);
  const char *mode = o.fused ? "fused" : "solve", *prec = o.single ? "single" : "double";

  /* Which backends. */
  const char *names[64];
  int nnames = 0;
  if (!strcmp(o.backend, "all")) {
    for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b && nnames < 63; b++)
      if (!(*b)->device_memory || !(*b)->available || (*b)->available())
        names[nnames++] = (*b)->name;
      else
        fprintf(stderr, "tdma-bench: skipping GPU backend %s: no usable CUDA device\n", (*b)->name);
  } else {
    names[nnames++] = o.backend;
  }

  if (!o.json) {
    printf("tdma-bench: %zu systems x %d levels, %s, %s, nrhs %d, %d thread%s, %s caches, "
           "%d repeats\n",
           p.ncol, p.nz, prec, mode, p.nrhs, threads, threads > 1 ? "s" : "",
           o.warm ? "warm" : "flushed", o.repeats);
  }
  const double pass_ms = pass_median_ms(&p, &o, &st);
  result res[64];
  double ref_ms = 0;
  for (int i = 0; i < nnames; i++) {
    res[i] = bench_one(names[i], &p, &o, &st, bytes);
    if (!strcmp(res[i].name, "reference") && !res[i].rc) ref_ms = res[i].median_ms;
  }
  /* The floor from the best bandwidth seen in the whole run. */
  const double floor_ms = bytes / (st.gbps * 1e9) * 1e3;
  if (!o.json) {
    printf("STREAM triad %.1f GB/s (best; %.0f MB arrays); floor %.3f ms for %.1f MB "
           "(%.0f bytes per wet level)\n",
           st.gbps, o.stream_mb, floor_ms, bytes / 1e6, bytes / (double)p.wet);
    printf("one pass over the same bytes (operands read once, right-hand sides in place): "
           "%.3f ms median (%.1f GB/s)\n",
           pass_ms, bytes / (pass_ms * 1e-3) / 1e9);
    printf("%-16s %10s %10s %8s %8s %8s %7s %9s %11s\n", "backend", "best ms", "median ms", "GB/s",
           "x floor", "x paired", "x pass", "x ref", "max resid");
  }
  int status = 0;
  for (int i = 0; i < nnames; i++) {
    const result *r = &res[i];
    if (r->rc) {
      if (r->rc == MM_TDMA_ENOTSUP) {
        if (!o.json) printf("%-16s %s\n", r->name, "not supported");
        continue;
      }
      fprintf(stderr, "tdma-bench: %s: %s\n", r->name, mm_tdma_strerror(r->rc));
      status = 1;
      continue;
    }
    const double gbps = bytes / (r->best_ms * 1e-3) / 1e9;
    /* GPU backends: floor and bandwidth of the device */
    const double fl = r->floor_ms > 0 ? r->floor_ms : floor_ms;
    const double bw = r->bw_gbps > 0 ? r->bw_gbps : st.gbps;
    /* the pass ran on the host: no ratio for a device's row */
    const double pass_ratio = r->bw_gbps > 0 ? 0 : r->median_ms / pass_ms;
    if (o.json) {
      printf("{\"backend\": \"%s\", \"mode\": \"%s\", \"systems\": %zu, \"levels\": %d, "
             "\"precision\": \"%s\", \"threads\": %d, \"ms\": %.6g, \"gbps\": %.6g, "
             "\"max_residual\": %.6g, \"median_ms\": %.6g, \"floor_ms\": %.6g, "
             "\"floor_ratio\": %.6g, \"median_floor_ratio\": %.6g, \"stream_gbps\": %.6g, "
             "\"nrhs\": %d, \"wet_levels\": %zu, \"bytes\": %.0f, \"repeats\": %d, "
             "\"caches\": \"%s\", \"speedup_vs_reference\": %.6g, \"paired_floor_ratio\": %.6g, "
             "\"pass_ms\": %.6g, \"pass_ratio\": %.6g}\n",
             r->name, mode, p.ncol, p.nz, prec, threads, r->best_ms, gbps, r->residual,
             r->median_ms, fl, r->best_ms / fl, r->median_ms / fl, bw, p.nrhs, p.wet, bytes,
             o.repeats, o.warm ? "warm" : "flushed", ref_ms > 0 ? ref_ms / r->median_ms : 0.0,
             r->paired_ratio, pass_ms, pass_ratio);
    } else {
      char ref[16] = "-", paired[16] = "-", pass[16] = "-";
      if (ref_ms > 0) snprintf(ref, sizeof ref, "%.2f", ref_ms / r->median_ms);
      if (r->paired_ratio > 0) snprintf(paired, sizeof paired, "%.2f", r->paired_ratio);
      if (pass_ratio > 0) snprintf(pass, sizeof pass, "%.2f", pass_ratio);
      printf("%-16s %10.3f %10.3f %8.2f %8.2f %8s %7s %9s %11.2e\n", r->name, r->best_ms,
             r->median_ms, gbps, r->best_ms / fl, paired, pass, ref, r->residual);
    }
  }
  if (!o.json)
    printf("(x floor: best / floor; x paired: median of time / floor of the triad just before;\n"
           " x pass: median / the pass's median; x ref: reference median / median;\n"
           " GB/s: bytes / best)\n");
  for (int i = 0; i < nnames && !o.json; i++)
    if (!res[i].rc && res[i].bw_gbps > 0) {
      printf("(GPU rows: floor from the device-to-device copy bandwidth, %.1f GB/s)\n",
             res[i].bw_gbps);
      break;
    }
  const char *why = stdout_failure(); /* the results are the point */
  if (why) {
    fprintf(stderr, "tdma-bench: cannot write the results to standard output: %s\n", why);
    status = 1;
  }
  problem_free(&p);
  free(st.a);
  free(st.b);
  free(st.c);
  return status;
}
