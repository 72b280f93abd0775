/* Guard pages: no backend reads or writes at or below a column's depth
 * (mm_tdma.h), proved with the MMU rather than inferred from results.
 *
 * Every array of a batch (a, b, c, kappa, each rhs; both precisions) is
 * mmap'd so that element g = (ncol-1)*nz + depth[ncol-1] -- the first level
 * at or below the depth of the LAST column -- is the first byte of a
 * PROT_NONE region that covers the rest of the array and more. A depth-0
 * last column puts its whole column under the guard; a full-depth last
 * column puts the guard right after the array's end. The inputs (a, b, c,
 * kappa, the geometry, depth, the arrays of rhs pointers) are read-only
 * mappings, the geometry ends at a guard after nz entries, depth after ncol
 * and the rhs pointer arrays after nrhs, so that a write to an input or a
 * read past any of them faults too.
 *
 * The columns before the guarded one have mixed depths (0, 1, 2, nz-1, nz,
 * random) so that tiled backends run their mixed-depth paths with the
 * guarded column in the same tile, at every lane position of the 8-column
 * (double) and 16-column (single) tiles of `simd` (checked: the test fails if
 * a lane position is left out); a second pattern gives every column the
 * depth of the guarded one (uniform tiles, overlapping tail block). ncol
 * 1..40 (and 1001 for nz >= 33, split between 2 threads), nz in {1, 3, 7,
 * 33, 100}, every CPU backend, plain and fused, nrhs 1 and 2, double and
 * single. Only the last column can sit at a guard (the others are followed
 * by the next column); for them, the NaN sentinels below their depths and
 * the bitwise comparison catch a stray read or write.
 *
 * Each group of cases runs in a forked child: a fault (SIGSEGV, or under
 * AddressSanitizer its report and exit 1) inside a solve is reported with
 * the backend and variant that was running (the child keeps a label in
 * shared memory). Results are checked against `reference` run on ordinary
 * malloc'd arrays: bitwise for backends with exact = 1, normwise per column
 * for lapack (1e-12 double, 1e-3 single); levels at and below a depth must
 * still hold their NaN sentinels. Self-checks: reading or writing the
 * guarded element, directly and from a deliberately off-by-one solver, must
 * be caught, and the element just before the guard must be readable. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm_tdma_column.h"
#include "tdma_test_util.h"

/* lapack vs reference, normwise per column. Forward errors carry the
 * condition number of the strongly coupled fused systems (seen: 2.8e-13 in
 * double, 2.3e-4 in single, nz = 100); the single bound is the double one
 * scaled by FLT_EPSILON / DBL_EPSILON (5.4e8) and rounded up. */
#define TOL_LAPACK_D 1e-12
#define TOL_LAPACK_F 1e-3
/* Tile widths of `simd` (tdma_simd.h: 32-byte vectors, 2 per tile). */
#define TILE_D   8
#define TILE_F   16
#define NCOL_MAX 40
#define NCOL_BIG 1001

/* What the child is doing, readable by the parent after the child ended. */
typedef struct {
  volatile int busy; /* 1 while a solve or probe runs */
  char label[240];
  long solves, compared;
  double lapack_err[2]; /* largest normwise error seen: double, single */
} shared_state;
static shared_state *sh;

static size_t page;

/* ---------------------------------------------------------------------------
 * Guarded buffers: `nok` accessible bytes ending exactly at a PROT_NONE
 * region of at least `nguard` bytes (whole pages). */
typedef struct {
  unsigned char *map;
  size_t lead, len;
} gbuf;

static size_t round_page(size_t n) {
  return (n + page - 1) / page * page;
}

static void *gb_alloc(gbuf *gb, size_t nok, size_t nguard) {
  gb->lead = round_page(nok);
  gb->len = gb->lead + round_page(nguard ? nguard : 1);
  void *m = mmap(NULL, gb->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  gb->map = m;
  if (mprotect(gb->map + gb->lead, gb->len - gb->lead, PROT_NONE)) {
    perror("mprotect");
    exit(2);
  }
  return gb->map + gb->lead - nok;
}

static void gb_readonly(gbuf *gb) {
  if (gb->lead && mprotect(gb->map, gb->lead, PROT_READ)) {
    perror("mprotect");
    exit(2);
  }
}

static void gb_free(gbuf *gb) {
  if (gb->map) munmap(gb->map, gb->len);
  gb->map = NULL;
}

/* ---------------------------------------------------------------------------
 * Depths of a case. The last column has depth dl; the others are all dl
 * (UNIFORM) or a shuffled mix of 0, 1, 2, nz-1, nz and random (MIXED). */
enum { MIXED, UNIFORM };
static const char *const pattern_name[] = {"mixed", "uniform"};

static int clampi(int x, int lo, int hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

static void make_depths(int *depth, size_t ncol, int nz, int pattern, int dl, uint64_t seed) {
  tu_rng r = {seed};
  for (size_t i = 0; i + 1 < ncol; i++) {
    const int spec[6] = {0, 1, 2, nz - 1, nz, tu_int(&r, nz + 1)};
    depth[i] = pattern == UNIFORM ? dl : clampi(spec[i % 6], 0, nz);
  }
  for (size_t i = ncol - 1; i > 1; i--) { /* shuffle all but the last */
    size_t j = (size_t)(tu_next(&r) % i);
    int t = depth[i - 1];
    depth[i - 1] = depth[j];
    depth[j] = t;
  }
  depth[ncol - 1] = dl;
}

/* Depths of the guarded last column for a given nz (distinct values). */
static int last_depths(int nz, uint64_t seed, int *out) {
  tu_rng r = {seed};
  const int cand[6] = {0, 1, 2, nz - 1, nz, nz > 2 ? 1 + tu_int(&r, nz - 1) : nz};
  int n = 0;
  for (int i = 0; i < 6; i++) {
    int d = clampi(cand[i], 0, nz), dup = 0;
    for (int j = 0; j < n; j++)
      dup |= out[j] == d;
    if (!dup) out[n++] = d;
  }
  return n;
}

static uint64_t case_seed(int nz, size_t ncol, int pattern, int dl) {
  return 0x6a09e667f3bcc909ull ^ ((uint64_t)nz << 40) ^ ((uint64_t)ncol << 16) ^
         ((uint64_t)pattern << 12) ^ (uint64_t)dl;
}

/* ---------------------------------------------------------------------------
 * One case: a random batch (tu_batch_make, NaN below every depth) copied
 * into guarded arrays. */
typedef struct {
  tu_batch t; /* ordinary arrays: the source and the reference's input */
  size_t g;   /* guarded element: (ncol-1)*nz + depth[ncol-1] */
  gbuf gd[6], gf[6], ggeo[4], gdep, gptr[4];
  double *d[6]; /* a, b, c, kappa, rhs0, rhs1 (guarded) */
  float *f[6];
  double *inv_h, *gg;
  float *inv_hf, *ggf;
  int *depth;
  double **rhs_d[3]; /* [nrhs]: arrays of nrhs guarded rhs pointers */
  float **rhs_f[3];
} gcase;

static void gcase_make(gcase *cs, int nz, size_t ncol, const int *depth, uint64_t seed) {
  memset(cs, 0, sizeof *cs);
  tu_rng r = {seed ^ 0x9e3779b97f4a7c15ull};
  tu_batch_make(&cs->t, &r, ncol, nz, 2, depth);
  const size_t n = ncol * (size_t)nz;
  cs->g = (ncol - 1) * (size_t)nz + (size_t)depth[ncol - 1];
  const size_t g = cs->g;
  const double *src_d[6] = {cs->t.a, cs->t.b, cs->t.c, cs->t.kappa, cs->t.rhs[0], cs->t.rhs[1]};
  const float *src_f[6] = {cs->t.af,     cs->t.bf,      cs->t.cf,
                           cs->t.kappaf, cs->t.rhsf[0], cs->t.rhsf[1]};
  for (int i = 0; i < 6; i++) {
    /* The guard covers the rest of the array and at least one page past it. */
    cs->d[i] = gb_alloc(&cs->gd[i], g * sizeof(double), (n - g) * sizeof(double) + 1);
    cs->f[i] = gb_alloc(&cs->gf[i], g * sizeof(float), (n - g) * sizeof(float) + 1);
    memcpy(cs->d[i], src_d[i], g * sizeof(double));
    memcpy(cs->f[i], src_f[i], g * sizeof(float));
    if (i < 4) {
      gb_readonly(&cs->gd[i]);
      gb_readonly(&cs->gf[i]);
    }
  }
  const size_t znd = (size_t)nz * sizeof(double), znf = (size_t)nz * sizeof(float);
  cs->inv_h = gb_alloc(&cs->ggeo[0], znd, 1);
  cs->gg = gb_alloc(&cs->ggeo[1], znd, 1);
  cs->inv_hf = gb_alloc(&cs->ggeo[2], znf, 1);
  cs->ggf = gb_alloc(&cs->ggeo[3], znf, 1);
  memcpy(cs->inv_h, cs->t.inv_h, znd);
  memcpy(cs->gg, cs->t.g, znd);
  memcpy(cs->inv_hf, cs->t.inv_hf, znf);
  memcpy(cs->ggf, cs->t.gf, znf);
  for (int i = 0; i < 4; i++)
    gb_readonly(&cs->ggeo[i]);
  cs->depth = gb_alloc(&cs->gdep, ncol * sizeof(int), 1);
  memcpy(cs->depth, depth, ncol * sizeof(int));
  gb_readonly(&cs->gdep);
  for (int nrhs = 1; nrhs <= 2; nrhs++) {
    cs->rhs_d[nrhs] = gb_alloc(&cs->gptr[2 * (nrhs - 1)], nrhs * sizeof(double *), 1);
    cs->rhs_f[nrhs] = gb_alloc(&cs->gptr[2 * (nrhs - 1) + 1], nrhs * sizeof(float *), 1);
    for (int q = 0; q < nrhs; q++) {
      cs->rhs_d[nrhs][q] = cs->d[4 + q];
      cs->rhs_f[nrhs][q] = cs->f[4 + q];
    }
    gb_readonly(&cs->gptr[2 * (nrhs - 1)]);
    gb_readonly(&cs->gptr[2 * (nrhs - 1) + 1]);
  }
}

static void gcase_free(gcase *cs) {
  for (int i = 0; i < 6; i++)
    gb_free(&cs->gd[i]), gb_free(&cs->gf[i]);
  for (int i = 0; i < 4; i++)
    gb_free(&cs->ggeo[i]), gb_free(&cs->gptr[i]);
  gb_free(&cs->gdep);
  tu_batch_free(&cs->t);
}

/* The guarded right-hand sides back to the batch's values (before a solve). */
static void gcase_reset_rhs(gcase *cs) {
  for (int q = 0; q < 2; q++) {
    memcpy(cs->d[4 + q], cs->t.rhs[q], cs->g * sizeof(double));
    memcpy(cs->f[4 + q], cs->t.rhsf[q], cs->g * sizeof(float));
  }
}

/* ---------------------------------------------------------------------------
 * Checking a result (the accessible elements [0, g) of one rhs). */
static int check_result(const gcase *cs, int single, int exact, const void *got, const void *want,
                        const char *what, int q) {
  const size_t g = cs->g, size = single ? sizeof(float) : sizeof(double);
  const int nz = cs->t.nz;
#define VAL(p, i) (single ? (double)((const float *)(p))[i] : ((const double *)(p))[i])
  if (exact) {
    if (!memcmp(got, want, g * size)) {
      sh->compared += (long)g;
      return 1;
    }
    size_t i = 0;
    while (!memcmp((const char *)got + i * size, (const char *)want + i * size, size))
      i++;
    fprintf(stderr, "  %s: rhs %d differs from reference at column %zu level %zu: %.17g vs %.17g\n",
            what, q, i / (size_t)nz, i % (size_t)nz, VAL(got, i), VAL(want, i));
    return 0;
  }
  const double tol = single ? TOL_LAPACK_F : TOL_LAPACK_D;
  for (size_t col = 0; col * (size_t)nz < g; col++) {
    const size_t off = col * (size_t)nz;
    double emax = 0, xmax = 0;
    for (size_t k = 0; k < (size_t)nz && off + k < g; k++) {
      const size_t i = off + k;
      if ((int)k >= cs->depth[col]) { /* dry: the sentinel, untouched */
        if (memcmp((const char *)got + i * size, (const char *)want + i * size, size)) {
          fprintf(stderr, "  %s: rhs %d: dry level %zu of column %zu was written\n", what, q, k,
                  col);
          return 0;
        }
        continue;
      }
      const double e = fabs(VAL(got, i) - VAL(want, i));
      if (!(e <= emax)) emax = e; /* NaN propagates */
      if (fabs(VAL(want, i)) > xmax) xmax = fabs(VAL(want, i));
    }
    const double err = xmax > 0 ? emax / xmax : emax;
    if (!(err <= sh->lapack_err[single])) sh->lapack_err[single] = err;
    if (!(err <= tol)) {
      fprintf(stderr, "  %s: rhs %d column %zu: normwise error %.3g vs reference (tol %.0e)\n",
              what, q, col, err, tol);
      return 0;
    }
    sh->compared += cs->depth[col];
  }
#undef VAL
  return 1;
}

/* ---------------------------------------------------------------------------
 * Running every CPU backend on one case (in the child). */
static void label(const char *be, int fused, int single, int nrhs, const gcase *cs,
                  const char *pattern) {
  snprintf(sh->label, sizeof sh->label,
           "backend=%s %s %s nrhs=%d nz=%d ncol=%zu depth[last]=%d pattern=%s", be,
           fused ? "fused" : "solve", single ? "single" : "double", nrhs, cs->t.nz, cs->t.ncol,
           cs->depth[cs->t.ncol - 1], pattern);
}

static int call(mm_tdma *s, const gcase *cs, const double *const *dd, const float *const *ff,
                int fused, int single, int nrhs, double *const *xd, float *const *xf) {
  const mm_tdma_batch bt = {.ncol = cs->t.ncol, .nz = cs->t.nz, .depth = cs->depth};
  const mm_tdma_geometry geo = {.inv_h = cs->inv_h, .g = cs->gg};
  const mm_tdma_geometry_f geof = {.inv_h = cs->inv_hf, .g = cs->ggf};
  if (single)
    return fused ? mm_tdma_fused_f(s, &bt, &geof, ff[3], xf, nrhs)
                 : mm_tdma_solve_f(s, &bt, ff[0], ff[1], ff[2], xf, nrhs);
  return fused ? mm_tdma_fused(s, &bt, &geo, dd[3], xd, nrhs)
               : mm_tdma_solve(s, &bt, dd[0], dd[1], dd[2], xd, nrhs);
}

static void run_backends(gcase *cs, const char *pattern) {
  const tu_batch *t = &cs->t;
  mm_tdma *ref;
  int rc = mm_tdma_create("reference", t->nz, 0, &ref);
  TU_CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));
  if (rc) return;
  for (int fused = 0; fused <= 1; fused++)
    for (int single = 0; single <= 1; single++)
      for (int nrhs = 1; nrhs <= 2; nrhs++) {
        /* The expected result: reference on the ordinary arrays. */
        const double *td[4] = {t->a, t->b, t->c, t->kappa};
        const float *tf[4] = {t->af, t->bf, t->cf, t->kappaf};
        double **wd = single ? NULL : tu_copy_rhs(t);
        float **wf = single ? tu_copy_rhs_f(t) : NULL;
        gcase plain = *cs; /* the ordinary arrays with the guarded case's sizes */
        plain.depth = t->depth;
        plain.inv_h = t->inv_h, plain.gg = t->g, plain.inv_hf = t->inv_hf, plain.ggf = t->gf;
        rc = call(ref, &plain, td, tf, fused, single, nrhs, wd, wf);
        TU_CHECK(rc == 0, "reference on ordinary arrays: %s", mm_tdma_strerror(rc));
        for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
          const mm_tdma_backend *be = *pb;
          if (be->device_memory || (be->available && !be->available())) continue;
          mm_tdma *s;
          rc = mm_tdma_create(be->name, t->nz, 0, &s);
          if (rc == MM_TDMA_EDEVICE || rc == MM_TDMA_ENOTSUP) continue;
          TU_CHECK(rc == 0, "%s: create: %s", be->name, mm_tdma_strerror(rc));
          if (rc) continue;
          gcase_reset_rhs(cs);
          label(be->name, fused, single, nrhs, cs, pattern);
          sh->busy = 1;
          rc = call(s, cs, (const double *const *)cs->d, (const float *const *)cs->f, fused, single,
                    nrhs, cs->rhs_d[nrhs], cs->rhs_f[nrhs]);
          sh->busy = 0;
          sh->solves++;
          mm_tdma_destroy(s);
          if (rc == MM_TDMA_ENOTSUP) continue;
          TU_CHECK(rc == 0, "%s: %s", sh->label, mm_tdma_strerror(rc));
          if (rc) continue;
          for (int q = 0; q < nrhs; q++) {
            const void *got = single ? (const void *)cs->f[4 + q] : (const void *)cs->d[4 + q];
            const void *want = single ? (const void *)wf[q] : (const void *)wd[q];
            TU_CHECK(check_result(cs, single, be->exact, got, want, sh->label, q),
                     "%s: result differs from reference", sh->label);
          }
        }
        if (wd) tu_free_rhs(wd, t->nrhs);
        if (wf) tu_free_rhs(wf, t->nrhs);
      }
  mm_tdma_destroy(ref);
}

/* A group of cases: every ncol for one nz, pattern and last depth. */
typedef struct {
  int nz, pattern, dl;
} group;

static int run_group(const void *arg) {
  const group *gr = arg;
  for (size_t ncol = 1; ncol <= NCOL_MAX + 1; ncol++) {
    size_t nc = ncol;
    if (ncol == NCOL_MAX + 1) { /* big enough for 2 threads (mixed, deep only) */
      if (gr->pattern != MIXED || gr->nz < 33) break;
      nc = NCOL_BIG;
    }
    tu_set_threads(2);
    int *depth = tu_xmalloc(nc * sizeof *depth);
    const uint64_t seed = case_seed(gr->nz, nc, gr->pattern, gr->dl);
    make_depths(depth, nc, gr->nz, gr->pattern, gr->dl, seed);
    gcase cs;
    gcase_make(&cs, gr->nz, nc, depth, seed);
    free(depth);
    run_backends(&cs, pattern_name[gr->pattern]);
    gcase_free(&cs);
  }
  return tu_failures;
}

/* ---------------------------------------------------------------------------
 * Self-checks (each in its own child): a probe on a guarded case. */
enum { PROBE_READ_GUARD, PROBE_WRITE_GUARD_F, PROBE_READ_BEFORE, PROBE_OVERREAD, PROBE_OVERWRITE };
static const char *const probe_name[] = {
    "read a[g] directly", "write rhs_f[1][g] directly", "read a[g-1] (must NOT fault)",
    "off-by-one solver reading level depth", "off-by-one solver writing level depth"};

/* A deliberately broken plain solve: the reference Thomas per column, plus
 * one access at level depth of every column (read of a, or write of rhs). */
static void broken_solve(const mm_tdma_batch *bt, const double *a, const double *b, const double *c,
                         double *const *rhs, int nrhs, int write) {
  double *cp = tu_xmalloc((size_t)bt->nz * sizeof *cp);
  for (size_t col = 0; col < bt->ncol; col++) {
    const int n = bt->depth[col];
    const long off = (long)(col * (size_t)bt->nz);
    mm_col_thomas(n, a + off, b + off, c + off, rhs, nrhs, off, cp);
    if (write)
      ((volatile double *)rhs[0])[off + n] = 0.0;
    else
      (void)((const volatile double *)a)[off + n];
  }
  free(cp);
}

static int run_probe(const void *arg) {
  const int probe = *(const int *)arg;
  const int nz = 33;
  const size_t ncol = 21; /* the last column in lane 4 of its double tile */
  int depth[21];
  make_depths(depth, ncol, nz, MIXED, 19, 7);
  gcase cs;
  gcase_make(&cs, nz, ncol, depth, 7);
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = cs.depth};
  snprintf(sh->label, sizeof sh->label, "self-check: %s", probe_name[probe]);
  sh->busy = 1;
  switch (probe) {
  case PROBE_READ_GUARD: (void)((const volatile double *)cs.d[0])[cs.g]; break;
  case PROBE_WRITE_GUARD_F: ((volatile float *)cs.f[5])[cs.g] = 1.0f; break;
  case PROBE_READ_BEFORE: (void)((const volatile double *)cs.d[0])[cs.g - 1]; break;
  case PROBE_OVERREAD:
  case PROBE_OVERWRITE:
    broken_solve(&bt, cs.d[0], cs.d[1], cs.d[2], cs.rhs_d[2], 2, probe == PROBE_OVERWRITE);
    break;
  }
  sh->busy = 0;
  gcase_free(&cs);
  return 0;
}

/* ---------------------------------------------------------------------------
 * The parent: forks, waits, classifies. */
enum { CHILD_OK, CHILD_MISMATCH, CHILD_FAULT };

static int in_child(int (*fn)(const void *), const void *arg, int quiet, char *desc, size_t ndesc) {
  sh->busy = 0;
  sh->label[0] = 0;
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    tu_failures = 0; /* the parent's count is not the child's */
    if (quiet && !freopen("/dev/null", "w", stderr)) _exit(3);
    exit(fn(arg) ? 1 : 0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) {
    perror("waitpid");
    exit(2);
  }
  if (WIFSIGNALED(st)) {
    snprintf(desc, ndesc, "signal %d (%s) during %s", WTERMSIG(st), strsignal(WTERMSIG(st)),
             sh->busy ? sh->label : "setup, outside any solve");
    return CHILD_FAULT;
  }
  if (WEXITSTATUS(st) != 0 && sh->busy) { /* e.g. AddressSanitizer's SEGV report */
    snprintf(desc, ndesc, "exit %d during %s", WEXITSTATUS(st), sh->label);
    return CHILD_FAULT;
  }
  snprintf(desc, ndesc, "exit %d", WEXITSTATUS(st));
  return WEXITSTATUS(st) ? CHILD_MISMATCH : CHILD_OK;
}

/* Lane positions that the guarded column takes in tiles of width w
 * (single-threaded cases: land is skipped, wet columns fill tiles in order).
 * A lane > 0 counts only in a tile with a column of another depth; at lane 0
 * the last column is alone in its tile. Returns a bit mask. */
static unsigned lanes_covered(int nz, int w) {
  unsigned mask = 0;
  int dls[6];
  const int ndl = last_depths(nz, (uint64_t)nz, dls);
  for (int id = 0; id < ndl; id++) {
    const int dl = dls[id];
    if (dl < 1 || dl >= nz) continue; /* the guard must be inside the column */
    for (size_t ncol = 1; ncol <= NCOL_MAX; ncol++) {
      int depth[NCOL_MAX];
      make_depths(depth, ncol, nz, MIXED, dl, case_seed(nz, ncol, MIXED, dl));
      int wet = 0;
      for (size_t i = 0; i + 1 < ncol; i++)
        wet += depth[i] > 0;
      const int lane = wet % w;
      int mixed = 0, seen = 0;
      for (size_t i = 0; i + 1 < ncol; i++)
        if (depth[i] > 0 && seen++ >= wet - lane) mixed |= depth[i] != dl;
      if (mixed || lane == 0) mask |= 1u << lane;
    }
  }
  return mask;
}

int main(void) {
  page = (size_t)sysconf(_SC_PAGESIZE);
  sh =
      mmap(NULL, round_page(sizeof *sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  char desc[400];

  /* Self-checks first: the guard must catch what it claims to. */
  int nprobe_ok = 0;
  for (int probe = PROBE_READ_GUARD; probe <= PROBE_OVERWRITE; probe++) {
    const int r = in_child(run_probe, &probe, 1, desc, sizeof desc);
    const int want_fault = probe != PROBE_READ_BEFORE;
    const int ok = want_fault ? r == CHILD_FAULT : r == CHILD_OK;
    TU_CHECK(ok, "self-check '%s': %s (%s)", probe_name[probe],
             want_fault ? "NOT caught" : "unexpected result", desc);
    if (ok) nprobe_ok++;
  }
  printf("self-checks: %d of 5 as expected (guarded accesses fault, the last element before the "
         "guard does not)\n",
         nprobe_ok);

  /* Lane coverage of the mixed-depth cases. */
  for (int nz = 33; nz <= 100; nz += 67) {
    const unsigned md = lanes_covered(nz, TILE_D), mf = lanes_covered(nz, TILE_F);
    TU_CHECK(md == (1u << TILE_D) - 1 && mf == (1u << TILE_F) - 1,
             "nz=%d: guarded column not at every lane of a mixed tile (double %#x, single %#x)", nz,
             md, mf);
  }

  const int nzs[] = {1, 3, 7, 33, 100};
  int ngroups = 0, nfault = 0;
  long solves = 0, compared = 0;
  double lerr[2] = {0, 0};
  for (size_t iz = 0; iz < sizeof nzs / sizeof *nzs; iz++) {
    int dls[6];
    const int ndl = last_depths(nzs[iz], (uint64_t)nzs[iz], dls);
    for (int pattern = MIXED; pattern <= UNIFORM; pattern++)
      for (int id = 0; id < ndl; id++) {
        const group gr = {nzs[iz], pattern, dls[id]};
        sh->solves = sh->compared = 0;
        sh->lapack_err[0] = sh->lapack_err[1] = 0;
        const int r = in_child(run_group, &gr, 0, desc, sizeof desc);
        ngroups++;
        solves += sh->solves;
        compared += sh->compared;
        for (int p = 0; p < 2; p++)
          if (sh->lapack_err[p] > lerr[p]) lerr[p] = sh->lapack_err[p];
        if (r == CHILD_FAULT) nfault++;
        TU_CHECK(r == CHILD_OK, "nz=%d pattern=%s depth[last]=%d: %s%s", gr.nz,
                 pattern_name[pattern], gr.dl, r == CHILD_FAULT ? "FAULT: " : "", desc);
      }
  }
  printf("%d groups, %ld guarded solves, %ld values compared with reference; "
         "lapack normwise error max %.2g (double), %.2g (single)\n",
         ngroups, solves, compared, lerr[0], lerr[1]);
  TU_CHECK(solves > 0 && compared > 0, "nothing was solved or compared");
  munmap(sh, round_page(sizeof *sh));
  if (tu_failures) {
    printf("%d failures (%d faults)\n", tu_failures, nfault);
    return 1;
  }
  printf("no backend touched memory at or below a column's depth\n");
  return 0;
}
