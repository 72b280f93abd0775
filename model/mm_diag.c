#include "mm_diag.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

mm_err mm_rsum_allreduce(mm_rsum *s, MPI_Comm comm) {
  mm_rsum_normalise(s);
  int64_t total[MM_RSUM_LIMBS];
  MM_MPI(MPI_Allreduce(s->limb, total, MM_RSUM_LIMBS, MPI_INT64_T, MPI_SUM, comm));
  memcpy(s->limb, total, sizeof total);
  mm_rsum_normalise(s);
  return MM_OK;
}

double mm_rsum_value(const mm_rsum *s) {
  mm_rsum t = *s;
  const double sign = mm_rsum_magnitude(&t);
  /* The magnitude as 46-bit digits, most significant first: limb 0 split in
   * two (it may hold up to 63 bits), then limbs 1..5; digit d has weight
   * 2^(46 (3 - d)). */
  const uint64_t mask = ((uint64_t)1 << MM_RSUM_LIMB_BITS) - 1;
  uint64_t digit[MM_RSUM_LIMBS + 1];
  digit[0] = (uint64_t)t.limb[0] >> MM_RSUM_LIMB_BITS;
  digit[1] = (uint64_t)t.limb[0] & mask;
  for (int i = 1; i < MM_RSUM_LIMBS; i++)
    digit[i + 1] = (uint64_t)t.limb[i];
  int d = 0;
  while (d <= MM_RSUM_LIMBS && digit[d] == 0)
    d++;
  if (d > MM_RSUM_LIMBS) return 0.0;
  /* its leading 64 bits (fewer where it has fewer) into `top`, whose last
   * bit has weight 2^exponent, and whether any bit below them is set */
  uint64_t top = 0;
  int bits = 0, exponent = 0;
  bool sticky = false;
  for (int width = 64 - __builtin_clzll(digit[d]); d <= MM_RSUM_LIMBS;
       d++, width = MM_RSUM_LIMB_BITS) {
    if (bits == 64) {
      sticky |= digit[d] != 0;
    } else if (bits + width <= 64) {
      top = (top << width) | digit[d];
      bits += width;
      exponent = MM_RSUM_LIMB_BITS * (3 - d);
    } else { /* the digit's leading bits complete `top`; the rest are below */
      const int rest = width - (64 - bits);
      top = (top << (64 - bits)) | (digit[d] >> rest);
      bits = 64;
      exponent = MM_RSUM_LIMB_BITS * (3 - d) + rest;
      sticky |= (digit[d] & (((uint64_t)1 << rest) - 1)) != 0;
    }
  }
  /* rounded to 53 bits, to nearest, ties to even: the exact sum's double,
   * as a correctly rounded sum of the same values (math.fsum) gives */
  if (bits > 53) {
    const int drop = bits - 53;
    const uint64_t half = (uint64_t)1 << (drop - 1), below = top & ((half << 1) - 1);
    top >>= drop;
    exponent += drop;
    if (below > half || (below == half && (sticky || (top & 1)))) top++; /* 2^53 stays exact */
  }
  return sign * ldexp((double)top, exponent);
}

mm_err mm_diag_compute(const mm_grid *g, const double *temp, const double *salt, double rho0,
                       double cp, mm_diag *d) {
  const int nz = g->nz;
  mm_diag_part part;
  mm_diag_part_init(&part);
  /* a part per OpenMP thread, merged exactly: the same bits for any number
   * of threads */
#pragma omp parallel
  {
    mm_diag_part mine;
    mm_diag_part_init(&mine);
#pragma omp for schedule(static) nowait
    for (int j = 0; j < g->nyl; j++)
      for (int i = 0; i < g->nxl; i++) {
        const size_t c = mm_col(g, i, j);
        const double *t = temp + c * nz, *s = salt + c * nz;
        for (int k = 0; k < g->kmt[c]; k++)
          mm_diag_part_add(&mine, t[k], s[k], g->vol[k], (long)(c * nz) + k);
      }
#pragma omp critical(mm_diag_merge)
    mm_diag_part_merge(&part, &mine);
  }
  return mm_diag_finish(g, &part, rho0, cp, d);
}

mm_err mm_diag_finish(const mm_grid *g, const mm_diag_part *part, double rho0, double cp,
                      mm_diag *d) {
  mm_rsum heat = part->heat, salt_sum = part->salt;
  MM_CHECK(mm_rsum_allreduce(&heat, g->cart));
  MM_CHECK(mm_rsum_allreduce(&salt_sum, g->cart));
  double gext[4];
  MM_MPI(MPI_Allreduce(part->ext, gext, 4, MPI_DOUBLE, MPI_MIN, g->cart));
  /* the first bad value in rank order: lowest rank that has one; likewise
   * the first value outside the possible range */
  const long mine[2] = {part->bad, part->out};
  long count[2] = {0, 0};
  MM_MPI(MPI_Allreduce(mine, count, 2, MPI_LONG, MPI_SUM, g->cart));
  const long gbad = count[0];
  const int who[2] = {part->bad ? g->rank : g->nranks, part->out ? g->rank : g->nranks};
  int first[2] = {g->nranks, g->nranks};
  MM_MPI(MPI_Allreduce(who, first, 2, MPI_INT, MPI_MIN, g->cart));
  int bad_loc[4] = {-1, -1, -1, -1}; /* var, i, j, k (global) */
  if (part->bad) {
    const long col = part->bad_pos / g->nz;
    bad_loc[0] = part->bad_var;
    bad_loc[1] = g->i0 + (int)(col % g->nxh) - MM_HALO;
    bad_loc[2] = g->j0 + (int)(col / g->nxh) - MM_HALO;
    bad_loc[3] = (int)(part->bad_pos % g->nz);
  }
  if (gbad) MM_MPI(MPI_Bcast(bad_loc, 4, MPI_INT, first[0], g->cart));
  double out_loc[5] = {-1, -1, -1, -1, 0.0}; /* var, i, j, k (global), value */
  if (part->out) {
    const long col = part->out_pos / g->nz;
    out_loc[0] = part->out_var;
    out_loc[1] = g->i0 + (int)(col % g->nxh) - MM_HALO;
    out_loc[2] = g->j0 + (int)(col / g->nxh) - MM_HALO;
    out_loc[3] = (int)(part->out_pos % g->nz);
    out_loc[4] = part->out_value;
  }
  if (count[1]) MM_MPI(MPI_Bcast(out_loc, 5, MPI_DOUBLE, first[1], g->cart));

  d->heat_content = rho0 * cp * mm_rsum_value(&heat);
  d->salt_content = rho0 / 1000.0 * mm_rsum_value(&salt_sum);
  d->temp_max = -gext[0];
  d->temp_min = gext[1];
  d->salt_max = -gext[2];
  d->salt_min = gext[3];
  d->nonfinite = gbad;
  d->bad_var = bad_loc[0];
  d->bad_i = bad_loc[1];
  d->bad_j = bad_loc[2];
  d->bad_k = bad_loc[3];
  d->out_of_range = count[1];
  d->range_var = (int)out_loc[0];
  d->range_i = (int)out_loc[1];
  d->range_j = (int)out_loc[2];
  d->range_k = (int)out_loc[3];
  d->range_value = out_loc[4];
  return MM_OK;
}
