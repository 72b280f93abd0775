/* What the two halves of the `simd` backend share: tdma_simd.c (double
 * precision and the backend's table) and tdma_simd_f.c (single precision),
 * two files so that a parallel build compiles them at once (at -O3 about 76
 * and 155 s of one core, where the one file took 250 s). Not part of the
 * public API. */
#ifndef MM_TDMA_SIMD_H
#define MM_TDMA_SIMD_H

#include "mm_tdma.h"
#include "mm_tdma_column.h"
#include "tdma_internal.h"

#if defined(MINIMODEL_SIMD) && MINIMODEL_SIMD
#define MM_SIMD_BYTES 32
#define MM_SIMD_DESC  "vectorised Thomas across columns (32-byte vectors, tiles of 8/16 columns)"
#else
#define MM_SIMD_BYTES 0 /* one lane */
#define MM_SIMD_DESC  "tiled Thomas across columns, scalar build (MINIMODEL_SIMD=OFF)"
#endif

/* Vectors in flight per tile. */
#ifndef MM_SIMD_NV
#if MM_SIMD_BYTES
#define MM_SIMD_NV 2
#else
#define MM_SIMD_NV 4
#endif
#endif

#if MM_SIMD_BYTES
typedef double mm_vd __attribute__((vector_size(MM_SIMD_BYTES)));
typedef float mm_vf __attribute__((vector_size(MM_SIMD_BYTES)));
#define MM_LD (MM_SIMD_BYTES / 8)
#define MM_LF (MM_SIMD_BYTES / 4)
#else
typedef double mm_vd __attribute__((vector_size(sizeof(double))));
typedef float mm_vf __attribute__((vector_size(sizeof(float))));
#define MM_LD 1
#define MM_LF 1
#endif

/* In-register transposes. r[i][j] is level j of column i on entry, column j
 * of level i on exit (the involution is its own inverse). */
#if MM_SIMD_BYTES == 32 && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
#define MM_SHUF __builtin_shufflevector
/* 4 x 4 doubles: unpack pairs, then swap 128-bit halves. */
static inline __attribute__((always_inline)) void mm_transpose_d(mm_vd r[4]) {
  const mm_vd t0 = MM_SHUF(r[0], r[1], 0, 4, 2, 6), t1 = MM_SHUF(r[0], r[1], 1, 5, 3, 7);
  const mm_vd t2 = MM_SHUF(r[2], r[3], 0, 4, 2, 6), t3 = MM_SHUF(r[2], r[3], 1, 5, 3, 7);
  r[0] = MM_SHUF(t0, t2, 0, 1, 4, 5);
  r[1] = MM_SHUF(t1, t3, 0, 1, 4, 5);
  r[2] = MM_SHUF(t0, t2, 2, 3, 6, 7);
  r[3] = MM_SHUF(t1, t3, 2, 3, 6, 7);
}
/* 8 x 8 floats: unpack, shuffle pairs, swap 128-bit halves (24 shuffles). */
static inline __attribute__((always_inline)) void mm_transpose_f(mm_vf r[8]) {
  mm_vf t[8], s[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = MM_SHUF(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = MM_SHUF(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = MM_SHUF(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    s[i + 1] = MM_SHUF(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    s[i + 2] = MM_SHUF(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    s[i + 3] = MM_SHUF(t[i + 1], t[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = MM_SHUF(s[i], s[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[i + 4] = MM_SHUF(s[i], s[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}
#define MM_TRANSPOSE_D(r) mm_transpose_d(r)
#define MM_TRANSPOSE_F(r) mm_transpose_f(r)
#else
/* Generic element-wise transpose (one lane: nothing to do). */
#define MM_TRANSPOSE_GENERIC(V, L)                                                                 \
  static inline __attribute__((always_inline)) void mm_transpose_##V(V r[L]) {                     \
    for (int i = 0; i < L; i++)                                                                    \
      for (int j = i + 1; j < L; j++) {                                                            \
        __typeof__(r[0][0]) x = r[i][j];                                                           \
        r[i][j] = r[j][i];                                                                         \
        r[j][i] = x;                                                                               \
      }                                                                                            \
  }
MM_TRANSPOSE_GENERIC(mm_vd, MM_LD)
MM_TRANSPOSE_GENERIC(mm_vf, MM_LF)
#define MM_TRANSPOSE_D(r) mm_transpose_mm_vd(r)
#define MM_TRANSPOSE_F(r) mm_transpose_mm_vf(r)
#endif

typedef struct {
  int nz;
  mm_tdma_ws ws; /* per thread: c' and the d' of each right-hand side, of one tile */
} simd_ctx;

/* A thread's block: c' and the nrhs d' of every level of a tile of
 * MM_SIMD_NV vectors of vector_bytes (what mm_run_batch reserves and
 * simd_host_bytes counts) */
static inline size_t simd_tile_bytes(int nz, int nrhs, size_t vector_bytes) {
  return (size_t)(1 + nrhs) * (size_t)nz * MM_SIMD_NV * vector_bytes;
}

/* The single-precision entry points (tdma_simd_f.c), in the table of
 * tdma_simd.c. */
int mm_simd_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                    const float *c, float *const *rhs, int nrhs);
int mm_simd_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                    const float *kappa, float *const *rhs, int nrhs);

#endif
