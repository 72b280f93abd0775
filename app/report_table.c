/* The phase table's text: its head and its lines, each number in its
 * column's width whatever its size (mm_report.h). report.c prints them;
 * tests/app/test_report_table.c checks them at every magnitude. */
#include <stdio.h>

#include "mm_report.h"

int mm_report_fit(char buf[64], double v, int width, int decimals) {
  int len = 0;
  for (int d = decimals; d >= 0; d--)
    if ((len = snprintf(buf, 64, "%*.*f", width, d, v)) <= width) return len;
  for (int d = width - 6 - (v < 0); d >= 0; d--)
    if ((len = snprintf(buf, 64, "%*.*e", width, d, v)) <= width) return len;
  return snprintf(buf, 64, "%.0e", v);
}

/* mm_report_fit's text in buf, as a printf argument */
static const char *fit(char buf[64], double v, int width, int decimals) {
  (void)mm_report_fit(buf, v, width, decimals);
  return buf;
}

/* The columns, head and lines alike: phase (12, left-aligned), total s
 * (10.4), per step s (12, e notation), share (7: 6.1 and '%'), with
 * `ranks` min rank, mean rank and max rank (10.4 each), calls (7.0), GB/s
 * (7.1), with `with_floor` x floor (7.2); one blank before each. */
int mm_report_head(char buf[MM_REPORT_LINE_MAX], bool ranks, bool with_floor) {
  char rank_head[40] = "";
  if (ranks)
    snprintf(rank_head, sizeof rank_head, " %10s %10s %10s", "min rank", "mean rank", "max rank");
  return snprintf(buf, MM_REPORT_LINE_MAX, "  %-12s %10s %12s %7s%s %7s %7s%s", "phase", "total s",
                  "per step s", "share", rank_head, "calls", "GB/s", with_floor ? " x floor" : "");
}

int mm_report_line(char buf[MM_REPORT_LINE_MAX], const mm_report_row *row, bool ranks,
                   bool with_floor) {
  char cell[3][64];
  int len = snprintf(buf, MM_REPORT_LINE_MAX, "  %-12.12s %s %12.3e %s%%", row->phase,
                     fit(cell[0], row->total_s, 10, 4), row->per_step_s,
                     fit(cell[1], 100.0 * row->share, 6, 1));
  if (row->calls < 0) return len; /* the untimed glue: no more columns */
  if (ranks)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s %s %s",
                    fit(cell[0], row->min_rank_s, 10, 4), fit(cell[1], row->total_s, 10, 4),
                    fit(cell[2], row->max_rank_s, 10, 4));
  len +=
      snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s", fit(cell[0], row->calls, 7, 0));
  if (!row->moved) return len;
  len +=
      snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s", fit(cell[0], row->gbps, 7, 1));
  if (with_floor) /* an ASan build's diagnostics took 11868x their floor */
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s",
                    fit(cell[0], row->x_floor, 7, 2));
  return len;
}
