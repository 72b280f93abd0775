#!/usr/bin/env python3
"""NumPy reference implementation of minimodel (docs/physics.md).

    reference.py CONFIG.ini [--set SECTION.KEY=VALUE ...] [--output FILE] [--quiet]

Integrates the same case as the C model on the whole global grid (no MPI, no
decomposition) and writes a history file with the variables and attributes
of docs/output.md (its chunks aside), by default
<output.dir>/<run.name>.reference.nc.

This file is the specification in executable form. Each function mirrors a
section of docs/physics.md and evaluates every floating-point expression in
the order that page prescribes (the C model is built with -ffp-contract=off,
NumPy never fuses), so that the two agree to rtol 1e-12 and normally bitwise.
Where the page gives a formula without an order, it is evaluated as written,
left to right, as C would. Transcendental functions (sin, cos, exp) are taken
from Python's `math` module, i.e. the C library the model links, and applied
to 1-D vectors only; NumPy's own SIMD versions may differ in the last bit.

Array layout: tracers are (nz, ny, nx) arrays indexed [k, j, i]; land cells
(k >= kmt) hold 0. Horizontal neighbours come from copies padded with a halo
of HALO cells (wrapped on periodic edges, land beyond walls).

Exit status: 0 success, 1 failure while running (non-finite state, or one
outside the physically possible range; I/O of the history),
2 usage, configuration or input-file error (as the C model; also an
--output that is the configuration file or initial.file, and no numpy: run it
with .venv/bin/python; an --output that is empty or ends in '/'; an --output
whose lock another run holds), 130 interrupted (Ctrl-C), 143 and 129
stopped by SIGTERM and SIGHUP (the history, as at Ctrl-C, closed with the
records written). The history is written under the model's lock of its name
(<name>.lock beside <name>.nc, flock), so that two runs of this script, or
this script and the model, never write one file. Lines on standard output
that cannot be written (a closed pipe, a full disk, standard output closed)
are dropped and the run goes on, as the model's: they change neither the
history nor the exit status. An --output that is a folder, a FIFO or a
device, and an output.dir that is not a folder, are refused (2, as the
model refuses them), and so is an --output that the netCDF library would
take for a URL or rewrite to another file's name (a backslash, a leading
drive letter: path_problem).
"""

import argparse
import datetime
import errno
import fcntl
import math
import os
import re
import signal
import socket
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_stdout  # noqa: E402
from mm_nc_guard import path_problem  # noqa: E402

try:
    import numpy as np
except ImportError as e:
    print(f"reference.py: {e}: run it with the Python of scripts/setup (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

HALO = 2  # superbee needs two cells upstream of a face
# The physically possible range of the state (docs/physics.md): a finite
# value outside it is a blow-up as much as a NaN.
TEMP_RANGE = (-10.0, 110.0)  # degC
SALT_RANGE = (-1.0, 100.0)   # g/kg
# NC_FILL_DOUBLE, the NetCDF default fill of doubles. docs/output.md writes it
# 9.96920996838687e+36, which rounds to a neighbouring double: the exact
# value is 9.9692099683868690e+36.
FILL_VALUE = 9.9692099683868690e36


class ConfigError(Exception):
    """Usage, configuration or input-file error: exit status 2."""


class RunError(Exception):
    """Failure while running: exit status 1."""


class LockBusy(ConfigError):
    """The history's lock is held by another run: exit status 2."""


class Stopped(BaseException):
    """SIGTERM or SIGHUP (a job's end, a closed terminal): the run stops as
    at Ctrl-C, its history closed with the records written; exit status 128
    + the signal's number, as the model's."""

    def __init__(self, signo):
        super().__init__(signo)
        self.signo = signo


# the signals that stop a run as Ctrl-C does (SIGINT: KeyboardInterrupt)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# held: the history is being made, written or closed (signals_held);
# pending: the signal that came meanwhile; stopping: one has stopped the run
_stop = {"held": False, "pending": None, "stopping": False}


def stop(signo):
    """The exception that stops the run on signal signo."""
    _stop["stopping"] = True
    return KeyboardInterrupt() if signo == signal.SIGINT else Stopped(signo)


def stop_on(signo, _frame):
    """The handler of the stop signals: the run stops at the first (the
    history closed), at once, or at the end of a call on the history (an
    exception raised inside netCDF4's Python code was lost in its bare
    'except:', and the run went on with the signal spent; one between two
    variables of a record left it half written). Later ones are let go, so
    that they do not stop the closing itself."""
    if _stop["stopping"]:
        return
    if _stop["held"]:
        _stop["pending"] = _stop["pending"] or signo
        return
    raise stop(signo)


# ---------------------------------------------------------------------------
# Configuration: the table of model/mm_config.c (mm_keys), same defaults and
# ranges. (section, key, type, default, min, max, min_open, choices)
# Types: int, real, bool, str, enum. Ranges are closed unless min_open.
# ---------------------------------------------------------------------------
BIG = 1e300
KEYS = [
    ("run", "name", "str", "minimodel", None, None, False, None),
    ("run", "steps", "int", "10", 0, 1e9, False, None),
    ("run", "dt", "real", "600", 0, 1e8, True, None),
    ("run", "start_date", "str", "2000-01-01 00:00:00", None, None, False, None),
    ("run", "calendar", "enum", "standard", None, None, False,
     "standard|proleptic_gregorian|noleap|all_leap|360_day|julian"),
    ("grid", "nx", "int", "32", 1, 1e6, False, None),
    ("grid", "ny", "int", "32", 1, 1e6, False, None),
    ("grid", "nz", "int", "20", 1, 10000, False, None),
    ("grid", "dx", "real", "10000", 0, 1e8, True, None),
    ("grid", "dy", "real", "10000", 0, 1e8, True, None),
    ("grid", "depth", "real", "4000", 0, 12000, True, None),
    ("grid", "dz_surface", "real", "0", 0, 12000, False, None),
    ("grid", "bathymetry", "enum", "flat", None, None, False, "flat|bowl|seamount|slope"),
    ("grid", "periodic_x", "bool", "false", None, None, False, None),
    ("grid", "periodic_y", "bool", "false", None, None, False, None),
    ("grid", "ranks_x", "int", "0", 0, 1e6, False, None),
    ("grid", "ranks_y", "int", "0", 0, 1e6, False, None),
    ("physics", "kappa_v", "real", "1e-5", 0, 10, False, None),
    ("physics", "kappa_convect", "real", "0", 0, 1000, False, None),
    ("physics", "kappa_h", "real", "0", 0, 1e7, False, None),
    ("physics", "advection", "enum", "superbee", None, None, False, "none|upwind|superbee"),
    ("physics", "flow", "enum", "none", None, None, False, "none|uniform|gyre"),
    ("physics", "flow_speed", "real", "0.1", 0, 100, False, None),
    ("physics", "rho0", "real", "1025", 0, 1e5, True, None),
    ("physics", "cp", "real", "3992", 0, 1e5, True, None),
    ("physics", "alpha", "real", "2e-4", 0, 1, False, None),
    ("physics", "beta", "real", "7.6e-4", 0, 1, False, None),
    ("forcing", "heat_flux", "real", "0", -1e5, 1e5, False, None),
    ("initial", "file", "str", "", None, None, False, None),
    ("initial", "restart", "str", "", None, None, False, None),
    ("initial", "pattern", "enum", "stratified", None, None, False,
     "stratified|step|mode|uniform"),
    ("initial", "mode", "int", "1", 0, 10000, False, None),
    ("initial", "t_surface", "real", "20", -5, 100, False, None),
    ("initial", "t_bottom", "real", "4", -5, 100, False, None),
    ("solver", "backend", "enum", "cpu", None, None, False, "cpu|cuda|emulated"),
    ("solver", "tdma", "str", "auto", None, None, False, None),
    ("output", "dir", "str", "output", None, None, False, None),
    ("output", "interval", "int", "0", 0, 1e9, False, None),
    ("output", "initial_record", "bool", "true", None, None, False, None),
    ("output", "restart_interval", "int", "0", 0, 1e9, False, None),
    ("output", "restart_at_stop", "bool", "false", None, None, False, None),
    ("output", "deflate", "int", "0", 0, 9, False, None),
    ("output", "timing_stride", "int", "0", 0, 1e9, False, None),
    ("output", "progress_interval", "int", "0", 0, 1e9, False, None),
]
KEY_TABLE = {(k[0], k[1]): k for k in KEYS}
SECTIONS = ["run", "grid", "physics", "forcing", "initial", "solver", "output"]
DEFAULTS = {f"{s}.{k}": d for (s, k, _t, d, *_rest) in KEYS}  # as written in a file
STR_MAX = 256  # MM_STR_MAX: strings hold at most 255 characters

# Keys whose value the reference cannot honour (non-default refused, exit 2).
UNSUPPORTED = {"initial.restart": ""}
# solver.tdma's names in a build with every solver (solvers/tdma.c): for a
# step in host memory (solver.backend cpu or emulated) and in device memory
TDMA_HOST = ("auto", "simd", "omp", "reference", "lapack")
TDMA_DEVICE = ("auto", "cuda", "cusparse")

# the blanks strtol and strtod skip: C's isspace, ASCII only (Python's \s
# would take U+00A0, U+3000 and the like, which the model refuses)
_C_SPACE = r"[ \t\n\v\f\r]*"
_INT_RE = re.compile(_C_SPACE + r"[+-]?[0-9]+")  # strtol, base 10
_REAL_RE = re.compile(_C_SPACE + r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # strtod
_HEX_RE = re.compile(_C_SPACE
                     + r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")
_NONFINITE_RE = re.compile(_C_SPACE + r"[+-]?(inf|infinity|nan)", re.IGNORECASE)
# taken as the calendar named after them (set_value in model/mm_config.c)
CALENDAR_ALIASES = {"gregorian": "standard", "365_day": "noleap", "366_day": "all_leap"}
_BOOL = {"true": True, "yes": True, "on": True, "1": True,
         "false": False, "no": False, "off": False, "0": False}


def _range_text(typ, lo, hi, min_open):
    what = "an integer" if typ == "int" else "a number"
    return f"must be {what} in {'(' if min_open else '['}{lo:.10g}, {hi:.10g}]"


# the keys that name files or folders: a path that the netCDF library would
# take for a URL or rewrite (a backslash, a drive letter) is refused
# (path_problem)
PATH_KEYS = {("initial", "file"), ("initial", "restart"), ("output", "dir")}
def parse_value(section, key, text):
    """Parse one value as set_value() in model/mm_config.c does; raise
    ValueError with the reason."""
    _s, _k, typ, _d, lo, hi, min_open, choices = KEY_TABLE[(section, key)]
    if typ == "int":
        if not _INT_RE.fullmatch(text):
            raise ValueError(_range_text(typ, lo, hi, min_open))
        v = int(text)
    elif typ == "real":
        if _REAL_RE.fullmatch(text):
            v = float(text)
        elif _HEX_RE.fullmatch(text):  # strtod takes it, the model refuses it
            raise ValueError("a decimal number expected, not hexadecimal; "
                             + _range_text(typ, lo, hi, min_open))
        elif _NONFINITE_RE.fullmatch(text):
            raise ValueError("must be finite; " + _range_text(typ, lo, hi, min_open))
        else:
            raise ValueError(_range_text(typ, lo, hi, min_open))
        if not math.isfinite(v):
            raise ValueError("out of the range of a double; " + _range_text(typ, lo, hi, min_open))
        v = v + 0.0  # -0 becomes +0
    elif typ == "bool":  # in any case of ASCII letters, as the model (strcasecmp)
        word = text.lower() if text.isascii() else text
        if word not in _BOOL:
            raise ValueError("must be true or false (or yes/no, on/off, 1/0, in any case)")
        return _BOOL[word]
    elif typ == "enum":
        names = choices.split("|")
        if (section, key) == ("run", "calendar"):  # the calendars' other CF names
            text = CALENDAR_ALIASES.get(text, text)
        if text not in names:
            raise ValueError("must be one of " + ",".join(names))
        return text
    else:  # str: in bytes, at most what fits on a line with its key (set_value)
        size, most = len(text.encode("utf-8", "surrogateescape")), min(LINE_MAX - len(key) - 3,
                                                                         STR_MAX - 1)
        if size > most:
            raise ValueError(f"too long ({size} characters, at most {most})")
        problem = path_problem(text, section == "output") if (section, key) in PATH_KEYS else None
        if problem:
            raise ValueError(problem)
        return text
    if v < lo or v > hi or (min_open and v <= lo):
        raise ValueError(_range_text(typ, lo, hi, min_open))
    return v


# ---------------------------------------------------------------------------
# The configuration file, read as model/mm_config.c reads it (its reader()
# and handler() around inih; docs/reliability.md, "Hostile input"): a line
# ends at LF, CR LF or CR; a UTF-8 byte-order mark at the start is skipped;
# leading blanks are dropped, so that an indented key or [section] is a key
# or a header (there are no multi-line values); ';' or '#' at the start of a
# line and ';' after a blank start a comment; after a header's ']' only
# blanks and a comment; a key and its value are split at the first '=' or
# ':'; the first line that is neither a header, a comment nor a key is an
# error; a section may be given more than once (its keys add up), a key at
# most once; a section without keys is not looked at.
# ---------------------------------------------------------------------------
LINE_MAX = 198  # MM_LINE_MAX: inih's line buffer (200) less the line end and NUL
_LINE_END_RE = re.compile(r"\r\n|\r|\n")
# control characters but the tab, and bytes that are not UTF-8 (read with
# surrogateescape)
_NOT_TEXT_RE = re.compile("[\x00-\x08\x0a-\x1f\udc80-\udcff]")
BOM = "\ufeff"


def split_lines(text):
    """The lines of text without their ends (LF, CR LF or a lone CR)."""
    lines = _LINE_END_RE.split(text)
    if lines[-1] == "":  # the text ends with a line end, or is empty
        lines.pop()
    return lines


def until_comment(text, stops):
    """Index of the first character of text in stops, or of a ';' after a
    blank (an inline comment), or len(text): inih's find_chars_or_comment."""
    for i, c in enumerate(text):
        if c in stops or (c == ";" and i > 0 and text[i - 1] in " \t"):
            return i
    return len(text)


def header_end(line):
    """Index of the ']' that closes the [section] header starting line, or
    None when the line has none before an inline comment."""
    end = until_comment(line[1:], "]") + 1
    return end if end < len(line) and line[end] == "]" else None


def ini_entries(text, name):
    """(section, key, value, line, line of the section's header) of each key
    line of the text, in order, as the model's parse meets them; ConfigError
    for the first line the model refuses."""
    section, section_line = "", 0
    for n, line in enumerate(split_lines(text), 1):
        if _NOT_TEXT_RE.search(line):
            raise ConfigError(f"{name}:{n}: not valid UTF-8 text")
        size = len(line.encode("utf-8", "surrogateescape"))
        if size > LINE_MAX:
            raise ConfigError(f"{name}:{n}: line too long ({size} characters, at most "
                              f"{LINE_MAX})")
        line = line.lstrip(" \t")
        if n == 1 and line.startswith(BOM):
            line = line[1:].lstrip(" \t")
        shown = line.rstrip(" \t")
        if line == "" or line[0] in ";#":
            continue
        if line[0] == "[":
            end = header_end(line)
            if end is None:
                raise ConfigError(f"{name}:{n}: {shown}: section header without its closing ']'")
            if line[1:end].strip(" \t") == "":
                raise ConfigError(f"{name}:{n}: []: a section header without a name")
            rest = line[end + 1:].lstrip(" \t")
            if rest and rest[0] != ";":
                raise ConfigError(f"{name}:{n}: {shown}: text after the section header's ']' (a "
                                  "key goes on a line of its own; a comment starts with ';')")
            section, section_line = line[1:end], n
            continue
        sep = until_comment(line, "=:")
        if sep == len(line) or line[sep] not in "=:":
            raise ConfigError(f"{name}:{n}: syntax error (expected [section] or key = value)")
        key, value = line[:sep].rstrip(" \t"), line[sep + 1:]
        value = value[:until_comment(value, "")].strip(" \t")
        if section == "":
            raise ConfigError(f"{name}:{n}: {key}: key before any [section]")
        yield section, key, value, n, section_line


def check_regular(path):
    """A FIFO, a socket or a device would wait for a writer or never end:
    refused as the model refuses them (exit 2)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the open says why
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device")
        raise ConfigError(f"{path}: not a regular file ({kind})")


def read_config_file(path):
    """The text of the configuration file at path (at most 1 MiB)."""
    if os.path.isdir(path):
        raise ConfigError(f"{path}: cannot read (is it a directory?)")
    check_regular(path)
    try:
        with open(path, "rb") as f:
            raw = f.read((1 << 20) + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot open: {e.strerror}") from None
    if len(raw) > 1 << 20:
        raise ConfigError(f"{path}: larger than {1 << 20} bytes: not a configuration file")
    if b"\0" in raw:
        raise ConfigError(f"{path}: contains NUL bytes: not a configuration file")
    return raw.decode("utf-8", "surrogateescape")  # bytes not UTF-8: refused by line


def hash_comment(value):
    """A '#' after a blank in a value, meant as a comment: refused (the model's
    hash_comment)."""
    return any(c == "#" and i > 0 and value[i - 1] in " \t" for i, c in enumerate(value))


def apply_file(cfg, text, name):
    """Set the keys of the configuration text in cfg (handler() in
    model/mm_config.c)."""
    first_line = {}
    for section, key, value, n, section_line in ini_entries(text, name):
        if section not in SECTIONS:
            raise ConfigError(f"{name}:{section_line}: [{section}]: unknown section (known: "
                              + ", ".join(SECTIONS) + ")")
        if (section, key) not in KEY_TABLE:
            raise ConfigError(f"{name}:{n}: {section}.{key}: unknown key")
        if (section, key) in first_line:
            raise ConfigError(f"{name}:{n}: {section}.{key}: duplicate key (first set on line "
                              f"{first_line[section, key]})")
        first_line[section, key] = n
        if value.startswith(";"):
            raise ConfigError(f"{name}:{n}: {section}.{key} = {value}: a value must not start "
                              "with ';' (the resolved configuration would read it as a comment)")
        if hash_comment(value):
            raise ConfigError(f"{name}:{n}: {section}.{key} = {value}: a '#' after a blank: a "
                              "comment after a value starts with ';' ('#' starts a comment only "
                              "at the start of a line)")
        try:
            cfg[f"{section}.{key}"] = parse_value(section, key, value)
        except ValueError as e:
            raise ConfigError(f"{name}:{n}: {section}.{key} = {value}: {e}") from None


def load_config(path=None, overrides=(), text=None):
    """Resolved configuration as a flat dict {"section.key": value}: defaults,
    then the INI file (path or text), then --set overrides, then the checks
    that involve several keys (validate() in model/mm_config.c)."""
    name = path if path is not None else "<string>"
    cfg = {key: parse_value(*key.split("."), value) for key, value in DEFAULTS.items()}
    if text is None:
        text = read_config_file(path)
    apply_file(cfg, text, name)
    set_by = {}  # "section.key": the --set that gave it
    for ov in overrides:
        dot, eq = ov.find("."), ov.find("=")
        if dot < 0 or eq < 0 or dot > eq:
            raise ConfigError(f"--set {ov}: expected SECTION.KEY=VALUE")
        # the value without the blanks around it, as model/mm_config.c
        # (override_value) takes it
        section, key, value = ov[:dot], ov[dot + 1:eq], ov[eq + 1:].strip(" \t")
        if section != section.strip() or key != key.strip():
            raise ConfigError(f"--set {ov}: blanks around the key: write SECTION.KEY=VALUE "
                              "with none before the '='")
        if section not in SECTIONS:
            raise ConfigError(f"--set {ov}: [{section}]: unknown section")
        if (section, key) not in KEY_TABLE:
            raise ConfigError(f"--set {ov}: {section}.{key}: unknown key")
        if f"{section}.{key}" in set_by:
            raise ConfigError(f"--set {set_by[f'{section}.{key}']} and --set {ov}: "
                              f"{section}.{key} given twice")
        set_by[f"{section}.{key}"] = ov
        if _NOT_TEXT_RE.search(value):
            raise ConfigError(f"--set: {section}.{key}: not valid UTF-8 text, or a control "
                              "character")
        if any(c == ";" and (i == 0 or value[i - 1] in " \t") for i, c in enumerate(value)):
            raise ConfigError(f"--set: {section}.{key} = {value}: ';' would start a comment in a "
                              "configuration file")
        if hash_comment(value):
            raise ConfigError(f"--set: {section}.{key} = {value}: a '#' after a blank, which a "
                              "configuration file refuses (a comment there starts with ';')")
        try:
            cfg[f"{section}.{key}"] = parse_value(section, key, value)
        except ValueError as e:
            raise ConfigError(f"--set: {section}.{key} = {value}: {e}") from None
    # output.dir without trailing slashes ("/" stays, and a slash after a
    # blank), as model/mm_config.c keeps it
    d = cfg["output.dir"]
    while len(d) > 1 and d[-1] == "/" and d[-2] not in " \t":
        d = d[:-1]
    cfg["output.dir"] = d
    validate_config(cfg, name, set(set_by))
    return cfg


def check_start_date(date, calendar, name):
    """run.start_date must be a date of run.calendar: YYYY-MM-DD or
    YYYY-MM-DD hh:mm:ss, digits only, year 1 to 9999; the day and time
    judged by cftime (which netCDF4 brings), the CF calendars' own
    implementation."""
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?: ([0-9]{2}):([0-9]{2}):([0-9]{2}))?",
                     date)
    ok = m is not None and int(m[1]) >= 1
    if ok:
        import cftime
        try:
            cftime.datetime(*(int(g or 0) for g in m.groups()), calendar=calendar)
        except ValueError:
            ok = False
    if not ok:
        raise ConfigError(f"{name}: run.start_date = {date}: not a date of the {calendar} "
                          "calendar (YYYY-MM-DD or YYYY-MM-DD hh:mm:ss, year 1 to 9999)")


def validate_config(cfg, name, set_keys=()):
    """Checks across keys (validate() in model/mm_config.c) and the keys the
    reference does not implement. set_keys: the keys given with --set, whose
    refusals name "--set" as the model's do; the others name the file (the
    reference keeps no lines)."""
    def at(key):
        return "--set" if key in set_keys else name

    run_name, where = cfg["run.name"], at("run.name")
    if not re.fullmatch(r"[A-Za-z0-9._-]*", run_name):
        raise ConfigError(f"{where}: run.name = {run_name}: must hold only letters, digits, "
                          "'-', '_', '.'")
    if run_name == "" or run_name.startswith("."):
        raise ConfigError(f"{where}: run.name = '{run_name}': must not be empty or start with '.'")
    for tail, what in ((".restart", "restart"), (".crash", "crash")):
        if len(run_name) > len(tail) and run_name.endswith(tail):
            raise ConfigError(f"{where}: run.name = {run_name}: must not end in {tail} (its "
                              f"history, {run_name}.nc, would be the {what} file of run.name = "
                              f"{run_name[:-len(tail)]})")
    if cfg["output.dir"] == "":
        raise ConfigError(f"{at('output.dir')}: output.dir: must not be empty")
    check_start_date(cfg["run.start_date"], cfg["run.calendar"], at("run.start_date"))
    if cfg["grid.dz_surface"] > 0:
        uniform = cfg["grid.depth"] / cfg["grid.nz"]
        if cfg["grid.dz_surface"] > uniform:
            raise ConfigError(f"{at('grid.dz_surface')}: grid.dz_surface = "
                              f"{cfg['grid.dz_surface']:g}: must be "
                              f"<= grid.depth / grid.nz = {uniform:g}")
        if cfg["grid.nz"] == 1 and cfg["grid.dz_surface"] != cfg["grid.depth"]:
            raise ConfigError(f"{at('grid.dz_surface')}: grid.dz_surface = "
                              f"{cfg['grid.dz_surface']:g}: with "
                              f"grid.nz = 1 the one level is grid.depth = {cfg['grid.depth']:g} "
                              "m thick (leave dz_surface 0)")
    # the thinnest level must be a normal double (check_levels() in mm_config.c)
    thinnest = cfg["grid.dz_surface"] or cfg["grid.depth"] / cfg["grid.nz"]
    if thinnest < sys.float_info.min:
        key = "dz_surface" if cfg["grid.dz_surface"] > 0 else "depth"
        raise ConfigError(f"{at('grid.' + key)}: grid.{key} = {cfg['grid.' + key]:g}: the "
                          f"thinnest level ({thinnest:g} m) must be >= {sys.float_info.min!r}, "
                          "the smallest normal double")
    # each level thick enough for the vertical diffusion, and the top level's
    # heating per step finite (the rest of check_levels() in mm_config.c)
    key = "dz_surface" if cfg["grid.dz_surface"] > 0 else "depth"
    h, _, _, dzw = levels(cfg)
    kappa = np.float64(cfg["physics.kappa_v"]) + cfg["physics.kappa_convect"]  # m2/s
    dt = np.float64(cfg["run.dt"])  # s
    with np.errstate(all="ignore"):
        for k in range(cfg["grid.nz"] - 1):
            g_dt = dt / dzw[k]  # s/m
            upper, lower = kappa * g_dt * (1.0 / h[k]), kappa * g_dt * (1.0 / h[k + 1])
            if not (dzw[k] > 0 and np.isfinite([g_dt, upper, lower]).all()):
                raise ConfigError(
                    f"{at('grid.' + key)}: grid.{key} = {cfg['grid.' + key]:g}: level {k} too "
                    "thin for the vertical diffusion: (physics.kappa_v + physics.kappa_convect) "
                    f"run.dt / (dz h) = {lower if np.isfinite(upper) else upper:g}; use thicker "
                    "levels")
        q_top = dt * cfg["forcing.heat_flux"] / (cfg["physics.rho0"] * cfg["physics.cp"] * h[0])
    if cfg["forcing.heat_flux"] != 0 and not np.isfinite(q_top):
        raise ConfigError(f"{at('forcing.heat_flux')}: forcing.heat_flux = "
                          f"{cfg['forcing.heat_flux']:g}: the heating "
                          f"per step of the top level ({h[0]:g} m thick, physics.rho0 = "
                          f"{cfg['physics.rho0']:g}, physics.cp = {cfg['physics.cp']:g}) is not "
                          "finite")
    # nor more than the whole range of temperature in one step (a blow-up the
    # configuration shows)
    if abs(q_top) > TEMP_RANGE[1] - TEMP_RANGE[0]:
        raise ConfigError(f"{at('forcing.heat_flux')}: forcing.heat_flux = "
                          f"{cfg['forcing.heat_flux']:g} W/m2 "
                          f"{'heats' if q_top > 0 else 'cools'} the top level ({h[0]:g} m thick, "
                          f"physics.rho0 = {cfg['physics.rho0']:g}, physics.cp = "
                          f"{cfg['physics.cp']:g}) by {abs(q_top):.3g} degC a step of run.dt = "
                          f"{dt:g} s, more than the whole range of temperature the model keeps "
                          f"({TEMP_RANGE[0]:g} to {TEMP_RANGE[1]:g} degC); use a thicker top "
                          "level, a shorter step or a smaller flux")
    # a periodic direction of fewer cells than the halo wraps onto the block
    # itself (mm_grid_create() in model/mm_grid.c, on one rank as here)
    for axis, cells, what in (("x", "nx", "columns"), ("y", "ny", "rows")):
        if cfg[f"grid.periodic_{axis}"] and cfg[f"grid.{cells}"] < HALO:
            raise ConfigError(f"grid.{cells} = {cfg[f'grid.{cells}']} with grid.periodic_{axis} "
                              f"= true: the halo of {HALO} {what} wraps around onto the block "
                              f"itself, which needs at least {HALO} {what}; use grid.{cells} >= "
                              f"{HALO} or grid.periodic_{axis} = false")
    cells = float(cfg["grid.nx"]) * float(cfg["grid.ny"]) * float(cfg["grid.nz"])
    if cells > 4e12:
        raise ConfigError(f"{name}: grid {cfg['grid.nx']} x {cfg['grid.ny']} x "
                          f"{cfg['grid.nz']} = {cells:.3g} cells: at most 4e12")
    # solver.tdma: a solver for the memory of solver.backend's step, as
    # check_tdma_name() in model/mm_model.c; which of them a build has
    # (lapack, cuda, cusparse) the model alone knows, so a name that no build
    # has is refused here and the rest are left to the model
    on_device = cfg["solver.backend"] == "cuda"
    variants = TDMA_DEVICE if on_device else TDMA_HOST
    if cfg["solver.tdma"] not in variants:
        raise ConfigError(f"{at('solver.tdma')}: solver.tdma = {cfg['solver.tdma']}: not a "
                          f"{'cuda' if on_device else 'cpu'} solver variant of any build "
                          f"(at most: {', '.join(variants)})")
    for key, supported in UNSUPPORTED.items():
        if cfg[key] != supported:
            raise ConfigError(f"{at(key)}: {key} = {cfg[key]}: not supported by reference.py")


def format_value(value):
    """A value as format_value() in model/mm_config.c writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):  # the shortest %g text that reads back as the value
        for digits in range(6, 18):
            text = "%.*g" % (digits, value)
            if float(text) == value:
                return text
    return str(value)


def config_text(cfg):
    """The resolved configuration as INI text (mm_config_write)."""
    lines, section = [], None
    for (s, k, *_rest) in KEYS:
        if s != section:
            lines.append(("\n" if section else "") + f"[{s}]")
            section = s
        lines.append(f"{k} = {format_value(cfg[f'{s}.{k}'])}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# docs/physics.md, "Grid"
# ---------------------------------------------------------------------------
def levels(cfg):
    """Layer thicknesses h_k, interfaces z_w, centres z_k and centre distances
    dzw_k = z_{k+1} - z_k (dzw_{nz-1} = 0)."""
    nz, depth, hs = cfg["grid.nz"], cfg["grid.depth"], cfg["grid.dz_surface"]
    if hs > 0 and nz > 1:
        # stretched: h_k = h_s + k g, g = 2 (depth - nz h_s) / (nz (nz - 1))
        g = 2.0 * (depth - nz * hs) / (nz * (nz - 1))
        h = np.array([hs + k * g for k in range(nz)])
    elif hs > 0:
        # nz = 1: the page's g = 0 would give h_0 = h_s, breaking sum h = depth;
        # the single level spans the depth (as model/mm_grid.c does).
        h = np.array([depth])
    else:
        h = np.full(nz, depth / nz)
    z_w = np.zeros(nz + 1)
    for k in range(nz):  # sequential sums, as in C
        z_w[k + 1] = z_w[k] + h[k]
    z = z_w[:nz] + 0.5 * h
    dzw = np.zeros(nz)
    dzw[:-1] = z[1:] - z[:-1]
    return h, z_w, z, dzw


def centre_coordinates(cfg):
    """Normalised centre coordinates xi_i = (i + 1/2)/nx, eta_j = (j + 1/2)/ny."""
    nx, ny = cfg["grid.nx"], cfg["grid.ny"]
    xi = (np.arange(nx) + 0.5) / nx
    eta = (np.arange(ny) + 0.5) / ny
    return xi, eta


def bathymetry_depth(cfg):
    """Sea-floor depth D(j, i) >= 0 of every column (land where negative)."""
    depth, kind = cfg["grid.depth"], cfg["grid.bathymetry"]
    xi, eta = centre_coordinates(cfg)
    a = (xi - 0.5) / 0.5
    b = (eta - 0.5) / 0.5
    r2 = a[None, :] * a[None, :] + b[:, None] * b[:, None]  # ((xi-1/2)/(1/2))^2 + (...)^2
    ny, nx = r2.shape
    if kind == "flat":
        return np.full((ny, nx), depth)
    if kind == "bowl":
        return depth * (1.0 - r2)  # negative where r > 1: land
    if kind == "seamount":
        e = np.array([math.exp(-v / 0.1) for v in r2.ravel()]).reshape(r2.shape)
        return depth * (1.0 - 0.8 * e)
    if kind == "slope":
        s = np.minimum(1.0, 1.5 * xi - 0.1)  # negative at the western edge: land
        return np.broadcast_to(depth * s, (ny, nx)).copy()
    raise ConfigError(f"grid.bathymetry = {kind}: unknown")


class Grid:
    """Geometry and land mask of the whole domain (docs/physics.md, Grid)."""

    def __init__(self, cfg):
        self.nx, self.ny, self.nz = cfg["grid.nx"], cfg["grid.ny"], cfg["grid.nz"]
        self.dx, self.dy = cfg["grid.dx"], cfg["grid.dy"]
        self.periodic_x, self.periodic_y = cfg["grid.periodic_x"], cfg["grid.periodic_y"]
        self.h, self.z_w, self.z, self.dzw = levels(cfg)
        # kmt: count of levels whose centre lies above the sea floor, z_k < D.
        D = bathymetry_depth(cfg)
        self.kmt = np.sum(self.z[:, None, None] < D[None, :, :], axis=0).astype(np.int32)
        k = np.arange(self.nz)[:, None, None]
        self.wet = k < self.kmt[None, :, :]  # (nz, ny, nx)
        if not self.wet.any():  # no ocean to step: refused, as the model does
            raise ConfigError(f"grid.bathymetry = {cfg['grid.bathymetry']} on this grid "
                              f"({self.nx} x {self.ny} columns, {self.nz} levels, grid.depth = "
                              f"{cfg['grid.depth']:g} m) has no wet cell: every column is land; "
                              "use a larger grid, more depth or another bathymetry")
        # Cell volumes (h_k dx) dy, as in the diagnostics.
        self.vol = (self.h * self.dx) * self.dy

    def pad(self, a, fill=0, before=HALO, after=HALO):
        """Pad the last two axes (y, x): wrap on periodic edges, `fill` beyond walls."""
        width = [(0, 0)] * (a.ndim - 2)
        a = np.pad(a, width + [(0, 0), (before, after)],
                   mode="wrap" if self.periodic_x else "constant",
                   **({} if self.periodic_x else {"constant_values": fill}))
        a = np.pad(a, width + [(before, after), (0, 0)],
                   mode="wrap" if self.periodic_y else "constant",
                   **({} if self.periodic_y else {"constant_values": fill}))
        return a


# ---------------------------------------------------------------------------
# docs/physics.md, "Prescribed flow (C-grid)"
# ---------------------------------------------------------------------------
def streamfunction(cfg, grid):
    """psi-hat at the corners (J, I), J = 0..ny, I = 0..nx, rounded to a
    multiple of q = 2^(e - 40)."""
    kind, U = cfg["physics.flow"], cfg["physics.flow_speed"]
    nx, ny, dx, dy = grid.nx, grid.ny, grid.dx, grid.dy
    Lx, Ly = nx * dx, ny * dy
    x = np.arange(nx + 1) * dx
    y = np.arange(ny + 1) * dy
    if kind == "none":
        psi = np.zeros((ny + 1, nx + 1))
    elif kind == "uniform":
        psi = np.broadcast_to((-U * y)[:, None], (ny + 1, nx + 1)).copy()
    elif kind == "gyre":
        psi0 = U * Ly / math.pi
        sx = np.array([math.sin(math.pi * v / Lx) for v in x])
        sy = np.array([math.sin(math.pi * v / Ly) for v in y])
        psi = (psi0 * sx[None, :]) * sy[:, None]
    else:
        raise ConfigError(f"physics.flow = {kind}: unknown")
    _m, e = math.frexp(U * max(Lx, Ly))
    q = math.ldexp(1.0, e - 40)
    return np.rint(psi / q) * q


def transports(grid, psi_hat):
    """Masked volume transports per unit depth (m2/s) through the east and
    north faces of every cell: (U_east, V_north), each (nz, ny, nx)."""
    nz = grid.nz
    # Cells touching corner (J, I) are (J-1..J, I-1..I), wrapped on periodic
    # edges; cells beyond a wall do not count (padded with a level count
    # larger than any k). The corner is kept at level k when k < min kmt.
    kp = grid.pad(grid.kmt, fill=nz + 1, before=1, after=1)
    kmin = np.minimum(np.minimum(kp[:-1, :-1], kp[:-1, 1:]), np.minimum(kp[1:, :-1], kp[1:, 1:]))
    k = np.arange(nz)[:, None, None]
    psi_k = np.where(k < kmin[None, :, :], psi_hat[None, :, :], 0.0)  # (nz, ny+1, nx+1)
    U = -(psi_k[:, 1:, 1:] - psi_k[:, :-1, 1:])
    V = psi_k[:, 1:, 1:] - psi_k[:, 1:, :-1]
    # A face is wet when the cells on both sides are wet; any other face
    # carries no transport. (Masking psi-hat does not zero the faces on a
    # wall for the uniform flow, so this is applied explicitly.)
    wet_e, wet_n = wet_faces(grid)
    U = np.where(_interior_east(grid, wet_e), U, 0.0)
    V = np.where(_interior_north(grid, wet_n), V, 0.0)
    check_divergence(grid, U, V)
    return U, V


def check_divergence(grid, U, V):
    """The discrete flow must be exactly divergence-free in every wet cell
    (docs/physics.md, "Prescribed flow"); a uniform flow is only so in a
    channel periodic in x whose walls no land touches."""
    Uw = grid.pad(U, before=1, after=0)[:, 1:, :-1]   # east face of the western neighbour
    Vs = grid.pad(V, before=1, after=0)[:, :-1, 1:]
    div = (Uw - U) + (Vs - V)
    if np.any(div[grid.wet] != 0.0):
        raise ConfigError("the prescribed flow is not divergence-free on this grid: a uniform "
                          "flow needs grid.periodic_x = true and no land touching the walls")


def wet_faces(grid):
    """Face wetness on the padded grid: wet_e[k, jp, p] for the face between
    padded cells p and p+1 in x (p = 0..nx+2H-2), wet_n[k, q, ip] likewise
    between padded rows q and q+1."""
    kp = grid.pad(grid.kmt)  # 0 beyond walls: land
    k = np.arange(grid.nz)[:, None, None]
    wet = k < kp[None, :, :]
    wet_e = wet[:, :, :-1] & wet[:, :, 1:]
    wet_n = wet[:, :-1, :] & wet[:, 1:, :]
    return wet_e, wet_n


def _interior_east(grid, wet_e):
    """East faces of the interior cells from the padded face array."""
    return wet_e[:, HALO:HALO + grid.ny, HALO:HALO + grid.nx]


def _interior_north(grid, wet_n):
    """North faces of the interior cells from the padded face array."""
    return wet_n[:, HALO:HALO + grid.ny, HALO:HALO + grid.nx]


# ---------------------------------------------------------------------------
# docs/physics.md, "Stability of the explicit part"
# ---------------------------------------------------------------------------
def stable_x(cfg, grid, U, V):
    """Per cell and level, the largest x = dt / (dx dy) for which every
    weight of the explicit horizontal update is >= 0, advection and diffusion
    together (inf where nothing moves the cell), and the cell's O and D.
    O: the transports out of the cell through its wet faces, Q: their
    squares, D: the sum of kappa_h dy/dx and kappa_h dx/dy over its wet
    faces; x (O + D) <= 1 (upwind), x (2 O + D) - x^2 Q <= 1 (superbee),
    x D <= 1 (none). Arrays (nz, ny, nx)."""
    dx, dy, kh = grid.dx, grid.dy, cfg["physics.kappa_h"]
    scheme = cfg["physics.advection"]
    kx, ky = kh * dy / dx, kh * dx / dy  # as HorizontalOperator
    wet_e, wet_n = wet_faces(grid)
    rows, cols = slice(HALO, HALO + grid.ny), slice(HALO, HALO + grid.nx)
    we = wet_e[:, rows, HALO:HALO + grid.nx]
    ww = wet_e[:, rows, HALO - 1:HALO - 1 + grid.nx]
    wn = wet_n[:, HALO:HALO + grid.ny, cols]
    ws = wet_n[:, HALO - 1:HALO - 1 + grid.ny, cols]
    # West face of cell i = east face of cell i-1 (wrapped, or 0 beyond a
    # wall); south face likewise. Transports through dry faces are 0.
    Uw = grid.pad(U, before=1, after=0)[:, 1:, :-1]
    Vs = grid.pad(V, before=1, after=0)[:, :-1, 1:]
    oe = np.where(we, np.maximum(U, 0.0), 0.0)
    ow = np.where(ww, np.maximum(-Uw, 0.0), 0.0)
    on = np.where(wn, np.maximum(V, 0.0), 0.0)
    os_ = np.where(ws, np.maximum(-Vs, 0.0), 0.0)
    out = ((oe + ow) + on) + os_
    sq = ((oe * oe + ow * ow) + on * on) + os_ * os_
    dif = (we.astype(float) + ww) * kx + (wn.astype(float) + ws) * ky
    if scheme == "superbee":
        a = 2.0 * out + dif
    elif scheme == "upwind":
        a = out + dif
    else:
        a = dif
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = 1.0 / a
        if scheme == "superbee":  # the smaller root, free of cancellation
            root = 2.0 / (a + np.sqrt(np.maximum(a * a - 4.0 * sq, 0.0)))
            # a^2 beyond the doubles: the root scaled by a (Q beyond them: 1 / a)
            scaled = 2.0 / (a * (1.0 + np.sqrt(np.maximum(1.0 - 4.0 * (sq / a / a), 0.0))))
            scaled = np.where(np.isfinite(sq), scaled, 1.0 / a)
            x = np.where(sq != 0.0, np.where(np.isfinite(a * a), root, scaled), x)
        x = np.where(a > 0.0, x, math.inf)
        x = np.where(np.isnan(a), 0.0, x)  # a coefficient that is not a number
    return x, (out if scheme != "none" else np.zeros_like(out)), dif


def stable_dt(cfg, grid, U, V):
    """The largest stable dt of the explicit step (s; inf: any)."""
    if not grid.wet.any():
        return math.inf
    x, _out, _dif = stable_x(cfg, grid, U, V)
    return float(x[grid.wet].min()) * (grid.dx * grid.dy)


def check_dt_area(cfg, grid):
    """Raise ConfigError where dt / (dx dy), by which the step multiplies its
    fluxes, is not finite (0 x inf would be NaN): before the flow is built,
    which divides by the cells' sizes too, as the model refuses it first."""
    dt, area = cfg["run.dt"], grid.dx * grid.dy
    dt_area = dt / area if area > 0.0 else math.inf
    if not math.isfinite(dt_area):
        raise ConfigError(f"grid.dx = {grid.dx:g} m, grid.dy = {grid.dy:g} m: run.dt / (dx dy) = "
                          f"{dt_area:g} s/m2 is not a finite number")


def check_stability(cfg, grid, U, V):
    """Raise ConfigError when run.dt is beyond stable_dt (docs/physics.md,
    "Stability of the explicit part"), naming a dt that passes."""
    dt, limit = cfg["run.dt"], stable_dt(cfg, grid, U, V)
    if dt <= limit:
        return
    # what sets the limit, at the cell where it is set
    x, out, dif = stable_x(cfg, grid, U, V)
    where = np.unravel_index(np.argmin(np.where(grid.wet, x, math.inf)), x.shape)
    adv, dff = out[where] > 0.0, dif[where] > 0.0
    what = "advective + diffusive" if adv and dff else "advective" if adv else "diffusive"
    scheme = cfg["physics.advection"].replace("none", "no")
    head = (f"run.dt = {dt:g} s breaks the {what} stability limit of the explicit horizontal "
            f"step ({scheme} advection, kappa_h = {cfg['physics.kappa_h']:g} m2/s)")
    if not limit > 0.0:  # below the doubles: no dt to suggest
        raise ConfigError(f"{head}: no time step passes on this grid (the largest stable one is "
                          "below the smallest double): make the cells larger (grid.dx = "
                          f"{grid.dx:g} m, grid.dy = {grid.dy:g} m) or kappa_h smaller")
    # the 6-digit decimal at or below the limit, as the C model suggests (the
    # limit itself where the scale is beyond the doubles)
    exponent = 5 - math.floor(math.log10(limit))
    if exponent > 308:
        use, shown = limit, f"{limit:.17g}"
    else:
        scale = 10.0 ** exponent
        v = math.floor(limit * scale)
        use = float(f"{v / scale:.6g}")
        while use > limit:
            v -= 1
            use = float(f"{v / scale:.6g}")
        shown = f"{use:.6g}"
    ratio = dt / limit
    times = f"{ratio:.5g}" if math.isfinite(ratio) else f"more than {sys.float_info.max:.5g}"
    raise ConfigError(f"{head}: it is {times} times the largest stable time step; use "
                      f"run.dt <= {shown} s")


# ---------------------------------------------------------------------------
# docs/physics.md, "Initial state"
# ---------------------------------------------------------------------------
def initial_state(cfg, grid):
    """(T, S) on wet cells, 0 on land."""
    if cfg["initial.file"]:
        return read_initial_file(cfg["initial.file"], grid)
    nz, ny, nx = grid.nz, grid.ny, grid.nx
    pattern = cfg["initial.pattern"]
    ts, tb = cfg["initial.t_surface"], cfg["initial.t_bottom"]
    xi, eta = centre_coordinates(cfg)
    shape = (nz, ny, nx)
    if pattern == "stratified":
        e500 = np.array([math.exp(-zk / 500) for zk in grid.z])[:, None, None]
        e1000 = np.array([math.exp(-zk / 1000) for zk in grid.z])[:, None, None]
        sx = np.array([math.sin(2 * math.pi * v) for v in xi])[None, None, :]
        sy = np.array([math.sin(math.pi * v) for v in eta])[None, :, None]
        T = (tb + (ts - tb) * e500) + ((0.5 * sx) * sy) * e500
        S = 35 - 0.5 * e1000
    elif pattern == "step":
        inside = ((0.25 <= eta) & (eta < 0.5))[:, None] & ((0.25 <= xi) & (xi < 0.5))[None, :]
        T = np.where(inside[None, :, :], ts, tb)
        S = np.full(shape, 35.0)
    elif pattern == "mode":
        m = cfg["initial.mode"]
        T = np.zeros(shape)
        for n in np.unique(grid.kmt):  # cos(m pi (k + 1/2) / kmt), per column depth
            n = int(n)
            if n == 0:
                continue
            col = np.array([math.cos(m * math.pi * (k + 0.5) / n) for k in range(n)])
            sel = grid.kmt == n
            T[:n, sel] = col[:, None]
        S = 35 + T
    elif pattern == "uniform":
        T = np.full(shape, ts)
        S = np.full(shape, 35.0)
    else:
        raise ConfigError(f"initial.pattern = {pattern}: unknown")
    T = np.where(grid.wet, np.broadcast_to(T, shape), 0.0)
    S = np.where(grid.wet, np.broadcast_to(S, shape), 0.0)
    return T, S


# the units of initial.file's fields that are read (io/initial.c), compared
# in lower case with blanks, '_', '.' and '^' taken out; none or empty: these
TEMP_UNITS = {"degc", "degreec", "degreesc", "degreecelsius", "degreescelsius", "celsius", "c",
              "°c"}
MISSING_MAX = 8  # values of a missing_value attribute (CF allows a vector)
SALT_UNITS = {"g/kg", "gkg-1", "gperkg", "psu", "pss-78", "pss78", "1e-3", "1", "ppt", "‰",
              "practicalsalinityunit", "practicalsalinityunits"}


def valid_range(path, name, var):
    """CF's valid range of an initial field, as io/initial.c reads it:
    valid_range (two numbers), or valid_min and valid_max (one each, either
    may be absent); ((lo, hi), text naming it), text "" for none. A
    malformed one is refused: the field's missing data could not be told."""
    lo, hi, has = -np.inf, np.inf, {}
    for att, count in (("valid_range", 2), ("valid_min", 1), ("valid_max", 1)):
        if att not in var.ncattrs():
            continue
        v = np.ravel(var.getncattr(att))
        if v.size != count or v.dtype.kind not in "iuf" or not np.all(np.isfinite(v)):
            raise ConfigError(f"{path}: {name}: attribute {att} is not "
                              f"{'two finite numbers' if count == 2 else 'one finite number'}")
        has[att] = v.astype(np.float64)
    if "valid_range" in has and ("valid_min" in has or "valid_max" in has):
        raise ConfigError(f"{path}: {name}: attribute valid_range beside valid_min or valid_max "
                          "(CF: one or the other)")
    if "valid_range" in has:
        lo, hi = has["valid_range"]
    lo = has["valid_min"][0] if "valid_min" in has else lo
    hi = has["valid_max"][0] if "valid_max" in has else hi
    if lo > hi:
        raise ConfigError(f"{path}: {name}: its valid range [{lo:g}, {hi:g}] is empty: every "
                          "value would be missing data")
    if "valid_range" in has:
        text = f"valid_range = [{lo:g}, {hi:g}]"
    elif "valid_min" in has and "valid_max" in has:
        text = f"valid_min = {lo:g}, valid_max = {hi:g}"
    elif has:
        text = f"valid_min = {lo:g}" if "valid_min" in has else f"valid_max = {hi:g}"
    else:
        text = ""
    return (lo, hi), text


def read_initial_file(path, grid):
    """initial.file (docs/output.md): numeric temp and salt on dimensions named
    (z, y, x), in this order, of shape exactly (nz, ny, nx); land ignored (0);
    a wet value that is not finite or equals the _FillValue or missing_value
    (missing data) is refused, and so is a field whose units are not degrees
    Celsius (temp) or g/kg, practical salinity (salt; "1" with a
    standard_name other than sea_water_practical_salinity is a mass
    fraction), and a file whose coordinate variables are not the model's:
    z the level centres (m, positive down, within 1e-6 relative + 1e-6 m),
    y and x increasing."""
    import netCDF4
    check_regular(path)
    try:  # a name that is no file here, with the reason
        os.stat(path)
    except OSError as e:
        raise ConfigError(f"{path}: cannot open: {e.strerror}") from None
    import mm_nc_guard
    short = mm_nc_guard.classic_cut_short(path)  # its lacking data would read as zeros
    if short:
        raise ConfigError(f"{path}: {short}")
    try:
        ds = netCDF4.Dataset(path, "r")
    except (OSError, RuntimeError) as e:
        raise ConfigError(f"{path}: cannot open (missing, unreadable or not NetCDF): {e}") \
            from None
    out = []
    with ds:
        for name, n in (("z", grid.nz), ("y", grid.ny), ("x", grid.nx)):
            var = ds.variables.get(name)
            if (var is None or var.dimensions != (name,) or var.shape != (n,)
                    or var.dtype == str or np.dtype(var.dtype).kind not in "iuf"):
                continue  # not a coordinate variable of the fields' dimension
            var.set_auto_mask(False)
            c = np.asarray(var[...], dtype=np.float64)
            if name == "z":
                positive = var.getncattr("positive") if "positive" in var.ncattrs() else "down"
                if not isinstance(positive, str) or positive.lower() != "down":
                    raise ConfigError(f"{path}: z has positive = '{positive}': the fields are "
                                      "read with level 0 at the surface, positive down")
                off = ~(np.abs(c - grid.z) <= 1e-6 * np.abs(grid.z) + 1e-6)
                if np.any(off):
                    k = int(np.argmax(off))
                    raise ConfigError(f"{path}: z[{k}] = {c[k]:.9g}, but level {k} of this "
                                      f"configuration is centred at {grid.z[k]:.9g} m depth: "
                                      "the file is on other levels, or upside down")
            else:
                up = ~(c[1:] > c[:-1])
                if np.any(up):
                    i = int(np.argmax(up)) + 1
                    raise ConfigError(f"{path}: {name}[{i}] = {c[i]:.9g} does not increase "
                                      f"from {name}[{i - 1}] = {c[i - 1]:.9g}")
        for name in ("temp", "salt"):
            if name not in ds.variables:
                raise ConfigError(f"{path}: missing variable '{name}' (initial.file needs temp "
                                  "and salt on (z, y, x))")
            var = ds.variables[name]
            if var.dtype == str or np.dtype(var.dtype).kind not in "iuf":
                raise ConfigError(f"{path}: variable '{name}' is not numeric")
            if len(var.dimensions) == 3 and var.dimensions != ("z", "y", "x"):
                raise ConfigError(f"{path}: {name} has dimensions ({', '.join(var.dimensions)}); "
                                  "expected (z, y, x), in this order")
            if var.shape != (grid.nz, grid.ny, grid.nx):
                raise ConfigError(f"{path}: {name}: expected dimensions (z, y, x) = "
                                  f"{(grid.nz, grid.ny, grid.nx)}, found {var.dimensions} "
                                  f"{var.shape}")
            units = var.getncattr("units") if "units" in var.ncattrs() else ""
            if not isinstance(units, str) or len(units.encode()) >= 128:
                # (netCDF4-python drops the NULs of a text: one padded with
                # them reads as the model reads it, one with a NUL inside as
                # the texts joined, which no unit matches)
                raise ConfigError(f"{path}: {name}: attribute units is not a text (of under "
                                  "128 characters, no NUL inside)")
            key = "".join(c for c in units if c not in " _.^")
            key = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in key)
            standard = (var.getncattr("standard_name") if "standard_name" in var.ncattrs()
                        else "")
            if (name == "salt" and key == "1" and standard
                    and standard != "sea_water_practical_salinity"):
                raise ConfigError(f"{path}: salt has units = '1' and standard_name = "
                                  f"'{standard}': in CF that is a mass fraction (kg/kg)")
            if key:
                ok = TEMP_UNITS if name == "temp" else SALT_UNITS
                if key not in ok and not (name == "salt" and units == "0.001"):
                    want = ("degrees Celsius (degC)" if name == "temp"
                            else "g/kg or practical salinity (g/kg, psu, 1)")
                    raise ConfigError(f"{path}: {name} has units = '{units}': expected {want} "
                                      "(values are read as they are, not converted)")
            var.set_auto_mask(False)
            a = np.asarray(var[...], dtype=np.float64)
            if "_FillValue" in var.ncattrs():
                fill = float(var.getncattr("_FillValue"))
            else:
                fill = netCDF4.default_fillvals.get(np.dtype(var.dtype).str[1:]) \
                    if np.dtype(var.dtype).kind == "f" else None
            wet = a[grid.wet]
            if not np.all(np.isfinite(wet)):
                raise ConfigError(f"{path}: {name} has non-finite values at wet cells")
            if fill is not None and np.any(wet == fill):
                raise ConfigError(f"{path}: {name} has the _FillValue (missing data) at wet cells")
            if "missing_value" in var.ncattrs():
                mv = np.ravel(var.getncattr("missing_value"))
                if not 1 <= mv.size <= MISSING_MAX or mv.dtype.kind not in "iuf":
                    raise ConfigError(f"{path}: {name}: attribute missing_value is not 1 to "
                                      f"{MISSING_MAX} numbers")
                with np.errstate(over="ignore"):  # a mark beyond the floats: inf, never met
                    mv = mv.astype(np.float32) if var.dtype == np.float32 else mv
                if np.any(np.isin(wet, mv.astype(np.float64))):
                    raise ConfigError(f"{path}: {name} has the missing_value (missing data) at "
                                      "wet cells")
            valid, valid_text = valid_range(path, name, var)
            if var.dtype == np.float32:  # the bounds as the field's floats (io/initial.c)
                with np.errstate(over="ignore"):
                    valid = tuple(float(np.float32(v)) for v in valid)
            if valid_text and np.any((wet < valid[0]) | (wet > valid[1])):
                raise ConfigError(f"{path}: {name} has values outside its {valid_text} (missing "
                                  "data) at wet cells")
            lo, hi = TEMP_RANGE if name == "temp" else SALT_RANGE
            if np.any((wet < lo) | (wet > hi)):
                raise ConfigError(f"{path}: {name} has values outside the physically possible "
                                  f"range [{lo:g}, {hi:g}] at wet cells")
            out.append(np.where(grid.wet, a, 0.0))
    return out[0], out[1]


# ---------------------------------------------------------------------------
# docs/physics.md, "Horizontal step"
# ---------------------------------------------------------------------------
def superbee_limiter(a, b):
    """B(a, b) = 0 if a b <= 0, else sign(b) max(min(2|a|, |b|), min(|a|, 2|b|)).

    "a b <= 0" by the signs, not by the product, which underflows to 0 for
    tiny a and b of one sign (docs/physics.md).
    """
    aa, ab = np.abs(a), np.abs(b)
    mag = np.maximum(np.minimum(2 * aa, ab), np.minimum(aa, 2 * ab))
    one_sign = ((a > 0) & (b > 0)) | ((a < 0) & (b < 0))
    return np.where(one_sign, np.copysign(mag, b), 0.0)


def face_fluxes(Tp, wet, Uf, scheme, dt_area, kdiff, axis):
    """Advective and diffusive fluxes through the faces along `axis` (x: 2, y: 1).

    Tp:  tracer padded by HALO along axis, n + 2 HALO cells;
    wet: wetness of the face between padded cells p and p+1, n + 2 HALO - 1 faces;
    Uf:  transport through the same faces (positive towards +p).
    Returns (Fa, Fd) for the n + 1 faces from the west (south) face of cell 0
    to the east (north) face of cell n-1: face f lies between cells f-1 and f.
    """
    n = Tp.shape[axis] - 2 * HALO

    def at(a, off):
        """a at padded index p + off for the faces p = HALO-1 .. HALO-1+n (P = p, E = p+1)."""
        idx = [slice(None)] * a.ndim
        idx[axis] = slice(HALO - 1 + off, HALO + n + off)
        return a[tuple(idx)]

    TP, TE, TW, TEE = at(Tp, 0), at(Tp, 1), at(Tp, -1), at(Tp, 2)
    U, w = at(Uf, 0), at(wet, 0)
    # Diffusive flux F^d = -(kappa_h dy / dx) (T_E - T_P), on wet faces only.
    Fd = np.where(w, -kdiff * (TE - TP), 0.0)
    if scheme == "none":
        return np.zeros_like(Fd), Fd
    pos = U >= 0
    Tu = np.where(pos, TP, TE)  # upstream cell u
    if scheme == "upwind":
        Tface = Tu
    else:  # superbee
        Td = np.where(pos, TE, TP)      # downstream cell d
        Tuu = np.where(pos, TW, TEE)    # the cell upstream of u
        wet_up = np.where(pos, at(wet, -1), at(wet, 1))  # face between uu and u
        d_dn = Td - Tu
        d_up = np.where(wet_up, Tu - Tuu, 0.0)
        c = np.abs(U) * dt_area
        Tface = Tu + (0.5 * (1 - c)) * superbee_limiter(d_up, d_dn)
    Fa = np.where(w, U * Tface, 0.0)
    return Fa, Fd


class HorizontalOperator:
    """Everything the horizontal step needs that does not change in time."""

    def __init__(self, cfg, grid, U, V):
        self.grid = grid
        self.scheme = cfg["physics.advection"]
        dt, dx, dy, kh = cfg["run.dt"], grid.dx, grid.dy, cfg["physics.kappa_h"]
        self.fac = dt / (dx * dy)       # also the Courant factor of superbee
        self.kx = kh * dy / dx          # kappa_h dy / dx, computed once
        self.ky = kh * dx / dy          # kappa_h dx / dy
        self.rows = slice(HALO, HALO + grid.ny)
        self.cols = slice(HALO, HALO + grid.nx)
        wet_e, wet_n = wet_faces(grid)
        # x faces of the interior rows, y faces of the interior columns; the
        # padded transports line up with the padded faces (face p: east or
        # north face of padded cell p).
        self.wet_x = wet_e[:, self.rows, :]
        self.wet_y = wet_n[:, :, self.cols]
        self.U_x = grid.pad(U, before=HALO, after=HALO - 1)[:, self.rows, :]
        self.V_y = grid.pad(V, before=HALO, after=HALO - 1)[:, :, self.cols]

    def step(self, T):
        """T* = T + (dt / (dx dy)) (adv + dif) on wet cells."""
        Tp = self.grid.pad(T)
        Fa, Fd = face_fluxes(Tp[:, self.rows, :], self.wet_x, self.U_x, self.scheme, self.fac,
                             self.kx, axis=2)                     # (nz, ny, nx + 1)
        Ga, Gd = face_fluxes(Tp[:, :, self.cols], self.wet_y, self.V_y, self.scheme, self.fac,
                             self.ky, axis=1)                     # (nz, ny + 1, nx)
        adv = (Fa[:, :, :-1] - Fa[:, :, 1:]) + (Ga[:, :-1, :] - Ga[:, 1:, :])
        dif = (Fd[:, :, :-1] - Fd[:, :, 1:]) + (Gd[:, :-1, :] - Gd[:, 1:, :])
        return np.where(self.grid.wet, T + self.fac * (adv + dif), 0.0)


# ---------------------------------------------------------------------------
# docs/physics.md, "Convective diffusivity"
# ---------------------------------------------------------------------------
def convective_kappa(cfg, grid, T, S):
    """kappa at the interfaces k+1/2, k = 0..nz-2, shape (nz-1, ny, nx); 0
    where k+1 >= kmt (no flux through the bottom of the deepest wet cell)."""
    alpha, beta = cfg["physics.alpha"], cfg["physics.beta"]
    kv = cfg["physics.kappa_v"]
    kvc = kv + cfg["physics.kappa_convect"]  # computed once
    unstable = -alpha * (T[:-1] - T[1:]) + beta * (S[:-1] - S[1:]) > 0
    kappa = np.where(unstable, kvc, kv)
    k = np.arange(grid.nz - 1)[:, None, None]
    return np.where(k + 1 < grid.kmt[None, :, :], kappa, 0.0)


# ---------------------------------------------------------------------------
# docs/physics.md, "Surface forcing" and "Vertical step"
# ---------------------------------------------------------------------------
def surface_flux(cfg, grid, T):
    """T*_0 += (dt Q) / ((rho0 cp) h_0) in every wet column (in place)."""
    dt, Q = cfg["run.dt"], cfg["forcing.heat_flux"]
    inc = (dt * Q) / ((cfg["physics.rho0"] * cfg["physics.cp"]) * grid.h[0])
    T[0] = np.where(grid.kmt > 0, T[0] + inc, T[0])


def thomas(a, b, c, rhs):
    """Thomas algorithm (docs/physics.md, Vertical step), vectorised over the
    columns, looping over levels. a, b, c: (nz, ncol); rhs: list of (nz, ncol)
    arrays. Levels below a column's kmt must hold a = c = 0, b = 1, rhs = 0:
    they then solve to 0 and, since c = 0 at the deepest wet level, do not
    feed into the wet ones. Returns the solutions."""
    nz = b.shape[0]
    cp = np.empty_like(b)
    d = [np.empty_like(r) for r in rhs]
    m = 1 / b[0]
    cp[0] = c[0] * m
    for dd, r in zip(d, rhs):
        dd[0] = r[0] * m
    for k in range(1, nz):
        m = 1 / (b[k] - a[k] * cp[k - 1])
        cp[k] = c[k] * m
        for dd, r in zip(d, rhs):
            dd[k] = (r[k] - a[k] * dd[k - 1]) * m
    for k in range(nz - 2, -1, -1):
        for dd in d:
            dd[k] = dd[k] - cp[k] * dd[k + 1]
    return d


class VerticalOperator:
    """Backward-Euler vertical diffusion of T and S with a shared matrix."""

    def __init__(self, cfg, grid):
        self.grid = grid
        dt = cfg["run.dt"]
        nz = grid.nz
        # g_k = dt / dzw_k per level (g_{nz-1} = 0), inv_h_k = 1 / h_k.
        self.g = np.zeros(nz)
        self.g[:-1] = dt / grid.dzw[:-1]
        self.inv_h = 1 / grid.h

    def step(self, T, S, kappa):
        g, nz = self.grid, self.grid.nz
        shape = (nz, g.ny * g.nx)
        # the interface conductance cond_{k+1/2} = kappa * g_k (m), 0 at the bottom of the
        # deepest wet cell.
        cond = kappa * self.g[:-1, None, None]
        inv_h = self.inv_h[:, None, None]
        a = np.zeros((nz, g.ny, g.nx))
        c = np.zeros((nz, g.ny, g.nx))
        a[1:] = -cond * inv_h[1:]     # a_k = -cond_{k-1} * inv_h_k
        c[:-1] = -cond * inv_h[:-1]   # c_k = -cond_k * inv_h_k
        a[0] = -0.0 * inv_h[0]         # cond_{-1/2} = 0
        c[-1] = -0.0 * inv_h[-1]       # cond below the last level = 0
        b = (1 - a) - c
        Tn, Sn = thomas(a.reshape(shape), b.reshape(shape), c.reshape(shape),
                        [T.reshape(shape), S.reshape(shape)])
        wet = g.wet
        return (np.where(wet, Tn.reshape(T.shape), 0.0),
                np.where(wet, Sn.reshape(S.shape), 0.0))


# ---------------------------------------------------------------------------
# docs/physics.md, "Time step"
# ---------------------------------------------------------------------------
class Model:
    """The whole model: grid, flow, operators and state (T, S) at step n."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.grid = Grid(cfg)
        check_dt_area(cfg, self.grid)
        self.psi_hat = streamfunction(cfg, self.grid)
        self.U, self.V = transports(self.grid, self.psi_hat)
        check_stability(cfg, self.grid, self.U, self.V)
        self.horizontal = HorizontalOperator(cfg, self.grid, self.U, self.V)
        self.vertical = VerticalOperator(cfg, self.grid)
        self.T, self.S = initial_state(cfg, self.grid)
        self.n = 0

    @property
    def time(self):
        return self.n * self.cfg["run.dt"]

    def step(self):
        """One Lie-split step: horizontal (forward Euler), convective kappa from
        T*, S*, surface flux into T*_0, vertical (backward Euler)."""
        Ts = self.horizontal.step(self.T)
        Ss = self.horizontal.step(self.S)
        kappa = convective_kappa(self.cfg, self.grid, Ts, Ss)
        surface_flux(self.cfg, self.grid, Ts)
        self.T, self.S = self.vertical.step(Ts, Ss, kappa)
        self.n += 1
        if not (np.all(np.isfinite(self.T)) and np.all(np.isfinite(self.S))):
            bad = np.argwhere(~(np.isfinite(self.T) & np.isfinite(self.S)))[0]
            raise RunError(f"step {self.n}: non-finite tracer at k={bad[0]}, j={bad[1]}, "
                           f"i={bad[2]}")
        inside = ((self.T >= TEMP_RANGE[0]) & (self.T <= TEMP_RANGE[1])
                  & (self.S >= SALT_RANGE[0]) & (self.S <= SALT_RANGE[1]))
        if not np.all(inside[self.grid.wet]):
            bad = np.argwhere(self.grid.wet & ~inside)[0]
            raise RunError(f"step {self.n}: tracer outside the physically possible range "
                           f"(T in [{TEMP_RANGE[0]:g}, {TEMP_RANGE[1]:g}] degC, S in "
                           f"[{SALT_RANGE[0]:g}, {SALT_RANGE[1]:g}] g/kg) at k={bad[0]}, "
                           f"j={bad[1]}, i={bad[2]}")


# ---------------------------------------------------------------------------
# docs/physics.md, "Diagnostics"
# ---------------------------------------------------------------------------
def diagnostics(cfg, grid, T, S):
    """Heat and salt content (accurately rounded sums) and wet extrema."""
    wet = grid.wet
    vol = grid.vol[:, None, None]
    rho0, cp = cfg["physics.rho0"], cfg["physics.cp"]
    heat_sum = math.fsum((T * vol)[wet].tolist())
    salt_sum = math.fsum((S * vol)[wet].tolist())
    d = {"heat_content": rho0 * cp * heat_sum, "salt_content": rho0 / 1000 * salt_sum}
    Tw, Sw = T[wet], S[wet]  # a grid has wet cells (Grid)
    d.update(temp_min=Tw.min(), temp_max=Tw.max(), salt_min=Sw.min(), salt_max=Sw.max())
    return d


# ---------------------------------------------------------------------------
# docs/output.md: records and the history file
# ---------------------------------------------------------------------------
def record_steps(steps, interval, initial=True):
    """Steps written: the initial state as step 0 (unless output.initial_record
    is false), n >= 1 with n mod interval = 0, and always the last step;
    interval 0 = last only; 0 steps = the initial state as step 0."""
    if steps == 0:
        return [0]
    rec = [0] if initial else []
    rec += [n for n in range(1, steps + 1) if interval > 0 and n % interval == 0]
    if not rec or rec[-1] != steps:
        rec.append(steps)
    return rec


class History:
    """The history file of docs/output.md, written a record at a time."""

    def __init__(self, path, cfg, grid):
        import netCDF4
        self.ds = ds = netCDF4.Dataset(path, "w", format="NETCDF4")
        nz, ny, nx = grid.nz, grid.ny, grid.nx
        ds.createDimension("time", None)
        ds.createDimension("z", nz)
        ds.createDimension("y", ny)
        ds.createDimension("x", nx)
        ds.createDimension("nv", 2)
        ds.Conventions = "CF-1.8"
        ds.title = f"minimodel reference run {cfg['run.name']}"
        ds.source = "minimodel reference.py"
        ds.history = (datetime.datetime.now(datetime.timezone.utc)
                      .strftime("%Y-%m-%dT%H:%M:%SZ") + " reference.py")
        ds.configuration = config_text(cfg)

        def var(name, dtype, dims, units, **attrs):
            v = ds.createVariable(name, dtype, dims, **attrs.pop("create", {}))
            v.units = units
            for k, a in attrs.items():
                setattr(v, k, a)
            return v

        var("time", "f8", ("time",), f"seconds since {cfg['run.start_date']}",
            standard_name="time", long_name="time", calendar=cfg["run.calendar"], axis="T")
        var("x", "f8", ("x",), "m", long_name="x of cell centres", axis="X",
            standard_name="projection_x_coordinate")[:] = \
            (np.arange(nx) + 0.5) * grid.dx
        var("y", "f8", ("y",), "m", long_name="y of cell centres", axis="Y",
            standard_name="projection_y_coordinate")[:] = \
            (np.arange(ny) + 0.5) * grid.dy
        var("z", "f8", ("z",), "m", long_name="depth of cell centres", positive="down",
            axis="Z", standard_name="depth", bounds="z_bnds")[:] = grid.z
        # CF 7.1: the bounds take the attributes of z; none of their own
        ds.createVariable("z_bnds", "f8", ("z", "nv"))[:] = \
            np.stack([grid.z_w[:-1], grid.z_w[1:]], 1)
        var("kmt", "i4", ("y", "x"), "1", long_name="number of wet levels; 0 = land",
            standard_name="model_level_number_at_sea_floor")[:] = grid.kmt
        # One record per chunk, capped at about 4 MiB by splitting in y.
        cy = max(1, min(ny, (4 << 20) // (8 * nz * nx)))
        create = {"fill_value": FILL_VALUE, "chunksizes": (1, nz, cy, nx)}
        if cfg["output.deflate"] > 0:
            create.update(zlib=True, complevel=cfg["output.deflate"])
        var("temp", "f8", ("time", "z", "y", "x"), "degC", create=create,
            long_name="potential temperature", standard_name="sea_water_potential_temperature")
        var("salt", "f8", ("time", "z", "y", "x"), "g/kg", create=create,
            long_name="salinity", standard_name="sea_water_salinity")
        var("step", "i4", ("time",), "1", long_name="time-step number of the record")
        var("heat_content", "f8", ("time",), "J",
            long_name="heat content rho0 cp sum(T dV) over wet cells")
        var("salt_content", "f8", ("time",), "kg",
            long_name="salt content rho0 sum(S/1000 dV) over wet cells")
        for name, units, what in (("temp", "degC", "temperature"), ("salt", "g/kg", "salinity")):
            for ext in ("min", "max"):
                var(f"{name}_{ext}", "f8", ("time",), units,
                    long_name=f"{'minimum' if ext == 'min' else 'maximum'} of {what} over wet cells")
        self.land = ~grid.wet
        self.n = 0

    def write(self, step, time, T, S, diag):
        ds, r = self.ds, self.n
        ds["time"][r] = time
        ds["step"][r] = step
        ds["temp"][r] = np.ma.masked_array(T, mask=self.land)
        ds["salt"][r] = np.ma.masked_array(S, mask=self.land)
        for name, value in diag.items():
            ds[name][r] = value
        self.n += 1

    def close(self):
        self.ds.close()


class signals_held:
    """A call on the history, made whole: a stop signal that comes during
    it stops the run at its end (stop_on)."""

    def __enter__(self):
        _stop["held"] = True

    def __exit__(self, kind, _value, _tb):
        _stop["held"] = False
        signo, _stop["pending"] = _stop["pending"], None
        if signo and kind is None and not _stop["stopping"]:
            raise stop(signo)


def lock_path(output):
    """The lock of the history at output, the model's convention
    (mm_output_lock_create, app/outputs.c): beside it, its name with .lock
    for .nc, so that a run of the model writing D/N.nc (run.name = N,
    output.dir = D) and this one exclude each other."""
    return (output[:-3] if len(output) > 3 and output.endswith(".nc") else output) + ".lock"


def take_lock(path, busy_hint):
    """The lock file at path, locked (flock, exclusive, without waiting) as
    the model's mm_output_lock_take locks it, and this run written into it;
    its descriptor, or None where the file system has no locks. Another
    run's hold is refused (exit 2, naming the run the file names); so is a
    lock file's name that is a link or not a file."""
    for _ in range(100):
        kind = None  # what stands at path when it is not a file
        fd = -1
        try:
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):
                kind = "a symbolic link" if stat.S_ISLNK(mode) else "a folder" \
                    if stat.S_ISDIR(mode) else "not a regular file"
        except OSError:
            pass
        if kind is None:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                             | os.O_NONBLOCK, 0o666)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    kind = "a symbolic link"
                else:
                    folder = e.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT,
                                         errno.ENOTDIR)
                    raise (ConfigError if folder else RunError)(
                        f"{path}: cannot create the lock file: {e.strerror}"
                        + (" (the history's folder is not one files can be written in, or the "
                           "lock file there is not this user's to open)" if folder else "")) \
                        from None
            if fd >= 0 and not stat.S_ISREG(os.fstat(fd).st_mode):
                kind = "not a regular file"
        if kind:
            if fd >= 0:
                os.close(fd)
            raise ConfigError(f"{path}: the lock file's name is {kind}; reference.py writes the "
                              "lock into a file of its own, not through or into it: remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                holder = os.pread(fd, 159, 0).decode("ascii", "replace")
                os.close(fd)
                holder = "".join(c if " " <= c <= "~" else "?"
                                 for c in re.split(r"[\r\n]", holder)[0])
                raise LockBusy(f"{path}: the outputs of this case are in use by another run "
                               f"({holder or 'which one is not written in the lock file'}): "
                               f"wait for it to end, or {busy_hint}") from None
            os.close(fd)
            if e.errno == errno.EINTR:
                continue
            print(f"reference.py: warning: {path}: cannot lock ({e.strerror}): another run of "
                  "this case at the same time would not be noticed", file=sys.stderr)
            return None
        # a hard link that no run holds: the text would go into its other
        # file (checked once the lock is held, as the model does)
        if os.fstat(fd).st_nlink > 1:
            os.close(fd)
            raise ConfigError(f"{path}: the lock file's name is a hard link (a file with another "
                              "name too); reference.py writes the lock into a file of its own, "
                              "not through or into it: remove it")
        # the previous holder removes the file before it lets go: when path
        # no longer names the file locked here, lock the new one
        if lock_in_place(fd, path):
            # who holds it, the model's text and this script's name, for the
            # refusal of a second run (another holder's text is replaced)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"reference.py, pid {os.getpid()} on host "
                          f"{socket.gethostname()}\n".encode(), 0)
            return fd
        os.close(fd)
    raise RunError(f"{path}: cannot lock: the file keeps being replaced")


def lock_in_place(fd, path):
    """Whether path names the file locked by fd."""
    try:
        held, named = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def release_lock(fd, path):
    """Remove the lock file at path while it is the one fd locks (not one
    another run made after it was removed), and let go of the lock."""
    if fd is None:
        return
    if lock_in_place(fd, path):
        try:
            os.unlink(path)
        except OSError:
            pass
    os.close(fd)


def run(cfg, output=None, quiet=True, log=None, busy_hint="give --output another file"):
    """Run the case of cfg; write the history file to output (None: no file);
    progress (quiet False) to log, or standard output (None). Returns the
    list of records (step, time, T, S, diagnostics). The history is written
    under the model's lock of its name (lock_path; busy_hint: what to do
    where another run holds it), and through a link under the lock of the
    file it leads to as well."""
    model = Model(cfg)
    steps = cfg["run.steps"]
    wanted = set(record_steps(steps, cfg["output.interval"], cfg["output.initial_record"]))
    history = None
    if output is not None:
        parent = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(parent):
            raise RunError(f"{output}: cannot create: no directory {parent}")
        if os.path.isdir(output):  # a usage error, as the model's (exit 2)
            raise ConfigError(f"{output}: cannot create: is a directory (the history is a "
                              "file: name the file, not its folder)")
        # a FIFO would wait for a reader for ever, a device take the history
        # (the model refuses the same, exit 2)
        check_regular(output)
    locks = []  # (descriptor, path) of the locks held
    records = []
    try:
        if output is not None:
            # another run writing this history (this script, or the model)
            # is refused before the file is touched: the create truncated
            # it, and both ended with it unreadable
            own = lock_path(output)
            locks.append((take_lock(own, busy_hint), own))
            # a history that is a link, written through into another file:
            # that file's lock too, which a run writing it under its own
            # name holds; only that run's hold refuses this one (a lock
            # that cannot be made there leaves this run's own, as the model)
            folder = os.path.realpath(os.path.dirname(output) or ".")
            target = lock_path(os.path.realpath(output))
            if os.path.islink(output) and target != lock_path(
                    os.path.join(folder, os.path.basename(output))):
                try:
                    locks.append((take_lock(target, busy_hint), target))
                except LockBusy:
                    raise
                except (ConfigError, RunError):
                    pass
            try:
                with signals_held():
                    history = History(output, cfg, model.grid)
            except (OSError, RuntimeError) as e:  # RuntimeError: netCDF's (/dev/null)
                raise RunError(f"{output}: cannot create: {e}") from None

        def record():
            d = diagnostics(cfg, model.grid, model.T, model.S)
            records.append((model.n, model.time, model.T.copy(), model.S.copy(), d))
            if history:
                try:
                    with signals_held():
                        history.write(model.n, model.time, model.T, model.S, d)
                except (OSError, RuntimeError) as e:  # a full disk: netCDF's HDF error
                    raise RunError(f"{output}: cannot write the record of step {model.n}: "
                                   f"{e} (a full disk?)") from None
            if not quiet:
                line = (f"step {model.n:8d}  t = {model.time:.6g} s  H = "
                        f"{d['heat_content']:.17g} J  T in [{d['temp_min']:.6g}, "
                        f"{d['temp_max']:.6g}]")
                if log is not None:
                    print(line, file=log)
                else:
                    # progress that cannot be written (a closed pipe, a full
                    # disk) is dropped, as the model drops its own: the run
                    # and its history go on
                    mm_stdout.print_lines([line])

        if 0 in wanted:
            record()
        for _ in range(steps):
            model.step()
            if model.n in wanted:
                record()
    finally:
        try:
            if history:
                try:
                    with signals_held():
                        history.close()
                except (OSError, RuntimeError) as e:
                    raise RunError(f"{output}: cannot finish writing: {e} (a full disk?)") \
                        from None
        finally:
            for fd, path in reversed(locks):
                release_lock(fd, path)
    return records


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="reference.py",
        description="NumPy reference implementation of docs/physics.md: runs a minimodel "
                    "case on the global grid and writes its history file.")
    ap.add_argument("config", help="INI configuration file")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="override a configuration key (repeatable)")
    ap.add_argument("--output", metavar="FILE",
                    help="history file (default <output.dir>/<run.name>.reference.nc)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but errors")
    args = ap.parse_args(argv)
    # SIGTERM and SIGHUP as Ctrl-C: the history closed with its records
    # (they ended the process at once, and the history kept none); a signal
    # ignored where this script was started (nohup, a background job) stays
    # ignored
    for signo in STOP_SIGNALS:
        if signal.getsignal(signo) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(signo, stop_on)
    try:
        cfg = load_config(args.config, args.set)
        for key in ("output.restart_interval",):
            if cfg[key] and not args.quiet:
                print(f"reference.py: note: {key} ignored (no restart files)", file=sys.stderr)
        output = args.output
        busy_hint = "give --output another file"
        # a name that is no file's (netCDF took "" for a malformed URL, and a
        # name ending in '/' for a folder it could not create: exit 1)
        if output == "":
            raise ConfigError("--output: an empty name: name the history file")
        if output is not None and output.endswith("/"):
            raise ConfigError(f"--output {output}: ends in '/', a folder's name: name the "
                              "history file")
        problem = path_problem(output, False) if output is not None else None
        if problem:  # the netCDF library would write another file
            raise ConfigError(f"--output {output}: {problem}")
        if output is None:
            outdir = cfg["output.dir"]
            if os.path.exists(outdir) and not os.path.isdir(outdir):
                raise ConfigError(f"output.dir = {outdir}: exists and is not a directory")
            try:  # created if missing, but not its parents (docs/output.md)
                if not os.path.isdir(outdir):
                    os.mkdir(outdir)
            except OSError as e:
                raise RunError(f"output.dir = {outdir}: cannot create: {e.strerror}") from None
            output = os.path.join(outdir, cfg["run.name"] + ".reference.nc")
            busy_hint = "give this case another run.name or output.dir"
        # never over an input of this run (the model refuses the same)
        for what, path in (("the configuration file", args.config),
                           ("initial.file", cfg["initial.file"])):
            if path and os.path.exists(output) and os.path.exists(path) \
                    and os.path.samefile(output, path):
                raise ConfigError(f"{output}: is {what} of this run: the history would "
                                  "overwrite it; give --output another file")
        records = run(cfg, output, quiet=args.quiet, busy_hint=busy_hint)
    except ConfigError as e:
        print(f"reference.py: {e}", file=sys.stderr)
        return 2
    except RunError as e:
        print(f"reference.py: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print("reference.py: out of memory: the grid's arrays do not fit in this machine's "
              "memory (the reference keeps every record in memory too); use a smaller grid",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reference.py: interrupted", file=sys.stderr)
        return 130
    except Stopped as e:
        print(f"reference.py: stopped by {signal.Signals(e.signo).name}", file=sys.stderr)
        return 128 + e.signo
    if not args.quiet:
        # the history is complete: a line that cannot be written (standard
        # output closed or full, a closed pipe) is dropped, as the model's
        mm_stdout.print_lines([f"reference.py: wrote {output} ({len(records)} records)"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
