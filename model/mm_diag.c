#include "mm_diag.h"

#include <math.h>
#include <string.h>

/* limb i has weight 2^(46 (2 - i)) */
#define LIMB_BITS 46
#define RADIX ((int64_t)1 << LIMB_BITS)
#define NORMALISE_EVERY (1 << 15)

void mm_rsum_init(mm_rsum *s) { memset(s, 0, sizeof *s); }

/* Carry so that limbs 1..5 lie in [0, 2^46) and limb 0 holds the rest. */
static void normalise(mm_rsum *s) {
  for (int i = MM_RSUM_LIMBS - 1; i > 0; i--) {
    int64_t carry = s->limb[i] >> LIMB_BITS; /* floor division */
    s->limb[i] -= carry * RADIX;
    s->limb[i - 1] += carry;
  }
  s->pending = 0;
}

void mm_rsum_add(mm_rsum *s, double x) {
  /* limb weights and their inverses: multiplying by a power of two is exact */
  static const double weight[MM_RSUM_LIMBS] = {0x1p92, 0x1p46, 1.0, 0x1p-46, 0x1p-92, 0x1p-138};
  static const double inverse[MM_RSUM_LIMBS] = {0x1p-92, 0x1p-46, 1.0, 0x1p46, 0x1p92, 0x1p138};
  double r = x;
  for (int i = 0; i < MM_RSUM_LIMBS; i++) {
    const double q = trunc(r * inverse[i]); /* |q| < 2^46 after the first limb */
    s->limb[i] += (int64_t)q;
    r -= q * weight[i]; /* exact: removes the leading bits */
  }
  if (++s->pending >= NORMALISE_EVERY) normalise(s);
}

void mm_rsum_allreduce(mm_rsum *s, MPI_Comm comm) {
  normalise(s);
  int64_t total[MM_RSUM_LIMBS];
  MPI_Allreduce(s->limb, total, MM_RSUM_LIMBS, MPI_INT64_T, MPI_SUM, comm);
  memcpy(s->limb, total, sizeof total);
  normalise(s);
}

double mm_rsum_value(const mm_rsum *s) {
  mm_rsum t = *s;
  normalise(&t);
  /* a negative total in sign-magnitude form, so that no limb cancels another */
  const double sign = t.limb[0] < 0 ? -1.0 : 1.0;
  if (sign < 0) {
    for (int i = 0; i < MM_RSUM_LIMBS; i++) t.limb[i] = -t.limb[i];
    normalise(&t);
  }
  /* smallest limbs first; the limbs are the same on every rank, so is this */
  double v = 0.0;
  for (int i = MM_RSUM_LIMBS - 1; i >= 0; i--) v += ldexp((double)t.limb[i], LIMB_BITS * (2 - i));
  return sign * v;
}

void mm_diag_compute(const mm_grid *g, const double *temp, const double *salt, double rho0,
                     double cp, mm_diag *d) {
  const int nz = g->nz;
  mm_rsum heat, salt_sum;
  mm_rsum_init(&heat);
  mm_rsum_init(&salt_sum);
  double ext[4] = {INFINITY, INFINITY, INFINITY, INFINITY}; /* -tmax, tmin, -smax, smin */
  long bad = 0;
  int bad_loc[4] = {-1, -1, -1, -1}; /* var, i, j, k */
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      const int n = g->kmt[c];
      const double *t = temp + c * nz, *s = salt + c * nz;
      for (int k = 0; k < n; k++) {
        if (!isfinite(t[k]) || !isfinite(s[k])) {
          if (!bad) {
            bad_loc[0] = isfinite(t[k]) ? 1 : 0;
            bad_loc[1] = g->i0 + i;
            bad_loc[2] = g->j0 + j;
            bad_loc[3] = k;
          }
          bad++;
          continue;
        }
        mm_rsum_add(&heat, t[k] * g->vol[k]);
        mm_rsum_add(&salt_sum, s[k] * g->vol[k]);
        ext[0] = fmin(ext[0], -t[k]);
        ext[1] = fmin(ext[1], t[k]);
        ext[2] = fmin(ext[2], -s[k]);
        ext[3] = fmin(ext[3], s[k]);
      }
    }
  mm_rsum_allreduce(&heat, g->cart);
  mm_rsum_allreduce(&salt_sum, g->cart);
  double gext[4];
  MPI_Allreduce(ext, gext, 4, MPI_DOUBLE, MPI_MIN, g->cart);
  /* the first bad value in rank order: lowest rank that has one */
  long gbad = 0;
  MPI_Allreduce(&bad, &gbad, 1, MPI_LONG, MPI_SUM, g->cart);
  int who = bad ? g->rank : g->nranks, first = g->nranks;
  MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, g->cart);
  if (gbad) MPI_Bcast(bad_loc, 4, MPI_INT, first, g->cart);

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
}
