/* The reproducible sum: exact and independent of order and decomposition. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mm_diag.h"
#include "mm_test.h"

/* an exact integer of 128 bits (GCC and Clang) */
__extension__ typedef __int128 int128;

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
  /* rounded once, to nearest, ties to even: the exact total's double. Worked
   * by hand: 2^53 + 1 is a tie, to 2^53 (even); 2^53 + 3 a tie, to 2^53 + 4;
   * 2^53 + 1 + 2^-60 just above the tie, to 2^53 + 2 (adding the limbs'
   * doubles, smallest first, gave 2^53: 1 + 2^-60 rounds to 1 first); and
   * the same negated */
  static const struct {
    double x[3], want;
  } ties[] = {{{0x1p53, 1.0, 0.0}, 0x1p53},
              {{0x1p53, 3.0, 0.0}, 0x1p53 + 4.0},
              {{0x1p53, 1.0, 0x1p-60}, 0x1p53 + 2.0},
              {{-0x1p53, -1.0, -0x1p-60}, -0x1p53 - 2.0},
              {{0x1p53, 1.0, -0x1p-60}, 0x1p53},               /* just below the tie */
              {{0x1p100, 0x1p47, 0x1p-138}, 0x1p100 + 0x1p48}, /* ulp 2^48: above half of it */
              {{0x1p100, 0x1p47, 0.0}, 0x1p100}};              /* half of it: to even */
  for (size_t i = 0; i < sizeof ties / sizeof ties[0]; i++) {
    mm_rsum_init(&c);
    for (int k = 0; k < 3; k++)
      mm_rsum_add(&c, ties[i].x[k]);
    TEST_CHECK(mm_rsum_value(&c) == ties[i].want, "%a + %a + %a = %a, want %a", ties[i].x[0],
               ties[i].x[1], ties[i].x[2], mm_rsum_value(&c), ties[i].want);
  }
  /* against an independent exact sum: values m 2^(e - 20) (m below 2^53, so
   * each is a double; e from 0 to 40), summed exactly as 128-bit integers in
   * units of 2^-20, whose conversion to double (the compiler's) rounds to
   * nearest, ties to even; a few values of mixed sizes and lengths at a
   * time, so that ties and the bits below them come up. How often adding
   * the limbs' doubles (smallest first, as before) missed shows the cases
   * are not all easy. */
  srand(11);
  int wrong = 0, missed_by_limbs = 0;
  for (int trial = 0; trial < 200000; trial++) {
    const int n = 2 + rand() % 4;
    int128 exact = 0;
    mm_rsum_init(&c);
    for (int k = 0; k < n; k++) {
      int64_t m = ((((int64_t)rand() << 31) ^ rand()) & (((int64_t)1 << 53) - 1)) >> (rand() % 53);
      if (rand() % 2) m = -m;
      const int e = rand() % 41;
      exact += (int128)m * ((int128)1 << e);
      mm_rsum_add(&c, ldexp((double)m, e - 20));
    }
    const double want = ldexp((double)exact, -20), got = mm_rsum_value(&c);
    if (got != want && wrong++ < 5) TEST_CHECK(0, "trial %d: %a, want %a", trial, got, want);
    mm_rsum t = c; /* the sum of the limbs' doubles */
    const double sign = mm_rsum_magnitude(&t);
    double limbs = 0.0;
    for (int i = MM_RSUM_LIMBS - 1; i >= 0; i--)
      limbs += ldexp((double)t.limb[i], MM_RSUM_LIMB_BITS * (2 - i));
    missed_by_limbs += sign * limbs != want;
  }
  TEST_CHECK(wrong == 0, "%d of 200000 sums not the exact total's double", wrong);
  TEST_CHECK(missed_by_limbs > 0, "no sum that the limbs' doubles miss: the cases are too easy");
  printf("correctly rounded: 200000 sums; adding the limbs' doubles missed %d\n", missed_by_limbs);
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
