/* Reproducible sums and the per-rank part of the diagnostics, as static
 * inline functions usable from host and device code (mm_diag.c on the CPU,
 * cuda/mm_device_cuda.cu per thread block on the GPU).
 *
 * mm_rsum is a fixed-point accumulator of six 46-bit limbs, weights 2^92 ...
 * 2^-138 (docs/physics.md, "Diagnostics"): adding a double to it is exact, so
 * a sum is the same bits in any order, over any decomposition, on any device.
 * mm_diag_part is what one rank (or one thread block) has seen of the state:
 * heat and salt sums, extrema, the count and first place of non-finite
 * values and of values outside the physically possible range. Parts merge
 * in any order to the same result. */
#ifndef MM_RSUM_H
#define MM_RSUM_H

#include <math.h>
#include <stdint.h>

#include "mm_cell.h"

#define MM_RSUM_LIMBS           6
#define MM_RSUM_LIMB_BITS       46
#define MM_RSUM_NORMALISE_EVERY (1 << 15)

typedef struct {
  int64_t limb[MM_RSUM_LIMBS]; /* limb i has weight 2^(46 (2 - i)) */
  int pending;                 /* additions since the last carry normalisation */
} mm_rsum;

MM_CELL_FN void mm_rsum_init(mm_rsum *s) {
  for (int i = 0; i < MM_RSUM_LIMBS; i++)
    s->limb[i] = 0;
  s->pending = 0;
}

/* Carry so that limbs 1..5 lie in [0, 2^46) and limb 0 holds the rest. */
MM_CELL_FN void mm_rsum_normalise(mm_rsum *s) {
  for (int i = MM_RSUM_LIMBS - 1; i > 0; i--) {
    const int64_t carry = s->limb[i] >> MM_RSUM_LIMB_BITS; /* floor division */
    s->limb[i] -= carry * ((int64_t)1 << MM_RSUM_LIMB_BITS);
    s->limb[i - 1] += carry;
  }
  s->pending = 0;
}

/* s in sign-magnitude form (normalised, so that no limb cancels another):
 * the total's magnitude, every limb >= 0 (limbs 1..5 below 2^46; limb 0
 * read as uint64_t, for the one magnitude 2^155 it wraps to -2^63); returns
 * the total's sign, -1 or 1 (1 for zero). */
MM_CELL_FN int mm_rsum_magnitude(mm_rsum *s) {
  mm_rsum_normalise(s);
  if (s->limb[0] >= 0) return 1;
  for (int i = 0; i < MM_RSUM_LIMBS; i++) /* through unsigned: -2^63 (a total of -2^155) */
    s->limb[i] = (int64_t)(UINT64_C(0) - (uint64_t)s->limb[i]);
  mm_rsum_normalise(s);
  return -1;
}

/* One limb: q = trunc(r / w) goes into the limb, r loses those bits (exact:
 * w is a power of two and q w has the leading bits of r). */
MM_CELL_FN double mm_rsum_take(mm_rsum *s, int i, double r, double inverse, double weight) {
  const double q = trunc(r * inverse); /* |q| < 2^46 after the first limb */
  s->limb[i] += (int64_t)q;
  return r - q * weight;
}

MM_CELL_FN void mm_rsum_add(mm_rsum *s, double x) {
  double r = x;
  r = mm_rsum_take(s, 0, r, 0x1p-92, 0x1p92);
  r = mm_rsum_take(s, 1, r, 0x1p-46, 0x1p46);
  r = mm_rsum_take(s, 2, r, 1.0, 1.0);
  r = mm_rsum_take(s, 3, r, 0x1p46, 0x1p-46);
  r = mm_rsum_take(s, 4, r, 0x1p92, 0x1p-92);
  (void)mm_rsum_take(s, 5, r, 0x1p138, 0x1p-138);
  if (++s->pending >= MM_RSUM_NORMALISE_EVERY) mm_rsum_normalise(s);
}

/* into += from (both normalised first, so no limb overflows). */
MM_CELL_FN void mm_rsum_merge(mm_rsum *into, const mm_rsum *from) {
  mm_rsum f = *from;
  mm_rsum_normalise(&f);
  mm_rsum_normalise(into);
  for (int i = 0; i < MM_RSUM_LIMBS; i++)
    into->limb[i] += f.limb[i];
  mm_rsum_normalise(into);
}

/* The physically possible range of the state (docs/physics.md,
 * "Physically possible range"): a finite value outside it is a blow-up as
 * much as a NaN. Generous bounds: sea water is ice below -10 degC at any
 * depth of the ocean, and boils above 100 degC at the surface (the
 * configuration's initial temperatures reach 100.5 degC); salinity is >= 0
 * (less a margin for round-off in fresh water) and nowhere in the open
 * ocean near 100 g/kg. */
#define MM_TEMP_MIN (-10.0) /* degC */
#define MM_TEMP_MAX 110.0   /* degC */
#define MM_SALT_MIN (-1.0)  /* g/kg */
#define MM_SALT_MAX 100.0   /* g/kg */

/* Whether a temperature (degC) or a salinity (g/kg) is within the
 * physically possible range: false for NaN. */
MM_CELL_FN int mm_temp_possible(double t) {
  return t >= MM_TEMP_MIN && t <= MM_TEMP_MAX;
}
MM_CELL_FN int mm_salt_possible(double s) {
  return s >= MM_SALT_MIN && s <= MM_SALT_MAX;
}

typedef struct {
  mm_rsum heat, salt; /* sums of T vol (degC m3) and S vol (g/kg m3) over wet cells */
  double ext[4];      /* -max T, min T, -max S, min S over finite wet cells */
  long bad;           /* non-finite wet values */
  long bad_pos;       /* col * nz + k of the first (lowest) of them */
  int bad_var;        /* its variable: 0 temp, 1 salt */
  long out;           /* finite wet values outside the physically possible range */
  long out_pos;       /* col * nz + k of the first (lowest) of them */
  double out_value;   /* its value (degC or g/kg) */
  int out_var;        /* its variable: 0 temp, 1 salt */
} mm_diag_part;

MM_CELL_FN void mm_diag_part_init(mm_diag_part *p) {
  mm_rsum_init(&p->heat);
  mm_rsum_init(&p->salt);
  for (int i = 0; i < 4; i++)
    p->ext[i] = INFINITY;
  p->bad = 0;
  p->bad_pos = -1;
  p->bad_var = -1;
  p->out = 0;
  p->out_pos = -1;
  p->out_var = -1;
  p->out_value = 0.0;
}

/* The wet cell at element pos = col * nz + k: T = t, S = s, volume vol (m3). */
MM_CELL_FN void mm_diag_part_add(mm_diag_part *p, double t, double s, double vol, long pos) {
  if (!isfinite(t) || !isfinite(s)) {
    if (p->bad == 0 || pos < p->bad_pos) {
      p->bad_pos = pos;
      p->bad_var = isfinite(t) ? 1 : 0;
    }
    p->bad++;
    return;
  }
  p->ext[0] = fmin(p->ext[0], -t);
  p->ext[1] = fmin(p->ext[1], t);
  p->ext[2] = fmin(p->ext[2], -s);
  p->ext[3] = fmin(p->ext[3], s);
  const int t_out = !mm_temp_possible(t), s_out = !mm_salt_possible(s);
  if (t_out || s_out) { /* counted, and kept out of the sums: a blow-up */
    if (p->out == 0 || pos < p->out_pos) {
      p->out_pos = pos;
      p->out_var = t_out ? 0 : 1;
      p->out_value = t_out ? t : s;
    }
    p->out += t_out + s_out;
    return; /* (the limbs take |T vol| below 2^155 only) */
  }
  mm_rsum_add(&p->heat, t * vol);
  mm_rsum_add(&p->salt, s * vol);
}

MM_CELL_FN void mm_diag_part_merge(mm_diag_part *into, const mm_diag_part *from) {
  mm_rsum_merge(&into->heat, &from->heat);
  mm_rsum_merge(&into->salt, &from->salt);
  for (int i = 0; i < 4; i++)
    into->ext[i] = fmin(into->ext[i], from->ext[i]);
  if (from->bad && (into->bad == 0 || from->bad_pos < into->bad_pos)) {
    into->bad_pos = from->bad_pos;
    into->bad_var = from->bad_var;
  }
  into->bad += from->bad;
  if (from->out && (into->out == 0 || from->out_pos < into->out_pos)) {
    into->out_pos = from->out_pos;
    into->out_var = from->out_var;
    into->out_value = from->out_value;
  }
  into->out += from->out;
}

#endif
