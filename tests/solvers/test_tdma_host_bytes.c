/* mm_tdma_host_bytes against what each host backend's solver holds: the
 * memory check of the model (mm_grid_memory_bytes) adds this figure, so an
 * estimate short of the workspace lets a run through that does not fit, and
 * one far above it refuses runs that do. For every host backend with a
 * host_bytes, on 1 and 3 threads and nz 7, 64 and 1000: the bytes in use by the
 * C allocator (mallinfo2) after the solver is made and has solved T and S
 * every way the model and the Python package call it (plain and fused, both
 * precisions, the mixing solve) minus those before, against the figure:
 * never less, and at most a few small structures more. Also: "auto" reports
 * its backend's figure, and a name mm_tdma_create refuses reports 0.
 * Exit 77 (skipped) where mallinfo2 does not see the allocator (a
 * sanitizer's own). */
#include <malloc.h>

#include "tdma_test_util.h"

/* Bytes in use by malloc: arena chunks and mmapped blocks. */
static size_t in_use(void) {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

/* Run every call of two right-hand sides that the backend has on batch t. */
static int exercise(mm_tdma *s, const tu_batch *t) {
  const mm_tdma_backend *be = mm_tdma_backend_of(s);
  mm_tdma_batch bt = {t->ncol, t->nz, t->depth};
  mm_tdma_geometry geo = {t->inv_h, t->g};
  mm_tdma_geometry_f geof = {t->inv_hf, t->gf};
  double *rhs[2] = {t->rhs[0], t->rhs[1]};
  float *rhsf[2] = {t->rhsf[0], t->rhsf[1]};
  int rc = mm_tdma_solve(s, &bt, t->a, t->b, t->c, rhs, 2);
  if (!rc) rc = mm_tdma_fused(s, &bt, &geo, t->kappa, rhs, 2);
  if (!rc && be->solve_f) rc = mm_tdma_solve_f(s, &bt, t->af, t->bf, t->cf, rhsf, 2);
  if (!rc && be->fused_f) rc = mm_tdma_fused_f(s, &bt, &geof, t->kappaf, rhsf, 2);
  if (!rc && be->fused_mixing) {
    const mm_tdma_mixing mix = tu_mixing_params(1, 0.5);
    rc = mm_tdma_fused_mixing(s, &bt, &geo, &mix, rhs);
  }
  /* one column alone, then one right-hand side: never more than above */
  mm_tdma_batch one = {1, t->nz, t->depth};
  if (!rc) rc = mm_tdma_solve(s, &one, t->a, t->b, t->c, rhs, 2);
  if (!rc) rc = mm_tdma_solve(s, &bt, t->a, t->b, t->c, rhs, 1);
  return rc;
}

int main(void) {
  /* does mallinfo2 see this allocator? */
  const size_t before = in_use();
  void *probe = malloc(1 << 20);
  const size_t after = in_use();
  free(probe);
  if (!probe || after < before + (1 << 20)) {
    printf("skipped: mallinfo2 does not count this process's allocations\n");
    return 77;
  }

  tu_rng rng = {2718};
  int checked = 0;
  for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
    const mm_tdma_backend *be = *pb;
    if (be->device_memory || (be->available && !be->available())) continue;
    if (!be->host_bytes) {
      TU_CHECK(0, "%s: a host backend without host_bytes (the model's memory check needs it)",
               be->name);
      continue;
    }
    for (int threads = 1; threads <= 3; threads += 2) {
      tu_set_threads(threads);
      const int nzs[] = {7, 64, 1000};
      for (int iz = 0; iz < 3; iz++) {
        const int nz = nzs[iz];
        /* enough unknowns for every thread to take a chunk (parallel from
         * 32768 unknowns, chunks of at least 32 columns) */
        const size_t ncol = 400000 / (size_t)nz + 13;
        tu_batch t;
        tu_batch_make(&t, &rng, ncol, nz, 2, NULL);
        t.depth[0] = nz; /* the one-column call: a full column */
        /* a first solver, so that the threads and their runtime exist */
        mm_tdma *warm = NULL;
        int rc = mm_tdma_create(be->name, nz, 0, &warm);
        if (!rc) rc = exercise(warm, &t);
        mm_tdma_destroy(warm);
        TU_CHECK(rc == MM_TDMA_OK, "%s: warm-up: %s", be->name, mm_tdma_strerror(rc));

        const size_t used0 = in_use();
        mm_tdma *s = NULL;
        rc = mm_tdma_create(be->name, nz, 0, &s);
        if (!rc) rc = exercise(s, &t);
        const size_t used1 = in_use();
        mm_tdma_destroy(s);
        TU_CHECK(rc == MM_TDMA_OK, "%s: %s", be->name, mm_tdma_strerror(rc));
        const size_t held = used1 > used0 ? used1 - used0 : 0;
        const size_t said = mm_tdma_host_bytes(be->name, nz, 0, 2, threads);
        TU_CHECK(said == be->host_bytes(nz, 2, threads), "%s: mm_tdma_host_bytes %zu, backend %zu",
                 be->name, said, be->host_bytes(nz, 2, threads));
        /* the mm_tdma and context structures and chunk headers; a block
         * mapped on its own (from 128 KiB) is rounded to pages and aligned */
        const size_t slack = 2048 + (said >= 65536 ? 8192 : 0);
        TU_CHECK(held <= said + slack && said <= held,
                 "%s, nz %d, %d thread%s: holds %zu bytes, reports %zu", be->name, nz, threads,
                 threads == 1 ? "" : "s", held, said);
        printf("%-10s nz %2d threads %d: holds %9zu bytes, reports %9zu\n", be->name, nz, threads,
               held, said);
        checked++;
        tu_batch_free(&t);
      }
    }
  }
  TU_CHECK(checked >= 3 * 6, "only %d backend cases checked", checked);

  /* auto: its backend's figure; refused names and arguments: 0 */
  mm_tdma *s = NULL;
  if (mm_tdma_create("auto", 50, 0, &s) == MM_TDMA_OK) {
    const char *name = mm_tdma_backend_of(s)->name;
    TU_CHECK(mm_tdma_host_bytes("auto", 50, 0, 2, 2) == mm_tdma_host_bytes(name, 50, 0, 2, 2),
             "auto: %zu, its backend %s: %zu", mm_tdma_host_bytes("auto", 50, 0, 2, 2), name,
             mm_tdma_host_bytes(name, 50, 0, 2, 2));
    TU_CHECK(mm_tdma_host_bytes("auto", 50, 0, 2, 2) > 0, "auto reports nothing");
  }
  mm_tdma_destroy(s);
  TU_CHECK(mm_tdma_host_bytes("no-such-solver", 50, 0, 2, 1) == 0, "an unknown name reports bytes");
  TU_CHECK(mm_tdma_host_bytes("simd", 50, 1, 2, 1) == 0,
           "a host backend on the device reports bytes");
  TU_CHECK(mm_tdma_host_bytes("simd", 0, 0, 2, 1) == 0, "nz = 0 reports bytes");
  TU_CHECK(mm_tdma_host_bytes("simd", 50, 0, 0, 1) == 0, "nrhs = 0 reports bytes");
  /* more threads, more bytes (simd: a workspace block per thread) */
  TU_CHECK(mm_tdma_host_bytes("simd", 50, 0, 2, 4) == 4 * mm_tdma_host_bytes("simd", 50, 0, 2, 1),
           "simd on 4 threads: %zu, on 1: %zu", mm_tdma_host_bytes("simd", 50, 0, 2, 4),
           mm_tdma_host_bytes("simd", 50, 0, 2, 1));
  if (tu_failures) {
    fprintf(stderr, "%d failure(s)\n", tu_failures);
    return 1;
  }
  printf("host bytes: %d cases agree\n", checked);
  return 0;
}
