/* Run configuration: one table of every key (type, default, unit, range),
 * INI files parsed with inih, command-line overrides, validation with
 * messages that name the file, line and key. */
#ifndef MM_CONFIG_H
#define MM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mm_error.h"
#include "mm_settings.h"

#define MM_STR_MAX 256

/* Why a path with a backslash is refused (the same keys and inputs as
 * MM_NOT_A_URL): the netCDF library (4.9) turns each '\\' of a path into
 * '/' before it opens the file, a Windows separator, so that "out\\x"
 * created, and truncated, the file in "out/x" */
#define MM_NOT_A_BACKSLASH                                                                         \
  "the netCDF library reads '\\' in a path as '/' (a Windows separator) and would open another "   \
  "file than the one named: give a path without '\\' (rename the file or folder)"

/* Why a path that starts with a drive letter is refused: the netCDF
 * library reads "c:/x.nc" (also "c:\\x.nc", and an output.dir "c:") as the
 * Windows drive c, and opens "/c/x.nc" */
#define MM_NOT_A_DRIVE                                                                             \
  "the netCDF library reads a path that starts with a letter and ':' as a Windows drive ('c:/x' "  \
  "as '/c/x') and would open another file than the one named: write it as './c:/x'"

/* Why a path with "://" is refused (initial.file, initial.restart,
 * output.dir, and the inputs' names again before they are opened): the
 * netCDF library takes such a name for a URL and asks a server, which may
 * never answer, or refuses it, whatever file of that name is on disk */
#define MM_NOT_A_URL                                                                               \
  "a path with '://' is a URL to the netCDF library, which reads no URL here: give a local "       \
  "path without '://' (copy or rename the file)"

typedef enum { MM_BATHY_FLAT, MM_BATHY_BOWL, MM_BATHY_SEAMOUNT, MM_BATHY_SLOPE } mm_bathymetry;
typedef enum { MM_ADV_NONE, MM_ADV_UPWIND, MM_ADV_SUPERBEE } mm_advection;
typedef enum { MM_FLOW_NONE, MM_FLOW_UNIFORM, MM_FLOW_GYRE } mm_flow_kind;
typedef enum { MM_INIT_STRATIFIED, MM_INIT_STEP, MM_INIT_MODE, MM_INIT_UNIFORM } mm_init_pattern;
/* cpu: the CPU step; otherwise the GPU step (mm_gpu.h) on the device of
 * that name (mm_device.h). */
typedef enum { MM_BACKEND_CPU, MM_BACKEND_CUDA, MM_BACKEND_EMULATED } mm_backend_kind;
/* CF calendars of the output's time axis (run.calendar). */
typedef enum {
  MM_CAL_STANDARD,
  MM_CAL_PROLEPTIC_GREGORIAN,
  MM_CAL_NOLEAP,
  MM_CAL_ALL_LEAP,
  MM_CAL_360_DAY,
  MM_CAL_JULIAN
} mm_calendar;
/* Their CF names, in enum order. */
#define MM_CALENDARS "standard|proleptic_gregorian|noleap|all_leap|360_day|julian"

/* The resolved configuration of one case. Units in the table (mm_config.c). */
typedef struct {
  /* [run] */
  char run_name[MM_STR_MAX];
  long run_steps;
  double run_dt;
  char start_date[MM_STR_MAX]; /* model date of step 0: "YYYY-MM-DD hh:mm:ss" */
  mm_calendar calendar;
  /* [grid] */
  long nx, ny, nz;
  double dx, dy, depth, dz_surface;
  mm_bathymetry bathymetry;
  bool periodic_x, periodic_y;
  long ranks_x, ranks_y;
  /* [physics] */
  double kappa_v, kappa_convect, kappa_h;
  mm_advection advection;
  mm_flow_kind flow;
  double flow_speed;
  double rho0, cp, alpha, beta;
  /* [forcing] */
  double heat_flux;
  /* [initial] */
  char initial_file[MM_STR_MAX];
  char initial_restart[MM_STR_MAX];
  mm_init_pattern initial_pattern;
  long initial_mode;
  double t_surface, t_bottom;
  /* [solver] */
  mm_backend_kind backend;
  char tdma[MM_STR_MAX];
  /* [output] */
  char output_dir[MM_STR_MAX];
  long output_interval;
  bool initial_record;
  long restart_interval;
  bool restart_at_stop;
  long deflate;
  long timing_stride;
  long progress_interval;
  /* the settings of the environment (MINIMODEL_*), read once by main
   * (mm_settings_read) and copied into each case; not keys */
  mm_settings env;
  /* where each key was set: "file:line", "--set" or "" for the default */
  char origin[64][MM_STR_MAX];
} mm_config;

/* One --set SECTION.KEY=VALUE override. */
typedef struct {
  const char *text;
} mm_config_override;

/* The value of section.key as the resolved configuration writes it (an
 * enum by its name); "?" for a key that does not exist. */
void mm_config_value_text(const mm_config *cfg, const char *section, const char *key, char *buf,
                          size_t n);

/* A file's type (stat's st_mode) as messages name it: "a FIFO", "a
 * directory", "a symbolic link", ... */
const char *mm_file_kind(unsigned mode);

/* "<dir>/<name><suffix>" into out[size], one slash between dir and name
 * also where dir is "/" (output.dir = /: "/x.nc", not "//x.nc"). Returns
 * what snprintf returns: size or more where the name was cut. */
int mm_dir_file(char *out, size_t size, const char *dir, const char *name, const char *suffix);

/* err (MM_ERR_INPUT) of a check made after the configuration was read (the
 * model's: stability, decomposition, flow, solver, inputs), whose message
 * starts with "section.key " (a key and a blank): prefixed with where that key was set,
 * "file:line: " or "--set: ", when it was set; any other err as it is. */
MM_NODISCARD mm_err mm_config_name_origin(const mm_config *cfg, mm_err err);

/* Where `key` ("section.key", one of the table's) was set: "file:line" or
 * "--set"; "" for a key at its default or not in the table. */
const char *mm_config_origin(const mm_config *cfg, const char *key);

/* "; set with it: run.dt (--set), grid.nz (flat.ini:4)" for the keys of
 * `keys` ("section.key", NULL-ended, each one of the table's) that the
 * configuration or --set gave (defaults are left out), into out[size];
 * "" for none. Returns out. For a message that names one key where others
 * enter the number refused too, so that the user sees where each of them
 * came from. */
const char *mm_config_given_with(const mm_config *cfg, const char *const *keys, char *out,
                                 size_t size);

/* Fill defaults, parse path, apply overrides, validate. On error returns
 * MM_ERR_INPUT with a message "path:line: section.key = value: reason". */
MM_NODISCARD mm_err mm_config_load(mm_config *cfg, const char *path,
                                   const mm_config_override *overrides, int n_overrides);
/* Defaults only. */
void mm_config_defaults(mm_config *cfg);
/* Parse INI text from a buffer (for tests and fuzzing); name labels messages. */
MM_NODISCARD mm_err mm_config_load_string(mm_config *cfg, const char *name, const char *text,
                                          const mm_config_override *overrides, int n_overrides);

/* Write the resolved configuration as INI text (all keys, defaults filled in). */
void mm_config_write(const mm_config *cfg, FILE *out);
/* The same into a malloc'd string (caller frees); NULL on allocation failure. */
char *mm_config_to_string(const mm_config *cfg);
/* 64-bit FNV-1a hash of the keys that determine the solution (see docs/output.md). */
uint64_t mm_config_solution_hash(const mm_config *cfg);

/* Markdown reference of every key, one table per section (docs/configuration.md). */
void mm_config_write_markdown(FILE *out);

/* The keys that determine a continued run's solution (those of the
 * restart's configuration hash) whose values differ between cfg and `text`,
 * a resolved configuration as mm_config_write writes it: "section.key = A
 * there, B here; ..." into out[len]. Returns how many differ, -1 when text
 * cannot be read. */
int mm_config_solution_diff(const mm_config *cfg, const char *text, char *out, size_t len);

/* Why the netCDF library would not open the file that path names, or
 * NULL: a URL (MM_NOT_A_URL), a backslash (MM_NOT_A_BACKSLASH), a leading
 * drive letter (MM_NOT_A_DRIVE). dir: path is a folder to which "/" and a
 * name are added (output.dir), so that "c:" alone is a drive too. The
 * values of initial.file, initial.restart and output.dir are checked so,
 * and the inputs' names again before they are opened. */
const char *mm_path_problem(const char *path, bool dir);

/* The CF name of a calendar (run.calendar). */
const char *mm_config_calendar_name(mm_calendar c);

/* What is wrong with text as run.start_date in calendar cal, or NULL where
 * it is a date of the calendar: "YYYY-MM-DD" or "YYYY-MM-DD hh:mm:ss",
 * digits only, year 1 to 9999, the month's days in that calendar (February
 * 28 days in noleap, 29 in all_leap, 30 every month in 360_day, the Julian
 * and Gregorian leap years in julian and proleptic_gregorian, and in
 * standard the Julian calendar up to 1582-10-04 and the Gregorian from
 * 1582-10-15). The message may be written into buf[size]. */
const char *mm_config_date_problem(const char *text, mm_calendar cal, char *buf, size_t size);

/* Bytes of the UTF-8 character at s (1 to 4, of the n there), 0 where they
 * are not one (a byte that cannot start one, a sequence cut short, an
 * overlong or out-of-range first byte). An ASCII byte, control characters
 * included, is 1. */
size_t mm_utf8_sequence(const unsigned char *s, size_t n);

#endif
