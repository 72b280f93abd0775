/* model.watch_clock: the watches' clock (mm_watch_clock.h) counts the time
 * between looks that come within MM_WATCH_CLOCK_GAP_S of each other, and
 * leaves out a longer gap (a stopped process), however many there are. */
#include <math.h>

#include "mm_test.h"
#include "mm_watch_clock.h"

int main(void) {
  mm_watch_clock c;
  mm_watch_clock_begin(&c, 100.0);
  /* looks every 0.05 s for 2 s: all of it counts */
  double t = 0.0;
  for (int i = 1; i <= 40; i++)
    t = mm_watch_clock_at(&c, 100.0 + 0.05 * i);
  TEST_CHECK(fabs(t - 102.0) < 1e-9, "2 s of looks every 0.05 s read %.17g, want 102", t);
  /* stopped 8 s, then looks again: the 8 s do not count */
  t = mm_watch_clock_at(&c, 110.0);
  TEST_CHECK(fabs(t - 102.0) < 1e-9, "after 8 s stopped %.17g, want 102", t);
  t = mm_watch_clock_at(&c, 110.5);
  TEST_CHECK(fabs(t - 102.5) < 1e-9, "0.5 s later %.17g, want 102.5", t);
  /* a second stop, and a gap just within the limit, which counts */
  t = mm_watch_clock_at(&c, 200.0);
  t = mm_watch_clock_at(&c, 200.0 + MM_WATCH_CLOCK_GAP_S);
  TEST_CHECK(fabs(t - (102.5 + MM_WATCH_CLOCK_GAP_S)) < 1e-9, "%.17g after a second stop", t);
  /* the first look after the start is measured from the start: a stop
   * between the call's start and the watch's first look is left out too */
  mm_watch_clock_begin(&c, 0.0);
  t = mm_watch_clock_at(&c, 30.0);
  TEST_CHECK(t == 0.0, "a first look 30 s after the start read %.17g, want 0", t);
  /* the monotonic clock goes forward */
  const double a = mm_monotonic_now(), b = mm_monotonic_now();
  TEST_CHECK(b >= a && a > 0.0, "mm_monotonic_now %.17g then %.17g", a, b);
  return mm_test_failures != 0;
}
