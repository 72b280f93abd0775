/* The reproducible sum: exact and independent of order and decomposition. */
#include <math.h>
#include <stdlib.h>

#include "mm_diag.h"
#include "mm_test.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  enum { N = 100000 };
  double *x = malloc(N * sizeof *x);
  srand(7);
  for (int i = 0; i < N; i++) {
    double r = (double)rand() / RAND_MAX - 0.5;
    x[i] = ldexp(r, (rand() % 60) - 20); /* magnitudes 2^-21 .. 2^39 */
  }
  mm_rsum a, b;
  mm_rsum_init(&a);
  mm_rsum_init(&b);
  for (int i = 0; i < N; i++)
    mm_rsum_add(&a, x[i]);
  for (int i = N - 1; i >= 0; i--)
    mm_rsum_add(&b, x[i]);
  const double va = mm_rsum_value(&a), vb = mm_rsum_value(&b);
  TEST_CHECK(va == vb, "order changed the sum: %.17g vs %.17g", va, vb);
  /* a plain double sum in the two orders differs: the test is not vacuous */
  double fa = 0, fb = 0;
  for (int i = 0; i < N; i++)
    fa += x[i];
  for (int i = N - 1; i >= 0; i--)
    fb += x[i];
  TEST_CHECK(fabs(va - fa) < 1e-6 * fabs(fa) + 1e-3, "sum %.17g far from %.17g", va, fa);
  printf("plain sums differ by %.3e; reproducible sum %.17g\n", fa - fb, va);
  /* cancellation that plain doubles lose */
  mm_rsum c;
  mm_rsum_init(&c);
  mm_rsum_add(&c, 1e20);
  mm_rsum_add(&c, 1.0);
  mm_rsum_add(&c, -1e20);
  TEST_CHECK(mm_rsum_value(&c) == 1.0, "1e20 + 1 - 1e20 = %.17g", mm_rsum_value(&c));
  mm_rsum_init(&c);
  for (int i = 0; i < N; i++)
    mm_rsum_add(&c, x[i]);
  for (int i = 0; i < N; i++)
    mm_rsum_add(&c, -x[i]);
  TEST_CHECK(mm_rsum_value(&c) == 0.0, "x - x = %.17g", mm_rsum_value(&c));
  /* split over ranks: each rank adds a slice; the total is the same */
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mm_rsum p;
  mm_rsum_init(&p);
  for (int i = rank; i < N; i += size)
    mm_rsum_add(&p, x[i]);
  TEST_OK(mm_rsum_allreduce(&p, MPI_COMM_WORLD));
  TEST_CHECK(mm_rsum_value(&p) == va, "distributed sum %.17g vs %.17g", mm_rsum_value(&p), va);
  /* a blow-up's huge finite value: counted out of range, left out of the
   * sums (the limbs hold |T vol| < 2^155 only; converting more to int64 is
   * undefined), so the sums are those of the other cells */
  mm_diag_part part;
  mm_diag_part_init(&part);
  mm_diag_part_add(&part, 12.5, 35.0, 2.0, 0);
  mm_diag_part_add(&part, 1e200, 35.0, 2.0, 1);
  mm_diag_part_add(&part, 3.0, -1e300, 4.0, 2);
  TEST_CHECK(part.out == 2 && part.out_pos == 1 && part.out_var == 0 && part.out_value == 1e200,
             "out of range: %ld at %ld (var %d, %g)", part.out, part.out_pos, part.out_var,
             part.out_value);
  TEST_CHECK(mm_rsum_value(&part.heat) == 25.0 && mm_rsum_value(&part.salt) == 70.0,
             "sums with out-of-range cells: heat %.17g (want 25), salt %.17g (want 70)",
             mm_rsum_value(&part.heat), mm_rsum_value(&part.salt));
  TEST_CHECK(-part.ext[0] == 1e200 && part.ext[3] == -1e300, "extrema %g %g", -part.ext[0],
             part.ext[3]);
  free(x);
  MPI_Finalize();
  return mm_test_failures ? 1 : 0;
}
