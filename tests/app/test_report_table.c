/* mm_report_head and mm_report_line (app/mm_report.h): the phase table's
 * text. Its columns are written out here from the table's layout (the
 * widths in report_table.c's comment), not taken from the code: the heads
 * and a line worked by hand, then every column at every magnitude from
 * 10^-6 to 10^98, of either sign, NaN and infinity, in the eight forms of
 * the table (minimal, compact, narrow and whole, with and without the x
 * floor): each line exactly as wide as its columns, never wider than the
 * head, each number ending where its column's name ends. Then
 * mm_report_wrap, on texts broken by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mm_report.h"

static int failures = 0;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond) && failures++ < 20) {                                                              \
      printf("FAIL: ");                                                                            \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
    }                                                                                              \
  } while (0)

/* The table's columns: each one blank then its width, after the two
 * blanks of the indent; phase is left-aligned, the others end at the same
 * place in the head and in every line (share's '%' at its name's 'e'). */
typedef struct {
  const char *name;
  int width;
  mm_report_form from; /* the narrowest form that shows it */
  bool floor, glue;    /* the x floor; on the untimed line */
} column;
static const column columns[] = {{"phase", 12, MM_REPORT_MINIMAL, false, true},
                                 {"total s", 10, MM_REPORT_MINIMAL, false, true},
                                 {"per step s", 12, MM_REPORT_COMPACT, false, true},
                                 {"share", 7, MM_REPORT_MINIMAL, false, true},
                                 {"min rank", 10, MM_REPORT_WHOLE, false, false},
                                 {"mean rank", 10, MM_REPORT_WHOLE, false, false},
                                 {"max rank", 10, MM_REPORT_WHOLE, false, false},
                                 {"calls", 7, MM_REPORT_NARROW, false, false},
                                 {"GB/s", 7, MM_REPORT_NARROW, false, false},
                                 {"x floor", 7, MM_REPORT_NARROW, true, false}};
enum { NCOLUMNS = sizeof columns / sizeof columns[0], CALLS = 7, NFORMS = 4 };

/* the last character's index of each column shown (-1: not shown) */
static void edges(int edge[NCOLUMNS], mm_report_form form, bool with_floor) {
  int at = 1; /* the indent's two blanks less the first column's one */
  for (int c = 0; c < NCOLUMNS; c++) {
    if (columns[c].from > form || (columns[c].floor && !with_floor)) {
      edge[c] = -1;
      continue;
    }
    at += 1 + columns[c].width;
    edge[c] = at - 1;
  }
}

/* line's columns up to `last` (a column's index) end at their edges */
static void check_line(const char *what, const char *line, mm_report_form form, bool with_floor,
                       int last) {
  int edge[NCOLUMNS];
  edges(edge, form, with_floor);
  int end = -1;
  for (int c = 1; c <= last; c++) {
    if (edge[c] < 0) continue;
    end = edge[c];
    CHECK(line[edge[c]] != ' ' && line[edge[c]] != '\0' &&
              (line[edge[c] + 1] == ' ' || line[edge[c] + 1] == '\0'),
          "%s: column '%s' does not end at %d: \"%s\"", what, columns[c].name, edge[c], line);
  }
  CHECK((int)strlen(line) == end + 1, "%s: %zu characters, want %d: \"%s\"", what, strlen(line),
        end + 1, line);
}

int main(void) {
  char line[MM_REPORT_LINE_MAX];

  /* the heads, by hand: 33 and 46 columns wide in the minimal and compact
   * forms (no x floor), 62 and 70 in the narrow one, 95 and 103 whole
   * (docs/output.md) */
  const char *const heads[NFORMS][2] = {
      {"  phase           total s   share", "  phase           total s   share"},
      {"  phase           total s   per step s   share",
       "  phase           total s   per step s   share"},
      {"  phase           total s   per step s   share   calls    GB/s",
       "  phase           total s   per step s   share   calls    GB/s x floor"},
      {"  phase           total s   per step s   share   min rank  mean rank   max rank   calls"
       "    GB/s",
       "  phase           total s   per step s   share   min rank  mean rank   max rank   calls"
       "    GB/s x floor"}};
  const int head_widths[NFORMS][2] = {{33, 33}, {46, 46}, {62, 70}, {95, 103}};
  for (int r = 0; r < NFORMS; r++)
    for (int f = 0; f < 2; f++) {
      const int len = mm_report_head(line, (mm_report_form)r, f);
      CHECK(!strcmp(line, heads[r][f]) && len == head_widths[r][f],
            "head (form %d, floor %d) = \"%s\" (%d), want \"%s\" (%d)", r, f, line, len,
            heads[r][f], head_widths[r][f]);
      /* each name ends at its column's edge */
      int edge[NCOLUMNS];
      edges(edge, (mm_report_form)r, f);
      for (int c = 1; c < NCOLUMNS; c++)
        if (edge[c] >= 0) {
          const size_t n = strlen(columns[c].name);
          CHECK(edge[c] + 1 >= (int)n && !strncmp(line + edge[c] + 1 - n, columns[c].name, n),
                "head (form %d, floor %d): '%s' does not end at %d", r, f, columns[c].name,
                edge[c]);
        }
    }

  /* a line by hand, each column's text in turn */
  const mm_report_row solve = {.phase = "solve",
                               .total_s = 12.345678,
                               .per_step_s = 0.0012345678,
                               .share = 0.5,
                               .min_rank_s = 11.0,
                               .max_rank_s = 13.5,
                               .calls = 1000,
                               .moved = true,
                               .gbps = 45.67,
                               .x_floor = 1.234};
  const char *const want_solve = "  solve       "
                                 " "
                                 "   12.3457"
                                 " "
                                 "   1.235e-03"
                                 " "
                                 "  50.0%"
                                 " "
                                 "   11.0000"
                                 " "
                                 "   12.3457"
                                 " "
                                 "   13.5000"
                                 " "
                                 "   1000"
                                 " "
                                 "   45.7"
                                 " "
                                 "   1.23";
  int len = mm_report_line(line, &solve, MM_REPORT_WHOLE, true);
  CHECK(!strcmp(line, want_solve) && len == (int)strlen(want_solve),
        "solve's line = \"%s\" (%d), want \"%s\"", line, len, want_solve);
  /* too large for every column's decimals: fewer, then e notation */
  const mm_report_row big = {.phase = "diagnostics",
                             .total_s = 123456.7,
                             .per_step_s = 2.5,
                             .share = 12.3456,
                             .min_rank_s = 1.5e10,
                             .max_rank_s = 99999.99996,
                             .calls = 12345678,
                             .moved = true,
                             .gbps = 1234567.8,
                             .x_floor = 11868.3};
  const char *const want_big = "  diagnostics "
                               " "
                               "123456.700"
                               " "
                               "   2.500e+00"
                               " "
                               "1234.6%"
                               " "
                               "1.5000e+10"
                               " "
                               "123456.700"
                               " "
                               "100000.000"
                               " "
                               "1.2e+07"
                               " "
                               "1234568"
                               " "
                               "11868.3";
  len = mm_report_line(line, &big, MM_REPORT_WHOLE, true);
  CHECK(!strcmp(line, want_big) && len == (int)strlen(want_big),
        "a large line = \"%s\" (%d), want \"%s\"", line, len, want_big);
  /* the untimed glue ends after its share; a phase that moved nothing
   * after its calls */
  const mm_report_row glue = {
      .phase = "(untimed)", .total_s = 0.01, .per_step_s = 1e-5, .share = 0.001, .calls = -1};
  const char *const want_glue = "  (untimed)   "
                                " "
                                "    0.0100"
                                " "
                                "   1.000e-05"
                                " "
                                "   0.1%";
  len = mm_report_line(line, &glue, MM_REPORT_WHOLE, true);
  CHECK(!strcmp(line, want_glue) && len == (int)strlen(want_glue),
        "the untimed line = \"%s\" (%d), want \"%s\"", line, len, want_glue);
  const mm_report_row output = {
      .phase = "output", .total_s = 0.5, .per_step_s = 5e-3, .share = 0.05, .calls = 3};
  const char *const want_output = "  output      "
                                  " "
                                  "    0.5000"
                                  " "
                                  "   5.000e-03"
                                  " "
                                  "   5.0%"
                                  " "
                                  "      3";
  len = mm_report_line(line, &output, MM_REPORT_NARROW, true);
  CHECK(!strcmp(line, want_output) && len == (int)strlen(want_output),
        "output's line = \"%s\" (%d), want \"%s\"", line, len, want_output);

  /* the minimal and compact forms, by hand */
  const char *const want_solve_minimal = "  solve       "
                                         " "
                                         "   12.3457"
                                         " "
                                         "  50.0%";
  len = mm_report_line(line, &solve, MM_REPORT_MINIMAL, true);
  CHECK(!strcmp(line, want_solve_minimal) && len == (int)strlen(want_solve_minimal),
        "solve's minimal line = \"%s\" (%d), want \"%s\"", line, len, want_solve_minimal);
  const char *const want_glue_compact = "  (untimed)   "
                                        " "
                                        "    0.0100"
                                        " "
                                        "   1.000e-05"
                                        " "
                                        "   0.1%";
  len = mm_report_line(line, &glue, MM_REPORT_COMPACT, false);
  CHECK(!strcmp(line, want_glue_compact) && len == (int)strlen(want_glue_compact),
        "the compact untimed line = \"%s\" (%d), want \"%s\"", line, len, want_glue_compact);

  /* every magnitude, in every column at once, in the eight forms */
  for (int r = 0; r < NFORMS; r++)
    for (int f = 0; f < 2; f++) {
      const mm_report_form form = (mm_report_form)r;
      char head[MM_REPORT_LINE_MAX];
      const int head_width = mm_report_head(head, form, f);
      for (int k = -6; k <= 100; k++)
        for (int sign = 1; sign >= -1; sign -= 2)
          for (double c = 1.0; c < 10.0; c += 0.7311) {
            double v = sign * c * pow(10.0, k);
            if (k == 99) v = sign * NAN;
            if (k == 100) v = sign * INFINITY;
            const mm_report_row row = {.phase = "horizontal",
                                       .total_s = v,
                                       .per_step_s = v,
                                       .share = v / 100, /* shown in % */
                                       .min_rank_s = v,
                                       .max_rank_s = -v,
                                       .calls = fabs(v),
                                       .moved = true,
                                       .gbps = v,
                                       .x_floor = v};
            char what[96];
            snprintf(what, sizeof what, "%.6g (form %d, floor %d)", v, r, f);
            len = mm_report_line(line, &row, form, f);
            CHECK(len == (int)strlen(line) && len == head_width,
                  "%s: %d characters, the head %d: \"%s\"", what, len, head_width, line);
            check_line(what, line, form, f, NCOLUMNS - 1);
            mm_report_row still = row;
            still.moved = false;
            (void)mm_report_line(line, &still, form, f);
            check_line(what, line, form, f, CALLS);
            mm_report_row untimed = row;
            untimed.calls = -1;
            (void)mm_report_line(line, &untimed, form, f);
            check_line(what, line, form, f, 3);
          }
    }
  /* mm_report_wrap, broken by hand */
  static const struct {
    const char *text;
    int columns;
    const char *want;
  } wraps[] = {
      {"  aaaa bbbb, cccc dddd eeee", 0, "  aaaa bbbb, cccc dddd eeee"},  /* no terminal */
      {"  aaaa bbbb, cccc dddd eeee", 27, "  aaaa bbbb, cccc dddd eeee"}, /* it fits */
      /* after the clause (12 of 14), then at the last blank that fits */
      {"  aaaa bbbb, cccc dddd eeee", 14, "  aaaa bbbb,\n    cccc dddd\n    eeee"},
      /* a clause that would leave the line under three quarters full */
      {"  aa, bbbb cccc dddd", 16, "  aa, bbbb cccc\n    dddd"},
      /* fields: between them, not within one */
      {"      ok  20 steps  0.5 s  1e+07 points/s", 30,
       "      ok  20 steps  0.5 s\n        1e+07 points/s"},
      {"      ok  20 steps  0.5 s  1e+07 points/s", 22,
       "      ok  20 steps\n        0.5 s\n        1e+07 points/s"},
      {"      ok  20 steps  0.5 s  1e+07 points/s", 21,
       "      ok  20 steps\n        0.5 s\n        1e+07\n        points/s"},
      /* a field wider than the line: at a blank within it */
      {"  a  bbb ccc ddd", 12, "  a\n    bbb ccc\n    ddd"},
      /* after an indent and '(': one blank more */
      {"  (x yyyy zzzz)", 10, "  (x yyyy\n   zzzz)"},
      /* a word longer than the line: whole */
      {"  abcdefghijkl mn", 8, "  abcdefghijkl\n    mn"},
      /* no indent */
      {"name: a b", 6, "name:\n  a b"},
      /* blanks at the end, and a line of one blank too wide */
      {"  ab cd  ", 5, "  ab\n    cd"},
  };
  for (size_t w = 0; w < sizeof wraps / sizeof wraps[0]; w++) {
    char out[256];
    len = mm_report_wrap(out, sizeof out, wraps[w].text, wraps[w].columns);
    CHECK(!strcmp(out, wraps[w].want) && len == (int)strlen(wraps[w].want),
          "wrap(\"%s\", %d) = \"%s\" (%d), want \"%s\"", wraps[w].text, wraps[w].columns, out, len,
          wraps[w].want);
  }
  char small[5];
  len = mm_report_wrap(small, sizeof small, "  abcdef", 0);
  CHECK(!strcmp(small, "  ab") && len == 4, "wrap into 5 bytes = \"%s\" (%d)", small, len);

  if (failures)
    printf("%d failures\n", failures);
  else
    printf("ok\n");
  return failures != 0;
}
