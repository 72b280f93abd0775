/* The face fluxes of mm_cell.h (mm_face_flux_dir), which the CPU step and
 * the GPU kernels share, against the superbee limiter written as in
 * docs/physics.md, bit for bit (sign of zero included):
 *   B(a, b) = sign(b) max(min(2|a|, |b|), min(|a|, 2|b|)) where a and b
 *             are both > 0 or both < 0, and 0 otherwise,
 * over every choice of the four cells' tracer values from a set with zeros
 * of both signs, tiny values (whose products underflow), huge ones and
 * every sign pattern, both signs of the transport, wet and dry far faces,
 * and each known direction of the transport. The loop over the cases runs
 * like the model's loop over levels (built with -fno-trapping-math, as
 * mm_physics.c is, so the compiler may vectorise it). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_cell.h"
#include "mm_test.h"

static double superbee(double a, double b) {
  if (!((a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0))) return 0.0;
  const double x = fabs(a), y = fabs(b);
  const double m = fmax(fmin(2.0 * x, y), fmin(x, 2.0 * y));
  return b > 0.0 ? m : -m;
}

/* The fluxes as docs/physics.md writes them, in the model's order of
 * operations: fa = u (t_u + 0.5 (1 - |u| dt_area) B), fd = -kh (t_r - t_l).
 * *underflow: B is not 0 while a b rounds to 0 (superbee). */
static void reference(int scheme, double u, double t_ll, double t_l, double t_r, double t_rr,
                      int wet_ll, int wet_rr, double dt_area, double kh, double *fa, double *fd,
                      int *limited, int *underflow) {
  const int pos = u >= 0.0;
  const double tu = pos ? t_l : t_r, td = pos ? t_r : t_l, tuu = pos ? t_ll : t_rr;
  const int wet_uu = pos ? wet_ll : wet_rr;
  *limited = *underflow = 0;
  if (scheme == MM_CELL_ADV_UPWIND) {
    *fa = u * tu;
  } else {
    const double a = wet_uu ? tu - tuu : 0.0, b = td - tu;
    const double half_1mc = 0.5 - fabs(u) * (0.5 * dt_area), B = superbee(a, b);
    *fa = u * (tu + half_1mc * B);
    *limited = B != 0.0;
    *underflow = B != 0.0 && a * b == 0.0;
  }
  *fd = -kh * (t_r - t_l);
}

static int same_bits(double x, double y) {
  uint64_t a, b;
  memcpy(&a, &x, sizeof a);
  memcpy(&b, &y, sizeof b);
  return a == b;
}

int main(void) {
  /* 1e-200: the product of two such differences underflows to 0 */
  const double v[] = {-3.0, -1.0, -0.5, -1e-200, -0.0, 0.0, 1e-200, 0.25, 1.0, 2.0, 1e300};
  const double speeds[] = {-0.3, -0.0, 0.0, 0.7};
  enum { NV = sizeof v / sizeof v[0], NU = sizeof speeds / sizeof speeds[0] };
  const long n = (long)NV * NV * NV * NV * NU * 4;
  double *t_ll = malloc(n * sizeof(double)), *t_l = malloc(n * sizeof(double));
  double *t_r = malloc(n * sizeof(double)), *t_rr = malloc(n * sizeof(double));
  double *u = malloc(n * sizeof(double)), *fa = malloc(n * sizeof(double));
  double *fd = malloc(n * sizeof(double));
  long *wet_ll = malloc(n * sizeof(long)), *wet_rr = malloc(n * sizeof(long));
  if (!t_ll || !t_l || !t_r || !t_rr || !u || !fa || !fd || !wet_ll || !wet_rr) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  long q = 0;
  for (int i0 = 0; i0 < NV; i0++)
    for (int i1 = 0; i1 < NV; i1++)
      for (int i2 = 0; i2 < NV; i2++)
        for (int i3 = 0; i3 < NV; i3++)
          for (int s = 0; s < NU; s++)
            for (int w = 0; w < 4; w++, q++) {
              t_ll[q] = v[i0], t_l[q] = v[i1], t_r[q] = v[i2], t_rr[q] = v[i3];
              u[q] = speeds[s], wet_ll[q] = w & 1, wet_rr[q] = w >> 1;
            }
  const double dt_area = 0.125, kh = 3.0;
  long checked = 0, underflow = 0, limited = 0;
  for (int scheme = MM_CELL_ADV_UPWIND; scheme <= MM_CELL_ADV_SUPERBEE; scheme++) {
    /* the transport's sign compared per case (MM_CELL_DIR_ANY) ... */
    for (long k = 0; k < n; k++)
      mm_face_flux_dir(scheme, MM_CELL_DIR_ANY, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], wet_ll[k],
                       wet_rr[k], dt_area, kh, &fa[k], &fd[k]);
    for (long k = 0; k < n; k++) {
      double ea, ed;
      int lim, under;
      reference(scheme, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], (int)wet_ll[k], (int)wet_rr[k],
                dt_area, kh, &ea, &ed, &lim, &under);
      TEST_CHECK(same_bits(fa[k], ea) && same_bits(fd[k], ed),
                 "scheme %d, u %g, t %g %g %g %g, wet %ld %ld: fa %.17g fd %.17g, expected %.17g "
                 "%.17g",
                 scheme, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], wet_ll[k], wet_rr[k], fa[k], fd[k],
                 ea, ed);
      checked++, limited += lim, underflow += under;
    }
    /* ... and known for the whole loop: the same bits */
    for (int dir = MM_CELL_DIR_POS; dir <= MM_CELL_DIR_NEG; dir++)
      for (long k = 0; k < n; k++) {
        const int pos = u[k] >= 0.0;
        if (pos != (dir == MM_CELL_DIR_POS)) continue;
        double ea, ed, xa, xd;
        int lim, under;
        mm_face_flux_dir(scheme, dir, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], wet_ll[k], wet_rr[k],
                         dt_area, kh, &xa, &xd);
        reference(scheme, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], (int)wet_ll[k], (int)wet_rr[k],
                  dt_area, kh, &ea, &ed, &lim, &under);
        TEST_CHECK(same_bits(xa, ea) && same_bits(xd, ed),
                   "scheme %d, direction %d, u %g, t %g %g %g %g: fa %.17g, expected %.17g", scheme,
                   dir, u[k], t_ll[k], t_l[k], t_r[k], t_rr[k], xa, ea);
        checked++;
      }
  }
  /* the cases reach the limiter, and the products that underflow */
  TEST_CHECK(limited > 1000 && underflow > 0, "%ld limited faces, %ld with an underflowing a b",
             limited, underflow);
  printf("%ld face fluxes checked; %ld superbee faces limited, %ld of them with a b underflowing\n",
         checked, limited, underflow);
  free(t_ll), free(t_l), free(t_r), free(t_rr), free(u), free(fa), free(fd), free(wet_ll),
      free(wet_rr);
  return mm_test_failures ? 1 : 0;
}
