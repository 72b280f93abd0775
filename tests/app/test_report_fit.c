/* mm_report_fit (app/mm_report.h): a number of the phase table in its
 * column's width whatever its size. Hand-worked cases at each switch (fewer
 * decimals, then e notation), then a sweep over magnitudes and widths:
 * always exactly the width (up to 10^99), and the text reads back to within
 * half a unit of its last digit. Its use in each column of the table is
 * checked by cli.report_table (test_report_table.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_report.h"

static int failures = 0;

static void expect(double v, int width, int decimals, const char *want) {
  char buf[64];
  const int len = mm_report_fit(buf, v, width, decimals);
  if (strcmp(buf, want) || len != (int)strlen(want)) {
    printf("FAIL: fit(%.17g, %d, %d) = \"%s\" (%d), want \"%s\"\n", v, width, decimals, buf, len,
           want);
    failures++;
  }
}

/* the text's value and half a unit of its last digit */
static void read_back(const char *s, double *value, double *half_ulp) {
  *value = strtod(s, NULL);
  const char *e = strchr(s, 'e');
  const int exponent = e ? atoi(e + 1) : 0;
  const char *dot = strchr(s, '.');
  const int decimals = dot ? (int)((e ? e : s + strlen(s)) - dot - 1) : 0;
  *half_ulp = 0.5 * pow(10.0, exponent - decimals);
}

int main(void) {
  /* the table's widths: total s 10.4, calls 7.0, GB/s 7.1, x floor 7.2, share 6.1 */
  expect(12.345678, 10, 4, "   12.3457");
  expect(99999.99994, 10, 4, "99999.9999");
  expect(99999.99996, 10, 4, "100000.000"); /* rounds up to 6 digits */
  expect(123456.7, 10, 4, "123456.700");
  expect(1e9, 10, 4, "1000000000");
  expect(1.5e10, 10, 4, "1.5000e+10");
  expect(1e300, 10, 4, "1.000e+300");
  expect(-0.25, 10, 4, "   -0.2500");
  expect(9999999.0, 7, 0, "9999999");
  expect(12345678.0, 7, 0, "1.2e+07");
  expect(3e9, 7, 0, "3.0e+09");
  expect(9999.99, 7, 2, "9999.99");
  expect(11868.3, 7, 2, "11868.3");
  expect(123456789.0, 7, 2, "1.2e+08");
  expect(99.96, 6, 1, " 100.0");
  expect(1234.56, 6, 1, "1234.6");
  expect(12345.6, 6, 1, " 12346");
  expect(-1234.6, 6, 1, " -1235");
  expect(1e6, 6, 1, " 1e+06");
  expect(-1e100, 6, 1, "-1e+100"); /* the shortest e notation, wider than 6 */
  expect(NAN, 10, 4, "       nan");
  expect(5e7, 5, 0, "5e+07"); /* under 6: e notation without digits */

  /* every magnitude: the width exactly, the value to its last digit */
  const int widths[][2] = {{10, 4}, {7, 0}, {7, 1}, {7, 2}, {6, 1}};
  for (int w = 0; w < 5; w++)
    for (int k = -6; k <= 98; k++) /* at most two digits of exponent */
      for (int sign = 1; sign >= -1; sign -= 2)
        for (double c = 1.0; c < 10.0; c += 0.7311) {
          const double v = sign * c * pow(10.0, k);
          char buf[64];
          const int len = mm_report_fit(buf, v, widths[w][0], widths[w][1]);
          double back, half_ulp;
          read_back(buf, &back, &half_ulp);
          if (len != widths[w][0] || (int)strlen(buf) != len ||
              fabs(back - v) > half_ulp * (1 + 1e-9)) {
            if (failures++ < 20)
              printf("FAIL: fit(%.17g, %d, %d) = \"%s\" (%d): reads back as %.17g\n", v,
                     widths[w][0], widths[w][1], buf, len, back);
          }
        }
  if (failures)
    printf("%d failures\n", failures);
  else
    printf("ok\n");
  return failures != 0;
}
