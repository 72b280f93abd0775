/* The tile kernel of the `simd` backend, written once for both precisions:
 * tdma_simd.c (double) and tdma_simd_f.c (float) each include this file
 * once with these macros defined:
 *
 *   MM_T     element type (double, float)
 *   MM_V     vector of MM_L elements of MM_T (GCC/Clang vector extension)
 *   MM_L     lanes per vector (1 when MINIMODEL_SIMD is off)
 *   MM_NV    vectors in flight per tile
 *   MM_SUF   suffix of the function and type names (_d, _f)
 *   MM_TRANSPOSE(r)  transposes the MM_L x MM_L block r[MM_L] in place
 *   MM_COL_THOMAS, MM_COL_FUSED  the per-column functions of mm_tdma_column.h
 *
 * Method. A tile is W = MM_L * MM_NV water columns (lane l of vector v is
 * column v*MM_L + l of the tile). The forward sweep goes down the tile in
 * blocks of MM_L levels: MM_L consecutive levels of MM_L columns are loaded
 * as MM_L vectors (one per column, contiguous in memory) and transposed in
 * registers, so that vector j then holds level k0+j of the MM_L columns. The
 * SIMD lanes thus run MM_L independent Thomas recurrences, and the MM_NV
 * vectors of a tile are interleaved so that several divisions are in flight.
 * c' and d' of the tile go to `buf` (per thread, (1 + nrhs) * nz * W
 * elements, in L1 for usual nz); the back substitution reads them, and the
 * solution is transposed back in blocks of MM_L levels and stored in place.
 *
 * Every lane performs exactly the scalar operations of mm_col_thomas /
 * mm_col_fused (mm_tdma_column.h) in the same order (vector division and
 * multiplication round like their scalar forms; no FMA as the project builds
 * with -ffp-contract=off), so the result is bitwise that of `reference`.
 *
 * Columns of different depths in one tile: the tile runs to its deepest
 * column. A lane past its depth gets identity rows (a = c = 0, b = 1, d = 0;
 * kappa = 0 in the fused solve), is never stored, and never reads memory at
 * or below its depth: in a block of levels where some lane of a vector is not
 * wet throughout, each lane is loaded from its column (wet throughout), set
 * to the identity row (dry throughout) or staged element by element (its
 * bottom is inside the block), and stored back likewise. Lanes do not
 * interact, so identity rows cannot change the wet levels. The two places where
 * a column's own bottom matters are handled per lane with a mask: the back
 * substitution restarts (x = d') at the bottom wet level, and the fused solve
 * sets the bottom interface conductance to 0. Tiles whose columns all have
 * the same depth (the common case) skip both masks, and when that depth is
 * not a multiple of MM_L their last block is the overlapping block of the
 * last MM_L levels (no staging). Tiles shallower than one block of levels
 * run the scalar per-column functions (mm_tile_scalar).
 *
 * Memory: the tile reads its columns once (forward sweep) and writes the
 * solution once (back substitution, into lines still in cache); while it
 * computes, the next tile's lines are prefetched (mm_prefetch). */

#define MM_CAT_(a, b) a##b
#define MM_CAT(a, b)  MM_CAT_(a, b)
#define MM_FN(name)   MM_CAT(name, MM_SUF)
#define MM_W          (MM_L * MM_NV)

typedef __typeof__((MM_V){0} < (MM_V){0}) MM_FN(mm_mask);

/* A vector at any element-aligned address. Loads and stores go through this
 * type, not memcpy: GCC expands a 32-byte memcpy into two 16-byte moves on
 * some targets (znver3: measured), and a 32-byte load of two 16-byte stores
 * cannot be store-forwarded, which made the solve 2.1x slower. */
typedef MM_V MM_FN(mm_vu) __attribute__((aligned(sizeof(MM_T)), may_alias));

static inline __attribute__((always_inline)) MM_V MM_FN(mm_loadu)(const MM_T *p) {
  return *(const MM_FN(mm_vu) *)p;
}

static inline __attribute__((always_inline)) void MM_FN(mm_storeu)(MM_T *p, MM_V x) {
  *(MM_FN(mm_vu) *)p = x;
}

/* A tile: which columns, how deep. Lanes >= live are padding: copies of lane
 * live-1 (same reads, same arithmetic) whose results are not stored. */
typedef struct {
  long off[MM_W];  /* element offset of the lane's column (col * nz) */
  int dep[MM_W];   /* wet levels of the lane's column, >= 1 */
  int live;        /* lanes that are stored */
  long next;       /* element offset where the next tile probably starts */
  int nmax;        /* deepest lane */
  int nmin[MM_NV]; /* shallowest lane of each vector */
} MM_FN(mm_tile);

/* The operands of one call. */
typedef struct {
  int fused;             /* 1: coefficients from kappa and the geometry */
  const MM_T *a, *b, *c; /* plain solve */
  const MM_T *kappa;     /* fused solve */
  const MM_T *g, *inv_h; /* fused solve: per-level geometry */
  MM_T *const *rhs;
  int nrhs;
  /* fused solve with kappa from rhs[0], rhs[1] (mm_tdma_mixing; nrhs = 2) */
  int mixing;
  MM_T alpha, beta, kappa_v, kappa_mix, top;
  int convect;
  long nelem; /* ncol * nz: bound of the prefetches */
  int nz;     /* stride between columns */
} MM_FN(mm_job);

/* Software prefetch of the next tile while this one computes. A single core
 * keeps too few misses in flight for the hardware prefetchers alone to hide
 * memory latency behind the arithmetic (measured: compute and transfer times
 * added up). The next tile is, in the common case, the W * nz elements after
 * this tile's last column; at each level of the forward sweep this prefetches
 * W elements of it (a cache line for W * sizeof(MM_T) = 64), so the whole
 * next tile is requested once over the nz levels. The hint is locality 3
 * (prefetcht0: into L1 and L2). With locality 2 (prefetcht1: L2 alone) the
 * solve's time on one thread depended on the copy of the executable that
 * ran: the same bytes, copied to six files, took 12.7 to 20.7 ms at
 * 100000 x 100 (AMD EPYC, docs/performance.md); with locality 3 every copy
 * took 11.7 to 13.5 ms, and no shape measured was slower. */
static inline __attribute__((always_inline)) void MM_FN(mm_prefetch)(const MM_T *base, long next,
                                                                     long k, long nelem) {
  const long i = next + k * MM_W;
  for (long q = 0; q < MM_W; q += 64 / (long)sizeof(MM_T))
    if (i + q < nelem) __builtin_prefetch(base + i + q, 0, 3);
}

/* x in every lane. Written as x - 0 (the scalar operand of a vector
 * operation is broadcast; x - (+0) is x, -0 and NaN included, and the
 * compiler drops it), which compiles to one broadcast where the loop over
 * the lanes took three instructions. */
static inline MM_V MM_FN(mm_splat)(MM_T x) {
  return x - (MM_V){0};
}

/* Level k in every lane, as an integer of the lanes' width: levels are
 * compared as integers, exact at any depth (a float holds every integer only
 * up to 2^24, and a float level past that compared one level early). */
static inline MM_FN(mm_mask) MM_FN(mm_level)(int k) {
  const MM_FN(mm_mask) none = (MM_V){0} != (MM_V){0}; /* (a mask type takes no initialiser) */
  return k + none;
}

/* m ? x : y, lane by lane (bit select, so it is exact for any x, y). */
static inline MM_V MM_FN(mm_select)(MM_FN(mm_mask) m, MM_V x, MM_V y) {
  return (MM_V)((m & (MM_FN(mm_mask))x) | (~m & (MM_FN(mm_mask))y));
}

/* out[j] = level k0+j of the MM_L columns base + off[0..MM_L-1], all wet
 * over the block. */
static inline __attribute__((always_inline)) void
MM_FN(mm_load_block)(const MM_T *restrict base, const long *off, int k0, MM_V out[MM_L]) {
  for (int l = 0; l < MM_L; l++)
    out[l] = MM_FN(mm_loadu)(base + off[l] + k0);
  MM_TRANSPOSE(out);
}

/* Levels k0 .. k0+nl-1 (nl < MM_L) of columns that are all wet down to
 * k0 + nl >= MM_L: the block of the last MM_L wet levels is loaded (it
 * overlaps the previous block) and its last nl vectors kept, so that a
 * uniform tile whose depth is not a multiple of MM_L needs no staging. */
static inline __attribute__((always_inline)) void
MM_FN(mm_load_tail)(const MM_T *restrict base, const long *off, int k0, int nl, MM_V out[MM_L]) {
  MM_V all[MM_L];
  MM_FN(mm_load_block)(base, off, k0 + nl - MM_L, all);
  for (int j = 0; j < nl; j++)
    out[j] = all[MM_L - nl + j];
}

/* The same for columns of any depth: a lane wet over the whole block is
 * loaded from its column, a lane dry over the whole block is `fill` (the
 * identity row), a lane whose bottom falls inside the block is staged
 * element by element (wet levels, then fill). Memory at or below a column's
 * depth is never read. */
static inline __attribute__((always_inline)) void MM_FN(mm_load_lanes)(const MM_T *restrict base,
                                                                       const long *off,
                                                                       const int *dep, int k0,
                                                                       MM_T fill, MM_V out[MM_L]) {
  for (int l = 0; l < MM_L; l++) {
    if (k0 + MM_L <= dep[l]) {
      out[l] = MM_FN(mm_loadu)(base + off[l] + k0);
    } else if (dep[l] <= k0) {
      out[l] = MM_FN(mm_splat)(fill);
    } else {
      MM_T stage[MM_L];
      for (int j = 0; j < MM_L; j++)
        stage[j] = k0 + j < dep[l] ? base[off[l] + k0 + j] : fill;
      out[l] = MM_FN(mm_loadu)(stage);
    }
  }
  MM_TRANSPOSE(out);
}

/* The inverse of mm_load_block for the first `live` columns. */
static inline __attribute__((always_inline)) void
MM_FN(mm_store_block)(MM_T *restrict base, const long *off, int k0, MM_V in[MM_L], int live) {
  MM_TRANSPOSE(in);
  for (int l = 0; l < MM_L && l < live; l++)
    MM_FN(mm_storeu)(base + off[l] + k0, in[l]);
}

/* The inverse of mm_load_lanes: only wet levels of the first `live` lanes. */
static inline __attribute__((always_inline)) void MM_FN(mm_store_lanes)(MM_T *restrict base,
                                                                        const long *off,
                                                                        const int *dep, int k0,
                                                                        MM_V in[MM_L], int live) {
  MM_TRANSPOSE(in);
  for (int l = 0; l < MM_L && l < live; l++) {
    if (k0 + MM_L <= dep[l]) {
      MM_FN(mm_storeu)(base + off[l] + k0, in[l]);
    } else {
      for (int j = 0; j < MM_L && k0 + j < dep[l]; j++)
        base[off[l] + k0 + j] = in[l][j];
    }
  }
}

/* One block of MM_L levels (nl of them: fewer only in the last block) of
 * the forward sweep of mm_tile_run. A function of its own so that the full
 * blocks, nl = MM_L, are compiled with the block size a constant: their
 * loops over the levels unroll and their arrays need no index arithmetic
 * (with nl at run time, most of the instructions of a block went to
 * addresses, counters and stack traffic). */
static inline __attribute__((always_inline)) void
MM_FN(mm_fwd_block)(const MM_FN(mm_job) *restrict jb, const MM_FN(mm_tile) *restrict t,
                    MM_V *restrict buf, const int fused, const int uniform, const int nrhs,
                    const int mixing, const int k0, const int nl, const MM_FN(mm_mask) * dm1,
                    MM_V *cpv, MM_V (*dpv)[MM_NV], MM_V *prodv) {
  const int nmax = t->nmax;
  const int S = 1 + nrhs; /* buf[(k * S + s) * MM_NV + v]: s = 0 c', s = 1 + r d'_r */
  const MM_V zero = MM_FN(mm_splat)(0), one = MM_FN(mm_splat)(1);
  /* A: a (plain) or kappa (fused); B, C: b, c (plain); D: right-hand sides. */
  MM_V A[MM_NV][MM_L], B[MM_NV][MM_L], C[MM_NV][MM_L], D[MM_TDMA_MAX_RHS][MM_NV][MM_L];
  for (int v = 0; v < MM_NV; v++) {
    const long *off = t->off + v * MM_L;
    if (k0 + MM_L <= t->nmin[v]) { /* every lane wet over the whole block */
      if (fused) {
        if (!mixing) MM_FN(mm_load_block)(jb->kappa, off, k0, A[v]);
      } else {
        MM_FN(mm_load_block)(jb->a, off, k0, A[v]);
        MM_FN(mm_load_block)(jb->b, off, k0, B[v]);
        MM_FN(mm_load_block)(jb->c, off, k0, C[v]);
      }
      for (int r = 0; r < nrhs; r++)
        MM_FN(mm_load_block)(jb->rhs[r], off, k0, D[r][v]);
    } else if (uniform && nmax >= MM_L) { /* the last, partial block of a uniform tile */
      if (fused) {
        if (!mixing) MM_FN(mm_load_tail)(jb->kappa, off, k0, nl, A[v]);
      } else {
        MM_FN(mm_load_tail)(jb->a, off, k0, nl, A[v]);
        MM_FN(mm_load_tail)(jb->b, off, k0, nl, B[v]);
        MM_FN(mm_load_tail)(jb->c, off, k0, nl, C[v]);
      }
      for (int r = 0; r < nrhs; r++)
        MM_FN(mm_load_tail)(jb->rhs[r], off, k0, nl, D[r][v]);
    } else { /* some lane ends in or above this block: identity rows past it */
      const int *dep = t->dep + v * MM_L;
      if (fused) {
        if (!mixing) MM_FN(mm_load_lanes)(jb->kappa, off, dep, k0, 0, A[v]);
      } else {
        MM_FN(mm_load_lanes)(jb->a, off, dep, k0, 0, A[v]);
        MM_FN(mm_load_lanes)(jb->b, off, dep, k0, 1, B[v]);
        MM_FN(mm_load_lanes)(jb->c, off, dep, k0, 0, C[v]);
      }
      for (int r = 0; r < nrhs; r++)
        MM_FN(mm_load_lanes)(jb->rhs[r], off, dep, k0, 0, D[r][v]);
    }
    if (mixing) {
      /* kappa of levels k0..k0+nl-1 from rhs[0], rhs[1] at those levels
       * (D) and the levels below them, as mm_cell_kappa computes it; then
       * the surface term, once kappa of level 0 is known. The level below
       * the block: where every lane is wet over the next block, the first
       * vector of that block, loaded and transposed in registers (built
       * lane by lane, the vector would be written to memory element by
       * element and read back whole, a load that store forwarding cannot
       * serve: measured 20% of the solve); otherwise lane by lane from
       * memory, 0 where the column ends within the block. */
      const int kb = k0 + nl;
      MM_V below0, below1;
      if (kb + MM_L <= t->nmin[v]) {
        MM_V next0[MM_L], next1[MM_L];
        MM_FN(mm_load_block)(jb->rhs[0], off, kb, next0);
        MM_FN(mm_load_block)(jb->rhs[1], off, kb, next1);
        below0 = next0[0], below1 = next1[0];
      } else {
        for (int l = 0; l < MM_L; l++) {
          const int wet = kb < t->dep[v * MM_L + l];
          below0[l] = wet ? jb->rhs[0][off[l] + kb] : 0;
          below1[l] = wet ? jb->rhs[1][off[l] + kb] : 0;
        }
      }
      const MM_V malpha = MM_FN(mm_splat)(-jb->alpha), beta = MM_FN(mm_splat)(jb->beta);
      const MM_V kv = MM_FN(mm_splat)(jb->kappa_v), kmix = MM_FN(mm_splat)(jb->kappa_mix);
#pragma GCC unroll 16
      for (int j = 0; j < nl; j++) {
        /* the level below level j is D at j + 1, read in place (copied to
         * an array of its own, the shift became two memcpy calls per
         * block: 15 of 136 instructions per vector and level, callgrind) */
        const MM_V n0 = j + 1 < nl ? D[0][v][j + 1] : below0;
        const MM_V n1 = j + 1 < nl ? D[1][v][j + 1] : below1;
        const MM_V rho = malpha * (D[0][v][j] - n0) + beta * (D[1][v][j] - n1);
        A[v][j] = jb->convect ? MM_FN(mm_select)(rho > zero, kmix, kv) : kv;
      }
      if (k0 == 0 && jb->top != 0) D[0][v][0] = D[0][v][0] + MM_FN(mm_splat)(jb->top);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < nl; j++) {
    const int k = k0 + j;
    const MM_FN(mm_mask) kv = MM_FN(mm_level)(k);
    if (fused) {
      if (!mixing) MM_FN(mm_prefetch)(jb->kappa, t->next, k, jb->nelem);
    } else {
      MM_FN(mm_prefetch)(jb->a, t->next, k, jb->nelem);
      MM_FN(mm_prefetch)(jb->b, t->next, k, jb->nelem);
      MM_FN(mm_prefetch)(jb->c, t->next, k, jb->nelem);
    }
    for (int r = 0; r < nrhs; r++)
      MM_FN(mm_prefetch)(jb->rhs[r], t->next, k, jb->nelem);
    for (int v = 0; v < MM_NV; v++) {
      MM_V a, b, c;
      if (fused) {
        /* mm_col_coeffs: cond_up = kappa[k-1]*g[k-1] (k > 0), cond_dn =
         * kappa[k]*g[k] (k < n-1); a = -cond_up*inv_h[k], c = -cond_dn*inv_h[k],
         * b = (1 - a) - c. kappa[k-1]*g[k-1] is the previous level's product. */
        const MM_V prod = A[v][j] * MM_FN(mm_splat)(jb->g[k]);
        const MM_V h = MM_FN(mm_splat)(jb->inv_h[k]);
        MM_V cond_dn;
        if (uniform)
          cond_dn = k < nmax - 1 ? prod : zero;
        else
          cond_dn = MM_FN(mm_select)(kv < dm1[v], prod, zero);
        const MM_V cond_up = k > 0 ? prodv[v] : zero;
        prodv[v] = prod;
        a = -cond_up * h;
        c = -cond_dn * h;
        b = (one - a) - c;
      } else {
        a = A[v][j];
        b = B[v][j];
        c = C[v][j];
      }
      MM_V *row = buf + (long)k * S * MM_NV + v;
      if (k == 0) {
        const MM_V m = one / b;
        cpv[v] = c * m;
        for (int r = 0; r < nrhs; r++)
          dpv[r][v] = D[r][v][j] * m;
      } else {
        const MM_V m = one / (b - a * cpv[v]);
        cpv[v] = c * m;
        for (int r = 0; r < nrhs; r++)
          dpv[r][v] = (D[r][v][j] - a * dpv[r][v]) * m;
      }
      row[0] = cpv[v];
      for (int r = 0; r < nrhs; r++)
        row[(1 + r) * MM_NV] = dpv[r][v];
    }
  }
}

/* One block of the back substitution of mm_tile_run, bottom block first
 * (nl levels; a constant MM_L for the full blocks, as mm_fwd_block). */
static inline __attribute__((always_inline)) void
MM_FN(mm_bwd_block)(const MM_FN(mm_job) *restrict jb, const MM_FN(mm_tile) *restrict t,
                    const MM_V *restrict buf, const int uniform, const int nrhs, const int k0,
                    const int nl, const int tail, const MM_FN(mm_mask) * dm1, MM_V (*xv)[MM_NV],
                    MM_V (*Xtail)[MM_NV][MM_L]) {
  const int nmax = t->nmax;
  const int S = 1 + nrhs;
#if MM_L == 1
  /* zeroed in the one-lane build only, where GCC cannot see that the levels
   * fill what is stored (-Wmaybe-uninitialized); elsewhere it would cost */
  MM_V X[MM_TDMA_MAX_RHS][MM_NV][MM_L] = {{{{0}}}};
#else
  MM_V X[MM_TDMA_MAX_RHS][MM_NV][MM_L];
#endif
#pragma GCC unroll 16
  for (int j = nl - 1; j >= 0; j--) {
    const int k = k0 + j;
    const MM_FN(mm_mask) kv = MM_FN(mm_level)(k);
    for (int v = 0; v < MM_NV; v++) {
      const MM_V *row = buf + (long)k * S * MM_NV + v;
      const MM_V cp = row[0];
      for (int r = 0; r < nrhs; r++) {
        const MM_V d = row[(1 + r) * MM_NV];
        MM_V x;
        if (k == nmax - 1) {
          x = d;
        } else {
          x = d - cp * xv[r][v];
          if (!uniform) x = MM_FN(mm_select)(kv >= dm1[v], d, x);
        }
        xv[r][v] = x;
        X[r][v][j] = x;
      }
    }
  }
  if (tail && k0 + MM_L > nmax) { /* the partial last block: store it later */
    for (int r = 0; r < nrhs; r++)
      for (int v = 0; v < MM_NV; v++)
        for (int j = 0; j < tail; j++)
          Xtail[r][v][j] = X[r][v][j];
    return;
  }
  for (int v = 0; v < MM_NV; v++) {
    const long *off = t->off + v * MM_L;
    const int live = t->live - v * MM_L;
    if (live <= 0) break;
    if (tail && k0 + 2 * MM_L > nmax) { /* the block above the tail: store both */
      for (int r = 0; r < nrhs; r++) {
        MM_V last[MM_L];
        for (int j = 0; j < MM_L - tail; j++)
          last[j] = X[r][v][tail + j];
        for (int j = 0; j < tail; j++)
          last[MM_L - tail + j] = Xtail[r][v][j];
        MM_FN(mm_store_block)(jb->rhs[r], off, nmax - MM_L, last, live);
      }
    }
    if (k0 + MM_L <= t->nmin[v]) {
      for (int r = 0; r < nrhs; r++)
        MM_FN(mm_store_block)(jb->rhs[r], off, k0, X[r][v], live);
    } else {
      const int *dep = t->dep + v * MM_L;
      for (int r = 0; r < nrhs; r++)
        MM_FN(mm_store_lanes)(jb->rhs[r], off, dep, k0, X[r][v], live);
    }
  }
}

/* One tile. fused, uniform (all lanes the same depth) and nrhs are
 * compile-time constants at every call site (MM_TILE_VARIANTS), so the
 * compiler drops the unused paths and unrolls the right-hand-side loops. */
static inline __attribute__((always_inline)) void
MM_FN(mm_tile_run)(const MM_FN(mm_job) *restrict jb, const MM_FN(mm_tile) *restrict t,
                   MM_V *restrict buf, const int fused, const int uniform, const int nrhs,
                   const int mixing) {
  /* Local copies of the tile and of the job, right-hand-side pointers
   * included. The solution is stored through a type that may alias
   * anything (mm_storeu), so after each store the compiler reloaded the
   * columns' offsets and the pointers from the caller's structures; copies
   * whose address never leaves this function cannot be aliased (8% faster
   * in the model, docs/performance.md). */
  const MM_FN(mm_tile) tcopy = *t;
  MM_T *rhs_local[MM_TDMA_MAX_RHS];
  for (int r = 0; r < nrhs; r++)
    rhs_local[r] = jb->rhs[r];
  MM_FN(mm_job) jcopy = *jb;
  jcopy.rhs = rhs_local;
  t = &tcopy;
  jb = &jcopy;
  const int nmax = t->nmax;
  const MM_V zero = MM_FN(mm_splat)(0);
  MM_FN(mm_mask) dm1[MM_NV]; /* depth - 1 of every lane, for the masks */
  for (int v = 0; v < MM_NV; v++)
    for (int l = 0; l < MM_L; l++)
      dm1[v][l] = t->dep[v * MM_L + l] - 1;

  /* Forward sweep: c', d' of every level into buf. The carried values of
   * level k-1 (zero-initialised only to keep the compiler's flow analysis
   * quiet: level 0 never reads them). */
  MM_V cpv[MM_NV], dpv[MM_TDMA_MAX_RHS][MM_NV], prodv[MM_NV];
  for (int v = 0; v < MM_NV; v++) {
    cpv[v] = prodv[v] = zero;
    for (int r = 0; r < nrhs; r++)
      dpv[r][v] = zero;
  }
  for (int k0 = 0; k0 < nmax; k0 += MM_L) {
    const int rest = nmax - k0;
    if (rest >= MM_L) /* a full block: its size a constant */
      MM_FN(mm_fwd_block)(jb, t, buf, fused, uniform, nrhs, mixing, k0, MM_L, dm1, cpv, dpv, prodv);
    else
      MM_FN(mm_fwd_block)(jb, t, buf, fused, uniform, nrhs, mixing, k0, rest, dm1, cpv, dpv, prodv);
  }

  /* Back substitution, bottom block first: x_k = d'_k - c'_k x_{k+1}, and
   * x = d' at each lane's bottom wet level. */
  MM_V xv[MM_TDMA_MAX_RHS][MM_NV];
  for (int v = 0; v < MM_NV; v++)
    for (int r = 0; r < nrhs; r++)
      xv[r][v] = zero;
  /* A uniform tile's partial last block is stored as the overlapping block of
   * the last MM_L levels once the block above it is known (same values
   * written twice to the overlap). */
  const int tail = uniform && nmax >= MM_L ? nmax % MM_L : 0;
  MM_V Xtail[MM_TDMA_MAX_RHS][MM_NV][MM_L];
  for (int k0 = (nmax - 1) / MM_L * MM_L; k0 >= 0; k0 -= MM_L) {
    if (nmax - k0 >= MM_L)
      MM_FN(mm_bwd_block)(jb, t, buf, uniform, nrhs, k0, MM_L, tail, dm1, xv, Xtail);
    else
      MM_FN(mm_bwd_block)(jb, t, buf, uniform, nrhs, k0, nmax - k0, tail, dm1, xv, Xtail);
  }
}

/* The variants: fused x uniform x nrhs in {1, 2, any}. */
#define MM_TILE_VARIANTS(FUSED, UNIFORM)                                                           \
  switch (jb->nrhs) {                                                                              \
  case 1: MM_FN(mm_tile_run)(jb, t, buf, FUSED, UNIFORM, 1, 0); break;                             \
  case 2: MM_FN(mm_tile_run)(jb, t, buf, FUSED, UNIFORM, 2, 0); break;                             \
  default: MM_FN(mm_tile_run)(jb, t, buf, FUSED, UNIFORM, jb->nrhs, 0); break;                     \
  }

/* The plain solve of a uniform tile (all lanes the same depth n >= MM_L)
 * with one right-hand side: the common case of tdma-bench, of
 * minimodel.tdma.solve and of the JAX call, written as its own small
 * kernel. The general mm_tile_run loads every vector's block before any
 * arithmetic and keeps all of them live, which the compiler spilled to the
 * stack, with the columns' addresses (78 instructions per vector and level
 * in callgrind; this kernel: 42). Here each vector's block is loaded,
 * transposed and swept before the next one's, and the blocks are whole
 * blocks only: when n is not a multiple of MM_L, the last block of the
 * forward sweep is the block of the last MM_L levels, of which the levels
 * already done are skipped, and the back substitution starts with that
 * block, recomputes the levels it shares with the block above (the same
 * operations on the same values) and stores them twice.
 *
 * The arithmetic is that of mm_col_thomas, lane by lane: level 0 runs the
 * general level's formula with a = +0 in place of a[0] (never read) and
 * c' = d' = +0 carried in, and b - (+0) * (+0) = b, d - (+0) * (+0) = d
 * exactly for every b, d (-0 and NaN included), so level 0 is m = 1 / b,
 * c' = c m, d' = d m as in mm_col_thomas. */

/* Forward sweep of vector v over levels kb + j0 .. kb + MM_L - 1 of the
 * block at kb; `first`: the block of level 0. row: buf + v. */
static inline __attribute__((always_inline)) void
MM_FN(mm_plain1_fwd)(const MM_T *restrict a, const MM_T *restrict b, const MM_T *restrict c,
                     const MM_T *restrict d, const long *off, const int kb, const int j0,
                     const int first, MM_V *restrict row, MM_V *cp, MM_V *dp) {
  MM_V A[MM_L], B[MM_L], C[MM_L], D[MM_L];
  MM_FN(mm_load_block)(a, off, kb, A);
  MM_FN(mm_load_block)(b, off, kb, B);
  MM_FN(mm_load_block)(c, off, kb, C);
  MM_FN(mm_load_block)(d, off, kb, D);
  if (first) A[0] = MM_FN(mm_splat)(0);
  const MM_V one = MM_FN(mm_splat)(1);
  MM_V cpv = *cp, dpv = *dp;
#pragma GCC unroll 16
  for (int j = j0; j < MM_L; j++) {
    const MM_V m = one / (B[j] - A[j] * cpv);
    cpv = C[j] * m;
    dpv = (D[j] - A[j] * dpv) * m;
    row[(long)(kb + j) * 2 * MM_NV] = cpv;
    row[(long)(kb + j) * 2 * MM_NV + MM_NV] = dpv;
  }
  *cp = cpv, *dp = dpv;
}

/* The partial last block, j0 = 1 .. MM_L - 1 levels already done: a
 * constant j0 in each case, so that the levels' loop unrolls. */
static inline __attribute__((always_inline)) void
MM_FN(mm_plain1_fwd_last)(const MM_T *restrict a, const MM_T *restrict b, const MM_T *restrict c,
                          const MM_T *restrict d, const long *off, const int kb, const int j0,
                          MM_V *restrict row, MM_V *cp, MM_V *dp) {
  switch (j0) {
#define MM_PLAIN1_CASE(J)                                                                          \
  case J: MM_FN(mm_plain1_fwd)(a, b, c, d, off, kb, J, 0, row, cp, dp); break;
    MM_PLAIN1_CASE(1)
    MM_PLAIN1_CASE(2)
    MM_PLAIN1_CASE(3)
#if MM_L > 4
    MM_PLAIN1_CASE(4)
    MM_PLAIN1_CASE(5)
    MM_PLAIN1_CASE(6)
    MM_PLAIN1_CASE(7)
#endif
#undef MM_PLAIN1_CASE
  default: break;
  }
}

/* Back substitution of vector v over the block at kb, bottom level first
 * (x = d' there when `bottom`), then the block transposed back and stored
 * into the first `live` columns. Carries out x of level kb + carry. */
static inline __attribute__((always_inline)) void
MM_FN(mm_plain1_bwd)(MM_T *restrict d, const long *off, const int kb, const int bottom,
                     const int carry, const MM_V *restrict row, MM_V *x, const int live) {
  MM_V X[MM_L];
  MM_V xv = *x;
#pragma GCC unroll 16
  for (int j = MM_L - 1; j >= 0; j--) {
    const MM_V cpj = row[(long)(kb + j) * 2 * MM_NV];
    const MM_V dpj = row[(long)(kb + j) * 2 * MM_NV + MM_NV];
    xv = bottom && j == MM_L - 1 ? dpj : dpj - cpj * xv;
    X[j] = xv;
  }
  *x = X[carry];
  MM_FN(mm_store_block)(d, off, kb, X, live);
}

static void MM_FN(mm_tile_plain1)(const MM_FN(mm_job) *restrict jb,
                                  const MM_FN(mm_tile) *restrict t, MM_V *restrict buf) {
  const int n = t->nmax;
  const MM_T *restrict a = jb->a, *restrict b = jb->b, *restrict c = jb->c;
  MM_T *restrict d = jb->rhs[0];
  long off[MM_W]; /* a copy that stores through d cannot alias (mm_tile_run) */
  for (int l = 0; l < MM_W; l++)
    off[l] = t->off[l];
  int live[MM_NV]; /* columns stored of each vector */
  for (int v = 0; v < MM_NV; v++) {
    const int left = t->live - v * MM_L;
    live[v] = left > 0 ? left : 0;
  }
  const long next = t->next, nelem = jb->nelem;
  MM_V cp[MM_NV], dp[MM_NV];
  for (int v = 0; v < MM_NV; v++)
    cp[v] = dp[v] = MM_FN(mm_splat)(0);

  /* Forward sweep: c', d' into buf (buf[(2 k + s) * MM_NV + v], s = 0 c',
   * s = 1 d'), the next tile prefetched as in mm_fwd_block. */
  const int q = n / MM_L * MM_L; /* levels of the whole blocks from the top */
  for (int k0 = 0; k0 < q; k0 += MM_L) {
    for (int k = k0; k < k0 + MM_L; k++) {
      MM_FN(mm_prefetch)(a, next, k, nelem);
      MM_FN(mm_prefetch)(b, next, k, nelem);
      MM_FN(mm_prefetch)(c, next, k, nelem);
      MM_FN(mm_prefetch)(d, next, k, nelem);
    }
    if (k0 == 0)
      for (int v = 0; v < MM_NV; v++)
        MM_FN(mm_plain1_fwd)(a, b, c, d, off + v * MM_L, 0, 0, 1, buf + v, cp + v, dp + v);
    else
      for (int v = 0; v < MM_NV; v++)
        MM_FN(mm_plain1_fwd)(a, b, c, d, off + v * MM_L, k0, 0, 0, buf + v, cp + v, dp + v);
  }
  if (q < n) {
    for (int k = q; k < n; k++) {
      MM_FN(mm_prefetch)(a, next, k, nelem);
      MM_FN(mm_prefetch)(b, next, k, nelem);
      MM_FN(mm_prefetch)(c, next, k, nelem);
      MM_FN(mm_prefetch)(d, next, k, nelem);
    }
    const int klast = n - MM_L, done = q - klast; /* the last block; its levels already swept */
    for (int v = 0; v < MM_NV; v++)
      MM_FN(mm_plain1_fwd_last)(a, b, c, d, off + v * MM_L, klast, done, buf + v, cp + v, dp + v);
  }

  /* Back substitution, the block of the bottom level first: x_k = d'_k -
   * c'_k x_{k+1}, x = d' at level n - 1. */
  MM_V x[MM_NV];
  const int kbot = n - MM_L;      /* the bottom block */
  for (int v = 0; v < MM_NV; v++) /* carries x of level q on (kbot + MM_L - 1 = n - 1 when q = n) */
    MM_FN(mm_plain1_bwd)(d, off + v * MM_L, kbot, 1, q < n ? q - kbot : 0, buf + v, x + v, live[v]);
  for (int k0 = q < n ? q - MM_L : q - 2 * MM_L; k0 >= 0; k0 -= MM_L)
    for (int v = 0; v < MM_NV; v++)
      MM_FN(mm_plain1_bwd)(d, off + v * MM_L, k0, 0, 0, buf + v, x + v, live[v]);
}

static void MM_FN(mm_tile_plain)(const MM_FN(mm_job) *restrict jb, const MM_FN(mm_tile) *restrict t,
                                 MM_V *restrict buf, int uniform) {
  if (uniform && jb->nrhs == 1) { /* nmax >= MM_MIN_DEPTH >= MM_L here */
    MM_FN(mm_tile_plain1)(jb, t, buf);
    return;
  }
  if (uniform) {
    MM_TILE_VARIANTS(0, 1)
  } else {
    MM_TILE_VARIANTS(0, 0)
  }
}

static void MM_FN(mm_tile_fused)(const MM_FN(mm_job) *restrict jb, const MM_FN(mm_tile) *restrict t,
                                 MM_V *restrict buf, int uniform) {
  if (jb->mixing) { /* two right-hand sides */
    if (uniform)
      MM_FN(mm_tile_run)(jb, t, buf, 1, 1, 2, 1);
    else
      MM_FN(mm_tile_run)(jb, t, buf, 1, 0, 2, 1);
    return;
  }
  if (uniform) {
    MM_TILE_VARIANTS(1, 1)
  } else {
    MM_TILE_VARIANTS(1, 0)
  }
}
#undef MM_TILE_VARIANTS

/* Columns shallower than one vector of levels would only ever take the
 * staged loads, and a tile of one live column would compute the padding
 * lanes for nothing (W times the work); below this depth, or with one live
 * column, a tile runs mm_col_thomas / mm_col_fused column by column instead
 * (the same arithmetic, so the same bits). */
#define MM_MIN_DEPTH (MM_L > 1 ? MM_L : 8)

/* buf: c' (nz) and kappa (nz) of one column at a time. */
static void MM_FN(mm_tile_scalar)(const MM_FN(mm_job) *restrict jb,
                                  const MM_FN(mm_tile) *restrict t, MM_V *restrict buf) {
  MM_T *cp = (MM_T *)buf, *kap = cp + jb->nz;
  for (int l = 0; l < t->live; l++) {
    if (jb->mixing) { /* kappa of the column, the surface term, then the solve */
      const MM_T *r0 = jb->rhs[0] + t->off[l], *r1 = jb->rhs[1] + t->off[l];
      for (int k = 0; k + 1 < t->dep[l]; k++) {
        const MM_T rho = -jb->alpha * (r0[k] - r0[k + 1]) + jb->beta * (r1[k] - r1[k + 1]);
        kap[k] = jb->convect && rho > 0 ? jb->kappa_mix : jb->kappa_v;
      }
      if (jb->top != 0) jb->rhs[0][t->off[l]] += jb->top;
      MM_COL_FUSED(t->dep[l], kap, jb->g, jb->inv_h, jb->rhs, jb->nrhs, t->off[l], cp);
    } else if (jb->fused)
      MM_COL_FUSED(t->dep[l], jb->kappa + t->off[l], jb->g, jb->inv_h, jb->rhs, jb->nrhs, t->off[l],
                   cp);
    else
      MM_COL_THOMAS(t->dep[l], jb->a + t->off[l], jb->b + t->off[l], jb->c + t->off[l], jb->rhs,
                    jb->nrhs, t->off[l], cp);
  }
}

/* Completes a tile of n >= 1 lanes (pads it, finds its depths) and runs it. */
static void MM_FN(mm_tile_finish)(const MM_FN(mm_job) *restrict jb, MM_FN(mm_tile) *restrict t,
                                  int n, MM_V *restrict buf) {
  for (int l = n; l < MM_W; l++) {
    t->off[l] = t->off[n - 1];
    t->dep[l] = t->dep[n - 1];
  }
  t->live = n;
  t->next = t->off[n - 1] + jb->nz;
  int uniform = 1;
  t->nmax = 0;
  for (int v = 0; v < MM_NV; v++) {
    int lo = t->dep[v * MM_L];
    for (int l = 0; l < MM_L; l++) {
      const int d = t->dep[v * MM_L + l];
      if (d < lo) lo = d;
      if (d > t->nmax) t->nmax = d;
      if (d != t->dep[0]) uniform = 0;
    }
    t->nmin[v] = lo;
  }
  if (t->nmax < MM_MIN_DEPTH || n == 1)
    MM_FN(mm_tile_scalar)(jb, t, buf);
  else if (jb->fused)
    MM_FN(mm_tile_fused)(jb, t, buf, uniform);
  else
    MM_FN(mm_tile_plain)(jb, t, buf, uniform);
}

/* Columns [c0, c1): land columns are skipped, the others go to tiles in
 * order, so a tile is W adjacent wet columns wherever there is no land. */
static void MM_FN(mm_run_range)(const MM_FN(mm_job) *restrict jb, const mm_tdma_batch *bt,
                                size_t c0, size_t c1, MM_V *restrict buf) {
  MM_FN(mm_tile) t;
  int n = 0;
  for (size_t col = c0; col < c1; col++) {
    const int d = bt->depth[col];
    if (d == 0) continue;
    t.off[n] = (long)(col * (size_t)bt->nz);
    t.dep[n] = d;
    if (++n == MM_W) {
      MM_FN(mm_tile_finish)(jb, &t, n, buf);
      n = 0;
    }
  }
  if (n) MM_FN(mm_tile_finish)(jb, &t, n, buf);
}

/* Every wet column of a batch, one after another (mm_tile_scalar). */
static void MM_FN(mm_run_columns)(const MM_FN(mm_job) *restrict jb, const mm_tdma_batch *bt,
                                  MM_V *restrict buf) {
  MM_FN(mm_tile) t;
  t.live = 1;
  for (size_t col = 0; col < bt->ncol; col++)
    if ((t.dep[0] = bt->depth[col]) > 0) {
      t.off[0] = (long)(col * (size_t)bt->nz);
      MM_FN(mm_tile_scalar)(jb, &t, buf);
    }
}

/* A whole batch: chunks of columns shared among the threads. */
static int MM_FN(mm_run_batch)(simd_ctx *s, const mm_tdma_batch *bt, MM_FN(mm_job) * jb) {
  int rc = mm_tdma_check_depths(bt);
  if (rc) return rc;
  int nt = mm_tdma_threads_for(bt->ncol * (size_t)bt->nz);
  jb->nelem = (long)(bt->ncol * (size_t)bt->nz);
  jb->nz = bt->nz;
  /* Chunks of whole tiles, ~16 per thread (dynamic: a noisy core takes fewer). */
  size_t chunk = bt->ncol / ((size_t)nt * 16) / MM_W * MM_W;
  if (chunk < 4 * MM_W) chunk = 4 * MM_W;
  const long nchunk = (long)((bt->ncol + chunk - 1) / chunk);
  if (nchunk < nt) nt = (int)nchunk; /* a thread without a chunk needs no workspace */
  /* A batch of fewer columns than half a tile (one column alone, too) runs
   * column by column (mm_tile_scalar: the same bits): a tile's workspace,
   * for W columns, would exceed the batch's own arrays (two float32
   * columns of 2e7 levels took 2.4 GB beside their 0.64 GB). Deep columns
   * pay for it in time where the workspace is reused (docs/performance.md,
   * "The workspace of a call"). */
  const int by_column = bt->ncol == 1 || bt->ncol < MM_W / 2; /* on one thread: one chunk */
  /* c' and the nrhs d' of every level of a tile (buf in mm_tile_finish);
   * column by column, c' and kappa of one column */
  const size_t bytes = by_column ? 2 * (size_t)bt->nz * sizeof(MM_T)
                                 : simd_tile_bytes(bt->nz, jb->nrhs, sizeof(MM_V));
  if ((rc = mm_tdma_ws_reserve(&s->ws, nt, bytes))) return rc;
  if (by_column) {
    MM_FN(mm_run_columns)(jb, bt, mm_tdma_ws_block(&s->ws, 0));
    return MM_TDMA_OK;
  }
  if (nt == 1) { /* no parallel region: it costs more than a small batch */
    MM_FN(mm_run_range)(jb, bt, 0, bt->ncol, mm_tdma_ws_block(&s->ws, 0));
    return MM_TDMA_OK;
  }
#pragma omp parallel num_threads(nt)
  {
    MM_V *buf = mm_tdma_ws_block(&s->ws, mm_tdma_thread_num());
#pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < nchunk; i++) {
      const size_t c0 = (size_t)i * chunk;
      const size_t c1 = c0 + chunk < bt->ncol ? c0 + chunk : bt->ncol;
      MM_FN(mm_run_range)(jb, bt, c0, c1, buf);
    }
  }
  return MM_TDMA_OK;
}

#undef MM_W
#undef MM_MIN_DEPTH
