/* Diagnostics: reproducible global sums (heat and salt content) and tracer
 * extrema, plus the NaN/Inf check folded into the same pass. */
#ifndef MM_DIAG_H
#define MM_DIAG_H

#include <stdint.h>

#include "mm_grid.h"

/* mm_rsum (reproducible sums) and mm_diag_part (what one rank has seen of
 * the state): mm_rsum.h, shared with the GPU kernels. */
#include "mm_rsum.h"

/* Sum over the ranks of comm (collective); the result is the same on all. */
MM_NODISCARD mm_err mm_rsum_allreduce(mm_rsum *s, MPI_Comm comm);

/* The sum's value: its exact fixed-point total rounded to the nearest
 * double, ties to even (as a correctly rounded sum of the values added,
 * math.fsum's, gives where no value had bits below 2^-138). */
double mm_rsum_value(const mm_rsum *s);

typedef struct {
  long step;
  double time;               /* s since start */
  double heat_content;       /* J */
  double salt_content;       /* kg */
  double temp_min, temp_max; /* degC, wet cells */
  double salt_min, salt_max; /* g/kg, wet cells */
  /* first non-finite value found (global): count 0 when all finite */
  long nonfinite;
  int bad_var;             /* 0 temp, 1 salt */
  int bad_i, bad_j, bad_k; /* global indices */
  /* first finite value outside the physically possible range (MM_TEMP_MIN
   * ... in mm_rsum.h), in the same order: count 0 when none */
  long out_of_range;
  int range_var;                 /* 0 temp, 1 salt */
  int range_i, range_j, range_k; /* global indices */
  double range_value;            /* degC or g/kg */
} mm_diag;

/* The diagnostics from this rank's part (collective): sums and extrema over
 * the ranks, the first non-finite value and the first value outside the
 * physically possible range, in rank order. */
MM_NODISCARD mm_err mm_diag_finish(const mm_grid *g, const mm_diag_part *part, double rho0,
                                   double cp, mm_diag *d);

/* Compute the diagnostics of (temp, salt) on grid g (collective). */
MM_NODISCARD mm_err mm_diag_compute(const mm_grid *g, const double *temp, const double *salt,
                                    double rho0, double cp, mm_diag *d);

#endif
