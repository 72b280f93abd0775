/* The phase table's text: its head and its lines, each number in its
 * column's width whatever its size (mm_report.h). report.c prints them;
 * tests/app/test_report_table.c checks them at every magnitude. */
#include <stdio.h>
#include <string.h>

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
 * (10.4), from MM_REPORT_COMPACT per step s (12, e notation), share (7: 6.1
 * and '%'), in MM_REPORT_WHOLE min rank, mean rank and max rank (10.4
 * each), from MM_REPORT_NARROW calls (7.0), GB/s (7.1) and, with
 * `with_floor`, x floor (7.2); one blank before each. */
int mm_report_head(char buf[MM_REPORT_LINE_MAX], mm_report_form form, bool with_floor) {
  int len = snprintf(buf, MM_REPORT_LINE_MAX, "  %-12s %10s", "phase", "total s");
  if (form >= MM_REPORT_COMPACT)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %12s", "per step s");
  len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %7s", "share");
  if (form == MM_REPORT_WHOLE)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %10s %10s %10s", "min rank",
                    "mean rank", "max rank");
  if (form >= MM_REPORT_NARROW)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %7s %7s%s", "calls", "GB/s",
                    with_floor ? " x floor" : "");
  return len;
}

int mm_report_line(char buf[MM_REPORT_LINE_MAX], const mm_report_row *row, mm_report_form form,
                   bool with_floor) {
  char cell[3][64];
  int len = snprintf(buf, MM_REPORT_LINE_MAX, "  %-12.12s %s", row->phase,
                     fit(cell[0], row->total_s, 10, 4));
  if (form >= MM_REPORT_COMPACT)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %12.3e", row->per_step_s);
  len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s%%",
                  fit(cell[1], 100.0 * row->share, 6, 1));
  if (row->calls < 0) return len; /* the untimed glue: no more columns */
  if (form == MM_REPORT_WHOLE)
    len += snprintf(buf + len, MM_REPORT_LINE_MAX - (size_t)len, " %s %s %s",
                    fit(cell[0], row->min_rank_s, 10, 4), fit(cell[1], row->total_s, 10, 4),
                    fit(cell[2], row->max_rank_s, 10, 4));
  if (form < MM_REPORT_NARROW) return len;
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

int mm_report_wrap(char *buf, size_t size, const char *text, int columns) {
  if (size == 0) return 0;
  size_t indent = strspn(text, " ");
  const size_t more = indent + (text[indent] == '(' ? 1 : 2); /* the lines after the first */
  size_t len = 0, at = 0;                                     /* written; read */
  const size_t n = strlen(text);
  /* fields set apart by two blanks or more (the summary's figures) are
   * kept whole where a break between them fits */
  const bool fields = strstr(text + indent, "  ") != NULL;
  bool first = true;
  while (at < n) {
    const size_t lead = first ? 0 : more; /* the first line's indent is in the text */
    if (!first) {
      if (len + 1 < size) buf[len++] = '\n';
      for (size_t i = 0; i < lead && len + 1 < size; i++)
        buf[len++] = ' ';
    }
    /* the room left on this line for text from `at` */
    const size_t room = columns > 0 && (size_t)columns > lead ? (size_t)columns - lead : 0;
    size_t end = n;  /* where this line's text ends */
    size_t next = n; /* where the next line's begins */
    if (columns > 0 && n - at > room) {
      /* the last break that fits: between fields, after a clause, any */
      size_t field = 0, clause = 0, any = 0;
      for (size_t i = at + (first ? indent : 0) + 1; i < n && i - at <= room; i++)
        if (text[i] == ' ' && text[i - 1] != ' ') {
          any = i;
          if (text[i + 1] == ' ') field = i;
          if (text[i - 1] == ',' || text[i - 1] == ';') clause = i;
        }
      size_t cut =
          fields ? (field ? field : any) : (clause && 4 * (clause - at) >= 3 * room ? clause : any);
      if (!cut) /* a word longer than the line: whole, to the next blank */
        for (cut = at + (first ? indent : 0); cut < n && text[cut] != ' '; cut++) {
        }
      end = cut;
      next = cut + strspn(text + cut, " ");
    }
    for (size_t i = at; i < end && len + 1 < size; i++)
      buf[len++] = text[i];
    at = next;
    first = false;
  }
  buf[len] = '\0';
  return (int)len;
}
