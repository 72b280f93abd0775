#!/usr/bin/env python3
"""Compare the variables of two NetCDF files.

    compare.py A.nc B.nc [--rtol R] [--atol A] [--vars V,...] [--records-of-b]
               [--allow-missing V,...] [--attributes] [--baseline] [--quiet]

Every variable present in both files (or only those named by --vars) is
compared element by element; a value passes when

    |a - b| <= atol + rtol * |b|

(defaults rtol = 0, atol = 0: bitwise equality of the values, where a zero
of one sign against one of the other is a difference too; each a finite
number >= 0: 1e400, which is infinity, inf or nan, under which every
difference passed, is a usage error). One line per
variable gives the largest absolute and relative difference, |a - b| / |b|,
and where the largest relative difference occurs, as named indices
(time=3,z=0,y=5,x=7).

- Masked entries must coincide: a mask mismatch is a failure. The mask is
  netCDF4's: _FillValue, missing_value, and values outside valid_min,
  valid_max or valid_range; masked entries are not compared (--attributes
  compares those attributes).
- NaN equals NaN at the same place; NaN against a number is a failure.
- An infinity equals only the same infinity, whatever the tolerance.
- A shape mismatch is a failure, and so are other dimension names (a
  variable written (x, y, z) against one written (z, y, x) on a grid where
  both have the same shape).
- Numbers of different types are compared by value, exactly (an integer
  against a float64 too: 2**53 + 1 is not 2**53), and the line names both
  types.
- Variable-length and compound variables are compared for equality: of
  the same type (a compound's fields of the same names, types and order),
  a zero of one sign against one of the other a difference, NaN equal to
  NaN.
- String and character variables are compared for equality.
- Integers are compared exactly, whatever their width and sign (an int64
  with a uint64 too: no difference is lost to an overflow or a rounding to
  float64); max_abs and max_rel are then given as float64.
- A state or diagnostic variable of B (the reference or baseline) that A
  lacks is a failure: `temp`, `salt`, `heat_content`, `salt_content`,
  `temp_min`, `temp_max`, `salt_min`, `salt_max` (docs/output.md). A history
  that lost its fields does not pass for its baseline. Other variables in one
  file only, and any variable in A only, are listed as a note and are not a
  failure (unless named with --vars). --allow-missing V,... turns the
  failure for those variables of B back into a note, for an A that
  legitimately lacks them (say, a NumPy reference compared as A, written
  without some diagnostics); B may lack any variable of A.
- Nothing compared (no variable shared, or none of --vars in both files) is
  a failure, with or without --allow-missing.
- Global attributes are not compared. With --attributes, the attributes of
  each compared variable must be the same names with the same values (a
  reference written with the layout of docs/output.md).
- With --records-of-b, only A's records (along the dimension of `step`,
  `time` in a history) of the steps that B holds are compared, matched by
  the `step` variable; a step of B that A lacks is a failure, and so is a B
  that holds no record (nothing would be compared). So a history with the
  initial state as record 0 (output.initial_record) compares with one
  written without it.
- With --baseline, B is A's baseline (scripts/regress, the regress.*
  tests): a state or diagnostic variable of A that B lacks is a failure
  too (a baseline that lost its fields would pass anything), and, with
  --records-of-b, so is a record of A from B's first step on whose step B
  lacks (a baseline cut short, or written at another interval, would pass
  a run whose later records differ). With --records-of-b, a step that is
  not a whole number, a record without a step (the fill value) and a step
  that two records of one file hold (runs joined with the step they share
  twice) are a usage error: a record could go uncompared.
- Only the root group's variables are compared; a file with groups gets a
  warning (on standard error) that names them.

Exit status: 0 all within tolerance, 1 some difference (also: a state or
diagnostic variable of B missing from A, or nothing compared), 2 usage error,
unreadable file (also a FIFO or a device, a variable whose data the
library cannot read: a damaged chunk, or a classic-format file cut short,
whose lacking data the library reads as zeros), not enough memory (a numeric
variable is compared a block of records at a time, 2**21 values of each file
or one record where that holds more, and takes about ten times a block's
bytes: 0.44 GB in all for 8 records of 100 x 250 x 100 doubles, where it was
ten times the whole variable's, 1.6 GB), the report not
written, or no numpy and netCDF4 (run it with .venv/bin/python), 130
interrupted (Ctrl-C).
"""

import argparse
import math
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_nc_guard  # noqa: E402
import mm_stdout  # noqa: E402

try:
    import numpy as np
except ImportError as e:  # exit 1 would read as "the files differ"
    print(f"compare.py: {e}: run it with the Python of scripts/setup (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

# The variables of a history (docs/output.md) that a comparison is about: the
# state and the diagnostics. One of B's that A lacks is a failure.
STATE_VARS = ("temp", "salt")
DIAGNOSTIC_VARS = ("heat_content", "salt_content", "temp_min", "temp_max", "salt_min",
                   "salt_max")
REQUIRED_VARS = STATE_VARS + DIAGNOSTIC_VARS


def fmt_index(dims, idx):
    """Index as named dimensions, e.g. time=3,z=0,y=5,x=7."""
    if not idx:
        return "()"
    return ",".join(f"{d}={i}" for d, i in zip(dims, idx))


# The values of a numeric variable are compared a block of records at a
# time, so that compare.py holds about ten times a block's bytes (float64
# copies, masks, differences), not ten times the variable's: blocks of
# about this many values of each file, whole records (a record larger than
# this is one block).
BLOCK_VALUES = 1 << 21


def blocks(shape):
    """The (lo, hi) spans of the first dimension that the values of a
    variable of this shape are read in; [None] for a scalar."""
    if not shape:
        return [None]
    per = max(1, math.prod(shape[1:]))
    step = max(1, BLOCK_VALUES // per)
    return [(lo, min(shape[0], lo + step)) for lo in range(0, shape[0], step)] or [(0, 0)]


def read(var, rows=None, span=None):
    """Values of a variable as a masked array (mask: _FillValue): span
    (lo, hi) of blocks(): [lo, hi) of its records, or of the records `rows`
    (indices along the first dimension) where given; None: a scalar's."""
    var.set_auto_maskandscale(True)
    if span is None:
        return np.ma.asarray(var[...])
    lo, hi = span
    if rows is None:
        return np.ma.asarray(var[lo:hi])
    sel = [int(i) for i in rows[lo:hi]]
    if sel and sel == list(range(sel[0], sel[0] + len(sel))):
        return np.ma.asarray(var[sel[0]:sel[0] + len(sel)])
    if not sel:
        return np.ma.asarray(var[0:0])
    return np.ma.stack([np.ma.asarray(var[i:i + 1])[0] for i in sel])


def is_text(dtype):
    return dtype == str or np.dtype(dtype).kind in "SUO"


def text_elements(x):
    """The elements of a text array as Python str, in order: bytes as UTF-8
    text where they are that (a char variable without _Encoding, read as
    bytes, equals the same text read as str), else as the bytes themselves;
    anything else as its str."""
    def text(v):
        if isinstance(v, bytes):
            try:
                return v.decode("utf-8")
            except UnicodeDecodeError:
                return v
        return v if isinstance(v, str) else str(v)
    return [text(v) for v in x.ravel().tolist()]


def compare_text(name, va, vb, rows=None):
    """Compare a string or char variable; returns (ok, line)."""
    va.set_auto_chartostring(True)
    vb.set_auto_chartostring(True)
    a, b = np.asarray(va[...]), np.asarray(vb[...])
    if rows is not None:
        a = a[rows]
    if a.shape != b.shape:
        return False, f"{name}: FAIL: shape mismatch {a.shape} vs {b.shape}"
    # element by element (text_elements): a char variable without _Encoding
    # holds any bytes, which str() decoded as ASCII: a file with a degree
    # sign could not be compared with itself
    differ = np.array([x != y for x, y in zip(text_elements(a), text_elements(b))],
                      dtype=bool).reshape(a.shape)
    if not differ.any():
        return True, f"{name}: text, equal"
    diff = np.argwhere(differ)
    where = fmt_index(va.dimensions, tuple(diff[0])) if diff.size else "()"
    return False, f"{name}: text  FAIL: {len(diff) or 1} element(s) differ, first at {where}"


def exact_integers(x):
    """Integer (or bool) values x as int64, or as Python integers (an object
    array) where a uint64 value does not fit in int64: either way `!=`
    between two such arrays is exact."""
    if x.dtype.kind == "u" and x.dtype.itemsize >= 8 and x.size and \
            int(x.max()) > np.iinfo(np.int64).max:
        return x.astype(object)
    return x.astype(np.int64)


def exact_mixed(x, y):
    """Elementwise x != y, exactly, for an integer and a float array (flat,
    of one length), and |x - y| where they differ: a float equals an integer
    only where it is that integer (float(2**53 + 1) would be 2**53)."""
    from fractions import Fraction
    differ = np.zeros(x.shape, bool)
    absdiff = np.zeros(x.shape, np.float64)
    for i, (p, q) in enumerate(zip(x.tolist(), y.tolist())):
        if isinstance(p, float) or isinstance(q, float):
            f, n = (p, q) if isinstance(p, float) else (q, p)
            if f != f or f in (float("inf"), float("-inf")):
                differ[i], absdiff[i] = True, float("inf")
                continue
            d = abs(Fraction(f) - int(n))
        else:
            d = abs(int(p) - int(q))
        if d:
            differ[i], absdiff[i] = True, max(float(d), np.finfo(np.float64).tiny)
    return differ, absdiff


def compare_block(a, b, rtol, atol):
    """The element-wise verdicts on values a and b (masked arrays of one
    shape): a dict of boolean arrays (mask, nan, inf, zero: the kinds of
    difference; bad: beyond tolerance; both: compared) and of the absolute
    and relative differences (absdiff, rel)."""
    ma, mb = np.ma.getmaskarray(a), np.ma.getmaskarray(b)
    mask_diff = ma != mb
    both = ~(ma | mb)
    ints_a, ints_b = a.dtype.kind in "iub", b.dtype.kind in "iub"
    # Integers exactly, an integer against a float exactly, floats in float64.
    if ints_a != ints_b:
        bd = np.ma.getdata(b).astype(np.float64)
        differ, absdiff = exact_mixed(np.ma.getdata(a).ravel(), np.ma.getdata(b).ravel())
        absdiff = absdiff.reshape(a.shape)
        floats = bd if ints_a else np.ma.getdata(a).astype(np.float64)
        nan_diff = np.isnan(floats) & both  # a NaN against an integer
        inf_diff = np.isinf(floats) & both  # an infinity against an integer
        zero_sign = np.zeros(a.shape, bool)
    elif ints_a and ints_b:
        ad, bd = exact_integers(np.ma.getdata(a)), exact_integers(np.ma.getdata(b))
        differ = np.asarray(ad != bd, dtype=bool)
        absdiff = np.zeros(a.shape, np.float64)
        if differ.any():  # |a - b| exactly: a - b in int64 can overflow
            x, y = ad[differ], bd[differ]
            if x.dtype == object or y.dtype == object:
                absdiff[differ] = [float(abs(int(p) - int(q))) for p, q in zip(x, y)]
            else:  # max - min < 2**64: exact in uint64, where it wraps modulo 2**64
                hi, lo = np.maximum(x, y).astype(np.uint64), np.minimum(x, y).astype(np.uint64)
                absdiff[differ] = (hi - lo).astype(np.float64)
        bd = bd.astype(np.float64)
        nan_diff = np.zeros(a.shape, bool)
        inf_diff = np.zeros(a.shape, bool)
        zero_sign = np.zeros(a.shape, bool)
    else:
        ad = np.ma.getdata(a).astype(np.float64)
        bd = np.ma.getdata(b).astype(np.float64)
        na, nb = np.isnan(ad), np.isnan(bd)
        nan_diff = (na != nb) & both
        same = (ad == bd) | (na & nb)  # equal values, equal infinities, NaN = NaN
        # an infinity against anything else: beyond any tolerance (the
        # tolerance atol + rtol |b| is infinite where b is)
        inf_diff = (np.isinf(ad) | np.isinf(bd)) & ~same & both & ~nan_diff
        # bitwise (no tolerance): -0.0 against 0.0 is a difference too
        zero_sign = (both & (ad == 0) & (bd == 0) & (np.signbit(ad) != np.signbit(bd))
                     if rtol == 0 and atol == 0 else np.zeros(a.shape, bool))
        with np.errstate(invalid="ignore", over="ignore"):
            absdiff = np.where(same, 0.0, np.abs(ad - bd))
    absdiff = np.where(both, absdiff, 0.0)
    absdiff = np.where(nan_diff | inf_diff, np.inf, absdiff)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(absdiff == 0, 0.0, absdiff / np.abs(bd))
    rel = np.where(np.isnan(rel), np.inf, rel)
    with np.errstate(invalid="ignore", over="ignore"):
        # rtol |b| is 0 where b = 0, also for rtol = inf (not NaN)
        tol = atol + np.where(bd == 0, 0.0, rtol * np.abs(bd))
        bad = both & (absdiff > 0) & ~(absdiff <= tol) & ~nan_diff & ~inf_diff
    return {"mask": mask_diff, "nan": nan_diff, "inf": inf_diff, "zero": zero_sign, "bad": bad,
            "both": both, "absdiff": absdiff, "rel": rel}


def compare_numeric(name, va, vb, rtol, atol, rows=None):
    """Compare a numeric variable, a block of records at a time (blocks);
    returns (ok, line)."""
    dims = va.dimensions
    shape_a = (len(rows),) + tuple(va.shape[1:]) if rows is not None and va.dimensions \
        else tuple(va.shape)
    shape_b = tuple(vb.shape)
    if shape_a != shape_b:
        return False, (f"{name}: FAIL: shape mismatch {dict(zip(va.dimensions, shape_a))} vs "
                       f"{dict(zip(vb.dimensions, shape_b))}")
    if tuple(va.dimensions) != tuple(vb.dimensions):
        return False, (f"{name}: FAIL: dimensions ({', '.join(va.dimensions)}) vs "
                       f"({', '.join(vb.dimensions)})")
    kinds = ("mask", "nan", "inf", "zero")
    count = dict.fromkeys(kinds + ("bad", "both"), 0)
    first = {}
    max_abs = max_rel = 0.0
    where = None
    types = None
    for span in blocks(shape_a):
        a, b = read(va, rows, span), read(vb, None, span)
        types = (a.dtype, b.dtype)
        v = compare_block(a, b, rtol, atol)
        off = span[0] if span else 0

        def place(flat):  # an index of this block, in the whole variable
            idx = tuple(int(i) for i in np.unravel_index(flat, a.shape))
            return (idx[0] + off,) + idx[1:] if idx else idx
        for k in kinds + ("bad", "both"):
            n = int(v[k].sum())
            if n and k in kinds and k not in first:
                first[k] = place(int(np.argmax(v[k].ravel())))
            count[k] += n
        if a.size:
            max_abs = max(max_abs, float(v["absdiff"].max()))
            # rel is inf where b = 0 and a differs, so its argmax finds every
            # difference; the first block's place where blocks tie, as one
            # argmax over the variable would
            r = float(v["rel"].max())
            if r > max_rel:
                max_rel, where = r, place(int(np.argmax(v["rel"])))
    problems = []
    said = {"mask": "mask differs", "nan": "NaN in one file only",
            "inf": "an infinity against another value", "zero": "a zero of the other sign"}
    for k in kinds:
        if count[k]:
            problems.append(f"{said[k]} at {count[k]} element(s), first at "
                            f"{fmt_index(dims, first[k])}")
    if count["bad"]:
        problems.append(f"{count['bad']} of {count['both']} element(s) beyond tolerance")
    loc = fmt_index(dims, where) if where is not None else "-"
    line = f"{name}: max_abs={max_abs:.6g} max_rel={max_rel:.6g} at {loc}"
    if types and types[0] != types[1]:
        line += f" (types {types[0]} and {types[1]})"
    if problems:
        line += "  FAIL: " + "; ".join(problems)
    return not problems, line


def plain(x):
    """x as nested lists and tuples of plain values (an element of a
    variable-length variable is an array; a compound one a tuple); a float as
    its value and sign, so that -0.0 and 0.0 differ, or "nan"."""
    if isinstance(x, np.ndarray):
        return [plain(e) for e in x.tolist()] if x.dtype == object else plain(x.tolist())
    if isinstance(x, (list, tuple)):
        return type(x)(plain(e) for e in x)
    x = x.item() if isinstance(x, np.generic) else x
    if isinstance(x, float):
        return "nan" if x != x else (x, math.copysign(1.0, x))
    return x


def compare_other(name, va, vb, rows=None):
    """Compare a variable-length or compound variable for equality (the same
    type: a compound's fields of the same names, types and order; zeros of
    each sign differ, NaN equals NaN); returns (ok, line)."""
    ta, tb = va.datatype.dtype, vb.datatype.dtype
    if ta != tb:
        return False, f"{name}: FAIL: types differ: {type(va.datatype).__name__} of {ta} vs {tb}"
    a, b = np.asarray(va[...]), np.asarray(vb[...])
    if rows is not None:
        a = a[rows]
    if a.shape != b.shape:
        return False, f"{name}: FAIL: shape mismatch {a.shape} vs {b.shape}"
    pa, pb = plain(a), plain(b)
    if pa == pb:
        return True, f"{name}: {type(va.datatype).__name__}, equal"
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    first = next(i for i in range(flat_a.size) if plain(flat_a[i]) != plain(flat_b[i]))
    where = fmt_index(va.dimensions, np.unravel_index(first, a.shape)) if a.ndim else "()"
    return False, f"{name}: FAIL: {type(va.datatype).__name__} values differ, first at {where}"


def compare_attributes(name, va, vb, line):
    """The attributes of va and vb: the same names, equal values; returns
    (ok, line) with line extended by what differs."""
    aa = {k: va.getncattr(k) for k in va.ncattrs()}
    ab = {k: vb.getncattr(k) for k in vb.ncattrs()}
    diffs = [f"{k} only in one file" for k in sorted(set(aa) ^ set(ab))]
    for k in sorted(set(aa) & set(ab)):
        x, y = aa[k], ab[k]
        if isinstance(x, str) or isinstance(y, str):
            same = isinstance(x, str) and isinstance(y, str) and x == y  # text against numbers
        else:
            x, y = np.ravel(x), np.ravel(y)
            nan = x.dtype.kind in "fc" and y.dtype.kind in "fc"  # NaN = NaN (a _FillValue)
            same = bool(np.array_equal(x, y, equal_nan=nan))
        if not same:
            diffs.append(f"{k} = {x!r} vs {y!r}")
    if diffs:
        return False, f"{line}  FAIL: attributes differ: {'; '.join(diffs)}"
    return True, line


def record_steps(path, var):
    """The steps of a file's records (its step variable) as ints: each a
    whole number, none missing (masked) and none twice; ValueError naming the
    record otherwise."""
    values = var[...]
    mask = np.ma.getmaskarray(values).reshape(-1)
    flat = np.ma.getdata(values).reshape(-1)
    steps, seen = [], {}
    for r, (v, masked) in enumerate(zip(flat, mask)):
        if masked:
            raise ValueError(f"{path}: record {r} has no step (its step is the fill value)")
        try:
            n = int(v)
        except (TypeError, ValueError, OverflowError):
            n = None
        if n is None or n != v:
            raise ValueError(f"{path}: record {r}: step = {v} is not a whole number")
        if n in seen:
            raise ValueError(f"{path}: records {seen[n]} and {r} both hold step {n} (runs "
                             "joined with the step they share twice?): each step must be one "
                             "record")
        seen[n] = r
        steps.append(n)
    return steps


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="compare.py",
        description="Compare the variables of two NetCDF files within |a-b| <= atol + rtol*|b| "
                    "(default: bitwise). Exit 0 when all agree, 1 otherwise (also when A "
                    "lacks a state or diagnostic variable of B, or nothing is compared), "
                    "2 on errors.")
    ap.add_argument("a", help="first file")
    ap.add_argument("b", help="second file (the reference of the relative difference)")
    ap.add_argument("--rtol", default="0", help="relative tolerance (default 0)")
    ap.add_argument("--atol", default="0", help="absolute tolerance (default 0)")
    ap.add_argument("--vars", help="comma-separated variables to compare (default: all shared)")
    ap.add_argument("--records-of-b", action="store_true",
                    help="compare only A's records of the steps B holds (by the step variable)")
    ap.add_argument("--allow-missing", metavar="V,...", default="",
                    help="comma-separated state or diagnostic variables of B that A may lack "
                         "(a note, not a failure); by default each of "
                         + ", ".join(REQUIRED_VARS) + " in B must be in A")
    ap.add_argument("--attributes", action="store_true",
                    help="the compared variables' attributes must be equal too")
    ap.add_argument("--baseline", action="store_true",
                    help="B is A's baseline: it must hold A's state and diagnostic variables "
                         "and (with --records-of-b) every record of A from its first step on")
    ap.add_argument("--quiet", action="store_true", help="print only failures")
    args = ap.parse_args(argv)
    # a number too large for a double (1e400) is infinity, and inf or nan a
    # tolerance no difference exceeds: every difference passed, "all agree"
    # (scripts/regress refuses them in the same words)
    for name in ("rtol", "atol"):
        text = getattr(args, name)
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            ap.error(f"--{name}: '{text}' is not a finite number >= 0")
        setattr(args, name, value)

    try:
        import netCDF4
    except ImportError as e:
        print(f"compare.py: {e}: run it with the Python of scripts/setup (.venv/bin/python)",
              file=sys.stderr)
        return 2

    datasets = []
    for path in (args.a, args.b):
        try:
            # a name the library would read as another file's, or as a URL
            problem = mm_nc_guard.path_problem(path, False)
            if problem:
                raise OSError(problem)
            # a FIFO or a device would wait for a writer, or never end
            if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
                raise OSError(f"not a regular file ({file_kind(path)})")
            # a classic file cut short reads its lacking data as zeros
            problem = mm_nc_guard.classic_cut_short(path)
            if problem:
                raise OSError(problem)
            datasets.append(netCDF4.Dataset(path, "r"))
            problem = mm_nc_guard.read_problem(path)
            if problem:
                raise OSError(problem)
        except (OSError, RuntimeError, ValueError) as e:
            print(f"compare.py: {path}: cannot read: {e}", file=sys.stderr)
            return 2
    da, db = datasets
    failed = False
    out = []
    unreadable = None  # why a variable's values could not be read or compared (exit 2)
    try:
        for path, d in ((args.a, da), (args.b, db)):
            if d.groups:
                print(f"compare.py: warning: {path}: group(s) {', '.join(d.groups)} not compared "
                      "(only the root group's variables are)", file=sys.stderr)
        va_all, vb_all = da.variables, db.variables
        rows = None  # A's records of B's steps (--records-of-b)
        rec_dim = None  # the dimension of A's records: that of its step variable
        if args.records_of_b:
            if "step" not in va_all or "step" not in vb_all:
                print("compare.py: --records-of-b: both files need a step variable",
                      file=sys.stderr)
                return 2
            try:
                a_steps = record_steps(args.a, va_all["step"])
                b_steps = record_steps(args.b, vb_all["step"])
            except ValueError as e:
                print(f"compare.py: --records-of-b: {e}", file=sys.stderr)
                return 2
            rec_dim = va_all["step"].dimensions[0] if va_all["step"].dimensions else None
            if not b_steps:
                out.append((False, f"step: FAIL: {args.b} holds no record: nothing to compare "
                                   f"{args.a}'s records with"))
                failed = True
            lacking = [n for n in b_steps if n not in a_steps]
            if lacking:
                out.append((False, f"step: FAIL: {args.a} lacks the record(s) of step(s) "
                                   f"{', '.join(map(str, lacking))} that {args.b} holds"))
                failed = True
            rows = [a_steps.index(n) for n in b_steps if n in a_steps]
            extra = [n for n in a_steps if n not in b_steps]
            uncovered = ([n for n in extra if n >= min(b_steps)]
                         if args.baseline and b_steps else [])
            if uncovered:
                out.append((False, f"step: FAIL: {args.b} (the baseline) lacks the record(s) of "
                                   f"step(s) {', '.join(map(str, uncovered))} that {args.a} "
                                   "holds after the baseline's first"))
                failed = True
                extra = [n for n in extra if n not in uncovered]
            if extra:
                out.append((True, f"step: note: record(s) of step(s) "
                                  f"{', '.join(map(str, extra))} only in {args.a}, not compared"))
        if args.vars is not None:
            names = [v for v in args.vars.split(",") if v]
            if not names:
                ap.error("--vars: no variable named")
            for name in names:
                if name not in va_all or name not in vb_all:
                    missing = [p for p, d in ((args.a, va_all), (args.b, vb_all)) if name not in d]
                    out.append((False, f"{name}: FAIL: not in {', '.join(missing)}"))
                    failed = True
            names = [n for n in names if n in va_all and n in vb_all]
        else:
            names = [n for n in va_all if n in vb_all]
            allowed = {v for v in args.allow_missing.split(",") if v}
            for path, mine, other in ((args.a, va_all, vb_all), (args.b, vb_all, va_all)):
                for n in mine:
                    if n in other:
                        continue
                    if mine is vb_all and n in REQUIRED_VARS and n not in allowed:
                        kind = "state" if n in STATE_VARS else "diagnostic"
                        out.append((False, f"{n}: FAIL: only in {path}: {args.a} lacks this "
                                           f"{kind} variable (--allow-missing {n} to accept)"))
                        failed = True
                    elif args.baseline and mine is va_all and n in REQUIRED_VARS:
                        kind = "state" if n in STATE_VARS else "diagnostic"
                        out.append((False, f"{n}: FAIL: only in {path}: the baseline {args.b} "
                                           f"lacks this {kind} variable"))
                        failed = True
                    else:
                        out.append((True, f"{n}: note: only in {path}"))
        if not names:
            out.append((False, f"compare.py: FAIL: no variable compared: {args.a} and {args.b} "
                               + ("share none of --vars" if args.vars is not None
                                  else "share no variable")))
            failed = True
        for name in names:
            va, vb = va_all[name], vb_all[name]
            sel = None
            # records: along the dimension of A's step variable (`time`,
            # unlimited as the model writes it or fixed as xarray does)
            if rows is not None and va.dimensions and va.dimensions[0] == rec_dim:
                sel = rows
            if sel is not None and (not vb.dimensions or len(sel) != vb.shape[0]):
                failed = True
                held = f"{vb.shape[0]} record(s)" if vb.dimensions else "a scalar"
                out.append((False, f"{name}: FAIL: {held} in {args.b}, "
                                   f"{len(sel)} of its steps in {args.a}"))
                continue
            try:
                other = (netCDF4.VLType, netCDF4.CompoundType)
                if isinstance(va.datatype, other) or isinstance(vb.datatype, other):
                    if type(va.datatype) is not type(vb.datatype):
                        ok, line = False, (f"{name}: FAIL: {type(va.datatype).__name__} vs "
                                           f"{type(vb.datatype).__name__}")
                    else:
                        ok, line = compare_other(name, va, vb, sel)
                elif is_text(va.dtype) or is_text(vb.dtype):
                    if is_text(va.dtype) != is_text(vb.dtype):
                        ok, line = False, f"{name}: FAIL: text in one file, numbers in the other"
                    else:
                        ok, line = compare_text(name, va, vb, sel)
                else:
                    ok, line = compare_numeric(name, va, vb, args.rtol, args.atol, sel)
            except (OSError, RuntimeError) as e:  # the library's: the data cannot be read
                unreadable = f"{unreadable_file(name, va, vb, args.a, args.b)}: cannot read " \
                             f"variable {name}: {e}"
                break
            except MemoryError:
                unreadable = (f"not enough memory to compare variable {name} "
                              f"({va.size} and {vb.size} values; compare.py reads them "
                              f"{BLOCK_VALUES} at a time, or a record where one holds more, "
                              "and needs about ten times their bytes)")
                break
            except (ValueError, TypeError, IndexError) as e:
                ok, line = False, f"{name}: FAIL: cannot compare: {e}"
            if ok and args.attributes:
                ok, line = compare_attributes(name, va, vb, line)
            failed |= not ok
            out.append((ok, line))
    finally:
        da.close()
        db.close()
    if unreadable:
        print(f"compare.py: {unreadable}", file=sys.stderr)
        return 2
    report = [line for ok, line in out if not args.quiet or not ok]
    if not args.quiet:
        n_bad = sum(1 for ok, _ in out if not ok)
        tol = f"rtol={args.rtol:g} atol={args.atol:g}"
        report.append(f"compare.py: {len(names)} variable(s) compared ({tol}): "
                      + (f"{n_bad} failure(s)" if failed else "all agree"))
    # the reader going away (| head) leaves the verdict as it is; a report
    # that cannot be written (a full disk) is exit 2
    problem = mm_stdout.print_lines(report)
    if problem:
        print(f"compare.py: cannot write the report: {problem}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def unreadable_file(name, va, vb, path_a, path_b):
    """Which file's variable `name` cannot be read (a damaged chunk): the
    first of va, vb whose values the library refuses, else both paths."""
    for var, path in ((va, path_a), (vb, path_b)):
        try:
            var.set_auto_maskandscale(False)
            for span in blocks(tuple(var.shape)):  # as compared: a block at a time
                if span is None:
                    var[...]
                else:
                    var[span[0]:span[1]]
        except (OSError, RuntimeError):
            return path
        except Exception:  # noqa: BLE001 -- memory, types: not the library's refusal
            pass
    return f"{path_a} or {path_b}"


def file_kind(path):
    """What path is, in words, when it is not a regular file."""
    mode = os.stat(path).st_mode
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")


if __name__ == "__main__":
    try:
        status = main()
    except KeyboardInterrupt:
        print("compare.py: interrupted", file=sys.stderr)
        status = 130
    sys.exit(status)
