#!/usr/bin/env python3
"""test_plot_scripts.py: scripts/plot_fields.py, scripts/plot_timing.py and
scripts/plot_tdma_bench.py on bad outputs and inputs: one line naming the
problem and the documented exit status, never a traceback or a hang; the
name printed is the file written; a picture that cannot be written whole
leaves the file it was to replace as it was, and a file that is
write-protected, not a regular file or an input is never written or
removed.

    python3 tests/scripts/test_plot_scripts.py

Makes a tiny history with scripts/reference.py and its own timing files,
histories and tdma-bench lines. Exit 0 or 1; 77 (skip) without numpy,
netCDF4, xarray and matplotlib (h5py, for a damaged chunk, and running as
user nobody, as root with setpriv, are checked where there).
"""

import importlib.util
import json
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script_tests  # noqa: E402

script_tests.need("test_plot_scripts.py", ("numpy", "netCDF4", "xarray", "matplotlib"))

ROOT = script_tests.ROOT
SCRIPTS = os.path.join(ROOT, "scripts")

PHASES = ("halo", "horizontal", "mixing", "solve", "diagnostics", "output", "step")
ENV = dict(os.environ)  # MPLCONFIGDIR set by main: matplotlib's font cache made once
TDMA_RESULT = {"backend": "simd", "mode": "solve", "systems": 1000, "levels": 30,
               "precision": "double", "threads": 2, "ms": 1.5, "median_ms": 1.6}
MATH = r"$\notasymbol$"  # mathtext that matplotlib cannot parse


def run(script, *args, timeout=120, **kw):
    """(exit status, stdout, stderr) of a script of this tree; exit status
    None when it was still running after timeout seconds (then killed)."""
    kw.setdefault("env", ENV)
    try:
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, script)] + list(args),
                           capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return None, "", f"still running after {timeout} s (killed)"
    return p.returncode, p.stdout, p.stderr


def limits(fsize=None, address_space=None):
    """A preexec_fn: writes past fsize bytes fail with EFBIG (as on a full
    disk; Python ignores SIGXFSZ), memory past address_space bytes is
    refused (MemoryError)."""
    def set_limits():
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    return set_limits


def expect(what, result, code, message):
    """A list of what is wrong with (exit, stdout, stderr) against the exit
    status code and a message on one line of stderr."""
    rc, out, err = result
    bad = []
    if rc != code:
        bad.append(f"{what}: exit {rc}, want {code}")
    if message not in err or "Traceback" in err or len(err.strip().splitlines()) != 1:
        bad.append(f"{what}: stderr {err!r}, want one line with {message!r}")
    return bad


def timing_file(path, name="t"):
    d = {"name": name, "ranks": 1, "steps": 2,
         "phases": {p: {"mean_s": 1e-3, "total_s": 2e-3} for p in PHASES},
         "per_step": [{"step": n, "step_s": 2e-3, "solve_s": 1e-3} for n in (1, 2)]}
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def check_plot_timing(tmp):
    bad = []
    good = os.path.join(tmp, "run.timing.json")
    timing_file(good)
    for name, text in (("list", "[1]"), ("null", "null"), ("no_phases", '{"ranks": 1}'),
                       ("phases_list", '{"ranks": 1, "steps": 1, "phases": [], "per_step": []}')):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        bad += expect(f"plot_timing {name}", run("plot_timing.py", path), 1,
                      "not a minimodel timing file")
    bad += expect("plot_timing -o x.xyz", run("plot_timing.py", good, "-o",
                                              os.path.join(tmp, "x.xyz")), 2,
                  "matplotlib cannot write .xyz files (it writes")
    # -o without an extension: matplotlib adds .png; the name printed is that file
    fig = os.path.join(tmp, "fig")
    rc, out, err = run("plot_timing.py", good, "-o", fig)
    if rc != 0 or out.strip() != fig + ".png" or not os.path.isfile(fig + ".png"):
        bad.append(f"plot_timing -o fig: exit {rc}, printed {out.strip()!r}, want {fig}.png "
                   f"written {err!r}")
    rc, out, err = run("plot_timing.py", good, "-o", os.path.join(tmp, "fig.pdf"))
    if rc != 0 or out.strip() != os.path.join(tmp, "fig.pdf"):
        bad.append(f"plot_timing -o fig.pdf: exit {rc}, printed {out.strip()!r} {err!r}")
    return bad


def check_plot_fields(tmp):
    ini = os.path.join(tmp, "h.ini")
    with open(ini, "w") as f:
        f.write("[run]\nname = h\nsteps = 2\n[grid]\nnx = 4\nny = 3\nnz = 3\n")
    history = os.path.join(tmp, "h.nc")
    rc, _out, err = run("reference.py", ini, "--quiet", "--output", history)
    if rc != 0:
        return [f"reference.py: exit {rc} {err}"]
    bad = []
    existing = os.path.join(tmp, "a.ini")
    with open(existing, "w") as f:
        f.write("[run]\n")
    bad += expect("plot_fields -o FILE", run("plot_fields.py", history, "-o", existing), 2,
                  f"-o {existing}: is a file, not a folder")
    with open(existing) as f:
        if f.read() != "[run]\n":
            bad.append("plot_fields -o FILE: the file was changed")
    rc, out, err = run("plot_fields.py", history, "-o", os.path.join(tmp, "pictures"))
    written = out.split()
    if rc != 0 or len(written) != 3 or not all(os.path.isfile(p) for p in written):
        bad.append(f"plot_fields -o DIR: exit {rc}, printed {out!r} {err!r}")
    return bad


def discard(path):
    """Remove path (a file or a link) where it is there; the old scripts
    removed some."""
    if os.path.lexists(path):
        os.remove(path)


def nc_history(path, long_name="temperature", zlib=False):
    """A small minimodel-like history (2 records of 3x3x4) made with
    netCDF4; temp's long_name as given; temp and salt deflated in chunks of
    one record with zlib."""
    import netCDF4
    import numpy as np
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", None)
        for d, n in (("z", 3), ("y", 3), ("x", 4)):
            nc.createDimension(d, n)
            nc.createVariable(d, "f8", (d,))[:] = (np.arange(n) + 0.5) * 100.0
        t = nc.createVariable("time", "f8", ("time",))
        t.units = "seconds since 2000-01-01 00:00:00"
        for name in ("temp", "salt"):
            v = nc.createVariable(name, "f8", ("time", "z", "y", "x"), zlib=zlib,
                                  chunksizes=(1, 3, 3, 4))
            v.long_name = long_name if name == "temp" else name
            v.units = "degC" if name == "temp" else "psu"
            v[:] = 10 + np.random.default_rng(0).random((2, 3, 3, 4))
        for name in ("heat_content", "salt_content", "temp_min", "temp_max", "salt_min",
                     "salt_max"):
            nc.createVariable(name, "f8", ("time",))[:] = [0.0, 1.0]
        t[:] = [0.0, 600.0]
    return path


def tdma_lines(path, *rows):
    with open(path, "w") as f:
        for r in rows or (TDMA_RESULT,):
            f.write(json.dumps(r) + "\n")
    return path


def read(path):
    """The bytes of path; None where it is gone."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def folder(tmp, name):
    path = os.path.join(tmp, name)
    os.mkdir(path)
    return path


def check_untouched(what, path, content, files):
    """path holds content, and files (a folder's names) are all there is."""
    bad = []
    if not os.path.isfile(path) or read(path) != content:
        bad.append(f"{what}: {path} was {'changed' if os.path.exists(path) else 'removed'}")
    left = sorted(os.listdir(os.path.dirname(path)))
    if left != sorted(files):
        bad.append(f"{what}: the folder holds {left}, want {sorted(files)}")
    return bad


def check_no_extension(tmp):
    """plot_tdma_bench.py -o NAME, NAME its own input: it writes NAME.png
    and says so ("wrote NAME" was printed); on a full disk (a file-size
    limit) the input is left (it was removed), nor is a temporary file."""
    bad = []
    d = folder(tmp, "noext")
    bench = tdma_lines(os.path.join(d, "bench"))
    content = read(bench)
    rc, out, err = run("plot_tdma_bench.py", bench, "-o", bench, preexec_fn=limits(fsize=4096))
    bad += expect("plot_tdma_bench -o INPUT (no extension), full disk", (rc, out, err), 2,
                  "cannot be written")
    bad += check_untouched("plot_tdma_bench -o INPUT, full disk", bench, content, ["bench"])
    rc, out, err = run("plot_tdma_bench.py", bench, "-o", bench)
    if rc != 0 or out.strip() != f"wrote {bench}.png (1 results)" or \
            not os.path.isfile(bench + ".png"):
        bad.append(f"plot_tdma_bench -o NAME: exit {rc}, printed {out.strip()!r}, want "
                   f"'wrote {bench}.png (1 results)' {err!r}")
    bad += check_untouched("plot_tdma_bench -o NAME", bench, content, ["bench", "bench.png"])
    return bad


def cases(tmp, name):
    """For each script: (what, folder, its arguments but the output, how the
    output is given, the output's name in the folder)."""
    d = folder(tmp, name)
    timing = timing_file(os.path.join(tmp, f"{name}.timing.json"))
    bench = tdma_lines(os.path.join(tmp, f"{name}.jsonl"))
    history = nc_history(os.path.join(tmp, f"{name}.nc"))
    return d, [("plot_timing", ["plot_timing.py", timing, "-o"], "t.png"),
               ("plot_tdma_bench", ["plot_tdma_bench.py", bench, "-o"], "t.png"),
               ("plot_fields", ["plot_fields.py", history, "-o"], f"{name}.temp.surface.png")]


def target(d, name, args):
    """The arguments, the output given: plot_fields's folder, the others' file."""
    return args + [d if args[0] == "plot_fields.py" else os.path.join(d, name)]


def check_replace_whole(tmp):
    """An existing picture that a full disk keeps from being replaced (a
    file-size limit of 4 KiB) is left as it was, and no temporary file is
    left (the three scripts truncated it, then removed it)."""
    bad = []
    d, runs = cases(tmp, "whole")
    for what, args, name in runs:
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(b"the old picture")
        bad += expect(f"{what}, full disk, over an existing picture",
                      run(*target(d, name, args), preexec_fn=limits(fsize=4096)), 2,
                      "cannot be written")
        bad += check_untouched(f"{what}, full disk", path, b"the old picture", [name])
        discard(path)
    return bad


def check_stop_signals(tmp):
    """SIGTERM or SIGHUP while a picture is written (mm_figure.write_atomic,
    which the three scripts save through) removes the temporary file, as
    Ctrl-C does, leaves the old picture as it was and ends with 128 + N and
    one line (the hidden .NAME.XXXXXXXX.tmp was left behind)."""
    import signal
    bad = []
    d = folder(tmp, "signals")
    child = ("import sys, time; sys.path.insert(0, sys.argv[1]); import mm_figure\n"
             "def fill(f):\n"
             "    f.write(b'half a picture'); f.flush(); print('filling', flush=True)\n"
             "    time.sleep(60)\n"
             "try:\n"
             "    mm_figure.write_atomic(sys.argv[2], fill)\n"
             "except KeyboardInterrupt:\n"
             "    sys.exit(130)\n")
    for signo in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        path = os.path.join(d, "out.png")
        with open(path, "wb") as f:
            f.write(b"the old picture")
        p = subprocess.Popen([sys.executable, "-c", child, SCRIPTS, path], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = p.stdout.readline().strip() == "filling"
        p.send_signal(signo)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            bad.append(f"{signo.name} during the write: still running 30 s after it")
            continue
        if not started:
            bad.append(f"{signo.name}: the write never started: {err[-400:]!r}")
        want = 128 + signo
        if p.returncode != want or "Traceback" in err or len(err.strip().splitlines()) > 1:
            bad.append(f"{signo.name} during the write: exit {p.returncode}, want {want}: "
                       f"{err[-400:]!r}")
        bad += check_untouched(f"{signo.name} during the write", path, b"the old picture",
                               ["out.png"])
        discard(path)
    return bad


def check_protected(tmp):
    """An existing output that is write-protected (chmod 444; root could
    write it and did), one that is an input (written through a link, or
    named as such: it was overwritten) and a FIFO (waited for a reader for
    ever): one line, exit 2, the file as it was."""
    bad = []
    d, runs = cases(tmp, "prot")
    for what, args, name in runs:
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(b"protected")
        os.chmod(path, 0o444)
        bad += expect(f"{what}, a write-protected output", run(*target(d, name, args)), 2,
                      "write-protected")
        bad += check_untouched(f"{what}, write-protected", path, b"protected", [name])
        discard(path)
    d, runs = cases(tmp, "link")
    for what, args, name in runs:
        path = os.path.join(d, name)
        inp = args[1]
        before = read(inp)
        os.symlink(inp, path)
        bad += expect(f"{what}, the output a link to the input", run(*target(d, name, args)), 2,
                      "is the input")
        if read(inp) != before:
            bad.append(f"{what}: the input was overwritten through a link")
        discard(path)
    d = folder(tmp, "same")
    for what, script, inp in (("plot_timing", "plot_timing.py", "r.png"),
                              ("plot_tdma_bench", "plot_tdma_bench.py", "b.png")):
        inp = os.path.join(d, inp)
        if what == "plot_timing":
            timing_file(inp)
        else:
            tdma_lines(inp)
        before = read(inp)
        bad += expect(f"{what} -o INPUT", run(script, inp, "-o", inp), 2, "is the input")
        if read(inp) != before:
            bad.append(f"{what} -o INPUT: the input was overwritten")
    fifo = os.path.join(d, "f.png")
    os.mkfifo(fifo)
    bad += expect("plot_timing -o FIFO", run("plot_timing.py", timing_file(
        os.path.join(tmp, "fifo.timing.json")), "-o", fifo, timeout=30), 2, "not a regular file")
    return bad


def check_protected_nobody(tmp):
    """As user nobody (run as root with setpriv; not checked otherwise), an
    output that is a file of root's in a folder anyone may write into: one
    line, exit 2, the file left (the three scripts removed it after
    "Permission denied")."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        print("check_protected_nobody: not root, or no setpriv: not checked")
        return []
    bad = []
    d, runs = cases(tmp, "nobody")
    os.chmod(tmp, 0o755)
    os.chmod(d, 0o777)  # no sticky bit: nobody may remove root's files in it
    mpl = ENV["MPLCONFIGDIR"]
    for p in [mpl] + [os.path.join(mpl, f) for f in os.listdir(mpl)]:
        os.chmod(p, 0o777)
    nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    for what, args, name in runs:
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(b"root's")
        os.chmod(path, 0o644)
        cmd = nobody + [sys.executable, os.path.join(SCRIPTS, args[0])] + target(d, name, args)[1:]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
            result = (p.returncode, p.stdout, p.stderr)
        except subprocess.TimeoutExpired:
            result = (None, "", "still running after 120 s")
        bad += expect(f"{what} as nobody, root's file", result, 2, "write-protected")
        bad += check_untouched(f"{what} as nobody", path, b"root's", [name])
        discard(path)
    return bad


def check_inputs(tmp):
    """Inputs that are not regular files: a FIFO (waited for a writer for
    ever), /dev/zero (read until MemoryError: a traceback); and a file over
    256 MiB (sparse): one line, exit 2, at once."""
    bad = []
    d = folder(tmp, "inputs")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    big = os.path.join(d, "big.timing.json")
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)
    png = os.path.join(d, "x.png")
    for script in ("plot_timing.py", "plot_tdma_bench.py"):
        bad += expect(f"{script} FIFO", run(script, fifo, "-o", png, timeout=30), 2,
                      "not a regular file")
        bad += expect(f"{script} /dev/zero", run(script, "/dev/zero", "-o", png, timeout=60,
                                                 preexec_fn=limits(address_space=4 << 30)),
                      2, "not a regular file")
        bad += expect(f"{script} 256 MiB + 1", run(script, big, "-o", png, timeout=60,
                                                   preexec_fn=limits(address_space=4 << 30)),
                      2, "larger than 256 MiB")
    if os.path.exists(png):
        bad.append("a picture was written of an input refused")
    return bad


def check_tdma(tmp):
    """plot_tdma_bench.py: -o of a format matplotlib does not write (also the
    input's own .jsonl) is one line, exit 2, before the inputs are read (a
    ValueError traceback, after the work); a result with median_ms and no
    ms is drawn (KeyError); the default output is docs/tdma_bench.png of the
    script's repository, not of the current folder, and --help says so."""
    bad = []
    d = folder(tmp, "tdma")
    results = tdma_lines(os.path.join(d, "results.jsonl"))
    content = read(results)
    zzz = os.path.join(d, "x.zzz")
    bad += expect("plot_tdma_bench -o x.zzz", run("plot_tdma_bench.py", results, "-o", zzz), 2,
                  "matplotlib cannot write .zzz files")
    bad += expect("plot_tdma_bench -o INPUT.jsonl", run("plot_tdma_bench.py", results, "-o",
                                                        results), 2,
                  "matplotlib cannot write .jsonl files")
    none = tdma_lines(os.path.join(d, "none.jsonl"), {"peer": "jax"})
    bad += expect("plot_tdma_bench -o x.zzz, no results", run("plot_tdma_bench.py", none, "-o",
                                                              zzz), 2, "-o")
    bad += check_untouched("plot_tdma_bench -o x.zzz", results, content,
                           ["results.jsonl", "none.jsonl"])
    only_median = dict(TDMA_RESULT, threads=1, median_ms=2.5)
    del only_median["ms"]
    om = tdma_lines(os.path.join(d, "om.jsonl"), only_median)
    png = os.path.join(d, "om.png")
    rc, out, err = run("plot_tdma_bench.py", om, "-o", png)
    if rc != 0 or not os.path.isfile(png) or "Traceback" in err:
        bad.append(f"plot_tdma_bench median_ms without ms: exit {rc} {err[-400:]!r}")
    # the default: docs/ of the script's repository (a copy), from another folder
    repo = os.path.join(d, "repo")
    os.makedirs(os.path.join(repo, "scripts"))
    os.mkdir(os.path.join(repo, "docs"))
    for name in os.listdir(SCRIPTS):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SCRIPTS, name), os.path.join(repo, "scripts"))
    elsewhere = folder(d, "elsewhere")
    p = subprocess.run([sys.executable, os.path.join(repo, "scripts", "plot_tdma_bench.py"),
                        results], capture_output=True, text=True, cwd=elsewhere, env=ENV,
                       timeout=120)
    want = os.path.join(repo, "docs", "tdma_bench.png")
    if p.returncode != 0 or not os.path.isfile(want) or os.listdir(elsewhere) or \
            p.stdout.strip() != f"wrote {want} (1 results)":
        bad.append(f"plot_tdma_bench without -o from another folder: exit {p.returncode}, "
                   f"printed {p.stdout.strip()!r}, want {want} written {p.stderr[-400:]!r}")
    rc, out, err = run("plot_tdma_bench.py", "--help")
    default = os.path.join(ROOT, "docs", "tdma_bench.png")
    if rc != 0 or default not in " ".join(out.split()):
        bad.append(f"plot_tdma_bench --help: exit {rc}, the default {default} not shown: "
                   f"{out!r}")
    return bad


def check_tdma_doc_runs():
    """What plot_tdma_bench.py's help says docs/tdma_bench.jsonl holds is
    so: a count of its runs ("holds two runs", when it held three) is the
    number of its "run" labels."""
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    doc = read(os.path.join(SCRIPTS, "plot_tdma_bench.py")).decode()
    said = re.search(r"docs/tdma_bench\.jsonl\s+holds\s+(\w+)\s+runs?", doc)
    if not said:
        return []
    labels = set()
    with open(os.path.join(ROOT, "docs", "tdma_bench.jsonl")) as f:
        for line in f:
            if line.strip():
                labels.add(json.loads(line).get("run"))
    n = words.get(said.group(1), int(said.group(1)) if said.group(1).isdigit() else None)
    if n != len(labels):
        return [f"plot_tdma_bench.py says docs/tdma_bench.jsonl holds {said.group(1)} runs; "
                f"it holds {len(labels)}"]
    return []


def check_literal_text(tmp):
    """Text from the user or a file with matplotlib mathtext that does not
    parse ($\\notasymbol$): --title, a run's name, a long_name, a backend and
    a run label are drawn as they are (ParseFatalException tracebacks)."""
    bad = []
    d = folder(tmp, "text")
    timing = timing_file(os.path.join(d, "m.timing.json"), name=MATH)
    rc, out, err = run("plot_timing.py", timing, "--title", MATH, "-o",
                       os.path.join(d, "m.png"))
    if rc != 0 or "Traceback" in err:
        bad.append(f"plot_timing --title {MATH}: exit {rc} {err[-400:]!r}")
    history = nc_history(os.path.join(d, "m.nc"), long_name=MATH)
    rc, out, err = run("plot_fields.py", history, "-o", d)
    if rc != 0 or len(out.split()) != 3 or "Traceback" in err:
        bad.append(f"plot_fields long_name {MATH}: exit {rc} {err[-400:]!r}")
    bench = tdma_lines(os.path.join(d, "m.jsonl"), dict(TDMA_RESULT, backend=MATH, run=MATH))
    rc, out, err = run("plot_tdma_bench.py", bench, "-o", os.path.join(d, "b.png"))
    if rc != 0 or "Traceback" in err:
        bad.append(f"plot_tdma_bench backend and run {MATH}: exit {rc} {err[-400:]!r}")
    return bad


def old_rolling_median(v, w):
    """plot_timing.py's rolling median as it was: each window sorted."""
    h = w // 2
    out = []
    for i in range(len(v)):
        win = sorted(v[max(0, i - h):i + h + 1])
        n = len(win)
        out.append(win[n // 2] if n % 2 else 0.5 * (win[n // 2 - 1] + win[n // 2]))
    return out


COMPARISONS = [0]


def _counting(name):
    """float's comparison `name`, counting each call in COMPARISONS."""
    compare = getattr(float, name)

    def method(self, other):
        COMPARISONS[0] += 1
        return compare(self, other)
    return method


class Counted(float):
    """A float that counts the comparisons made of it."""
    __lt__, __le__, __gt__, __ge__, __eq__ = (
        _counting(n) for n in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"))
    __hash__ = float.__hash__

    def __neg__(self):
        return Counted(-float(self))


def check_smoothing():
    """plot_timing.py's rolling median gives the values of the old one
    (sorted windows) on random, repeated and spread values, windows odd and
    even, longer than the data too; and takes n log w comparisons, not a
    sort per step (100000 records took 36 s): at most 20 n log2(w) on 8000
    values with the default window (the old one: about 165)."""
    spec = importlib.util.spec_from_file_location("plot_timing_under_test",
                                                  os.path.join(SCRIPTS, "plot_timing.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bad = []
    rng = random.Random(7)
    for n in (0, 1, 2, 3, 10, 61, 500):
        for w in (1, 2, 3, 4, 7, 8, 61, 1001):
            for kind in ("uniform", "repeated", "spread"):
                v = [rng.random() if kind == "uniform" else float(rng.randint(0, 3))
                     if kind == "repeated" else 100 * rng.random() / (rng.random() + 1e-9)
                     for _ in range(n)]
                if module.rolling_median(v, w) != old_rolling_median(v, w):
                    bad.append(f"rolling_median: {n} {kind} values, window {w}: not the old "
                               "values")
    n = 8000
    w = n // 40 | 1
    v = [Counted(rng.random()) for _ in range(n)]
    COMPARISONS[0] = 0
    got = module.rolling_median(v, w)
    per = COMPARISONS[0] / (n * math.log2(w))
    if per > 20:
        bad.append(f"rolling_median: {COMPARISONS[0]} comparisons for {n} values, window {w}: "
                   f"{per:.0f} n log2(w), want at most 20")
    if got != old_rolling_median([float(x) for x in v], w):
        bad.append("rolling_median: 8000 values: not the old values")
    return bad


def check_damaged_chunk(tmp):
    """A NetCDF-4 history whose deflated temp chunk is damaged (bytes
    flipped): plot_fields.py says so in one line naming the file and the
    variable, exit 1 (a RuntimeError traceback, "NetCDF: HDF error")."""
    try:
        import h5py
    except ImportError:
        print("check_damaged_chunk: no h5py, not checked")
        return []
    d = folder(tmp, "damaged")
    history = nc_history(os.path.join(d, "bad.nc"), zlib=True)
    with h5py.File(history, "r") as f:
        chunk = f["temp"].id.get_chunk_info(1)  # the last record, the one drawn
    with open(history, "r+b") as f:
        at = chunk.byte_offset + chunk.size // 2
        f.seek(at)
        b = f.read(8)
        f.seek(at)
        f.write(bytes(x ^ 0xFF for x in b))
    result = run("plot_fields.py", history, "-o", d)
    bad = expect("plot_fields, a damaged chunk", result, 1, f"{history}: cannot be read")
    if "variable temp" not in result[2]:
        bad.append(f"plot_fields, a damaged chunk: {result[2]!r} does not name temp")
    return bad


def main():
    with tempfile.TemporaryDirectory() as tmp:
        ENV["MPLCONFIGDIR"] = os.path.join(tmp, "mpl")  # made once, not under a limit
        subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], env=ENV, check=True)
        bad = check_plot_timing(tmp) + check_plot_fields(tmp)
        for check in (check_no_extension, check_replace_whole, check_stop_signals,
                      check_protected,
                      check_protected_nobody, check_inputs, check_tdma, check_literal_text,
                      check_damaged_chunk):
            bad += check(tmp)
        bad += check_smoothing() + check_tdma_doc_runs()
    for b in bad:
        print(b)
    print("ok" if not bad else f"{len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
