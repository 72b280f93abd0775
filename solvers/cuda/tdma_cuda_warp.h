/* The warp kernel of the `cuda` backend (solvers/tdma_cuda.cu), written so
 * that the same source also compiles as plain C++ on the host: the CPU test
 * tests/gpu/test_tdma_cuda_emu.cpp runs it with 32 host threads per warp and
 * checks it bitwise against `reference`, so the tiling, the chunking and the
 * depth handling are exercised on every machine, GPU or not.
 *
 * The includer defines, before including this file (tdma_cuda.cu does so for
 * the device; the emulation test for the host):
 *   MM_WDEV              function qualifiers (__device__ __forceinline__)
 *   MM_WARP_SYNC()       __syncwarp() (all 32 lanes always take part)
 *   MM_COPY_ASYNC(d, s)  copy one element global s -> shared d (cp.async)
 *   MM_COPY_COMMIT()     close this lane's group of the copies issued since
 *                        the last one
 *   MM_COPY_WAIT_PRIOR(n)  wait until at most n (0 or 1) of this lane's
 *                        closed groups are still in flight
 *   MM_COPY_WAIT()       close the group and wait for all this lane's copies
 *
 * Method (one warp = 32 adjacent columns, lane j owns column c0 + j):
 *
 * Layout. Column c, level k is element c * nz + k: the 32 columns of a warp
 * are one contiguous block of 32 * nz elements. The warp moves that block
 * between global and shared memory in chunks of `kt` levels: element i of a
 * chunk (0 <= i < 32 * kt) is column j = i / kt, level k0 + i % kt, and lane
 * l handles i = l, l + 32, ...; consecutive lanes thus touch consecutive
 * addresses (runs of kt elements, and for kt = nz the whole block is one
 * run): every load and store is coalesced, none is one-thread-per-column
 * strided. In shared memory the chunk is a tile of 32 rows (columns) of kt
 * levels with an odd row stride (kt or kt + 1), so that the 32 lanes reading
 * "their" row at the same level hit 32 different banks (also for 8-byte
 * elements, where a half-warp's 16 addresses must differ mod 16).
 *
 * Arithmetic. After a chunk is in shared memory, each lane runs its column's
 * Thomas recurrence over the chunk's levels, reading a, b, c (or kappa and
 * the per-level geometry), writing c' over c (or kappa) and d' over the
 * right-hand side in the tile, and carrying c'_{k-1}, d'_{k-1} (and
 * kappa_{k-1}, g_{k-1}) in registers from one chunk to the next. A
 * level's operands are read from the tile while the level before it in the
 * sweep is computed (forward and back), so that shared memory's latency is
 * off the recurrence's chain (6-14 % faster on an H200, 2026-11-30). The
 * operations and their order are those of mm_col_thomas / mm_col_fused
 * (mm_tdma_column.h); the fused coefficients come from mm_col_coeffs itself.
 * Built with --fmad=false (no contraction to FMA) and IEEE division (the
 * nvcc default), the kernel rounds like the CPU `reference`; the host build
 * of this file is checked bitwise against it.
 *
 * Where c' and d' live (the trade-off). The back substitution needs c' and d'
 * of every level, in reverse. The warp has `slots` chunk slots in shared
 * memory, each holding c' and d' (every right-hand side) of one chunk:
 *   - slots >= chunks: the whole column stays on chip; global memory is read
 *     once and written once (the minimum traffic).
 *   - slots < chunks: the last slots - 1 chunks have their own slot; the
 *     earlier ones pass through slot 0 and are spilled after their forward
 *     sweep (d' in place into the right-hand side, which is where the
 *     solution goes anyway; c' into a global workspace with the layout of
 *     the inputs) and read back, coalesced, for the back substitution. The
 *     extra traffic is 2 * (1 + nrhs) values per spilled level, most of which
 *     L2 absorbs as the spilled block of a warp is re-read soon after.
 * More slots = less traffic but more shared memory per warp = fewer warps
 * per SM to hide the latency of the division chain and of the loads. The
 * host picks `slots` (tdma_cuda.cu, mm_cuda_plan below): everything on chip
 * if that still leaves the target number of warps per SM, else as many
 * slots as fit that target. (A per-thread local-memory array would be the
 * same trade-off made by the hardware: local memory is cached in L1 while it
 * fits and spills to L2/DRAM when it does not.)
 *
 * Depths. Lane j's column has depth[c0 + j] wet levels (0: land / halo; lanes
 * past the last column have depth 0). The warp runs to its deepest column;
 * an element is loaded or stored only when its level is wet in its column,
 * so levels at and below a column's depth are never read or written, and a
 * lane past its own depth just skips the arithmetic. A warp of land columns
 * returns at once. */
#ifndef MM_TDMA_CUDA_WARP_H
#define MM_TDMA_CUDA_WARP_H

#include <stddef.h>

#include "mm_tdma.h"
#include "mm_tdma_column.h"

#if defined(__CUDACC__)
#define MM_WHD    __host__ __device__ inline
#define MM_UNROLL _Pragma("unroll")
#else
#define MM_WHD inline
#define MM_UNROLL
#endif

namespace mmcuda {

constexpr int kWarp = 32;
constexpr int kMaxKt = 32; /* levels per chunk, at most */

/* How a call is laid out on the device (chosen by mm_cuda_plan). */
struct Plan {
  int kt;            /* levels per chunk, 1..kMaxKt, <= nz */
  int stride;        /* odd row stride of a tile, kt or kt + 1 */
  int slots;         /* chunk slots per warp, >= 1 */
  int chunks;        /* chunks of a full column: ceil(nz / kt) */
  int warps;         /* warps per block */
  size_t warp_bytes; /* shared memory of one warp */
  int prefetch;      /* 1: the next chunk's loads are issued before a chunk's sweep */
};

/* Byte offsets of one warp's shared memory. */
struct Layout {
  size_t geo, ab, slots, slot_bytes, total;
};

MM_WHD size_t round16(size_t n) {
  return (n + 15) / 16 * 16;
}

/* prefetch: two buffers of the per-chunk arrays that are not slots (the
 * geometry of a fused solve, a and b of a plain one), one per parity of the
 * chunk, so that the next chunk's loads can land while a chunk is swept. */
MM_WHD Layout layout_of(int kt, int stride, int slots, int nrhs, size_t tsize, bool fused,
                        bool prefetch = false) {
  Layout L;
  const size_t tile = (size_t)kWarp * (size_t)stride * tsize, nb = prefetch ? 2 : 1;
  L.geo = 128; /* 32 depths */
  L.ab = L.geo + (fused ? round16(nb * 2 * (size_t)kt * tsize) : 0);
  L.slots = L.ab + (fused ? 0 : nb * 2 * tile);
  L.slot_bytes = (size_t)(1 + nrhs) * tile;
  L.total = round16(L.slots + (size_t)slots * L.slot_bytes);
  return L;
}

/* The warps per SM that a call's plan leaves room for (mm_cuda_plan's
 * warps_per_sm): env_warps when MM_TDMA_CUDA_WARPS_PER_SM sets it (> 0),
 * else 4, for the plain and fused solves and for the fused solve that builds
 * kappa from its right-hand sides (mixing, the model step's) alike: the
 * fastest measured (docs/performance.md, "GPU"). The mixing solve planned
 * for 8 until each level's operands were read one level ahead (2026-11-30):
 * 8 won before it (H100 and H200), 4 since (H200, the step's solve 0.275
 * against 0.292-0.294 ms in five runs of each). */
constexpr int kDefaultWarpsPerSm = 4;
constexpr int kDefaultWarpsPerSmMixing = kDefaultWarpsPerSm; /* one number since 2026-11-30 */
MM_WHD int warps_per_sm_for(int env_warps, bool mixing) {
  return env_warps > 0 ? env_warps : mixing ? kDefaultWarpsPerSmMixing : kDefaultWarpsPerSm;
}

/* Plans for at most this many warps per SM split the levels evenly
 * (even_chunk); plans for more take chunks of kMaxKt (the last one
 * shallower). On an H200 (2026-11-28, nz = 100, double) the even chunks
 * were faster at 4 warps per SM in all three solves (plain 2.456 against
 * 2.639 ms, fused 2.861 against 3.108, the model step's mixing solve 0.332
 * against 0.398) and slower at 8 in all three (2.783 against 2.488, 4.000
 * against 2.965, 0.385 against 0.321): docs/performance.md, "GPU". */
constexpr int kEvenChunksMaxWarps = 4;

/* Levels per chunk when nz levels are split into the fewest chunks of at
 * most kmax levels, as evenly as can be: ceil(nz / ceil(nz / kmax)). */
MM_WHD int even_chunk(int nz, int kmax) {
  const int chunks = (nz + kmax - 1) / kmax;
  return (nz + chunks - 1) / chunks;
}

/* The plan for columns of up to nz levels. smem_sm: shared memory of an SM;
 * smem_block: the most one block may have; warps_per_sm: how many warps the
 * shared memory should leave room for (latency hiding); force_kt /
 * force_slots: > 0 to override (tests, tuning); prefetch: the next chunk's
 * loads in flight during a chunk's sweep (double buffers, layout_of).
 * Returns 0, or -1 when even one slot of one level does not fit. */
inline int mm_cuda_plan(int nz, int nrhs, size_t tsize, bool fused, size_t smem_sm,
                        size_t smem_block, int warps_per_sm, int force_kt, int force_slots, Plan *p,
                        bool prefetch = false) {
  if (nz < 1 || nrhs < 1 || warps_per_sm < 1) return -1;
  const size_t reserve = 1024; /* per block, reserved by the hardware */
  const size_t budget =
      smem_sm / (size_t)warps_per_sm > reserve ? smem_sm / (size_t)warps_per_sm - reserve : 0;
  for (int kt0 = force_kt > 0 ? force_kt : kMaxKt; kt0 >= 1; kt0 /= 2) {
    /* up to kEvenChunksMaxWarps warps per SM, the levels split evenly into
     * chunks of at most kt0 (nz = 100: 4 of 25, not 32 + 32 + 32 + 4,
     * whose last chunk would fill a slot for 4 levels and leave fewer
     * slots for the rest); above, and a forced kt, kt0 as it is */
    const bool even = force_kt <= 0 && warps_per_sm <= kEvenChunksMaxWarps;
    const int kt = even ? even_chunk(nz, kt0) : kt0 < nz ? kt0 : nz;
    const int stride = kt | 1;
    const int chunks = (nz + kt - 1) / kt;
    int slots;
    if (force_slots > 0) {
      slots = force_slots < chunks ? force_slots : chunks;
    } else {
      const Layout all = layout_of(kt, stride, chunks, nrhs, tsize, fused, prefetch);
      if (all.total <= budget) {
        slots = chunks;
      } else {
        const Layout none = layout_of(kt, stride, 0, nrhs, tsize, fused, prefetch);
        slots = budget > none.total ? (int)((budget - none.total) / none.slot_bytes) : 0;
        if (slots < 1) slots = 1;
      }
    }
    const Layout L = layout_of(kt, stride, slots, nrhs, tsize, fused, prefetch);
    if (L.total > smem_block) {
      if (force_kt > 0) return -1;
      continue;
    }
    p->kt = kt;
    p->stride = stride;
    p->slots = slots;
    p->chunks = chunks;
    p->warp_bytes = L.total;
    p->prefetch = prefetch ? 1 : 0;
    p->warps = 1;
    while (p->warps < 4 && (size_t)(2 * p->warps) * L.total <= 48 * 1024)
      p->warps *= 2;
    return 0;
  }
  return -1;
}

/* The operands of one call. Every pointer is a device pointer (host pointers
 * in the emulation); rhs[r] for r < nrhs. */
template <typename T> struct Args {
  size_t ncol;
  int nz;
  const int *depth;
  const T *a, *b, *c;         /* plain solve */
  const T *kappa, *g, *inv_h; /* fused solve */
  T *rhs[MM_TDMA_MAX_RHS];
  T *cpws;                         /* spill workspace of c' (ncol * nz), NULL if no spill */
  mm_tdma_mixing mix;              /* kappa from rhs[0], rhs[1] (MIX solves only; kappa unused) */
  const int *abort;                /* nonzero: a depth was invalid, touch nothing */
  int kt, stride, slots, prefetch; /* the Plan's */
};

MM_WDEV void col_coeffs(int k, int n, const double *kappa, const double *g, const double *inv_h,
                        double *a, double *b, double *c) {
  mm_col_coeffs(k, n, kappa, g, inv_h, a, b, c);
}
MM_WDEV void col_coeffs(int k, int n, const float *kappa, const float *g, const float *inv_h,
                        float *a, float *b, float *c) {
  mm_col_coeffs_f(k, n, kappa, g, inv_h, a, b, c);
}

/* Coefficients of level k of a column of n levels by mm_col_coeffs itself,
 * given kappa and g of levels k-1 (prev) and k (cur) and inv_h of level k:
 * they are placed in two-element windows where mm_col_coeffs finds them
 * (window index 1 is level k for k > 0, index 0 for k = 0; the window's n
 * keeps "k > 0" and "k < n - 1" as they are for the real column). */
template <typename T>
MM_WDEV void coeffs_at(int k, int n, T kprev, T kcur, T gprev, T gcur, T ih, T *a, T *b, T *c) {
  T kw[2], gw[2], hw[2];
  if (k > 0) {
    kw[0] = kprev, kw[1] = kcur;
    gw[0] = gprev, gw[1] = gcur;
    hw[0] = (T)0, hw[1] = ih;
    col_coeffs(1, k < n - 1 ? 3 : 2, kw, gw, hw, a, b, c);
  } else {
    kw[0] = kcur, kw[1] = (T)0;
    gw[0] = gcur, gw[1] = (T)0;
    hw[0] = ih, hw[1] = (T)0;
    col_coeffs(0, n > 1 ? 2 : 1, kw, gw, hw, a, b, c);
  }
}

/* Calls f(j, kk) for every element (column j < ncw, level kk < kt) of a
 * chunk that this lane moves: i = j * kt + kk = lane, lane + 32, ... */
template <typename F> MM_WDEV void for_chunk(int lane, int ncw, int kt, F f) {
  int j = lane / kt, kk = lane % kt;
  const int qj = kWarp / kt, rk = kWarp % kt;
  const int total = ncw * kt;
#if defined(__CUDACC__)
#pragma unroll 4
#endif
  for (int i = lane; i < total; i += kWarp) {
    f(j, kk);
    kk += rk;
    j += qj;
    if (kk >= kt) kk -= kt, j++;
  }
}

/* One warp solves columns [32 * task, 32 * task + 32) (fewer at the end).
 * MIX (fused, double, two right-hand sides): kappa is not read but built
 * from the right-hand sides as they are on entry (mm_tdma_mixing): kappa of
 * level k from levels k and k+1 of the lane's own row of the tile, or, at
 * the last level of a chunk, from level k+1 in global memory (the next
 * chunk, not yet loaded, still as on entry: two loads per lane and chunk,
 * issued before the chunk's sweep, whose sectors L2 keeps for that chunk's
 * load); then the surface term at
 * level 0. The same values and the same order as mm_tdma_fused_mixing of
 * the host backends, so the same bits, and no kappa in memory: the solve
 * moves the 32 bytes per level of the two right-hand sides alone. */
template <typename T, int NRHS, bool FUSED, bool MIX = false>
MM_WDEV void warp_solve(const Args<T> &p, size_t task, int lane, unsigned char *sm) {
  static_assert(!MIX || (FUSED && NRHS == 2), "MIX is a fused solve of two right-hand sides");
  const Layout L = layout_of(p.kt, p.stride, p.slots, NRHS, sizeof(T), FUSED, p.prefetch != 0);
  const size_t c0 = task * (size_t)kWarp;
  if (c0 >= p.ncol || *p.abort) return; /* warp-uniform */
  const int ncw = p.ncol - c0 < (size_t)kWarp ? (int)(p.ncol - c0) : kWarp;
  const size_t nz = (size_t)p.nz;
  const int S = p.stride;

  int *sdep = (int *)sm;
  const int my_d = lane < ncw ? p.depth[c0 + lane] : 0;
  sdep[lane] = my_d;
  MM_WARP_SYNC();
  int dmax = 0;
  for (int j = 0; j < kWarp; j++)
    dmax = sdep[j] > dmax ? sdep[j] : dmax;
  MM_WARP_SYNC();
  if (dmax == 0) return; /* warp-uniform: all land */

  const size_t tile = (size_t)kWarp * (size_t)S;
  /* the per-chunk arrays of chunk q: buffer q % 2 with prefetch, else 0 */
  const int nbuf = p.prefetch ? 2 : 1;
  T *const geo0 = (T *)(sm + L.geo), *const ab0 = (T *)(sm + L.ab);
  T *slots = (T *)(sm + L.slots);
  /* array 0 of a slot is c' (c or kappa on load), arrays 1..NRHS are d'. */
#define MM_TILE(s, r) (slots + ((size_t)(s) * (1 + NRHS) + (size_t)(r)) * tile)

  const int chunks = (dmax + p.kt - 1) / p.kt;
  const int base = chunks > p.slots ? chunks - p.slots : 0; /* chunks < base spill */
  const T *cin = FUSED ? p.kappa : p.c;

  /* The loads of chunk q into its slot and buffers, closed as one group. */
  auto issue = [&](int q) {
    const int k0 = q * p.kt;
    const int kt = dmax - k0 < p.kt ? dmax - k0 : p.kt;
    const int s = q > base ? q - base : 0;
    T *const tc = MM_TILE(s, 0);
    T *const ta = ab0 + (size_t)(q % nbuf) * 2 * tile, *const tb = ta + tile;
    T *const gg = geo0 + (size_t)(q % nbuf) * 2 * (size_t)p.kt, *const gh = gg + p.kt;
    for_chunk(lane, ncw, kt, [&](int j, int kk) {
      if (k0 + kk >= sdep[j]) return;
      const size_t gi = (c0 + (size_t)j) * nz + (size_t)(k0 + kk);
      const size_t si = (size_t)j * S + (size_t)kk;
      if (!MIX) MM_COPY_ASYNC(tc + si, cin + gi);
      if (!FUSED) {
        MM_COPY_ASYNC(ta + si, p.a + gi);
        MM_COPY_ASYNC(tb + si, p.b + gi);
      }
      MM_UNROLL
      for (int r = 0; r < NRHS; r++)
        MM_COPY_ASYNC(MM_TILE(s, 1 + r) + si, p.rhs[r] + gi);
    });
    if (FUSED)
      for (int kk = lane; kk < kt; kk += kWarp) {
        MM_COPY_ASYNC(gg + kk, p.g + k0 + kk);
        MM_COPY_ASYNC(gh + kk, p.inv_h + k0 + kk);
      }
    MM_COPY_COMMIT();
  };

  /* Forward sweep. With prefetch, chunk q + 1's loads are in flight during
   * chunk q's sweep where q + 1 has a slot of its own (q + 1 > base; the
   * spilled chunks share slot 0) and buffers of the other parity. */
  T cp_prev = (T)0, kprev = (T)0, gprev = (T)0;
  T d_prev[NRHS];
  MM_UNROLL
  for (int r = 0; r < NRHS; r++)
    d_prev[r] = (T)0;
  int issued = -1; /* the last chunk whose loads are issued */
  for (int q = 0; q < chunks; q++) {
    const int k0 = q * p.kt;
    const int kt = dmax - k0 < p.kt ? dmax - k0 : p.kt;
    const int s = q > base ? q - base : 0;
    T *tc = MM_TILE(s, 0);
    T *const tile_a = ab0 + (size_t)(q % nbuf) * 2 * tile, *const tile_b = tile_a + tile;
    T *const geo_g = geo0 + (size_t)(q % nbuf) * 2 * (size_t)p.kt, *const geo_h = geo_g + p.kt;
    if (issued < q) issue(q), issued = q;
    if (p.prefetch && q + 1 < chunks && q + 1 > base) {
      issue(q + 1), issued = q + 1;
      MM_COPY_WAIT_PRIOR(1); /* chunk q's group has landed; q + 1's may not */
    } else {
      MM_COPY_WAIT_PRIOR(0);
    }
    MM_WARP_SYNC();

    const int kend = my_d - k0 < kt ? my_d - k0 : kt; /* may be <= 0 */
    const size_t ro = (size_t)lane * S;               /* the lane's row of a tile */
    T *const row = tc + ro;
    T *dtile[NRHS];
    MM_UNROLL
    for (int r = 0; r < NRHS; r++)
      dtile[r] = MM_TILE(s, 1 + r) + ro;
    /* MIX: level k0 + kt of the lane's column (the next chunk's first), the
     * two loads issued before the sweep so that their latency is not on the
     * division chain */
    T t_next = (T)0, s_next = (T)0;
    if (MIX && k0 + kt < my_d) {
      const size_t gn = (c0 + (size_t)lane) * nz + (size_t)(k0 + kt);
      t_next = p.rhs[0][gn];
      s_next = p.rhs[1][gn];
    }
    /* The operands of a level, read from the tile one level ahead: level
     * kk + 1's loads are issued before level kk's results are stored, so
     * that the latency of shared memory is off the division chain (the
     * compiler may not move a load from one tile above a store to another,
     * which it cannot tell apart). op[0..2]: a, b, c (plain) or kappa at
     * op[2] (fused, not MIX); op[3], op[4]: g and inv_h (fused); op[5 + r]:
     * right-hand side r as it is on entry. */
    constexpr int kOps = 5 + NRHS;
    auto load_level = [&](int kk, T *op) {
      if (FUSED) {
        op[2] = MIX ? (T)0 : row[kk];
        op[3] = geo_g[kk];
        op[4] = geo_h[kk];
      } else {
        op[0] = tile_a[ro + (size_t)kk];
        op[1] = tile_b[ro + (size_t)kk];
        op[2] = row[kk];
      }
      MM_UNROLL
      for (int r = 0; r < NRHS; r++)
        op[5 + r] = dtile[r][kk];
    };
    T cur[kOps], nxt[kOps];
    MM_UNROLL
    for (int i = 0; i < kOps; i++)
      nxt[i] = (T)0;
    if (kend > 0) load_level(0, nxt);
    for (int kk = 0; kk < kend; kk++) {
      const int k = k0 + kk;
      MM_UNROLL
      for (int i = 0; i < kOps; i++)
        cur[i] = nxt[i];
      if (kk + 1 < kend) load_level(kk + 1, nxt);
      T a, b, c;
      if (FUSED) {
        T kcur = (T)0;
        if (MIX) {
          /* kappa of level k from levels k and k + 1 as they are on entry:
           * level k + 1 is the next one's operands, or the next chunk's
           * first level (kk + 1 < kend exactly when kk + 1 < kt and
           * k + 1 < my_d) */
          if (k + 1 < my_d) {
            const T t1 = kk + 1 < kt ? nxt[5] : t_next;
            const T s1 = kk + 1 < kt ? nxt[4 + NRHS] : s_next;
            kcur = (T)mm_col_kappa(p.mix.alpha, p.mix.beta, cur[5], t1, cur[4 + NRHS], s1,
                                   p.mix.convect, p.mix.kappa_v, p.mix.kappa_mix);
          }
          if (k == 0 && p.mix.top != 0.0) cur[5] += (T)p.mix.top;
        } else {
          kcur = cur[2];
        }
        const T gcur = cur[3];
        coeffs_at<T>(k, my_d, kprev, kcur, gprev, gcur, cur[4], &a, &b, &c);
        kprev = kcur, gprev = gcur;
      } else {
        a = cur[0];
        b = cur[1];
        c = cur[2];
      }
      const T m = k == 0 ? (T)1 / b : (T)1 / (b - a * cp_prev);
      cp_prev = c * m;
      row[kk] = cp_prev;
      MM_UNROLL
      for (int r = 0; r < NRHS; r++) {
        d_prev[r] = k == 0 ? cur[5 + r] * m : (cur[5 + r] - a * d_prev[r]) * m;
        dtile[r][kk] = d_prev[r];
      }
    }
    MM_WARP_SYNC();

    if (q < base) { /* spill c' and d' of this chunk; slot 0 is needed again */
      for_chunk(lane, ncw, kt, [&](int j, int kk) {
        if (k0 + kk >= sdep[j]) return;
        const size_t gi = (c0 + (size_t)j) * nz + (size_t)(k0 + kk);
        const size_t si = (size_t)j * S + (size_t)kk;
        p.cpws[gi] = tc[si];
        MM_UNROLL
        for (int r = 0; r < NRHS; r++)
          p.rhs[r][gi] = MM_TILE(s, 1 + r)[si];
      });
      MM_WARP_SYNC();
    }
  }

  /* Back substitution, last chunk first. */
  T x[NRHS];
  MM_UNROLL
  for (int r = 0; r < NRHS; r++)
    x[r] = (T)0;
  for (int q = chunks - 1; q >= 0; q--) {
    const int k0 = q * p.kt;
    const int kt = dmax - k0 < p.kt ? dmax - k0 : p.kt;
    const int s = q > base ? q - base : 0;
    T *tc = MM_TILE(s, 0);
    if (q < base) { /* spilled: read c' and d' back */
      for_chunk(lane, ncw, kt, [&](int j, int kk) {
        if (k0 + kk >= sdep[j]) return;
        const size_t gi = (c0 + (size_t)j) * nz + (size_t)(k0 + kk);
        const size_t si = (size_t)j * S + (size_t)kk;
        MM_COPY_ASYNC(tc + si, p.cpws + gi);
        MM_UNROLL
        for (int r = 0; r < NRHS; r++)
          MM_COPY_ASYNC(MM_TILE(s, 1 + r) + si, p.rhs[r] + gi);
      });
      MM_COPY_WAIT();
      MM_WARP_SYNC();
    }

    const int kend = my_d - k0 < kt ? my_d - k0 : kt;
    const size_t ro = (size_t)lane * S;
    const T *const row = tc + ro;
    T *dtile[NRHS];
    MM_UNROLL
    for (int r = 0; r < NRHS; r++)
      dtile[r] = MM_TILE(s, 1 + r) + ro;
    /* c' and d' of level kk - 1 are read while level kk is computed (as in
     * the forward sweep: their latency off the chain of x) */
    T c_nxt = (T)0, d_nxt[NRHS];
    MM_UNROLL
    for (int r = 0; r < NRHS; r++)
      d_nxt[r] = (T)0;
    if (kend > 0) {
      c_nxt = row[kend - 1];
      MM_UNROLL
      for (int r = 0; r < NRHS; r++)
        d_nxt[r] = dtile[r][kend - 1];
    }
    for (int kk = kend - 1; kk >= 0; kk--) {
      const int k = k0 + kk;
      const T c_cur = c_nxt;
      T d_cur[NRHS];
      MM_UNROLL
      for (int r = 0; r < NRHS; r++)
        d_cur[r] = d_nxt[r];
      if (kk > 0) {
        c_nxt = row[kk - 1];
        MM_UNROLL
        for (int r = 0; r < NRHS; r++)
          d_nxt[r] = dtile[r][kk - 1];
      }
      MM_UNROLL
      for (int r = 0; r < NRHS; r++) {
        if (k == my_d - 1) {
          x[r] = d_cur[r];
        } else {
          x[r] = d_cur[r] - c_cur * x[r];
          dtile[r][kk] = x[r];
        }
      }
    }
    MM_WARP_SYNC();

    for_chunk(lane, ncw, kt, [&](int j, int kk) {
      if (k0 + kk >= sdep[j]) return;
      const size_t gi = (c0 + (size_t)j) * nz + (size_t)(k0 + kk);
      const size_t si = (size_t)j * S + (size_t)kk;
      MM_UNROLL
      for (int r = 0; r < NRHS; r++)
        p.rhs[r][gi] = MM_TILE(s, 1 + r)[si];
    });
    MM_WARP_SYNC();
  }
#undef MM_TILE
}

} // namespace mmcuda

#endif
