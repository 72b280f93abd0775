#include "mm_config.h"

#include "mm_rsum.h" /* MM_TEMP_MIN, MM_TEMP_MAX */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mm_grid.h"

typedef enum { T_INT, T_REAL, T_BOOL, T_STRING, T_ENUM } mm_key_type;

/* Longest line of a configuration file (characters, without the newline):
 * what inih's line buffer holds. */
#define MM_LINE_MAX (INI_MAX_LINE - 2)

/* One configuration key. Ranges are closed unless min_open. */
typedef struct {
  const char *section, *key;
  mm_key_type type;
  size_t offset;
  const char *def; /* default, as it would be written in the file */
  const char *unit;
  double min, max;
  bool min_open;
  const char *choices; /* T_ENUM: "a|b|c", index = enum value */
  bool solution;       /* determines a continued run's solution: part of the restart's
                        * configuration hash (the initial.* keys do not: they are what a
                        * restart replaces) */
  const char *doc;
} mm_key;

#define OFF(f) offsetof(mm_config, f)

static const mm_key mm_keys[] = {
    {"run", "name", T_STRING, OFF(run_name), "minimodel", "", 0, 0, 0, NULL, false,
     "output file prefix (letters, digits, '-', '_', '.'; not starting with '.', not ending in "
     ".restart or .crash)"},
    {"run", "steps", T_INT, OFF(run_steps), "10", "", 0, 1e9, 0, NULL, false,
     "number of time steps"},
    {"run", "dt", T_REAL, OFF(run_dt), "600", "s", 0, 1e8, true, NULL, true, "time step"},
    {"run", "start_date", T_STRING, OFF(start_date), "2000-01-01 00:00:00", "", 0, 0, 0, NULL,
     false,
     "model date at step 0, YYYY-MM-DD or YYYY-MM-DD hh:mm:ss, a date of run.calendar: the "
     "origin of the output's time axis (seconds since this date)"},
    {"run", "calendar", T_ENUM, OFF(calendar), "standard", "", 0, 0, 0, MM_CALENDARS, false,
     "calendar of the output's time axis (CF names; gregorian, 365_day, 366_day taken as "
     "standard, noleap, all_leap)"},
    {"grid", "nx", T_INT, OFF(nx), "32", "", 1, 1e6, 0, NULL, true, "cells in x"},
    {"grid", "ny", T_INT, OFF(ny), "32", "", 1, 1e6, 0, NULL, true, "cells in y"},
    {"grid", "nz", T_INT, OFF(nz), "20", "", 1, 10000, 0, NULL, true, "levels"},
    {"grid", "dx", T_REAL, OFF(dx), "10000", "m", 0, 1e8, true, NULL, true, "cell width in x"},
    {"grid", "dy", T_REAL, OFF(dy), "10000", "m", 0, 1e8, true, NULL, true, "cell width in y"},
    {"grid", "depth", T_REAL, OFF(depth), "4000", "m", 0, 12000, true, NULL, true,
     "depth of the deepest column"},
    {"grid", "dz_surface", T_REAL, OFF(dz_surface), "0", "m", 0, 12000, 0, NULL, true,
     "thickness of the top level of stretched levels, at most depth/nz; 0 = uniform levels "
     "depth/nz"},
    {"grid", "bathymetry", T_ENUM, OFF(bathymetry), "flat", "", 0, 0, 0, "flat|bowl|seamount|slope",
     true, "shape of the sea floor"},
    {"grid", "periodic_x", T_BOOL, OFF(periodic_x), "false", "", 0, 0, 0, NULL, true,
     "periodic in x (else walls)"},
    {"grid", "periodic_y", T_BOOL, OFF(periodic_y), "false", "", 0, 0, 0, NULL, true,
     "periodic in y (else walls)"},
    {"grid", "ranks_x", T_INT, OFF(ranks_x), "0", "", 0, 1e6, 0, NULL, false,
     "ranks along x; 0 = chosen by MPI_Dims_create, or where its choice does not fit the grid, the "
     "fit with the shortest halo"},
    {"grid", "ranks_y", T_INT, OFF(ranks_y), "0", "", 0, 1e6, 0, NULL, false,
     "ranks along y; 0 = chosen by MPI_Dims_create, or where its choice does not fit the grid, the "
     "fit with the shortest halo"},
    {"physics", "kappa_v", T_REAL, OFF(kappa_v), "1e-5", "m2/s", 0, 10, 0, NULL, true,
     "background vertical diffusivity"},
    {"physics", "kappa_convect", T_REAL, OFF(kappa_convect), "0", "m2/s", 0, 1000, 0, NULL, true,
     "added vertical diffusivity where the column is statically unstable; 0 = off"},
    {"physics", "kappa_h", T_REAL, OFF(kappa_h), "0", "m2/s", 0, 1e7, 0, NULL, true,
     "horizontal diffusivity"},
    {"physics", "advection", T_ENUM, OFF(advection), "superbee", "", 0, 0, 0,
     "none|upwind|superbee", true, "horizontal advection scheme"},
    {"physics", "flow", T_ENUM, OFF(flow), "none", "", 0, 0, 0, "none|uniform|gyre", true,
     "prescribed horizontal flow"},
    {"physics", "flow_speed", T_REAL, OFF(flow_speed), "0.1", "m/s", 0, 100, 0, NULL, true,
     "speed scale of the flow"},
    {"physics", "rho0", T_REAL, OFF(rho0), "1025", "kg/m3", 0, 1e5, true, NULL, true,
     "reference density"},
    {"physics", "cp", T_REAL, OFF(cp), "3992", "J/(kg K)", 0, 1e5, true, NULL, true,
     "heat capacity of sea water"},
    {"physics", "alpha", T_REAL, OFF(alpha), "2e-4", "1/K", 0, 1, 0, NULL, true,
     "thermal expansion coefficient of the linear equation of state"},
    {"physics", "beta", T_REAL, OFF(beta), "7.6e-4", "kg/g", 0, 1, 0, NULL, true,
     "haline contraction coefficient of the linear equation of state"},
    {"forcing", "heat_flux", T_REAL, OFF(heat_flux), "0", "W/m2", -1e5, 1e5, 0, NULL, true,
     "uniform surface heat flux into the ocean; 0 = none; one step's heating of the top level, "
     "run.dt heat_flux / (rho0 cp h_0), at most 120 degC (the range of temperature kept)"},
    {"initial", "file", T_STRING, OFF(initial_file), "", "", 0, 0, 0, NULL, false,
     "NetCDF file with temp and salt on (z, y, x); empty = analytic state"},
    {"initial", "restart", T_STRING, OFF(initial_restart), "", "", 0, 0, 0, NULL, false,
     "restart file to continue from (its state replaces initial.file's and the pattern's); "
     "empty = start at step 0"},
    {"initial", "pattern", T_ENUM, OFF(initial_pattern), "stratified", "", 0, 0, 0,
     "stratified|step|mode|uniform", false, "analytic initial state (docs/physics.md)"},
    {"initial", "mode", T_INT, OFF(initial_mode), "1", "", 0, 10000, 0, NULL, false,
     "vertical mode number of the mode pattern"},
    {"initial", "t_surface", T_REAL, OFF(t_surface), "20", "degC", -5, 100, 0, NULL, false,
     "surface temperature of the analytic state"},
    {"initial", "t_bottom", T_REAL, OFF(t_bottom), "4", "degC", -5, 100, 0, NULL, false,
     "deep temperature of the analytic state"},
    {"solver", "backend", T_ENUM, OFF(backend), "cpu", "", 0, 0, 0, "cpu|cuda|emulated", false,
     "where the time step runs: cpu, cuda (the whole step on the GPU; solver.tdma = auto or "
     "cuda), or emulated (the GPU step on the host, slow; for tests)"},
    {"solver", "tdma", T_STRING, OFF(tdma), "auto", "", 0, 0, 0, NULL, false,
     "tridiagonal solver variant: auto, reference or a fast variant (tdma-bench --list)"},
    {"output", "dir", T_STRING, OFF(output_dir), "output", "", 0, 0, 0, NULL, false,
     "directory for all files of the case"},
    {"output", "interval", T_INT, OFF(output_interval), "0", "steps", 0, 1e9, 0, NULL, false,
     "steps between history records; 0 = the last step only (and the initial record, "
     "output.initial_record)"},
    {"output", "initial_record", T_BOOL, OFF(initial_record), "true", "", 0, 0, 0, NULL, false,
     "the initial state as the history's first record (step 0, or the restart step of a "
     "history that a continued run starts)"},
    {"output", "restart_interval", T_INT, OFF(restart_interval), "0", "steps", 0, 1e9, 0, NULL,
     false, "steps between restart files; 0 = none"},
    {"output", "restart_at_stop", T_BOOL, OFF(restart_at_stop), "false", "", 0, 0, 0, NULL, false,
     "a restart file of the last step also when a stop signal ends the run (SIGTERM, SIGUSR1, "
     "...: a batch system's warning before its time limit)"},
    {"output", "deflate", T_INT, OFF(deflate), "0", "", 0, 9, 0, NULL, false,
     "deflate level of the history file; 0 = off"},
    {"output", "timing_stride", T_INT, OFF(timing_stride), "0", "steps", 0, 1e9, 0, NULL, false,
     "every n-th step in the timing file's per_step list; 0 = every step up to 10000 steps, "
     "above that every ceil(steps / 10000)-th"},
    {"output", "progress_interval", T_INT, OFF(progress_interval), "0", "steps", 0, 1e9, 0, NULL,
     false, "steps between progress lines when stdout is not a terminal; 0 = about 10 lines"},
};
enum { MM_NKEYS = sizeof mm_keys / sizeof mm_keys[0] };
_Static_assert(MM_NKEYS <= 64, "mm_config.origin holds 64 keys");

static const char *const mm_sections[] = {"run",     "grid",   "physics", "forcing",
                                          "initial", "solver", "output"};

/* ---------------------------------------------------------------- values */

static const mm_key *find_key(const char *section, const char *key) {
  for (int i = 0; i < MM_NKEYS; i++)
    if (!strcmp(mm_keys[i].section, section) && !strcmp(mm_keys[i].key, key)) return &mm_keys[i];
  return NULL;
}

static bool known_section(const char *section) {
  for (size_t i = 0; i < sizeof mm_sections / sizeof *mm_sections; i++)
    if (!strcmp(mm_sections[i], section)) return true;
  return false;
}

/* Edit distance (insertions, deletions, substitutions, and swaps of two
 * neighbouring characters) between a and b, both shorter than 64. */
static int edit_distance(const char *a, const char *b) {
  const size_t n = strlen(a), m = strlen(b);
  if (n >= 64 || m >= 64) return 1 << 20;
  int d[65][65];
  for (size_t i = 0; i <= n; i++)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

/* " (did you mean SECTION.KEY?)" for the known key nearest to section.name
 * (a misspelt key, or a key in the wrong section), or "" when none is near. */
static const char *nearest_key(const char *section, const char *name, char *out, size_t len) {
  const mm_key *best = NULL;
  int best_d = 1 << 20;
  for (int i = 0; i < MM_NKEYS; i++) {
    const int d = edit_distance(name, mm_keys[i].key) + (strcmp(section, mm_keys[i].section) != 0);
    if (d < best_d) best_d = d, best = &mm_keys[i];
  }
  const int allowed = (int)strlen(name) / 3 > 2 ? (int)strlen(name) / 3 : 2;
  out[0] = '\0';
  if (best && best_d <= allowed)
    snprintf(out, len, " (did you mean %s.%s?)", best->section, best->key);
  return out;
}

/* " (did you mean [SECTION]?)" for the section nearest to section, or "". */
static const char *nearest_section(const char *section, char *out, size_t len) {
  out[0] = '\0';
  for (size_t i = 0; i < sizeof mm_sections / sizeof *mm_sections; i++)
    if (edit_distance(section, mm_sections[i]) <= 2) {
      snprintf(out, len, " (did you mean [%s]?)", mm_sections[i]);
      break;
    }
  return out;
}

/* The longest value of string key k: what fits on one line of a
 * configuration file with its key, so that the resolved text (--dry-run, the
 * history's configuration attribute) reads back; always less than
 * MM_STR_MAX. */
static size_t string_max(const mm_key *k) {
  const size_t max = MM_LINE_MAX - strlen(k->key) - 3;
  return max < MM_STR_MAX - 1 ? max : MM_STR_MAX - 1;
}

static int enum_index(const char *choices, const char *value) {
  int idx = 0;
  size_t vlen = strlen(value);
  for (const char *p = choices;; idx++) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == vlen && !strncmp(p, value, len)) return idx;
    if (!bar) return -1;
    p = bar + 1;
  }
}

static void format_range(const mm_key *k, char *buf, size_t n) {
  const char *what = k->type == T_INT ? "an integer" : "a number";
  snprintf(buf, n, "must be %s in %s%.10g, %.10g]", what, k->min_open ? "(" : "[", k->min, k->max);
}

/* Parse value into cfg for key k; on failure write the reason to why. */
static bool set_value(mm_config *cfg, const mm_key *k, const char *value, char *why, size_t n) {
  void *field = (char *)cfg + k->offset;
  char *end = NULL;
  char range[128];
  switch (k->type) {
  case T_INT: {
    format_range(k, range, sizeof range);
    errno = 0;
    long v = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno == ERANGE || v < k->min || v > k->max ||
        (k->min_open && v == k->min)) {
      snprintf(why, n, "%s", range);
      return false;
    }
    *(long *)field = v;
    return true;
  }
  case T_REAL: {
    format_range(k, range, sizeof range);
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end != '\0') {
      snprintf(why, n, "%s", range);
      return false;
    }
    if (strpbrk(value, "xX")) { /* strtod's hexadecimal: 0x10 was 16 */
      snprintf(why, n, "a decimal number expected, not hexadecimal; %s", range);
      return false;
    }
    if (errno == ERANGE && fabs(v) > 1.0) {
      snprintf(why, n, "out of the range of a double; %s", range);
      return false;
    }
    if (!isfinite(v)) {
      snprintf(why, n, "must be finite; %s", range);
      return false;
    }
    if (v < k->min || v > k->max || (k->min_open && v <= k->min)) {
      snprintf(why, n, "%s", range);
      return false;
    }
    *(double *)field = v + 0.0; /* -0 becomes +0 */
    return true;
  }
  case T_BOOL: { /* in any case of ASCII letters: TRUE, True, Off */
    static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
      if (!strcasecmp(value, yes[i])) return *(bool *)field = true, true;
      if (!strcasecmp(value, no[i])) return *(bool *)field = false, true;
    }
    snprintf(why, n, "must be true or false (or yes/no, on/off, 1/0, in any case)");
    return false;
  }
  case T_STRING: {
    const size_t len = strlen(value), max = string_max(k);
    if (len > max) {
      snprintf(why, n, "too long (%zu characters, at most %zu)", len, max);
      return false;
    }
    const bool path = !strcmp(k->section, "output")
                          ? !strcmp(k->key, "dir")
                          : !strcmp(k->section, "initial") &&
                                (!strcmp(k->key, "file") || !strcmp(k->key, "restart"));
    const char *bad_path = path ? mm_path_problem(value, !strcmp(k->section, "output")) : NULL;
    if (bad_path) {
      snprintf(why, n, "%s", bad_path);
      return false;
    }
    memcpy(field, value, len + 1);
    return true;
  }
  case T_ENUM: {
    /* the calendars' other CF names, taken as the name they stand for
     * (which the resolved configuration and the history then carry) */
    static const char *const calendar_alias[][2] = {
        {"gregorian", "standard"}, {"365_day", "noleap"}, {"366_day", "all_leap"}};
    if (k->offset == OFF(calendar))
      for (size_t a = 0; a < sizeof calendar_alias / sizeof calendar_alias[0]; a++)
        if (!strcmp(value, calendar_alias[a][0])) value = calendar_alias[a][1];
    int idx = enum_index(k->choices, value);
    if (idx < 0) {
      char list[128];
      snprintf(list, sizeof list, "%s", k->choices);
      for (char *p = list; *p; p++)
        if (*p == '|') *p = ',';
      snprintf(why, n, "must be one of %s", list);
      return false;
    }
    *(int *)field = idx;
    return true;
  }
  }
  return false;
}

/* The shortest text (6 to 17 significant digits) that reads back as v. */
static const char *shortest_real(double v, char *buf, size_t n) {
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, n, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  return buf;
}

static void format_value(const mm_config *cfg, const mm_key *k, char *buf, size_t n) {
  const void *field = (const char *)cfg + k->offset;
  switch (k->type) {
  case T_INT: snprintf(buf, n, "%ld", *(const long *)field); break;
  case T_REAL: shortest_real(*(const double *)field, buf, n); break;
  case T_BOOL: snprintf(buf, n, "%s", *(const bool *)field ? "true" : "false"); break;
  case T_STRING: snprintf(buf, n, "%s", (const char *)field); break;
  case T_ENUM: {
    int idx = *(const int *)field;
    const char *p = k->choices;
    for (int i = 0; i < idx; i++)
      p = strchr(p, '|') + 1;
    const char *bar = strchr(p, '|');
    int len = bar ? (int)(bar - p) : (int)strlen(p);
    snprintf(buf, n, "%.*s", len, p);
    break;
  }
  }
}

void mm_config_value_text(const mm_config *cfg, const char *section, const char *key, char *buf,
                          size_t n) {
  const mm_key *k = find_key(section, key);
  if (k)
    format_value(cfg, k, buf, n);
  else
    snprintf(buf, n, "?");
}

void mm_config_defaults(mm_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  char why[256];
  for (int i = 0; i < MM_NKEYS; i++) {
    bool ok = set_value(cfg, &mm_keys[i], mm_keys[i].def, why, sizeof why);
    (void)ok; /* the defaults are in range: scripts.key_table checks every default */
  }
}

/* ------------------------------------------------------------- INI parse */

/* Reader state: text held in memory, fed to inih a line at a time so each
 * handler call knows its line and over-long or non-UTF-8 lines are refused. */
typedef struct {
  const char *name;
  const char *text;
  size_t pos, len;
  int line;
  int section_line; /* line of the last [section] header */
  mm_config *cfg;
  bool seen[MM_NKEYS];
  int seen_line[MM_NKEYS];
  mm_err err;
} mm_parse;

size_t mm_utf8_sequence(const unsigned char *s, size_t n) {
  if (n == 0) return 0;
  const unsigned char c = s[0];
  const size_t extra = c < 0x80                 ? 0
                       : c >= 0xC2 && c <= 0xDF ? 1
                       : c >= 0xE0 && c <= 0xEF ? 2
                       : c >= 0xF0 && c <= 0xF4 ? 3
                                                : 4; /* not a first byte */
  if (extra == 4 || extra >= n) return 0;
  for (size_t j = 1; j <= extra; j++)
    if ((s[j] & 0xC0) != 0x80) return 0;
  return extra + 1;
}

/* UTF-8 text without control characters (a tab allowed). */
static bool valid_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    const size_t len = mm_utf8_sequence(s + i, n - i);
    if (len == 0 || (s[i] < 0x20 && s[i] != '\t')) return false;
    i += len;
  }
  return true;
}

/* The first of `stops` in s[from, n), or NULL when an inline comment (inih's
 * rule: ';' after a blank) or the end comes first: inih's
 * find_chars_or_comment. */
static const char *until_comment(const char *s, size_t from, size_t n, const char *stops) {
  for (size_t i = from; i < n; i++) {
    if (strchr(stops, s[i])) return s + i;
    if (s[i] == ';' && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) return NULL;
  }
  return NULL;
}

/* A '#' after a blank in a value: meant as a comment, which in a
 * configuration file only ';' starts after a value (inih's rule; '#' only at
 * the start of a line). Taken as part of the value, it made `dir = out   #
 * results` a folder of that name. */
static bool hash_comment(const char *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (v[i] == '#' && (v[i - 1] == ' ' || v[i - 1] == '\t')) return true;
  return false;
}

static char *reader(char *str, int num, void *stream) {
  mm_parse *p = stream;
  if (p->err != MM_OK || p->pos >= p->len) return NULL;
  const char *start = p->text + p->pos;
  /* a line ends at LF, CR LF or a lone CR (the line ends of classic Mac OS) */
  const size_t left = p->len - p->pos;
  size_t content = 0;
  while (content < left && start[content] != '\n' && start[content] != '\r')
    content++;
  size_t linelen = content;
  if (linelen < left)
    linelen += start[linelen] == '\r' && linelen + 1 < left && start[linelen + 1] == '\n' ? 2 : 1;
  p->line++;
  p->pos += linelen;
  if (memchr(start, '\0', linelen)) {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: contains a NUL byte", p->name, p->line);
    return NULL;
  }
  if (!valid_utf8((const unsigned char *)start, content)) {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: not valid UTF-8 text", p->name, p->line);
    return NULL;
  }
  if (content + 2 > (size_t)num || content > MM_LINE_MAX) {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: line too long (%zu characters, at most %d)", p->name,
                      p->line, content, num - 2);
    return NULL;
  }
  /* leading blanks dropped: inih would take an indented line for the
   * continuation of the value before it (its multi-line values), and
   * minimodel has no multi-line values: an indented key is a key */
  size_t lead = 0;
  while (lead < content && (start[lead] == ' ' || start[lead] == '\t'))
    lead++;
  /* the line as inih looks at it: a byte-order mark at the start of the
   * first line skipped, and the blanks after it */
  const char *text = start + lead;
  size_t n = content - lead;
  if (p->line == 1 && n >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
    text += 3;
    n -= 3;
    while (n > 0 && (*text == ' ' || *text == '\t')) {
      text++;
      n--;
    }
  }
  size_t shown = n; /* the line without its trailing blanks, for messages */
  while (shown > 0 && (text[shown - 1] == ' ' || text[shown - 1] == '\t'))
    shown--;
  if (n > 0 && text[0] == '[') {
    p->section_line = p->line;
    const char *end = until_comment(text, 1, n, "]");
    if (!end) {
      p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: %.*s: section header without its closing ']'",
                        p->name, p->line, (int)shown, text);
      return NULL;
    }
    /* "[]": inih takes it for no section, and a key after it for a key
     * before any section */
    size_t name = 1;
    while (name < n && (text[name] == ' ' || text[name] == '\t'))
      name++;
    if (text + name == end) {
      p->err =
          MM_ERROR(MM_ERR_INPUT, "%s:%d: []: a section header without a name", p->name, p->line);
      return NULL;
    }
    /* after the ']' only blanks and a comment: inih drops the rest of the
     * line, and "[grid] ny = 7" lost its key without a word */
    size_t rest = (size_t)(end - text) + 1;
    while (rest < n && (text[rest] == ' ' || text[rest] == '\t'))
      rest++;
    if (rest < n && text[rest] != ';') {
      p->err = MM_ERROR(MM_ERR_INPUT,
                        "%s:%d: %.*s: text after the section header's ']' (a key goes on a line "
                        "of its own; a comment starts with ';')",
                        p->name, p->line, (int)shown, text);
      return NULL;
    }
  } else if (n > 0 && text[0] != ';' && text[0] != '#' && !until_comment(text, 0, n, "=:")) {
    /* neither a header, a comment nor a key: inih reports it only at the
     * end, after the errors of the lines that follow it */
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: syntax error (expected [section] or key = value)",
                      p->name, p->line);
    return NULL;
  }
  memcpy(str, start + lead, content - lead);
  str[content - lead] = '\n';
  str[content - lead + 1] = '\0';
  return str;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  mm_parse *p = user;
  if (section[0] == '\0') {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: %s: key before any [section]", p->name, p->line, name);
    return 0;
  }
  if (!known_section(section)) {
    char hint[96];
    p->err = MM_ERROR(MM_ERR_INPUT,
                      "%s:%d: [%s]: unknown section%s (known: run, grid, physics, forcing, "
                      "initial, solver, output)",
                      p->name, p->section_line ? p->section_line : p->line, section,
                      nearest_section(section, hint, sizeof hint));
    return 0;
  }
  const mm_key *k = find_key(section, name);
  if (!k) {
    char hint[160];
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: %s.%s: unknown key%s", p->name, p->line, section, name,
                      nearest_key(section, name, hint, sizeof hint));
    return 0;
  }
  int idx = (int)(k - mm_keys);
  if (p->seen[idx]) {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: %s.%s: duplicate key (first set on line %d)", p->name,
                      p->line, section, name, p->seen_line[idx]);
    return 0;
  }
  p->seen[idx] = true;
  p->seen_line[idx] = p->line;
  if (value[0] == ';') { /* written back as "key = ;...", it would read as a comment */
    p->err = MM_ERROR(MM_ERR_INPUT,
                      "%s:%d: %s.%s = %s: a value must not start with ';' (the resolved "
                      "configuration would read it as a comment)",
                      p->name, p->line, section, name, value);
    return 0;
  }
  if (hash_comment(value, strlen(value))) {
    p->err = MM_ERROR(MM_ERR_INPUT,
                      "%s:%d: %s.%s = %s: a '#' after a blank: a comment after a value starts "
                      "with ';' ('#' starts a comment only at the start of a line)",
                      p->name, p->line, section, name, value);
    return 0;
  }
  char why[256];
  if (!set_value(p->cfg, k, value, why, sizeof why)) {
    p->err = MM_ERROR(MM_ERR_INPUT, "%s:%d: %s.%s = %s: %s", p->name, p->line, section, name, value,
                      why);
    return 0;
  }
  snprintf(p->cfg->origin[idx], MM_STR_MAX, "%s:%d", p->name, p->line);
  return 1;
}

/* The value of --set S.K=VALUE, held to the rules of a line of the file so
 * that the resolved text reads back as the same configuration: blanks around
 * it trimmed (as inih does), valid UTF-8 without control characters, and no
 * ';' at the start or after a blank (which starts a comment in the file).
 * A malloc'd copy in *out. */
static MM_NODISCARD mm_err override_value(const char *text, const char *section, const char *key,
                                          char **out) {
  const char *v = strchr(text, '=') + 1, *end = v + strlen(v);
  while (*v == ' ' || *v == '\t')
    v++;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  const size_t len = (size_t)(end - v);
  MM_REQUIRE(valid_utf8((const unsigned char *)v, len), MM_ERR_INPUT,
             "--set: %s.%s: not valid UTF-8 text, or a control character", section, key);
  for (size_t i = 0; i < len; i++) /* "key = VALUE": a ';' first or after a blank */
    MM_REQUIRE(!(v[i] == ';' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t')), MM_ERR_INPUT,
               "--set: %s.%s = %.*s: ';' would start a comment in a configuration file", section,
               key, (int)len, v);
  MM_REQUIRE(!hash_comment(v, len), MM_ERR_INPUT,
             "--set: %s.%s = %.*s: a '#' after a blank, which a configuration file refuses (a "
             "comment there starts with ';')",
             section, key, (int)len, v);
  *out = malloc(len + 1);
  MM_REQUIRE(*out, MM_ERR_RUN, "--set: out of memory");
  memcpy(*out, v, len);
  (*out)[len] = '\0';
  return MM_OK;
}

/* Override i of overrides; set_by[key] is the override that set a key
 * before (-1: none): a key given twice is refused, whatever the values. */
static MM_NODISCARD mm_err apply_override(mm_config *cfg, const mm_config_override *overrides,
                                          int i, int *set_by) {
  const char *text = overrides[i].text;
  const char *dot = strchr(text, '.'), *eq = strchr(text, '=');
  MM_REQUIRE(dot && eq && dot < eq && dot > text && eq > dot + 1, MM_ERR_INPUT,
             "--set %s: expected SECTION.KEY=VALUE", text);
  char section[64], key[64];
  size_t slen = (size_t)(dot - text), klen = (size_t)(eq - dot - 1);
  MM_REQUIRE(slen < sizeof section && klen < sizeof key, MM_ERR_INPUT, "--set %s: unknown key",
             text);
  memcpy(section, text, slen);
  section[slen] = '\0';
  memcpy(key, dot + 1, klen);
  key[klen] = '\0';
  /* a file's "steps = 3" written as --set "run.steps = 3": say so, rather
   * than "run.steps : unknown key (did you mean run.steps?)" */
  MM_REQUIRE(
      !isspace((unsigned char)section[0]) && !isspace((unsigned char)key[0]) &&
          !isspace((unsigned char)section[slen - 1]) && !isspace((unsigned char)key[klen - 1]),
      MM_ERR_INPUT,
      "--set %s: blanks around the key: write SECTION.KEY=VALUE with none before the '='", text);
  char hint[160];
  MM_REQUIRE(known_section(section), MM_ERR_INPUT, "--set %s: [%s]: unknown section%s", text,
             section, nearest_section(section, hint, sizeof hint));
  const mm_key *k = find_key(section, key);
  MM_REQUIRE(k, MM_ERR_INPUT, "--set %s: %s.%s: unknown key%s", text, section, key,
             nearest_key(section, key, hint, sizeof hint));
  const int idx = (int)(k - mm_keys);
  MM_REQUIRE(set_by[idx] < 0, MM_ERR_INPUT, "--set %s and --set %s: %s.%s given twice",
             overrides[set_by[idx]].text, text, section, key);
  set_by[idx] = i;
  char why[256], *value = NULL;
  MM_CHECK(override_value(text, section, key, &value));
  const bool ok = set_value(cfg, k, value, why, sizeof why);
  const mm_err err =
      ok ? MM_OK : MM_ERROR(MM_ERR_INPUT, "--set: %s.%s = %s: %s", section, key, value, why);
  free(value);
  if (err != MM_OK) return err;
  snprintf(cfg->origin[k - mm_keys], MM_STR_MAX, "--set");
  return MM_OK;
}

static const char *origin_of(const mm_config *cfg, const char *section, const char *key,
                             const char *fallback) {
  const mm_key *k = find_key(section, key);
  const char *o = cfg->origin[k - mm_keys];
  return o[0] ? o : fallback;
}

const char *mm_config_origin(const mm_config *cfg, const char *key) {
  const char *dot = strchr(key, '.');
  if (!dot || dot - key >= 32) return "";
  char section[32];
  snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
  const mm_key *k = find_key(section, dot + 1);
  return k ? cfg->origin[k - mm_keys] : "";
}

const char *mm_config_given_with(const mm_config *cfg, const char *const *keys, char *out,
                                 size_t size) {
  size_t len = 0;
  out[0] = '\0';
  for (; *keys; keys++) {
    const char *o = mm_config_origin(cfg, *keys);
    if (!o[0] || len >= size) continue;
    len += (size_t)snprintf(out + len, size - len, "%s%s (%s)",
                            len ? ", " : "; set with it: ", *keys, o);
  }
  return out;
}

/* The levels (mm_grid_levels) must be usable by the step: every level at
 * least DBL_MIN thick (a thinner one is a subnormal double, whose reciprocal
 * overflows below 1/DBL_MAX = 5.6e-309), and every number the step derives
 * from them finite: 1/h_k, run.dt/dzw_k, the vertical diffusion
 * (kappa_v + kappa_convect) run.dt / (dzw_k h) of both levels of each
 * interface, and the surface heating. A level too thin otherwise passes
 * validation and blows up at run time. */
static MM_NODISCARD mm_err check_levels(const mm_config *cfg, const char *name) {
  const bool stretched = cfg->dz_surface > 0;
  const char *key = stretched ? "dz_surface" : "depth";
  const char *where = origin_of(cfg, "grid", key, name);
  /* the other keys of the levels, and of the numbers refused below */
  static const char *const levels_stretched[] = {"grid.depth", "grid.nz", NULL};
  static const char *const levels_uniform[] = {"grid.nz", NULL};
  static const char *const diffusion[] = {
      "grid.depth", "grid.nz", "physics.kappa_v", "physics.kappa_convect", "run.dt", NULL};
  static const char *const heating[] = {"grid.dz_surface", "grid.depth", "grid.nz", "run.dt",
                                        "physics.rho0",    "physics.cp", NULL};
  char with[8 * (MM_STR_MAX + 32)];
  const double value = stretched ? cfg->dz_surface : cfg->depth; /* m */
  const int nz = (int)cfg->nz;
  double *h = malloc((3 * (size_t)nz + 1) * sizeof *h);
  MM_REQUIRE(h, MM_ERR_RUN, "out of memory checking the levels");
  double *z_w = h + nz, *z_t = z_w + nz + 1;
  mm_grid_levels(cfg, h, z_w, z_t);
  const double kappa = cfg->kappa_v + cfg->kappa_convect; /* m2/s, the largest */
  const double dt = cfg->run_dt;                          /* s */
  const double q_top = dt * cfg->heat_flux / (cfg->rho0 * cfg->cp * h[0]);
  mm_err err = MM_OK;
  for (int k = 0; k < nz && err == MM_OK; k++) {
    if (!(h[k] >= DBL_MIN)) {
      if (stretched)
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: grid.dz_surface = %g: must be 0 or >= %.17g, the smallest normal "
                       "double (level %d would be %g m thick)%s",
                       where, value, DBL_MIN, k, h[k],
                       mm_config_given_with(cfg, levels_stretched, with, sizeof with));
      else
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: grid.depth = %g: levels of grid.depth / grid.nz = %g m: must be >= "
                       "%.17g, the smallest normal double%s",
                       where, value, h[k], DBL_MIN,
                       mm_config_given_with(cfg, levels_uniform, with, sizeof with));
      break;
    }
    if (k + 1 == nz) break;
    const double dzw = z_t[k + 1] - z_t[k], g_dt = dt / dzw; /* m, s/m */
    const double upper = kappa * g_dt * (1.0 / h[k]), lower = kappa * g_dt * (1.0 / h[k + 1]);
    if (!(dzw > 0) || !isfinite(g_dt) || !isfinite(upper) || !isfinite(lower))
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: grid.%s = %g: level %d too thin for the vertical diffusion: "
                     "(physics.kappa_v + physics.kappa_convect) run.dt / (dz h) = %g; use thicker "
                     "levels%s",
                     where, key, value, k, isfinite(upper) ? lower : upper,
                     mm_config_given_with(cfg, diffusion + (stretched ? 0 : 1), with, sizeof with));
  }
  if (err == MM_OK && cfg->heat_flux != 0 && !isfinite(q_top))
    err = MM_ERROR(MM_ERR_INPUT,
                   "%s: forcing.heat_flux = %g: the heating per step of the top level (%g m thick, "
                   "physics.rho0 = %g, physics.cp = %g) is not finite%s",
                   origin_of(cfg, "forcing", "heat_flux", name), cfg->heat_flux, h[0], cfg->rho0,
                   cfg->cp,
                   mm_config_given_with(cfg, heating + (stretched ? 0 : 1), with, sizeof with));
  /* finite but more than the whole physically possible range of temperature
   * in one step: unless the step's diffusion carries nearly all of it down,
   * the top level leaves that range at once, and with levels thin enough
   * for such heating the solve is lost to round-off (grid.dz_surface =
   * 1e-10: -3.6e8 degC at step 5), a blow-up the configuration shows */
  const double range = MM_TEMP_MAX - MM_TEMP_MIN; /* degC */
  if (err == MM_OK && fabs(q_top) > range)
    err = MM_ERROR(MM_ERR_INPUT,
                   "%s: forcing.heat_flux = %g W/m2 %s the top level (%g m thick, physics.rho0 = "
                   "%g, physics.cp = %g) by %.3g degC a step of run.dt = %g s, more than the "
                   "whole range of temperature the model keeps (%g to %g degC); use a thicker top "
                   "level, a shorter step or a smaller flux%s",
                   origin_of(cfg, "forcing", "heat_flux", name), cfg->heat_flux,
                   q_top > 0 ? "heats" : "cools", h[0], cfg->rho0, cfg->cp, fabs(q_top), dt,
                   MM_TEMP_MIN, MM_TEMP_MAX,
                   mm_config_given_with(cfg, heating + (stretched ? 0 : 1), with, sizeof with));
  free(h);
  return err;
}

const char *mm_config_calendar_name(mm_calendar c) {
  static const char *const names[] = {
      "standard", "proleptic_gregorian", "noleap", "all_leap", "360_day", "julian"};
  _Static_assert(sizeof names / sizeof names[0] == MM_CAL_JULIAN + 1, "a name per calendar");
  return (int)c >= 0 && (size_t)c < sizeof names / sizeof names[0] ? names[c] : "standard";
}

/* The digits of text[from..to) as a number, or -1 where one is not a digit
 * (no signs or blanks, unlike scanf). */
static int date_field(const char *text, int from, int to) {
  int v = 0;
  for (int i = from; i < to; i++) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = 10 * v + (text[i] - '0');
  }
  return v;
}

/* Days of month mo (1 to 12) of year y in the calendar. */
static int month_days(mm_calendar cal, int y, int mo) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (cal == MM_CAL_360_DAY) return 30;
  if (mo != 2) return days[mo - 1];
  const bool julian_leap = y % 4 == 0;
  const bool gregorian_leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  switch (cal) {
  case MM_CAL_NOLEAP: return 28;
  case MM_CAL_ALL_LEAP: return 29;
  case MM_CAL_JULIAN: return julian_leap ? 29 : 28;
  case MM_CAL_PROLEPTIC_GREGORIAN: return gregorian_leap ? 29 : 28;
  default: /* standard: Julian up to 1582-10-04, Gregorian from 1582-10-15 */
    return (y < 1582 ? julian_leap : gregorian_leap) ? 29 : 28;
  }
}

const char *mm_config_date_problem(const char *text, mm_calendar cal, char *buf, size_t size) {
  const size_t n = strlen(text);
  const char *form = "expected YYYY-MM-DD or YYYY-MM-DD hh:mm:ss (digits only)";
  if (n != 10 && n != 19) return form;
  if (text[4] != '-' || text[7] != '-') return form;
  if (n == 19 && (text[10] != ' ' || text[13] != ':' || text[16] != ':')) return form;
  const int y = date_field(text, 0, 4), mo = date_field(text, 5, 7), d = date_field(text, 8, 10);
  const int h = n == 19 ? date_field(text, 11, 13) : 0;
  const int mi = n == 19 ? date_field(text, 14, 16) : 0;
  const int s = n == 19 ? date_field(text, 17, 19) : 0;
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0) return form;
  if (y < 1) return "the year must be 1 to 9999";
  if (mo < 1 || mo > 12) return "the month must be 01 to 12";
  const int last = month_days(cal, y, mo);
  if (d < 1 || d > last) {
    snprintf(buf, size, "month %02d of %04d has %d days in the %s calendar", mo, y, last,
             mm_config_calendar_name(cal));
    return buf;
  }
  if (cal == MM_CAL_STANDARD && y == 1582 && mo == 10 && d > 4 && d < 15)
    return "1582-10-05 to 1582-10-14 are not dates of the standard calendar (the Julian "
           "calendar ends on 1582-10-04, the Gregorian one starts on 1582-10-15)";
  if (h > 23 || mi > 59 || s > 59) return "the time must be 00:00:00 to 23:59:59";
  return NULL;
}

const char *mm_path_problem(const char *path, bool dir) {
  if (strstr(path, "://")) return MM_NOT_A_URL;
  if (strchr(path, '\\')) return MM_NOT_A_BACKSLASH;
  const bool letter = (path[0] >= 'a' && path[0] <= 'z') || (path[0] >= 'A' && path[0] <= 'Z');
  if (letter && path[1] == ':' && (path[2] == '/' || (dir && path[2] == '\0')))
    return MM_NOT_A_DRIVE;
  return NULL;
}

/* Checks that involve more than one key. */
static MM_NODISCARD mm_err validate(const mm_config *cfg, const char *name) {
  for (const char *c = cfg->run_name; *c; c++)
    MM_REQUIRE((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                   *c == '-' || *c == '_' || *c == '.',
               MM_ERR_INPUT, "%s: run.name = %s: must hold only letters, digits, '-', '_', '.'",
               origin_of(cfg, "run", "name", name), cfg->run_name);
  MM_REQUIRE(cfg->run_name[0] != '\0' && cfg->run_name[0] != '.', MM_ERR_INPUT,
             "%s: run.name = '%s': must not be empty or start with '.'",
             origin_of(cfg, "run", "name", name), cfg->run_name);
  /* a name ending in .restart or .crash gives its history the name of
   * another name's restart or crash file (x.restart.nc is the restart file
   * of x): runs of the two names, each locking its own name, replaced each
   * other's files */
  static const char *const others[][2] = {{".restart", "restart"}, {".crash", "crash"}};
  const size_t len = strlen(cfg->run_name);
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    const size_t tail = strlen(others[i][0]);
    MM_REQUIRE(len <= tail || strcmp(cfg->run_name + len - tail, others[i][0]) != 0, MM_ERR_INPUT,
               "%s: run.name = %s: must not end in %s (its history, %s.nc, would be the %s file "
               "of run.name = %.*s)",
               origin_of(cfg, "run", "name", name), cfg->run_name, others[i][0], cfg->run_name,
               others[i][1], (int)(len - tail), cfg->run_name);
  }
  MM_REQUIRE(cfg->output_dir[0] != '\0', MM_ERR_INPUT, "%s: output.dir: must not be empty",
             origin_of(cfg, "output", "dir", name));
  char why[160];
  const char *bad_date = mm_config_date_problem(cfg->start_date, cfg->calendar, why, sizeof why);
  MM_REQUIRE(bad_date == NULL, MM_ERR_INPUT, "%s: run.start_date = %s: %s",
             origin_of(cfg, "run", "start_date", name), cfg->start_date, bad_date);
  if (cfg->dz_surface > 0) {
    double uniform = cfg->depth / (double)cfg->nz;
    char given[32], most[32]; /* every digit that tells them apart (333.333 and 333.333) */
    MM_REQUIRE(cfg->dz_surface <= uniform, MM_ERR_INPUT,
               "%s: grid.dz_surface = %s: must be <= grid.depth / grid.nz = %s",
               origin_of(cfg, "grid", "dz_surface", name),
               shortest_real(cfg->dz_surface, given, sizeof given),
               shortest_real(uniform, most, sizeof most));
    /* one level is the whole depth: a thinner surface level was ignored */
    MM_REQUIRE(cfg->nz > 1 || cfg->dz_surface == cfg->depth, MM_ERR_INPUT,
               "%s: grid.dz_surface = %g: with grid.nz = 1 the one level is grid.depth = %g m "
               "thick (leave dz_surface 0)",
               origin_of(cfg, "grid", "dz_surface", name), cfg->dz_surface, cfg->depth);
  }
  MM_CHECK(check_levels(cfg, name));
  double cells = (double)cfg->nx * (double)cfg->ny * (double)cfg->nz;
  MM_REQUIRE(cells <= 4e12, MM_ERR_INPUT, "%s: grid %ld x %ld x %ld = %.3g cells: at most 4e12",
             name, cfg->nx, cfg->ny, cfg->nz, cells);
  return MM_OK;
}

mm_err mm_config_load_string(mm_config *cfg, const char *name, const char *text,
                             const mm_config_override *overrides, int n_overrides) {
  mm_config_defaults(cfg);
  mm_parse p = {.name = name, .text = text, .len = strlen(text), .cfg = cfg};
  int rc = ini_parse_stream(reader, &p, handler, &p);
  if (p.err != MM_OK) return p.err;
  MM_REQUIRE(rc == 0, MM_ERR_INPUT, "%s:%d: syntax error (expected [section] or key = value)", name,
             rc > 0 ? rc : 0);
  int set_by[MM_NKEYS];
  for (int i = 0; i < MM_NKEYS; i++)
    set_by[i] = -1;
  for (int i = 0; i < n_overrides; i++)
    MM_CHECK(apply_override(cfg, overrides, i, set_by));
  /* output.dir without trailing slashes, so that the files' names read
   * "output/x.nc", not "output//x.nc" ("/" stays "/"); a slash after a
   * blank stays, for the resolved text would lose a trailing blank */
  for (size_t len = strlen(cfg->output_dir);
       len > 1 && cfg->output_dir[len - 1] == '/' && cfg->output_dir[len - 2] != ' ' &&
       cfg->output_dir[len - 2] != '\t';
       len--)
    cfg->output_dir[len - 1] = '\0';
  MM_CHECK(validate(cfg, name));
  return MM_OK;
}

int mm_dir_file(char *out, size_t size, const char *dir, const char *name, const char *suffix) {
  const size_t len = strlen(dir);
  const char *sep = len > 0 && dir[len - 1] == '/' ? "" : "/";
  return snprintf(out, size, "%s%s%s%s", dir, sep, name, suffix);
}

mm_err mm_config_name_origin(const mm_config *cfg, mm_err err) {
  if (err != MM_ERR_INPUT) return err;
  const char *msg = mm_error_message();
  char section[32], key[32];
  size_t s = strspn(msg, "abcdefghijklmnopqrstuvwxyz_");
  if (s == 0 || s >= sizeof section || msg[s] != '.') return err;
  const char *k0 = msg + s + 1;
  size_t k = strspn(k0, "abcdefghijklmnopqrstuvwxyz_0123456789");
  if (k == 0 || k >= sizeof key || k0[k] != ' ') return err; /* not a path: "grid.nx/x.nc:" */
  memcpy(section, msg, s), section[s] = '\0';
  memcpy(key, k0, k), key[k] = '\0';
  const mm_key *found = find_key(section, key);
  if (!found || !cfg->origin[found - mm_keys][0]) return err;
  return mm_error_prefix(err, "%s: ", cfg->origin[found - mm_keys]);
}

const char *mm_file_kind(unsigned mode) {
  return S_ISLNK(mode)    ? "a symbolic link"
         : S_ISDIR(mode)  ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISREG(mode)  ? "a file"
                          : "of an unknown type";
}

mm_err mm_config_load(mm_config *cfg, const char *path, const mm_config_override *overrides,
                      int n_overrides) {
  enum { MAX_BYTES = 1 << 20 };
  /* opened without blocking, so that a FIFO nobody writes to is refused
   * instead of waited for; every rank reads the file, so it must be one */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  MM_REQUIRE(fd >= 0, MM_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return MM_ERROR(MM_ERR_INPUT, "%s: cannot read: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) { /* a directory: the read says so */
    const char *kind = mm_file_kind(st.st_mode);
    close(fd);
    return MM_ERROR(MM_ERR_INPUT, "%s: not a regular file (%s): a configuration must be a file",
                    path, kind);
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    const int e = errno;
    close(fd);
    return MM_ERROR(MM_ERR_INPUT, "%s: cannot open: %s", path, strerror(e));
  }
  char *text = malloc(MAX_BYTES + 1);
  if (!text) {
    fclose(f);
    return MM_ERROR(MM_ERR_RUN, "%s: out of memory", path);
  }
  size_t n = fread(text, 1, MAX_BYTES + 1, f);
  int read_error = ferror(f);
  fclose(f);
  if (read_error) {
    free(text);
    return MM_ERROR(MM_ERR_INPUT, "%s: cannot read (is it a directory?)", path);
  }
  if (n > MAX_BYTES) {
    free(text);
    return MM_ERROR(MM_ERR_INPUT, "%s: larger than %d bytes: not a configuration file", path,
                    MAX_BYTES);
  }
  if (memchr(text, '\0', n)) {
    free(text);
    return MM_ERROR(MM_ERR_INPUT, "%s: contains NUL bytes: not a configuration file", path);
  }
  text[n] = '\0';
  mm_err err = mm_config_load_string(cfg, path, text, overrides, n_overrides);
  free(text);
  return err == MM_OK ? MM_OK : mm_error_trace(err, __FILE__, __LINE__);
}

/* -------------------------------------------------------------- writing */

void mm_config_write(const mm_config *cfg, FILE *out) {
  const char *section = "";
  char value[MM_STR_MAX + 32];
  for (int i = 0; i < MM_NKEYS; i++) {
    const mm_key *k = &mm_keys[i];
    if (strcmp(section, k->section)) {
      fprintf(out, "%s[%s]\n", i ? "\n" : "", k->section);
      section = k->section;
    }
    format_value(cfg, k, value, sizeof value);
    fprintf(out, "%s = %s\n", k->key, value);
  }
}

char *mm_config_to_string(const mm_config *cfg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  mm_config_write(cfg, f);
  fclose(f);
  return buf;
}

/* The state of mm_config_solution_diff: the configuration compared with,
 * the differences found so far. */
typedef struct {
  const mm_config *cfg;
  char *out;
  size_t len, used;
  bool seen[MM_NKEYS];
  int found;
} mm_diff;

static int diff_handler(void *user, const char *section, const char *name, const char *value) {
  mm_diff *d = user;
  const mm_key *k = find_key(section, name);
  if (!k || !k->solution) return 1; /* keys of other versions, and the others, do not count */
  d->seen[k - mm_keys] = true;
  char here[MM_STR_MAX + 32];
  format_value(d->cfg, k, here, sizeof here);
  if (strcmp(here, value) != 0 && d->used < d->len) {
    const int n = snprintf(d->out + d->used, d->len - d->used, "%s%s.%s = %s there, %s here",
                           d->found ? "; " : "", section, name, value, here);
    if (n > 0) d->used += (size_t)n < d->len - d->used ? (size_t)n : d->len - d->used - 1;
    d->found++;
  }
  return 1;
}

int mm_config_solution_diff(const mm_config *cfg, const char *text, char *out, size_t len) {
  mm_diff d = {.cfg = cfg, .out = out, .len = len};
  if (len) out[0] = '\0';
  if (ini_parse_string(text, diff_handler, &d) < 0) return -1;
  /* a key of this version that the text lacks: compared with its default */
  for (int i = 0; i < MM_NKEYS; i++) {
    if (!mm_keys[i].solution || d.seen[i]) continue;
    char here[MM_STR_MAX + 32], def[MM_STR_MAX + 32], why[64];
    format_value(cfg, &mm_keys[i], here, sizeof here);
    mm_config dflt; /* the default, formatted as the value is */
    memset(&dflt, 0, sizeof dflt);
    if (!set_value(&dflt, &mm_keys[i], mm_keys[i].def, why, sizeof why)) continue;
    format_value(&dflt, &mm_keys[i], def, sizeof def);
    if (strcmp(here, def) != 0 && d.used < len) {
      const int n = snprintf(out + d.used, len - d.used, "%s%s.%s = %s (not there) here",
                             d.found ? "; " : "", mm_keys[i].section, mm_keys[i].key, here);
      if (n > 0) d.used += (size_t)n < len - d.used ? (size_t)n : len - d.used - 1;
      d.found++;
    }
  }
  return d.found;
}

uint64_t mm_config_solution_hash(const mm_config *cfg) {
  uint64_t h = 1469598103934665603ULL;
  char line[MM_STR_MAX + 128], value[MM_STR_MAX + 32];
  for (int i = 0; i < MM_NKEYS; i++) {
    if (!mm_keys[i].solution) continue;
    format_value(cfg, &mm_keys[i], value, sizeof value);
    snprintf(line, sizeof line, "%s.%s=%s\n", mm_keys[i].section, mm_keys[i].key, value);
    for (const unsigned char *c = (const unsigned char *)line; *c; c++) {
      h ^= *c;
      h *= 1099511628211ULL;
    }
  }
  return h;
}

void mm_config_write_markdown(FILE *out) {
  fprintf(out,
          "# Configuration\n\n"
          "<!-- generated by `minimodel --config-reference`; cfg.docs_in_sync checks it -->\n\n"
          "A case is one INI file; keys not given take their default. "
          "`--set SECTION.KEY=VALUE` overrides a key in every case (each key at most once). "
          "Ranges are closed unless written with a parenthesis. Integers and numbers are "
          "decimal (a number may have an exponent: 1e-3). A bool is true, yes, on or 1, "
          "or false, no, off or 0, in any case. A line that starts with ';' or '#' is a "
          "comment; after a value, a comment starts with ';' after a blank (a '#' after a "
          "blank is refused).\n");
  const char *section = "";
  for (int i = 0; i < MM_NKEYS; i++) {
    const mm_key *k = &mm_keys[i];
    if (strcmp(section, k->section)) {
      fprintf(out,
              "\n## [%s]\n\n| key | type | default | unit | allowed | meaning |\n"
              "|---|---|---|---|---|---|\n",
              k->section);
      section = k->section;
    }
    static const char *tname[] = {"integer", "number", "bool", "string", "choice"};
    char allowed[160] = "";
    if (k->type == T_INT || k->type == T_REAL)
      snprintf(allowed, sizeof allowed, "%s%.10g, %.10g]", k->min_open ? "(" : "[", k->min, k->max);
    else if (k->type == T_ENUM) {
      snprintf(allowed, sizeof allowed, "%s", k->choices);
      for (char *p = allowed; *p; p++)
        if (*p == '|') *p = ',';
    } else if (k->type == T_BOOL)
      snprintf(allowed, sizeof allowed, "true,false");
    else if (k->type == T_STRING)
      snprintf(allowed, sizeof allowed, "at most %zu characters", string_max(k));
    fprintf(out, "| `%s` | %s | `%s` | %s | %s | %s |\n", k->key, tname[k->type], k->def, k->unit,
            allowed, k->doc);
  }
}
