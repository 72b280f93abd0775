#!/usr/bin/env python3
"""Faults of the user-facing scripts (scripts/regress, scripts/scaling,
scripts/run, scripts/bench-model, scripts/plot_fields.py,
scripts/plot_timing.py, scripts/plot_tdma_bench.py,
tests/profiling/check_timing.py): bad input and faults are one line and the
documented exit status (2 usage or input, 1 a failed run, 130 interrupted),
never a traceback, a hang or a silently wrong result.

    python3 tests/scripts/test_script_faults.py [--minimodel PATH] [-v] [TEST ...]

--minimodel: the model under test (default build/minimodel); the tests that
run it are skipped without it. Tiny grids and stand-in models (shell scripts
that sleep or exit), no GPU; nothing is built. Exit status 0 when every test
passes, 1 otherwise; 77 (skip) without numpy, netCDF4, xarray and
matplotlib.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script_tests  # noqa: E402
from script_tests import Skip  # noqa: E402

script_tests.need("test_script_faults.py", ("numpy", "netCDF4", "xarray", "matplotlib"))
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402

ROOT = script_tests.ROOT
SCRIPTS = os.path.join(ROOT, "scripts")
CHECK_TIMING = os.path.join(ROOT, "tests", "profiling", "check_timing.py")

MODEL = os.path.join(ROOT, "build", "minimodel")
TINY = ["--set", "grid.nx=8", "--set", "grid.ny=6", "--set", "grid.nz=4", "--set", "run.steps=3"]
TINY_INI = "[run]\nname = tiny\nsteps = 3\ndt = 600\n[grid]\nnx = 8\nny = 6\nnz = 4\n"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1",
           MINIMODEL_PROGRESS="off")


def need_model():
    if not (os.path.isfile(MODEL) and os.access(MODEL, os.X_OK)):
        raise Skip(f"no model at {MODEL} (--minimodel PATH)")


def run(cmd, cwd=None, timeout=120, **kw):
    """(exit status, stdout, stderr) of cmd, started in a session of its own
    so that a timeout ends all of it."""
    env = kw.pop("env", ENV)
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"{cmd}: still running after {timeout} s")
    return p.returncode, out, err


def py(script, *args, **kw):
    return run([sys.executable, script] + list(args), **kw)


def interrupt(cmd, after, cwd=None, timeout=30, env=None):
    """Start cmd (in ENV, or env), send SIGINT to its whole process group (as
    Ctrl-C does) `after` seconds later; (exit status, stderr, seconds it took
    to stop)."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(after)
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    try:
        err = p.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"{cmd}: still running {timeout} s after Ctrl-C")
    return p.returncode, err, time.monotonic() - t0


def one_line(what, result, code, message=""):
    """Exit status `code` and one line (on stderr, or on stdout when stderr
    is empty) holding `message`, no traceback."""
    rc, out, err = result
    text = err if err.strip() else out
    assert rc == code, f"{what}: exit {rc}, want {code}; {(out + err)[-800:]!r}"
    assert "Traceback" not in out + err, f"{what}: a traceback: {(out + err)[-800:]!r}"
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"{what}: {len(lines)} lines, want 1: {text[-800:]!r}"
    assert message in lines[0], f"{what}: {lines[0]!r} lacks {message!r}"


def stand_in(directory, name, body):
    """An executable shell script standing in for the model."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def history(path, nx=4, ny=3, nz=3, records=2, dims=("z", "y", "x"), calendar=None):
    """A minimodel-like history: temp and salt on (time, *dims), the
    diagnostics on time, coordinates and z_bnds; time in `calendar` where
    given."""
    zd, yd, xd = dims
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", None)
        nc.createDimension(zd, nz)
        nc.createDimension(yd, ny)
        nc.createDimension(xd, nx)
        nc.createDimension("nv", 2)
        for d, n, h in ((xd, nx, 1e4), (yd, ny, 1e4), (zd, nz, 100.0)):
            v = nc.createVariable(d, "f8", (d,))
            v[:] = (np.arange(n) + 0.5) * h
        b = nc.createVariable("z_bnds", "f8", (zd, "nv"))
        b[:] = np.stack([np.arange(nz) * 100.0, (np.arange(nz) + 1) * 100.0], axis=1)
        t = nc.createVariable("time", "f8", ("time",))
        t.units = "seconds since 2000-01-01 00:00:00"
        if calendar:
            t.calendar = calendar
        step = nc.createVariable("step", "i4", ("time",))
        for name in ("temp", "salt"):
            v = nc.createVariable(name, "f8", ("time", zd, yd, xd), fill_value=-1e30)
            v.units = "degC" if name == "temp" else "psu"
            v.long_name = name
            if records:
                v[:] = 10 + np.random.default_rng(0).random((records, nz, ny, nx))
        for name in ("heat_content", "salt_content", "temp_min", "temp_max", "salt_min",
                     "salt_max"):
            v = nc.createVariable(name, "f8", ("time",))
            if records:
                v[:] = np.arange(records, dtype=float)
        if records:
            t[:] = np.arange(records) * 600.0
            step[:] = np.arange(records)
    return path


PHASES = ("halo", "horizontal", "mixing", "solve", "diagnostics", "output", "step")


def timing(path, **changes):
    """A timing file plot_timing.py draws; changes: 'a.b.c' -> value."""
    d = {"name": "t", "ranks": 1, "steps": 2,
         "phases": {p: {"mean_s": 1e-3, "total_s": 2e-3} for p in PHASES},
         "per_step": [{"step": n, "step_s": 2e-3, "solve_s": 1e-3} for n in (1, 2)]}
    for key, value in changes.items():
        *head, last = key.split(".")
        node = d
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node[k]
        node[int(last) if isinstance(node, list) else last] = value
    with open(path, "w") as f:
        json.dump(d, f)
    return path


# ---------------------------------------------------------------------------
# scripts/regress
# ---------------------------------------------------------------------------
REGRESS = os.path.join(SCRIPTS, "regress")


def regress(*args, **kw):
    return run(["bash", REGRESS, "--compare", "--python", sys.executable] + list(args), **kw)


def bounded_memory():
    """preexec_fn of a script that must not read /dev/zero whole: were it
    read, it ends in MemoryError (2 GiB of address space), not the OOM
    killer."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_regress_interrupt():
    """Ctrl-C while the model runs: regress stops at once with 130, not
    "the run failed" and on to the next case."""
    with tempfile.TemporaryDirectory() as tmp:
        slow = stand_in(tmp, "slow", "sleep 20")
        rc, err, took = interrupt(["bash", REGRESS, "--compare", "--ranks", "1 2",
                                   "--minimodel", slow, "--python", sys.executable], 2.0)
    assert rc == 130, f"exit {rc}, want 130: {err[-800:]!r}"
    assert took < 15, f"took {took:.1f} s to stop"
    assert "the run failed" not in err and "DIFFERS" not in err, err[-800:]


def test_regress_interrupt_while_written():
    """Ctrl-C while something (a rank still ending) writes into regress's
    temporary folder: exit 130 and the folder removed once the writing
    stops (rm -rf failed with "Directory not empty", and under set -e the
    exit status was 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        # the stand-in leaves a writer in a session of its own, which the
        # group's signal does not reach, creating files in output.dir for 3 s
        writer = stand_in(tmp, "writer", """dir=""
for a; do case "$a" in output.dir=*) dir="${a#output.dir=}" ;; esac; done
mkdir -p "$dir"
setsid sh -c 'end=$(($(date +%s) + 3)); i=0
while [ "$(date +%s)" -lt "$end" ]; do : >"$1/f$i"; i=$((i + 1)); done' sh "$dir" \
  </dev/null >/dev/null 2>&1 &
sleep 20""")
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        rc, err, _ = interrupt(["bash", REGRESS, "--compare", "--configs", "flat", "--ranks", "1",
                                "--minimodel", writer, "--python", sys.executable], 1.5,
                               env=dict(ENV, TMPDIR=work))
        time.sleep(3.5)  # the writer's end, should regress have left early
        left = [x for x in os.listdir(work) if x.startswith("tmp.")]  # mktemp -d's, not MPI's
    assert rc == 130, f"exit {rc}, want 130: {err[-800:]!r}"
    assert not left, f"the temporary folder is left: {left}"


def test_regress_model_interrupted():
    """A model that exits 130 (stopped by Ctrl-C) is an interrupt: exit 130
    after the first case, not "the run failed" and on."""
    with tempfile.TemporaryDirectory() as tmp:
        stopped = stand_in(tmp, "stopped", "exit 130")
        rc, out, err = regress("--ranks", "1 2", "--minimodel", stopped, timeout=60)
    assert rc == 130, f"exit {rc}, want 130: {err[-800:]!r}"
    assert "the run failed" not in err and "on 2 ranks" not in out + err, (out + err)[-800:]


def test_regress_tools_are_files():
    """--minimodel DIR and --python DIR are usage errors (exit 2)."""
    with tempfile.TemporaryDirectory() as tmp:
        one_line("--minimodel DIR", run(["bash", REGRESS, "--compare", "--configs", "flat",
                                         "--minimodel", tmp, "--python", sys.executable]), 2,
                 "--minimodel")
        fake = stand_in(tmp, "m", "exit 0")
        one_line("--python DIR", run(["bash", REGRESS, "--compare", "--configs", "flat",
                                      "--minimodel", fake, "--python", tmp]), 2, "--python")


def test_regress_cannot_compare():
    """A run that writes no history: compare.py cannot read it (exit 2);
    regress says so and exits 1, not "DIFFERS from the baseline"."""
    with tempfile.TemporaryDirectory() as tmp:
        silent = stand_in(tmp, "silent", "exit 0")
        rc, out, err = regress("--configs", "flat", "--ranks", "1", "--minimodel", silent,
                               timeout=60)
    assert rc == 1, f"exit {rc}, want 1: {(out + err)[-800:]!r}"
    assert "DIFFERS" not in out + err, (out + err)[-800:]
    assert "cannot compare" in err, err[-800:]


def test_regress_signal_to_regress_alone():
    """SIGTERM to regress alone (kill PID, a batch system), not its group:
    it stops within seconds with 130, the model run under way ended, not
    after the run has gone to its end."""
    with tempfile.TemporaryDirectory() as tmp:
        slow = stand_in(tmp, "slow", "sleep 30")
        p = subprocess.Popen(["bash", REGRESS, "--compare", "--configs", "flat", "--ranks", "1",
                              "--minimodel", slow, "--python", sys.executable], env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        time.sleep(3.0)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            err = p.communicate(timeout=25)[1]
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise AssertionError("regress still running 25 s after SIGTERM")
        took = time.monotonic() - t0
        left = subprocess.run(["pgrep", "-f", slow], capture_output=True, text=True).stdout
        os.killpg(p.pid, signal.SIGKILL) if left.strip() else None
    assert p.returncode == 130 and "interrupted" in err, f"exit {p.returncode}: {err[-800:]!r}"
    assert took < 15, f"took {took:.1f} s to stop"
    assert not left.strip(), f"the model run is left running: {left}"


def test_regress_bare_name():
    """--minimodel NAME runs ./NAME, the file regress checked, not a NAME on
    the PATH."""
    with tempfile.TemporaryDirectory() as tmp:
        here, onpath = os.path.join(tmp, "here"), os.path.join(tmp, "bin")
        os.mkdir(here), os.mkdir(onpath)
        stand_in(here, "mm-under-test", "exit 3")
        stand_in(onpath, "mm-under-test", "exit 0")
        env = dict(ENV, PATH=onpath + os.pathsep + ENV.get("PATH", os.defpath))
        rc, out, err = run(["bash", REGRESS, "--compare", "--configs", "flat", "--ranks", "1",
                            "--minimodel", "mm-under-test", "--python", sys.executable],
                           cwd=here, env=env, timeout=60)
    assert rc == 1 and "the run failed (exit 3)" in err, f"exit {rc}: {(out + err)[-800:]!r}"


def test_regress_python_not_python():
    """A --python that is not Python with numpy and netCDF4 but exits 0
    (/bin/true) is refused, one line and exit 2, before any run; one that
    answers the check but exits 0 without comparing is "cannot compare",
    exit 1 (both said "matches the baseline", exit 0)."""
    true = shutil.which("true")
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "ran")
        model = stand_in(tmp, "m", f'echo ran >>"{record}"\n'
                                   'for a; do case "$a" in output.dir=*) d="${a#output.dir=}";;\n'
                                   '  run.name=*) n="${a#run.name=}";; esac; done\n'
                                   'mkdir -p "$d" && : >"$d/$n.nc"')
        args = ["bash", REGRESS, "--compare", "--configs", "flat", "--ranks", "1",
                "--minimodel", model, "--python"]
        one_line("--python true", run(args + [true], timeout=60), 2,
                 f"--python: {true}: not a Python with numpy and netCDF4")
        assert not os.path.exists(record), "--python true: the model was run"
        # the check answered (the real Python), compare.py not run (exit 0)
        half = stand_in(tmp, "py", f'[ "$1" = -c ] && exec "{sys.executable}" "$@"; exit 0')
        rc, out, err = run(args + [half], timeout=60)
        assert rc == 1 and "matches" not in out and \
            "flat on 1 ranks: cannot compare with the baseline" in err, \
            f"a Python that compares nothing: exit {rc}, {(out + err)[-800:]!r}"
        assert os.path.exists(record), "the model was not run"


def test_regress_generate_keeps_baseline():
    """--generate that cannot write the new baseline (a file-size limit,
    SIGXFSZ ignored) leaves the old one as it was and no partial file, exit
    1; then, without the limit, writes it. In a copy of the scripts, so that
    the repository's baselines are not touched."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        shutil.copytree(SCRIPTS, os.path.join(root, "scripts"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        os.makedirs(os.path.join(root, "configs"))
        shutil.copy(os.path.join(ROOT, "configs", "flat.ini"), os.path.join(root, "configs"))
        baselines = os.path.join(root, "tests", "baselines")
        os.makedirs(baselines)
        old = write(os.path.join(baselines, "flat.nc"), "the old baseline\n")
        big = os.path.join(tmp, "big.nc")
        with open(big, "wb") as f:
            f.write(b"\0" * (1 << 20))
        # the model's history as a hard link: no bytes written under the limit
        model = stand_in(tmp, "m", f'for a; do case "$a" in output.dir=*) d="${{a#output.dir=}}";; esac; done\n'
                              f'mkdir -p "$d" && ln -f "{big}" "$d/flat.nc"')
        cmd = ["bash", "-c", 'trap "" XFSZ; ulimit -f 64; exec bash "$@"', "regress",
               os.path.join(root, "scripts", "regress"), "--generate", "--configs", "flat",
               "--minimodel", model]
        rc, out, err = run(cmd, timeout=60)
        with open(old) as f:
            kept = f.read()
        assert rc == 1 and "the baseline before is kept" in err, f"exit {rc}: {(out + err)[-800:]!r}"
        assert kept == "the old baseline\n", "the old baseline was overwritten"
        assert os.listdir(baselines) == ["flat.nc"], os.listdir(baselines)
        rc, out, err = run(cmd[:2] + ['exec bash "$@"'] + cmd[3:], timeout=60)
        assert rc == 0 and os.path.getsize(old) == 1 << 20, f"exit {rc}: {(out + err)[-800:]!r}"


def test_regress_run_name_not_config_name():
    """A config whose run.name is not its file's name (configs/small.ini,
    name = tiny): --generate stores the run's history as small.nc, and
    --compare finds the run's history (it looked for small.nc while the run
    wrote tiny.nc, and said "the run wrote no history"). In a copy of the
    scripts, so that the repository's configs and baselines are not
    touched."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(SCRIPTS, os.path.join(tmp, "scripts"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        os.makedirs(os.path.join(tmp, "configs"))
        write(os.path.join(tmp, "configs", "small.ini"), TINY_INI)
        regress_copy = os.path.join(tmp, "scripts", "regress")
        rc, out, err = run(["bash", regress_copy, "--generate", "--configs", "small",
                            "--minimodel", MODEL], timeout=120)
        assert rc == 0 and os.path.isfile(os.path.join(tmp, "tests", "baselines", "small.nc")), \
            f"--generate: exit {rc}: {(out + err)[-800:]!r}"
        rc, out, err = run(["bash", regress_copy, "--compare", "--configs", "small", "--ranks", "1",
                            "--minimodel", MODEL, "--python", sys.executable], timeout=120)
        assert rc == 0 and "small on 1 ranks: matches the baseline" in out, \
            f"--compare: exit {rc}: {(out + err)[-800:]!r}"


def test_regress_no_temporary_folder():
    """A TMPDIR where no folder can be made: one line and exit 2 (it was
    mktemp's message and exit 1, which says "a difference"); the model is
    not run."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "ran")
        model = stand_in(tmp, "m", f'echo ran >>"{record}"')
        # /proc refuses new files even to root
        result = regress("--configs", "flat", "--ranks", "1", "--minimodel", model,
                         env=dict(ENV, TMPDIR="/proc/nope"), timeout=60)
        one_line("TMPDIR=/proc/nope", result, 2, "TMPDIR")
        assert not os.path.exists(record), "the model was run"


def test_regress_rtol_not_finite():
    """An --rtol too large for a double (1e400, which is infinity: every
    difference would pass) is refused as "inf" is: one line, exit 2, before
    any run."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "ran")
        model = stand_in(tmp, "m", f'echo ran >>"{record}"')
        for rtol in ("1e400", "1.8e308", "inf"):
            one_line(f"--rtol {rtol}", regress("--configs", "flat", "--ranks", "1", "--rtol", rtol,
                                               "--minimodel", model, timeout=60), 2, "--rtol")
        assert not os.path.exists(record), "the model was run"
        # the largest double is a tolerance still
        rc, out, err = regress("--configs", "flat", "--ranks", "1", "--rtol",
                               "1.7976931348623157e308", "--minimodel", model, timeout=60)
        assert "--rtol" not in err and os.path.exists(record), f"exit {rc}: {err[-800:]!r}"


# ---------------------------------------------------------------------------
# scripts/scaling
# ---------------------------------------------------------------------------
SCALING = os.path.join(SCRIPTS, "scaling")


def test_scaling_relative_paths():
    """--config and --out relative to the current folder, for the runs too:
    the folder's configs/flat.ini (8x6x4), not the repository's."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "configs"))
        write(os.path.join(tmp, "configs", "flat.ini"), TINY_INI)
        stray = os.path.join(ROOT, "out-of-test-script-faults")
        rc, out, err = py(SCALING, "--config", "configs/flat.ini", "--out",
                          "out-of-test-script-faults", "--kinds", "strong", "--max-cores", "1",
                          "--steps", "2", "--model", MODEL, cwd=tmp)
        leaked = os.path.exists(stray)
        if leaked:
            shutil.rmtree(stray, ignore_errors=True)
        assert not leaked, "the runs wrote into the repository's root"
        assert rc == 0, f"exit {rc}: {(out + err)[-800:]!r}"
        with open(os.path.join(tmp, "out-of-test-script-faults", "scaling.json")) as f:
            runs = json.load(f)["runs"]
    assert [r.get("grid") for r in runs] == [[8, 6, 4]], runs


def test_scaling_bad_paths():
    """--out naming a file, --model a folder or the copy in --out: exit 2,
    one line each."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        common = ["--config", cfg, "--kinds", "strong", "--max-cores", "1", "--steps", "1"]
        afile = write(os.path.join(tmp, "afile"), "")
        one_line("--out FILE", py(SCALING, *common, "--out", afile, "--model", MODEL), 2,
                 "--out")
        one_line("--model DIR", py(SCALING, *common, "--out", os.path.join(tmp, "o"),
                                   "--model", tmp), 2, "--model")
        out = os.path.join(tmp, "o2")
        os.mkdir(out)
        shutil.copy2(MODEL, os.path.join(out, "minimodel"))
        one_line("--model OUT/minimodel", py(SCALING, *common, "--out", out, "--model",
                                             os.path.join(out, "minimodel")), 2, "--model")


def scaling_refused(option, value, words):
    """scaling with `option value` refused: one line holding words, exit 2,
    before any run; the files of the sweep before in --out left as they
    were."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        out = os.path.join(tmp, "o")
        os.mkdir(out)
        before = {name: write(os.path.join(out, name), f"the sweep before: {name}\n")
                  for name in ("scaling.json", "scaling.png", "strong_1x1.timing.json")}
        args = {"--steps": "1", option: value}
        one_line(f"{option} {value}", py(SCALING, "--config", cfg, "--kinds", "strong",
                                         "--max-cores", "1", "--out", out, "--model", MODEL,
                                         *(a for kv in args.items() for a in kv)), 2, words)
        assert sorted(os.listdir(out)) == sorted(before), os.listdir(out)
        for name, path in before.items():
            with open(path) as f:
                assert f.read() == f"the sweep before: {name}\n", f"{name} changed"


def test_scaling_unknown_tdma():
    """--tdma a variant the model does not know: refused before any run
    (every run failed, and the sweep's files before were replaced)."""
    scaling_refused("--tdma", "bogus", "solver.tdma = bogus")


def test_scaling_steps_refused():
    """--steps the model refuses (run.steps in [0, 1000000000]): refused
    before any run (every run failed, a matplotlib warning, exit 1, and
    scaling.json and scaling.png were replaced by a table of failures)."""
    scaling_refused("--steps", "2000000000", "run.steps = 2000000000")


def test_scaling_one_at_a_time():
    """A second sweep into an --out while one runs there (here: its lock
    held) is refused with one line and exit 2 before it copies or runs
    anything (one failed "in use by another run" or "Text file busy", and
    the last to end wrote its failures over the other's scaling.json)."""
    import fcntl
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        os.mkdir(out)
        with open(os.path.join(out, ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            one_line("a second sweep", run(scaling_tiny(tmp, out), timeout=60), 2,
                     "another scripts/scaling is running in it")
            assert os.listdir(out) == [".lock"], f"it wrote: {os.listdir(out)}"


def test_scaling_out_refused():
    """--out "" (it wrote into the current folder) and an --out holding a
    file minimodel that is not the copy of the model a sweep made (a user's
    own, overwritten) are refused, one line and exit 2, the file kept; the
    sweep's own copy is replaced by the next sweep."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.join(tmp, "here")
        os.mkdir(cwd)
        cmd = scaling_tiny(tmp, "")
        one_line("--out ''", run(cmd, cwd=cwd, timeout=60), 2, "--out ''")
        assert os.listdir(cwd) == [], f"--out '' wrote {os.listdir(cwd)}"
        out = os.path.join(tmp, "o")
        for n in (1, 2):  # its own copy, then the next sweep's
            rc, stdout, err = run(scaling_tiny(tmp, out), timeout=120)
            assert rc == 0, f"sweep {n}: exit {rc}: {err[-800:]!r}"
        mine = write(os.path.join(out, "minimodel"), "#!/bin/sh\n# the user's own\n")
        one_line("a user's minimodel in --out", run(scaling_tiny(tmp, out), timeout=60), 2,
                 "not the copy of the model")
        with open(mine) as f:
            assert f.read() == "#!/bin/sh\n# the user's own\n", "the user's minimodel replaced"


def test_scaling_config_without_keys():
    """A config without grid.nx (strong runs take the model's) or without
    run.dt (weak runs: the model's): runs, no traceback."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        nonx = write(os.path.join(tmp, "nonx.ini"), "[grid]\nny = 6\nnz = 4\n")
        rc, out, err = py(SCALING, "--config", nonx, "--kinds", "strong", "--max-cores", "1",
                          "--steps", "1", "--out", os.path.join(tmp, "a"), "--model", MODEL)
        assert rc == 0 and "Traceback" not in err, f"no grid.nx: exit {rc} {err[-800:]!r}"
        nodt = write(os.path.join(tmp, "nodt.ini"), "[grid]\nnx = 8\nny = 6\nnz = 4\n")
        rc, out, err = py(SCALING, "--config", nodt, "--kinds", "weak", "--max-cores", "1",
                          "--steps", "1", "--out", os.path.join(tmp, "b"), "--model", MODEL)
        assert rc == 0 and "Traceback" not in err, f"no run.dt: exit {rc} {err[-800:]!r}"


def test_scaling_interrupt():
    """Ctrl-C during a run: exit 130, one line, no KeyboardInterrupt traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        slow = stand_in(tmp, "slow", "sleep 20")
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        rc, err, took = interrupt([sys.executable, SCALING, "--config", cfg, "--kinds", "strong",
                                   "--max-cores", "1", "--out", os.path.join(tmp, "o"),
                                   "--model", slow], 2.0)
    assert rc == 130, f"exit {rc}, want 130: {err[-800:]!r}"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err[-800:]


def test_scaling_signal_to_scaling_alone():
    """SIGTERM, then SIGINT, to scaling alone (kill PID, a batch system), not
    its group: the model's run under mpirun gets SIGTERM (passed on by
    mpirun) and ends before scaling does, within seconds, with 130 (SIGTERM
    ended scaling alone, exit 143, and the run went on under init; SIGINT
    had subprocess.run kill mpirun with SIGKILL, and the ranks ran on and
    left their lock files)."""
    for signo in (signal.SIGTERM, signal.SIGINT):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "record")
            slow = stand_in(tmp, "slow",
                            'case " $* " in *" --dry-run "*) exit 0 ;; esac\n'
                            f'trap \'echo term >>"{rec}"; exit 143\' TERM\n'
                            f'echo started >>"{rec}"\n'
                            "sleep 60 & wait")
            cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
            p = subprocess.Popen([sys.executable, SCALING, "--config", cfg, "--kinds", "strong",
                                  "--max-cores", "1", "--out", os.path.join(tmp, "o"),
                                  "--model", slow], env=ENV, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
            for _ in range(300):
                if os.path.exists(rec) or p.poll() is not None:
                    break
                time.sleep(0.1)
            assert os.path.exists(rec), f"{signo.name}: the stand-in never started"
            t0 = time.monotonic()
            p.send_signal(signo)
            try:
                err = p.communicate(timeout=30)[1]
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                raise AssertionError(f"{signo.name}: scaling still running 30 s after it")
            took = time.monotonic() - t0
            left = subprocess.run(["pgrep", "-f", slow], capture_output=True,
                                  text=True).stdout.strip()
            if left:
                os.killpg(p.pid, signal.SIGKILL)
            with open(rec) as f:
                record = f.read()
        assert p.returncode == 130 and "interrupted" in err, \
            f"{signo.name}: exit {p.returncode}: {err[-800:]!r}"
        assert "term" in record, f"{signo.name}: the run got no SIGTERM: {record!r}"
        assert took < 20, f"{signo.name}: took {took:.1f} s to stop"
        assert not left, f"{signo.name}: the model's run is left running: {left}"


def scaling_tiny(tmp, out, **kw):
    """scripts/scaling on an 8x6x4 grid, 1 core, 2 steps, strong runs only."""
    cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
    return [sys.executable, SCALING, "--config", cfg, "--kinds", "strong", "--max-cores", "1",
            "--steps", "2", "--out", out, "--model", MODEL]


def test_scaling_stdout_fails():
    """A table that cannot be printed (standard output on a full disk,
    > /dev/full): its one line and exit 2 (it was an OSError traceback and
    exit 1, "a run failed"); scaling.json is written."""
    need_model()
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        with open("/dev/full", "w") as full:
            p = subprocess.run(scaling_tiny(tmp, out), stdout=full, stderr=subprocess.PIPE,
                               text=True, env=ENV, timeout=120)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and "Traceback" not in p.stderr and lines and \
            "cannot write the table" in lines[-1], \
            f"> /dev/full: exit {p.returncode}, want 2: {p.stderr[-800:]!r}"
        assert os.path.isfile(os.path.join(out, "scaling.json")), "no scaling.json"


def test_scaling_json_not_written():
    """An <out>/scaling.json that cannot be written (a link to /dev/full, a
    folder, write-protected) is refused before any run, one line and exit
    2; one that becomes a link to /dev/full while the runs go on (here the
    stand-in model makes it) is one line and exit 2 after them, with the
    table printed (it was an OSError traceback at the write, exit 1)."""
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "ran")
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        # its --dry-run (the checks before the runs) has no output.dir: it
        # wrote /scaling.json and /.timing.json
        model = stand_in(tmp, "m", 'case " $* " in *" --dry-run "*) exit 0 ;; esac\n'
                                   f'echo ran >>"{record}"\n'
                                   'for a; do case "$a" in output.dir=*) d="${a#output.dir=}";;\n'
                                   '  run.name=*) n="${a#run.name=}";; esac; done\n'
                                   f"printf '%s\\n' '{STAND_IN_TIMING}' >\"$d/$n.timing.json\"\n"
                                   'ln -sf /dev/full "$d/scaling.json"')
        out = os.path.join(tmp, "o")
        os.mkdir(out)
        target = os.path.join(out, "scaling.json")
        cmd = [sys.executable, SCALING, "--config", cfg, "--kinds", "strong", "--max-cores", "1",
               "--steps", "2", "--out", out, "--model", model]
        for what, make in (("a link to /dev/full", lambda: os.symlink("/dev/full", target)),
                           ("a folder", lambda: os.mkdir(target)),
                           ("write-protected", lambda: os.chmod(write(target, "{}"), 0o444))):
            make()
            one_line(f"scaling.json {what}", run(cmd, timeout=60), 2, "scaling.json")
            assert not os.path.exists(record), f"scaling.json {what}: the model was run"
            if os.path.isdir(target) and not os.path.islink(target):
                os.rmdir(target)
            else:
                os.remove(target)
        rc, stdout, err = run(cmd, timeout=120)
        said = [ln for ln in err.splitlines() if "scaling.json" in ln]
        assert rc == 2 and "Traceback" not in err and len(said) == 1 and \
            "not a regular file" in said[0], f"exit {rc}, want 2: {(stdout + err)[-800:]!r}"
        assert os.path.exists(record), "the model was not run"
        assert "strong" in stdout, f"no table: {stdout!r}"


def test_scaling_picture_not_written():
    """A scaling.png that cannot be written (a folder of that name): one
    line naming it, exit 2, no traceback; the folder left as it was and the
    table still printed."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        png = os.path.join(out, "scaling.png")
        os.makedirs(png)
        rc, stdout, err = run(scaling_tiny(tmp, out), timeout=120)
        said = [ln for ln in err.splitlines() if "scaling.png" in ln]
        assert rc == 2 and "Traceback" not in err and len(said) == 1 and \
            "cannot be written" in said[0], f"exit {rc}, want 2: {err[-800:]!r}"
        assert os.path.isdir(png) and not os.listdir(png), "scaling.png/ was changed"
        assert "strong" in stdout and "scaling.json" in stdout, f"no table: {stdout!r}"


# ---------------------------------------------------------------------------
# scripts/run (MINIMODEL_RUN_PROGRAM: no set-up or build)
# ---------------------------------------------------------------------------
RUN = os.path.join(SCRIPTS, "run")


def test_run_bad_ranks():
    """MINIMODEL_RANKS that is not a whole number >= 1 (0 ran on every slot
    of the machine, abc ended in mpirun's own words): one line, exit 2, and
    nothing run."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "ran")
        model = stand_in(tmp, "m", f'echo ran >>"{record}"')
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        for ranks in ("0", "abc", "-1", "1.5", "2 3"):
            env = dict(ENV, MINIMODEL_RUN_PROGRAM=model, MINIMODEL_RANKS=ranks)
            one_line(f"MINIMODEL_RANKS={ranks}", run(["bash", RUN, cfg], env=env, timeout=60), 2,
                     "MINIMODEL_RANKS")
            assert not os.path.exists(record), f"MINIMODEL_RANKS={ranks}: the model was run"


def test_run_dry_run_names_no_outputs():
    """run --dry-run names no outputs ("output of ..."): it writes none."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write(os.path.join(tmp, "t.ini"), TINY_INI)
        env = dict(ENV, MINIMODEL_RUN_PROGRAM=MODEL, MINIMODEL_RANKS="1")
        rc, out, err = run(["bash", RUN, "--dry-run", "--set", "output.dir=out", cfg], cwd=tmp,
                           env=env, timeout=60)
        assert rc == 0 and "configuration valid" in out, f"exit {rc}: {(out + err)[-800:]!r}"
        assert "output of" not in out + err, f"names outputs it never wrote: {out[-800:]!r}"
        assert not os.path.exists(os.path.join(tmp, "out")), "--dry-run wrote out/"


# ---------------------------------------------------------------------------
# scripts/bench-model (only what is refused before anything is built or run)
# ---------------------------------------------------------------------------
BENCH = os.path.join(SCRIPTS, "bench-model")


def test_bench_model_refusals():
    """Configs, --doc, --tdma, --bandwidth and --configs "" that cannot work:
    one line and exit 2 up front (also with --dry-run)."""
    with tempfile.TemporaryDirectory() as tmp:
        many = write(os.path.join(tmp, "many.ini"), "[run]\nsteps = many\n")
        zero = write(os.path.join(tmp, "zero.ini"), "[run]\nsteps = 0\n")
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        base = ["--dry-run", "--no-reference", "--layouts", "1x1"]
        for what, args, message in (
                ("--configs DIR", ["--configs", tmp], "--configs"),
                ("steps = many", ["--configs", many], "run.steps"),
                ("run.steps = 0", ["--configs", zero], "run.steps"),
                ("--doc DIR", ["--configs", good, "--doc", tmp], "--doc"),
                ("--tdma ,", ["--configs", good, "--tdma", ","], "--tdma"),
                ("--bandwidth fast", ["--configs", good, "--tdma", "reference",
                                      "--bandwidth", "fast"], "--bandwidth"),
                # outside the model's range or form (each run refused it, after the build)
                *((f"--bandwidth {bw!r}", ["--configs", good, "--tdma", "reference",
                                           "--bandwidth", bw], "from 0.001 to 1e6")
                  for bw in ("5e6", "0.0001", "1_000", " 5")),
                ("--configs ''", ["--configs", ""], "--configs")):
            one_line(f"bench-model {what}", py(BENCH, *base, *args), 2, message)


def test_bench_model_empty_lists():
    """--layouts "", --ranks "", --threads "" and --repeat 0 (or less) are
    refused, one line and exit 2 (they fell back to the defaults)."""
    with tempfile.TemporaryDirectory() as tmp:
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        base = ["--dry-run", "--no-reference", "--tdma", "reference", "--configs", good]
        for what, args, message in (("--layouts ''", ["--layouts", ""], "--layouts"),
                                    ("--ranks ''", ["--ranks", ""], "--ranks"),
                                    ("--threads ''", ["--ranks", "1", "--threads", ""],
                                     "--threads"),
                                    ("--repeat 0", ["--layouts", "1x1", "--repeat", "0"],
                                     "--repeat"),
                                    ("--repeat -1", ["--layouts", "1x1", "--repeat", "-1"],
                                     "--repeat")):
            one_line(f"bench-model {what}", py(BENCH, *base, *args), 2, message)


def test_bench_model_dry_run_creates_nothing():
    """--dry-run prints the commands and leaves output/bench-model alone, and
    does not call a model that exists "not built" (it builds nothing)."""
    out_dir = os.path.join(ROOT, "output", "bench-model")
    if os.path.exists(out_dir):
        raise Skip(f"{out_dir} exists already")
    with tempfile.TemporaryDirectory() as tmp:
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        rc, out, err = py(BENCH, "--dry-run", "--no-reference", "--layouts", "1x1",
                          "--tdma", "reference", "--configs", good)
    made = os.path.exists(out_dir)
    if made:
        shutil.rmtree(out_dir, ignore_errors=True)
    assert rc == 0, f"exit {rc}: {err[-800:]!r}"
    assert not made, "--dry-run created output/bench-model"
    assert "not built)" not in err and "a dry run: scripts/build not run" in err, \
        f"the dry run's version line: {err[:400]!r}"


# ---------------------------------------------------------------------------
# scripts/plot_fields.py
# ---------------------------------------------------------------------------
PLOT_FIELDS = os.path.join(SCRIPTS, "plot_fields.py")


def test_crashing_variable():
    """An HDF5 dataset of float16 (h5py), which the netCDF library presents
    as strings and crashes on when it reads them (xarray does as it opens
    the file): plot_fields.py exits 1 and compare.py 2, each with one line
    naming the variable (both died with SIGSEGV)."""
    import h5py
    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        half = os.path.join(tmp, "half.nc")
        with h5py.File(half, "w") as f:
            f["temp"] = np.full(3, 1.0, np.float16)
        rc, out, err = py(PLOT_FIELDS, half, "-o", tmp)
        assert rc == 1 and "the netCDF library crashed (signal 11, SIGSEGV) reading variable " \
            "temp" in err and "Traceback" not in err, f"plot_fields: exit {rc}, {err[-800:]!r}"
        rc, out, err = py(os.path.join(SCRIPTS, "compare.py"), half, half)
        assert rc == 2 and f"compare.py: {half}: cannot read: the netCDF library crashed" in err \
            and "Traceback" not in err, f"compare.py: exit {rc}, {err[-800:]!r}"


def test_crash_guard_limit():
    """A test read that does not end (a stalled file system) is killed at
    the guard's limit and reaped: a sentence naming the limit, no child left
    (it waited for ever)."""
    sys.path.insert(0, SCRIPTS)
    import time

    import mm_nc_guard
    real = mm_nc_guard._read_strings
    mm_nc_guard._read_strings = lambda path: time.sleep(60)
    try:
        t0 = time.monotonic()
        problem = mm_nc_guard.read_problem(os.devnull, limit_s=1)
        took = time.monotonic() - t0
    finally:
        mm_nc_guard._read_strings = real
    assert problem == "the test read of the file did not end within 1 s" and took < 10, \
        f"{problem!r} after {took:.1f} s"
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
    else:
        raise AssertionError("a child of the guard is left")


def test_plot_fields_thin_grids():
    """Grids of one column, row or level (and 1x1x1) are valid histories:
    three PNGs, exit 0."""
    with tempfile.TemporaryDirectory() as tmp:
        for nx, ny, nz in ((1, 3, 3), (4, 1, 3), (4, 3, 1), (1, 1, 1)):
            h = history(os.path.join(tmp, f"h{nx}{ny}{nz}.nc"), nx, ny, nz)
            rc, out, err = py(PLOT_FIELDS, h, "-o", os.path.join(tmp, "pics"))
            written = out.split()
            assert rc == 0 and len(written) == 3 and all(map(os.path.isfile, written)), \
                f"{nx}x{ny}x{nz}: exit {rc}, printed {out!r}, {err[-800:]!r}"


def check_pictures(what, result, n=3):
    """Exit 0, n pictures printed and written, no traceback."""
    rc, out, err = result
    written = out.split()
    assert rc == 0 and len(written) == n and all(map(os.path.isfile, written)), \
        f"{what}: exit {rc}, printed {out!r}, {err[-800:]!r}"
    assert "Traceback" not in err, f"{what}: a traceback: {err[-800:]!r}"


def test_plot_fields_one_record():
    """A history of one record, on a grid of any shape (also one column,
    row or level, and 1x1x1): three PNGs, exit 0 (the diagnostics as
    points, not xarray's "No numeric data to plot")."""
    with tempfile.TemporaryDirectory() as tmp:
        for nx, ny, nz in ((4, 3, 3), (1, 1, 1), (1, 5, 3), (5, 1, 1), (4, 3, 1)):
            h = history(os.path.join(tmp, f"h{nx}{ny}{nz}.nc"), nx, ny, nz, records=1)
            check_pictures(f"one record, {nx}x{ny}x{nz}",
                           py(PLOT_FIELDS, h, "-o", os.path.join(tmp, "pics")))


def test_plot_fields_model_one_record():
    """The model's histories of one record (run.steps = 0; output.interval
    = 0 without the initial record) and of degenerate grids (1x1x1, 1x5x3,
    5x1x1, with one record and with several): three PNGs, exit 0."""
    need_model()
    cases = {"steps0": ["run.steps=0"],
             "final_only": ["run.steps=3", "output.interval=0", "output.initial_record=false"]}
    for nx, ny, nz in ((1, 1, 1), (1, 5, 3), (5, 1, 1)):
        grid = [f"grid.nx={nx}", f"grid.ny={ny}", f"grid.nz={nz}"]
        cases[f"g{nx}{ny}{nz}_steps0"] = grid + ["run.steps=0"]
        cases[f"g{nx}{ny}{nz}_steps2"] = grid + ["run.steps=2"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, sets in cases.items():
            args = [a for s in sets + [f"run.name={name}", f"output.dir={tmp}"]
                    for a in ("--set", s)]
            rc, out, err = run([MODEL, "--quiet", *args,
                                os.path.join(ROOT, "configs", "flat.ini")], timeout=60)
            assert rc == 0, f"the model, {name}: exit {rc} {(out + err)[-800:]!r}"
            check_pictures(name, py(PLOT_FIELDS, os.path.join(tmp, f"{name}.nc"), "-o",
                                    os.path.join(tmp, "pics")))


def test_plot_fields_calendars():
    """Histories in the calendars run.calendar offers (xarray decodes all but
    the standard ones to cftime objects, which matplotlib cannot draw by
    itself): three PNGs, exit 0, no traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        for cal in ("standard", "proleptic_gregorian", "noleap", "all_leap", "360_day", "julian"):
            h = history(os.path.join(tmp, f"{cal}.nc"), calendar=cal)
            rc, out, err = py(PLOT_FIELDS, h, "-o", os.path.join(tmp, "pics"))
            written = out.split()
            assert rc == 0 and len(written) == 3 and all(map(os.path.isfile, written)), \
                f"{cal}: exit {rc}, printed {out!r}, {err[-800:]!r}"


def test_plot_fields_unwritable_folder():
    """An -o that cannot be written into, and a history whose own folder
    cannot be (the default): one line, exit 2."""
    with tempfile.TemporaryDirectory() as tmp:
        h = history(os.path.join(tmp, "h.nc"))
        # /proc refuses new files even to root (a chmod would not)
        one_line("-o /proc/self", py(PLOT_FIELDS, h, "-o", "/proc/self"), 2, "/proc/self")
        with open(h, "rb") as f:
            fd = f.fileno()
            one_line("beside the history", py(PLOT_FIELDS, f"/proc/self/fd/{fd}",
                                              pass_fds=(fd,)), 2, "/proc/self/fd")


def test_plot_fields_bad_histories():
    """No records (without --record), dimensions not named z, y, x, and a
    file that is not NetCDF: one line each, exit 1."""
    with tempfile.TemporaryDirectory() as tmp:
        empty = history(os.path.join(tmp, "empty.nc"), records=0)
        result = py(PLOT_FIELDS, empty, "-o", tmp)
        one_line("no records", result, 1, "no records")
        assert "--record" not in result[2], result[2]
        other = history(os.path.join(tmp, "other.nc"), dims=("lev", "lat", "lon"))
        one_line("dimensions lev, lat, lon", py(PLOT_FIELDS, other, "-o", tmp), 1, "other.nc")
        text = write(os.path.join(tmp, "text.nc"), "[run]\nsteps = 1\n")
        one_line("not NetCDF", py(PLOT_FIELDS, text, "-o", tmp), 1, "text.nc")
        # a coordinate that is not a finite number (pcolormesh's ValueError:
        # a traceback)
        for d in ("x", "z"):
            bad = history(os.path.join(tmp, f"nan_{d}.nc"))
            with netCDF4.Dataset(bad, "a") as nc:
                nc[d][0] = np.nan
            one_line(f"{d}[0] NaN", py(PLOT_FIELDS, bad, "-o", tmp), 1,
                     f"the coordinate {d} holds values that are not finite numbers")


# ---------------------------------------------------------------------------
# scripts/plot_timing.py
# ---------------------------------------------------------------------------
PLOT_TIMING = os.path.join(SCRIPTS, "plot_timing.py")


def test_plot_timing_output_folder():
    """-o an existing folder, or a name ending in /: exit 2, nothing written."""
    with tempfile.TemporaryDirectory() as tmp:
        good = timing(os.path.join(tmp, "run.timing.json"))
        folder = os.path.join(tmp, "pics")
        os.mkdir(folder)
        one_line("-o FOLDER", py(PLOT_TIMING, good, "-o", folder), 2, "folder")
        assert not os.path.exists(folder + ".png"), "-o FOLDER wrote FOLDER.png"
        one_line("-o NEW/", py(PLOT_TIMING, good, "-o", os.path.join(tmp, "new") + "/"), 2,
                 "folder")
        assert not os.path.exists(os.path.join(tmp, "new")), "-o NEW/ wrote into NEW/"


def test_plots_format_without_its_tool():
    """-o x.pgf where LaTeX is not installed (matplotlib's RuntimeError
    "'xelatex' not found"): one line, exit 2, no file and no temporary
    file left; a file of that name kept as it was (skipped where LaTeX is
    there)."""
    if shutil.which("xelatex"):
        raise Skip("xelatex is installed: pgf can be written")
    with tempfile.TemporaryDirectory() as tmp:
        good = timing(os.path.join(tmp, "run.timing.json"))
        bench = write(os.path.join(tmp, "bench.jsonl"), json.dumps(TDMA_RESULT) + "\n")
        kept = write(os.path.join(tmp, "kept.pgf"), "old\n")
        for what, script, given in (("plot_timing", PLOT_TIMING, good),
                                    ("plot_tdma_bench", PLOT_TDMA, bench)):
            for out in (os.path.join(tmp, f"{what}.pgf"), kept):
                one_line(f"{what} -o {os.path.basename(out)}", py(script, given, "-o", out), 2,
                         "xelatex")
            assert sorted(os.listdir(tmp)) == ["bench.jsonl", "kept.pgf", "run.timing.json"], \
                f"{what}: left {sorted(os.listdir(tmp))}"
            with open(kept) as f:
                assert f.read() == "old\n", f"{what}: kept.pgf changed"


def test_plot_timing_bad_values():
    """Hand-edited files: a string for a number, NaN, Infinity, a negative
    time, an integer too large for a float, nesting too deep: one line,
    exit 1 (no plot of wrong bars)."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"string": {"phases.step.gbps": "fast"},
                 "nan": {"phases.solve.mean_s": float("nan")},
                 "infinity": {"per_step.0.step_s": float("inf")},
                 "negative": {"phases.halo.mean_s": -1.0},
                 "huge": {"phases.halo.mean_s": 10 ** 400}}
        for name, changes in cases.items():
            path = timing(os.path.join(tmp, f"{name}.timing.json"), **changes)
            one_line(name, py(PLOT_TIMING, path, "-o", os.path.join(tmp, f"{name}.png")), 1,
                     path)
        deep = write(os.path.join(tmp, "deep.timing.json"), "[" * 100000 + "]" * 100000)
        one_line("deep", py(PLOT_TIMING, deep, "-o", os.path.join(tmp, "deep.png")), 1, deep)


def test_plot_timing_no_steps():
    """A timing file with no step timed (per_step empty, as a run of 0
    steps writes, or no step_s > 0) is refused: one line "no steps timed",
    exit 1, no picture (it drew empty panels, exit 0)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, changes in (("empty", {"per_step": []}),
                              ("zeros", {"per_step.0.step_s": 0, "per_step.1.step_s": 0})):
            path = timing(os.path.join(tmp, f"{name}.timing.json"), **changes)
            png = os.path.join(tmp, f"{name}.png")
            one_line(name, py(PLOT_TIMING, path, "-o", png), 1, "no steps timed")
            assert not os.path.exists(png), f"{name}: a picture was written"
        # a stride beyond the run's steps (output.timing_stride = 1000 on 3
        # steps) is named as the reason, not "a run of 0 steps?"
        path = timing(os.path.join(tmp, "stride.timing.json"), per_step=[], steps=3,
                      per_step_stride=1000)
        one_line("stride", py(PLOT_TIMING, path, "-o", os.path.join(tmp, "stride.png")), 1,
                 "per_step_stride = 1000 (output.timing_stride) is beyond the run's 3 steps")


# ---------------------------------------------------------------------------
# scripts/plot_tdma_bench.py
# ---------------------------------------------------------------------------
PLOT_TDMA = os.path.join(SCRIPTS, "plot_tdma_bench.py")
# a line of `tdma-bench --list --json`: a backend, not a result
TDMA_LIST_LINE = ('{"backend": "simd", "exact": true, "device_memory": false, "available": true, '
                  '"auto": true, "description": "vectorised Thomas across columns"}')
TDMA_RESULT = {"backend": "simd", "mode": "solve", "systems": 1000, "levels": 30,
               "precision": "double", "threads": 2, "ms": 1.5, "median_ms": 1.6, "floor_ms": 1.0,
               "stream_gbps": 10.0, "paired_floor_ratio": 1.6}


def test_plot_tdma_bench_inputs():
    """Lines that are not results (docs/bench_peers.jsonl, tdma-bench
    --list --json) and a file that is not there: one line, exit 2, no
    KeyError or FileNotFoundError traceback; results among such lines are
    drawn, with one note of the lines skipped."""
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "t.png")
        peers = os.path.join(ROOT, "docs", "bench_peers.jsonl")
        one_line("bench_peers.jsonl", py(PLOT_TDMA, peers, "-o", png), 2,
                 "no tdma-bench results")
        listed = write(os.path.join(tmp, "list.jsonl"), TDMA_LIST_LINE + "\n")
        one_line("--list --json", py(PLOT_TDMA, listed, "-o", png), 2, "no tdma-bench results")
        missing = os.path.join(tmp, "none.jsonl")
        one_line("a missing file", py(PLOT_TDMA, missing, "-o", png), 2, missing)
        assert not os.path.exists(png), "a picture was written"
        bad = dict(TDMA_RESULT, threads="two")
        mixed = write(os.path.join(tmp, "mixed.jsonl"),
                      "\n".join([TDMA_LIST_LINE, json.dumps(TDMA_RESULT), json.dumps(bad),
                                 json.dumps(dict(TDMA_RESULT, backend="numpy", threads=1))]) + "\n")
        rc, out, err = py(PLOT_TDMA, mixed, "-o", png)
        assert rc == 0 and os.path.isfile(png) and "(2 results)" in out, \
            f"results and other lines: exit {rc}, {(out + err)[-800:]!r}"
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "skipped 2" in lines[0] and "line 1" in lines[0], \
            f"the note: {err[-800:]!r}"
        results = write(os.path.join(tmp, "results.jsonl"), json.dumps(TDMA_RESULT) + "\n")
        nowhere = os.path.join(tmp, "no", "t.png")
        one_line("-o in no folder", py(PLOT_TDMA, results, "-o", nowhere), 2, "cannot be written")


def test_plot_tdma_bench_run_label():
    """--run LABEL keeps the lines of that label alone: a label no line has
    is one line and exit 2, no picture (the lines without a label were
    drawn, exit 0); without --run the last label's lines and those without
    one are drawn."""
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "t.png")
        lines = [dict(TDMA_RESULT), dict(TDMA_RESULT, backend="omp"),
                 dict(TDMA_RESULT, run="a"), dict(TDMA_RESULT, backend="numpy", run="b")]
        results = write(os.path.join(tmp, "r.jsonl"), "".join(json.dumps(x) + "\n" for x in lines))
        one_line("--run nope", py(PLOT_TDMA, results, "--run", "nope", "-o", png), 2,
                 "no tdma-bench results in the input for run nope")
        assert not os.path.exists(png), "--run nope: a picture was written"
        for args, n in ((["--run", "a"], 1), (["--run", "b"], 1), ([], 3)):
            rc, out, err = py(PLOT_TDMA, results, *args, "-o", png)
            assert rc == 0 and f"({n} results)" in out, \
                f"{args}: exit {rc}, want {n} results: {(out + err)[-800:]!r}"


def fsize_limit(limit):
    """A preexec_fn: writes past `limit` bytes fail with EFBIG (Python
    ignores SIGXFSZ), as on a full disk."""
    import resource

    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


def test_plots_full_disk():
    """A picture that cannot be written whole (a file-size limit of 4 KiB,
    as on a full disk): one line, exit 2, and no half-written picture left."""
    with tempfile.TemporaryDirectory() as tmp:
        # matplotlib's font cache made first, without the limit (a fresh HOME
        # would write it under the limit, and warn)
        env = dict(ENV, MPLCONFIGDIR=os.path.join(tmp, "mpl"))
        rc, _out, err = run([sys.executable, "-c", "import matplotlib.pyplot"], env=env)
        assert rc == 0, f"matplotlib: exit {rc} {err[-800:]!r}"
        good = timing(os.path.join(tmp, "run.timing.json"))
        png = os.path.join(tmp, "t.png")
        one_line("plot_timing", py(PLOT_TIMING, good, "-o", png, preexec_fn=fsize_limit(4096),
                                   env=env), 2, "cannot be written")
        assert not os.path.exists(png), "plot_timing left a half-written picture"
        h = history(os.path.join(tmp, "h.nc"))
        pics = os.path.join(tmp, "pics")
        one_line("plot_fields", py(PLOT_FIELDS, h, "-o", pics, preexec_fn=fsize_limit(4096),
                                   env=env), 2, "cannot be written")
        left = os.listdir(pics) if os.path.isdir(pics) else []
        assert not left, f"plot_fields left {left}"


def test_plots_stdout_fails():
    """Standard output that fails once the pictures are written: on a full
    disk (> /dev/full) one line and exit 2, as for a picture that cannot be
    written (not exit 1, "the input cannot be read"); a reader that went
    away (a closed pipe) leaves exit 0. Never a traceback; the pictures
    are written either way."""
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    with tempfile.TemporaryDirectory() as tmp:
        h = history(os.path.join(tmp, "h.nc"))
        good = timing(os.path.join(tmp, "run.timing.json"))
        pics = os.path.join(tmp, "pics")
        png = os.path.join(tmp, "t.png")
        cases = (("plot_fields", [PLOT_FIELDS, h, "-o", pics],
                  [os.path.join(pics, f"h.{k}.png") for k in ("temp.surface", "temp.section",
                                                              "diagnostics")]),
                 ("plot_timing", [PLOT_TIMING, good, "-o", png], [png]))
        for what, args, pictures in cases:
            with open("/dev/full", "w") as full:
                p = subprocess.run([sys.executable] + args, stdout=full, stderr=subprocess.PIPE,
                                   text=True, env=ENV, timeout=120)
            lines = p.stderr.strip().splitlines()
            assert p.returncode == 2 and "Traceback" not in p.stderr and len(lines) == 1 \
                and "cannot" in lines[0], \
                f"{what} > /dev/full: exit {p.returncode}, want 2 and one line: {p.stderr[-800:]!r}"
            assert all(map(os.path.isfile, pictures)), f"{what} > /dev/full: no pictures"
            for picture in pictures:
                os.remove(picture)
            # the pipe's reading end closed before anything is written
            r, w = os.pipe()
            try:
                p = subprocess.Popen([sys.executable] + args, stdout=w, stderr=subprocess.PIPE,
                                     text=True, env=ENV)
            finally:
                os.close(w)
                os.close(r)
            try:
                err = p.communicate(timeout=120)[1]
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise AssertionError(f"{what} | closed pipe: still running after 120 s")
            assert p.returncode == 0 and "Traceback" not in err and not err.strip(), \
                f"{what} | closed pipe: exit {p.returncode}, want 0, nothing said: {err[-800:]!r}"
            assert all(map(os.path.isfile, pictures)), f"{what} | closed pipe: no pictures"


# ---------------------------------------------------------------------------
# tests/profiling/check_timing.py
# ---------------------------------------------------------------------------
def test_check_timing_faults():
    """Bad arguments and hand-edited files: one line, no traceback; exit 2
    for the arguments, 1 for the files."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        rc, out, err = run(["mpirun", "-np", "1", MODEL, "--quiet", *TINY,
                            "--set", "run.name=t", "--set", f"output.dir={tmp}",
                            os.path.join(ROOT, "configs", "flat.ini")], timeout=60)
        assert rc == 0, f"the model: exit {rc} {(out + err)[-800:]!r}"
        good = os.path.join(tmp, "t.timing.json")
        with open(good) as f:
            d = json.load(f)
        args = ["--ranks", "1", "--decomposition", "x".join(map(str, d["decomposition"])),
                "--steps", "3"]
        rc, out, err = py(CHECK_TIMING, good, *args)
        assert rc == 0, f"the unbroken file: exit {rc} {(out + err)[-800:]!r}"

        def edited(name, change):
            e = json.loads(json.dumps(d))
            change(e)
            return write(os.path.join(tmp, name), json.dumps(e))

        one_line("--history missing", py(CHECK_TIMING, good, *args, "--history",
                                         os.path.join(tmp, "none.nc")), 1, "none.nc")
        one_line("--decomposition axb", py(CHECK_TIMING, good, "--ranks", "1", "--steps", "3",
                                           "--decomposition", "axb"), 2, "--decomposition")
        one_line("--stride 0", py(CHECK_TIMING, good, *args, "--stride", "0"), 2, "--stride")
        one_line("a number", py(CHECK_TIMING, write(os.path.join(tmp, "n.json"), "42"), *args),
                 1, "not a JSON object")
        one_line("per_step entry", py(CHECK_TIMING, edited(
            "p.json", lambda e: e["per_step"].__setitem__(0, 7)), *args), 1, "per_step")
        one_line("string solve_s", py(CHECK_TIMING, edited(
            "s.json", lambda e: e["per_step"][0].update(solve_s="fast")), *args), 1, "solve_s")
        one_line("--self-test without wet_cells", py(CHECK_TIMING, edited(
            "w.json", lambda e: e.pop("wet_cells")), *args, "--self-test"), 1, "wet_cells")


# ---------------------------------------------------------------------------
# scripts/bench_peers.py
# ---------------------------------------------------------------------------
BENCH_PEERS = os.path.join(SCRIPTS, "bench_peers.py")


def test_bench_peers_refusals():
    """Bad numbers and result paths are refused up front (exit 2, argparse's
    line), not after JAX is loaded and the runs are made; a tdma-bench that
    fails is named with its exit status, not a CalledProcessError traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        for args, words in ((["--threads", "abc"], "'abc' is not a whole number"),
                            (["--threads", "1,,2"], "is not a whole number"),
                            (["--threads", "0"], "0 is not within 1..1024"),
                            (["--repeats", "0"], "0 is below 1"),
                            (["--systems", "-1"], "-1 is below 1"),
                            (["--levels", "0"], "not within 1..10000"),
                            (["--stream-mb", "nan"], "'nan' is not a whole number"),
                            # tdma-bench's range, in its form (1e+06 was passed on, and
                            # its usage shown as the reason)
                            (["--stream-mb", "1.5"], "'1.5' is not a whole number"),
                            (["--stream-mb", "2000000"], "not within 1..1048576"),
                            (["--jsonl", os.path.join(tmp, "no", "x.jsonl")],
                             "not a file that can be written"),
                            (["--jsonl", tmp], "not a file that can be written"),
                            (["--docs", os.path.join(tmp, "none.md")], "No such file")):
            rc, out, err = py(BENCH_PEERS, *args, timeout=60)
            assert rc == 2 and words in err and "Traceback" not in err, \
                f"{args}: exit {rc}, {err[-400:]!r}"
        false = shutil.which("false")
        rc, out, err = py(BENCH_PEERS, "--systems", "50", "--levels", "4", "--repeats", "1",
                          "--threads", "1", "--precision", "double", "--tdma-bench", false,
                          timeout=120)
        assert rc == 1 and "tdma-bench failed (exit 1)" in err and "Traceback" not in err, \
            f"a failing tdma-bench: exit {rc}, {err[-600:]!r}"
        # its message is named, not the usage it prints after it (the last line
        # of standard error was shown) nor a note before it
        fake = os.path.join(tmp, "tdma-bench")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'tdma-bench: note: a note' >&2\n"
                    "echo 'tdma-bench: bad value for --stream-mb' >&2\n"
                    "echo 'usage: tdma-bench [--systems N]' >&2\n"
                    "echo '                  [--seed S] [--json] [--list]' >&2\nexit 2\n")
        os.chmod(fake, 0o755)
        rc, out, err = py(BENCH_PEERS, "--systems", "50", "--levels", "4", "--repeats", "1",
                          "--threads", "1", "--precision", "double", "--tdma-bench", fake,
                          timeout=120)
        assert rc == 1 and "tdma-bench failed (exit 2): tdma-bench: bad value for --stream-mb" \
            in err, f"a tdma-bench that prints its usage: exit {rc}, {err[-600:]!r}"
        # systems whose arrays do not fit: a line, not NumPy's traceback
        rc, out, err = py(BENCH_PEERS, "--systems", "2000000000000", "--levels", "10",
                          "--repeats", "1", "--threads", "1", "--precision", "double",
                          "--tdma-bench", fake, timeout=120)
        assert rc == 1 and "out of memory for the systems' arrays" in err \
            and "Traceback" not in err, f"systems beyond memory: exit {rc}, {err[-600:]!r}"


def test_bench_peers_files_refused():
    """A --docs that cannot be read as a document (/dev/zero ran out of
    memory, a binary file was a UnicodeDecodeError traceback, a FIFO hung)
    or lacks the end marker, and a --jsonl that is a FIFO or a device
    (/dev/full: it failed after the runs): exit 2 and the reason, before
    the runs (no tdma-bench is there to run)."""
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        binary = os.path.join(tmp, "binary.md")
        with open(binary, "wb") as f:
            f.write(b"<!-- bench_peers:begin -->\xff<!-- bench_peers:end -->")
        begin = write(os.path.join(tmp, "begin.md"), "<!-- bench_peers:begin -->\n")
        base = ["--tdma-bench", os.path.join(tmp, "no-tdma-bench")]
        for args, words in ((["--docs", "/dev/zero"], "not a regular file (a device)"),
                            (["--docs", fifo], "not a regular file (a FIFO)"),
                            (["--docs", binary], "not UTF-8 text"),
                            (["--docs", begin], "markers"),
                            (["--jsonl", fifo], "not a regular file"),
                            (["--jsonl", "/dev/full"], "not a regular file")):
            if not os.path.exists(args[1]):
                continue
            rc, out, err = py(BENCH_PEERS, *base, *args, timeout=60, preexec_fn=bounded_memory)
            assert rc == 2 and words in err and args[1] in err and "Traceback" not in err, \
                f"{args}: exit {rc}, {err[-400:]!r}"


def test_bench_peers_files_not_written():
    """A --jsonl or --docs that a full disk keeps from being written after
    the runs (a file-size limit): one line naming it, exit 2, and the file
    left as it was (--docs was opened with "w" and truncated, with a
    traceback; --jsonl got part of a line); without the limit both are
    written."""
    bench = os.path.join(os.path.dirname(MODEL), "tdma-bench")
    if not os.access(bench, os.X_OK):
        raise Skip(f"no {bench}")
    with tempfile.TemporaryDirectory() as tmp:
        old = '{"peer": "old"}\n' * 2048
        jsonl = write(os.path.join(tmp, "peers.jsonl"), old)
        before = ("# Peers\n<!-- bench_peers:begin -->\nold table\n<!-- bench_peers:end -->\n"
                  + "text that stays\n" * 4096)
        doc = write(os.path.join(tmp, "peers.md"), before)
        base = ["--systems", "64", "--levels", "4", "--repeats", "1", "--threads", "1",
                "--precision", "double", "--tdma-bench", bench]
        for option, path, content in (("--jsonl", jsonl, old), ("--docs", doc, before)):
            rc, out, err = py(BENCH_PEERS, *base, option, path, timeout=120,
                              preexec_fn=fsize_limit(16384))
            lines = err.strip().splitlines()
            assert rc == 2 and "Traceback" not in err and len(lines) == 1 and \
                f"{option} {path}: cannot be written" in lines[0], \
                f"{option}: exit {rc}, want 2: {(out + err)[-800:]!r}"
            with open(path) as f:
                assert f.read() == content, f"{option}: the file was changed"
        assert sorted(os.listdir(tmp)) == ["peers.jsonl", "peers.md"], os.listdir(tmp)
        rc, out, err = py(BENCH_PEERS, *base, "--jsonl", jsonl, "--docs", doc, timeout=120)
        with open(jsonl) as f:
            added = f.read()
        with open(doc) as f:
            after = f.read()
        assert rc == 0 and added.startswith(old) and '"peer": "jax-donated"' in added[len(old):] \
            and "old table" not in after and "| jax-donated |" in after \
            and after.endswith("<!-- bench_peers:end -->\n" + "text that stays\n" * 4096), \
            f"without the limit: exit {rc}, {(out + err)[-800:]!r}"


# ---------------------------------------------------------------------------
# scripts/compare.py, scripts/reference.py, scripts/regress: standard
# streams closed or full, damaged data, memory
# ---------------------------------------------------------------------------
COMPARE = os.path.join(SCRIPTS, "compare.py")
REFERENCE = os.path.join(SCRIPTS, "reference.py")


def shell(command, timeout=120):
    """(exit status, stdout, stderr) of a bash command line (for redirections
    such as >&-)."""
    return run(["bash", "-c", command], timeout=timeout)


def test_compare_streams_closed():
    """compare.py with standard output or error closed: identical files are
    0 (--quiet: nothing to print), a report that cannot be written 2; never
    1, which says "differ" (the test read's flush of a closed stream raised
    AttributeError: a traceback and exit 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        h = history(os.path.join(tmp, "h.nc"))
        q = f"{sys.executable} {COMPARE} {h} {h}"
        for what, command, want in (("stdout closed, --quiet", f"{q} --quiet >&-", 0),
                                    ("stderr closed", f"{q} >/dev/null 2>&-", 0),
                                    ("stderr closed, --quiet", f"{q} --quiet 2>&-", 0),
                                    ("stdout closed", f"{q} >&-", 2),
                                    ("stdout full", f"{q} >/dev/full", 2)):
            rc, out, err = shell(command)
            assert rc == want and "Traceback" not in err, f"{what}: exit {rc}, {err[-600:]!r}"


def test_compare_tolerance_not_finite():
    """An --rtol or --atol that is not a finite number >= 0 (1e400, which is
    infinity; inf; nan; -1) is a usage error, exit 2, in scripts/regress's
    words (every difference passed: "all agree", exit 0); the largest
    double is a tolerance still."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = (history(os.path.join(tmp, f"{n}.nc")) for n in "ab")
        with netCDF4.Dataset(b, "a") as nc:
            nc["temp"][0, 0, 0, 0] += 1.0
        for option in ("--rtol", "--atol"):
            for value in ("1e400", "inf", "nan", "-1", "many"):
                rc, out, err = py(COMPARE, a, b, option, value)
                said = f"{option}: '{value}' is not a finite number >= 0"
                assert rc == 2 and said in err and "Traceback" not in err, \
                    f"{option} {value}: exit {rc}, {(out + err)[-400:]!r}"
        rc, out, err = py(COMPARE, a, b, "--rtol", "1.7976931348623157e308")
        assert rc == 0, f"the largest double: exit {rc}, {(out + err)[-400:]!r}"
        rc, out, err = py(COMPARE, a, b)
        assert rc == 1, f"no tolerance: exit {rc}, {(out + err)[-400:]!r}"


def test_compare_text_bytes():
    """A char variable without _Encoding holding bytes that are not ASCII
    (a degree sign in UTF-8, a lone 0xff): a file compared with itself or
    with a copy agrees (exit 0; they were "cannot compare", exit 1), and a
    differing byte is a difference on the variable's line (exit 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in (("c", "\u00b0C".encode()), ("copy", "\u00b0C".encode()),
                           ("f", "\u00b0F".encode()), ("ff", b"\xff")):
            paths[name] = history(os.path.join(tmp, f"{name}.nc"))
            with netCDF4.Dataset(paths[name], "a") as nc:
                nc.createDimension("chars", 3)
                v = nc.createVariable("unit_name", "S1", ("chars",))
                v.set_auto_chartostring(False)
                v[:] = np.array([bytes([c]) for c in text.ljust(3, b" ")], dtype="S1")
        for a, b in (("c", "c"), ("c", "copy"), ("ff", "ff")):
            rc, out, err = py(COMPARE, paths[a], paths[b])
            assert rc == 0 and "unit_name: text, equal" in out and "Traceback" not in err, \
                f"{a} vs {b}: exit {rc}, {(out + err)[-600:]!r}"
        for a, b in (("c", "f"), ("c", "ff")):
            rc, out, err = py(COMPARE, paths[a], paths[b])
            assert rc == 1 and "unit_name: text  FAIL: " in out and "differ, first at" in out, \
                f"{a} vs {b}: exit {rc}, {(out + err)[-600:]!r}"


def test_names_netcdf_rewrites():
    """A file named with a backslash or a leading drive letter, which the
    netCDF library rewrites before it opens it ("a\\b.nc" opened "a/b.nc",
    another file: compare.py compared that one): compare.py exits 2 and
    plot_fields.py 1, one line naming the reason; the file of the
    rewritten name beside it is not read."""
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "a"))
        copy = history(os.path.join(tmp, "copy.nc"))
        # (copied: the library would make it as a/b.nc)
        named = shutil.copy(copy, os.path.join(tmp, "a\\b.nc"))
        other = history(os.path.join(tmp, "a", "b.nc"), records=3)
        for given in ("a\\b.nc", "c:/b.nc"):
            one_line(f"compare.py {given}", py(COMPARE, given, copy, cwd=tmp), 2,
                     "the netCDF library reads")
            one_line(f"plot_fields.py {given}", py(PLOT_FIELDS, given, "-o", tmp, cwd=tmp), 1,
                     "no such file" if given.startswith("c:") else "the netCDF library reads")
        assert os.path.exists(named) and os.path.exists(other)


def test_compare_attribute_types():
    """--attributes with an attribute that is text in one file and numbers
    (several, or none) in the other: a difference (exit 1) on the
    variable's line, not a ValueError traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, value in (("text", "degC"), ("pair", np.array([1.0, 2.0])),
                            ("none", np.array([], dtype="f8"))):
            paths[name] = history(os.path.join(tmp, f"{name}.nc"))
            with netCDF4.Dataset(paths[name], "a") as nc:
                nc["temp"].setncattr("units", value)
        for a, b in (("text", "pair"), ("none", "text"), ("pair", "none")):
            rc, out, err = py(COMPARE, paths[a], paths[b], "--attributes", "--vars", "temp")
            assert rc == 1 and "Traceback" not in out + err and \
                "temp: max_abs=0 max_rel=0 at -  FAIL: attributes differ: units" in out, \
                f"units {a} vs {b}: exit {rc}, {(out + err)[-600:]!r}"
        rc, out, err = py(COMPARE, paths["pair"], paths["pair"], "--attributes")
        assert rc == 0, f"the same numbers: exit {rc}, {(out + err)[-600:]!r}"


def test_compare_damaged_chunk():
    """A history whose compressed data chunk is damaged (bytes flipped inside
    it; the header reads): compare.py exits 2, the file cannot be read, with
    one line naming the file and the variable, also against an identical
    copy (it said "temp: FAIL: cannot compare" and exit 1, "differ")."""
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.nc")
        with netCDF4.Dataset(good, "w") as nc:
            nc.createDimension("x", 4096)
            v = nc.createVariable("temp", "f8", ("x",), zlib=True, chunksizes=(4096,))
            v[:] = np.sin(np.arange(4096.0))
        with h5py.File(good, "r") as f:
            info = f["temp"].id.get_chunk_info(0)
        with open(good, "rb") as f:
            data = bytearray(f.read())
        middle = info.byte_offset + info.size // 2
        data[middle:middle + 16] = bytes(b ^ 0xFF for b in data[middle:middle + 16])
        bad = write(os.path.join(tmp, "bad.nc"), "")
        with open(bad, "wb") as f:
            f.write(data)
        copy = os.path.join(tmp, "copy.nc")
        shutil.copy(bad, copy)
        for a, b, named in ((bad, copy, bad), (good, bad, bad), (bad, good, bad)):
            one_line(f"{os.path.basename(a)} vs {os.path.basename(b)}", py(COMPARE, a, b), 2,
                     f"compare.py: {named}: cannot read variable temp")
        rc, out, err = py(COMPARE, good, good)
        assert rc == 0, f"the undamaged file: exit {rc}, {(out + err)[-600:]!r}"


def test_compare_out_of_memory():
    """A variable too large for the memory left (MemoryError while reading
    or comparing it, made here in place of the read): exit 2 and one line
    naming the variable (it was a traceback and exit 1, "differ")."""
    sys.path.insert(0, SCRIPTS)
    import compare
    import contextlib
    import io
    with tempfile.TemporaryDirectory() as tmp:
        h = history(os.path.join(tmp, "h.nc"))
        real = compare.read

        def read(var, rows=None, span=None):
            if var.name == "salt":
                raise MemoryError
            return real(var, rows, span)

        compare.read = read
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = compare.main([h, h])
        finally:
            compare.read = real
        assert rc == 2 and "not enough memory to compare variable salt" in err.getvalue(), \
            f"exit {rc}, {err.getvalue()!r}"


def test_compare_blocks():
    """compare.py reads a numeric variable a block of records at a time
    (it held all of it, about ten times its bytes): with one record per
    block the report is the same, word for word, as with the whole variable
    in one block (the first place of each kind of difference, the counts,
    the largest differences and where), also for --records-of-b, whose
    records of A are not adjacent; and the reads are one per block."""
    sys.path.insert(0, SCRIPTS)
    import compare
    import contextlib
    import io
    with tempfile.TemporaryDirectory() as tmp:
        a = history(os.path.join(tmp, "a.nc"), records=8)
        b = history(os.path.join(tmp, "b.nc"), records=8)
        with netCDF4.Dataset(a, "a") as nc:
            t = nc["temp"]
            t[1, 0, 0, 1] = t[1, 0, 0, 1] + 1e-9
            t[3, 2, 1, 0] = t[3, 2, 1, 0] * 2  # the largest relative difference
            t[4, 0, 1, 1] = -1e30  # masked in A alone
            t[6, 1, 1, 1] = t[6, 1, 1, 1] * 2  # as large: the first (record 3) is named
            s = nc["salt"]
            s[5, 0, 0, 0] = 0.0
            s[2, 1, 2, 3] = np.nan
        with netCDF4.Dataset(b, "a") as nc:
            nc["salt"][5, 0, 0, 0] = -0.0
        # B with A's records 1, 3 and 6 alone, for --records-of-b
        sub = os.path.join(tmp, "sub.nc")
        with netCDF4.Dataset(b) as src, netCDF4.Dataset(sub, "w") as dst:
            for d in src.dimensions.values():
                dst.createDimension(d.name, None if d.isunlimited() else len(d))
            for v in src.variables.values():
                fill = getattr(v, "_FillValue", None)
                w = dst.createVariable(v.name, v.dtype, v.dimensions, fill_value=fill)
                w.setncatts({k: v.getncattr(k) for k in v.ncattrs() if k != "_FillValue"})
                w[...] = v[[1, 3, 6]] if v.dimensions[:1] == ("time",) else v[...]

        def report(*args, block):
            saved, spans, real = compare.BLOCK_VALUES, [], compare.read

            def read(var, rows=None, span=None):
                spans.append((var.name, span))
                return real(var, rows, span)
            compare.BLOCK_VALUES, compare.read = block, read
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                    rc = compare.main(list(args))
            finally:
                compare.BLOCK_VALUES, compare.read = saved, real
            return rc, out.getvalue(), [sp for name, sp in spans if name == "temp"]

        for args in ((a, b), (a, b, "--rtol", "1e-6"), (a, sub, "--records-of-b")):
            whole = report(*args, block=1 << 30)
            per_record = report(*args, block=1)
            assert whole[0] == 1 and whole[:2] == per_record[:2], \
                f"{args[2:]}: one block:\n{whole[1]}\none record a block:\n{per_record[1]}"
            n = 3 if "--records-of-b" in args else 8
            assert len(whole[2]) == 2 and len(per_record[2]) == 2 * n, \
                f"{args[2:]}: reads of temp {whole[2]} and {per_record[2]}"
        out = report(a, b, block=1)[1]
        for want in ("mask differs at 1 element(s), first at time=4,z=0,y=1,x=1",
                     "NaN in one file only at 1 element(s), first at time=2,z=1,y=2,x=3",
                     "at time=3,z=2,y=1,x=0", "a zero of the other sign at 1 element(s), "
                     "first at time=5,z=0,y=0,x=0"):
            assert want in out, f"{want!r} not in\n{out}"


def test_reference_outputs():
    """reference.py: a FIFO at --output is refused (exit 2, one line; it
    waited for a reader for ever); standard output that goes away (| head
    -1), is full or closed drops the progress and the run goes on: exit 0
    and every record in the history (| head -1 stopped it with a
    BrokenPipeError traceback after the first records)."""
    flat = os.path.join(ROOT, "configs", "flat.ini")
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        one_line("--output FIFO", py(REFERENCE, flat, "--output", fifo, timeout=60), 2,
                 "not a regular file (a FIFO)")
        want = None
        for what, redirect in (("| head -1", "| head -1"), ("> /dev/full", ">/dev/full"),
                               (">&-", ">&-"), ("to a file", f">{tmp}/log")):
            out = os.path.join(tmp, f"h{len(what)}.nc")
            rc, o, err = shell(f"set -o pipefail; {sys.executable} {REFERENCE} {flat} "
                               f"--output {out} {redirect}", timeout=300)
            assert rc == 0 and "Traceback" not in err, f"{what}: exit {rc}, {err[-600:]!r}"
            with netCDF4.Dataset(out) as nc:
                steps = list(nc["step"][:])
            want = want or steps
            assert steps == want and len(steps) > 2, f"{what}: steps {steps}, want {want}"


def test_regress_stdout_fails():
    """scripts/regress --compare with standard output closed or full: the
    verdict is the exit status, 0 where the run matches its baseline and 1
    where it differs (a copy of the tree whose baseline has one value
    changed); a report line that cannot be written is dropped (the --rtol
    check's awk, then set -e on a failed echo, made it exit 2 and 1, and a
    difference read "cannot compare": compare.py could not write its
    failure line)."""
    need_model()
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        shutil.copytree(SCRIPTS, os.path.join(tree, "scripts"))
        os.makedirs(os.path.join(tree, "configs"))
        shutil.copy(os.path.join(ROOT, "configs", "flat.ini"), os.path.join(tree, "configs"))
        os.makedirs(os.path.join(tree, "tests", "baselines"))
        changed = os.path.join(tree, "tests", "baselines", "flat.nc")
        shutil.copy(os.path.join(ROOT, "tests", "baselines", "flat.nc"), changed)
        with netCDF4.Dataset(changed, "a") as nc:
            nc["temp"][0, 0, 0, 0] = nc["temp"][0, 0, 0, 0] + 1.0
        for root, want in ((ROOT, 0), (tree, 1)):
            for redirect in (">&-", ">/dev/full"):
                rc, out, err = shell(f"{os.path.join(root, 'scripts', 'regress')} --compare "
                                     f"--configs flat --ranks 1 --minimodel {MODEL} --python "
                                     f"{sys.executable} {redirect}", timeout=300)
                assert rc == want and "cannot compare" not in err and "rtol" not in err, \
                    f"{root} {redirect}: exit {rc}, want {want}, {err[-600:]!r}"


def test_bench_model_one_name():
    """Two configs of one file name (their rows, timing files and NumPy
    reference were taken for one another: a parallel efficiency of 47) are
    refused before anything runs; the same config twice (also through a
    link of the same name) runs once."""
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "alt"))
        a = write(os.path.join(tmp, "tiny.ini"), TINY_INI)
        b = write(os.path.join(tmp, "alt", "tiny.ini"), TINY_INI)
        base = ["--dry-run", "--no-reference", "--layouts", "1x1", "--tdma", "reference"]
        one_line("two tiny.ini", py(BENCH, *base, "--configs", f"{a},{b}"), 2,
                 "have one name, tiny")
        os.mkdir(os.path.join(tmp, "x"))
        os.symlink(a, os.path.join(tmp, "x", "tiny.ini"))
        for twice in (f"{a},{a}", f"{a},{os.path.join(tmp, 'x', 'tiny.ini')}"):
            rc, out, err = py(BENCH, *base, "--configs", twice)
            assert rc == 0 and out.count("tiny.ini") == 1, \
                f"one config twice ({twice}): exit {rc}, {(out + err)[-600:]!r}"


def test_bench_model_one_at_a_time():
    """A second bench-model in a tree while one runs (here: its lock held)
    is refused with one line and exit 2 before it builds or runs anything
    (it replaced the binary the first was running: "Text file busy")."""
    import fcntl
    out_dir = os.path.join(ROOT, "output", "bench-model")
    made = not os.path.exists(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory() as tmp, \
                open(os.path.join(out_dir, ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            record = os.path.join(tmp, "ran")
            good = write(os.path.join(tmp, "good.ini"), TINY_INI)
            env = dict(ENV, PATH=f"{tmp}:{os.environ.get('PATH', '')}")
            stand_in(tmp, "cmake", f'echo ran >>"{record}"')
            one_line("a second bench-model", run([sys.executable, BENCH, "--no-reference",
                                                  "--no-doc", "--layouts", "1x1", "--tdma",
                                                  "reference", "--configs", good], env=env),
                     2, "another scripts/bench-model is running")
            assert not os.path.exists(record), "it built"
    finally:
        if made:
            shutil.rmtree(out_dir, ignore_errors=True)


# a timing file of 2 steps, as bench-model reads it
STAND_IN_TIMING = json.dumps({
    "tdma": "reference", "steps": 2, "grid": [8, 6, 4],
    "per_step": [{"step": 1, "step_s": 1e-3}, {"step": 2, "step_s": 1e-3}],
    "phases": {"step": {"mean_s": 1e-3, "bytes": 1000}, "solve": {"share": 0.5},
               "horizontal": {}}})


def bench_tree(tmp):
    """A copy of scripts/ in tmp/root with a stand-in scripts/build (does
    nothing) and build/minimodel (writes a timing file of 2 steps): the
    whole of a bench-model run in seconds, the repository's output/ and
    docs/ untouched. Returns the copy of bench-model."""
    root = os.path.join(tmp, "root")
    shutil.copytree(SCRIPTS, os.path.join(root, "scripts"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    stand_in(os.path.join(root, "scripts"), "build", "exit 0")
    os.makedirs(os.path.join(root, "build"))
    stand_in(os.path.join(root, "build"), "minimodel",
             'for a; do case "$a" in --version) echo "minimodel (stand-in)"; exit 0;;\n'
             '  --dry-run) exit 0;; run.name=*) n="${a#run.name=}";;\n'
             '  output.dir=*) d="${a#output.dir=}";; esac; done\n'
             f"printf '%s\\n' '{STAND_IN_TIMING}' >\"$d/$n.timing.json\"")
    return os.path.join(root, "scripts", "bench-model")


def test_bench_model_dry_run_unbuilt():
    """--dry-run in a tree without build/ (a fresh clone), without --tdma:
    the dry run's commands and its version line, exit 0 (solver_variants
    ran build/minimodel: a FileNotFoundError traceback, exit 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        bench = bench_tree(tmp)
        shutil.rmtree(os.path.join(tmp, "root", "build"))
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        rc, out, err = py(bench, "--dry-run", "--quick", "--no-reference", "--no-doc",
                          "--configs", good, "--layouts", "1x1")
        assert rc == 0 and "Traceback" not in err, f"exit {rc}: {err[-800:]!r}"
        assert "a dry run: scripts/build not run" in err, f"no version line: {err[-800:]!r}"
        assert "solver.tdma=VARIANT" in out and "mpirun -np 1" in out, f"commands: {out!r}"
        assert not os.path.exists(os.path.join(tmp, "root", "output")), "it created output/"


def test_bench_model_layouts_with_ranks():
    """--layouts with --ranks or --threads (--layouts is the list itself,
    they a product: --ranks was dropped without a word): one line and exit
    2, also with --dry-run."""
    with tempfile.TemporaryDirectory() as tmp:
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        base = ["--dry-run", "--no-reference", "--tdma", "reference", "--configs", good]
        for what, args in (("--ranks", ["--ranks", "1,2", "--layouts", "1x1"]),
                           ("--threads", ["--layouts", "1x1", "--threads", "2"])):
            one_line(f"--layouts with {what}", py(BENCH, *base, *args), 2,
                     "give --layouts or --ranks and --threads, not both")


def test_bench_model_doc_not_written():
    """A --doc that a full disk keeps from being written (a file-size
    limit) after the runs: one line naming it, exit 2, and the doc left as
    it was, no temporary file beside it (it was opened with "w": the doc
    truncated, and an OSError traceback); without the limit the table
    replaces its section and the rest is kept."""
    with tempfile.TemporaryDirectory() as tmp:
        bench = bench_tree(tmp)
        docs = os.path.join(tmp, "docs")
        os.mkdir(docs)
        before = ("# Performance\n\n## Model time step (bench-model)\n\nold table\n\n"
                  "## Other\n\n" + "text that stays\n" * 4096)
        doc = write(os.path.join(docs, "performance.md"), before)
        good = write(os.path.join(tmp, "tiny.ini"), TINY_INI)
        cmd = [sys.executable, bench, "--no-reference", "--layouts", "1x1", "--tdma",
               "reference", "--bandwidth", "none", "--configs", good, "--doc", doc]
        rc, out, err = run(cmd, preexec_fn=fsize_limit(16384), timeout=120)
        said = [ln for ln in err.splitlines() if "performance.md" in ln]
        assert rc == 2 and "Traceback" not in err and len(said) == 1 and \
            "cannot be written" in said[0], f"exit {rc}, want 2: {(out + err)[-800:]!r}"
        with open(doc) as f:
            assert f.read() == before, "the doc was changed"
        assert os.listdir(docs) == ["performance.md"], os.listdir(docs)
        assert "| tiny |" in out, f"no table on stdout: {out[-800:]!r}"
        rc, out, err = run(cmd, timeout=120)
        with open(doc) as f:
            after = f.read()
        assert rc == 0 and "old table" not in after and "| tiny |" in after and \
            after.endswith("## Other\n\n" + "text that stays\n" * 4096), \
            f"without the limit: exit {rc}, {(out + err)[-800:]!r}"


def test_bench_model_failed_run_keeps_doc():
    """A run that fails (a model that refuses it, exit 2): exit 1, the
    failure in the table printed, and the doc's figures left as they were
    (they were replaced by a table of failures)."""
    with tempfile.TemporaryDirectory() as tmp:
        bench = bench_tree(tmp)
        root = os.path.dirname(os.path.dirname(bench))
        stand_in(os.path.join(root, "build"), "minimodel",
                 'for a; do case "$a" in --version) echo "minimodel (stand-in)"; exit 0;;\n'
                 '  --dry-run) exit 0;; esac; done\necho "minimodel: error: refused" >&2; exit 2')
        docs = os.path.join(tmp, "docs")
        os.mkdir(docs)
        before = "# Performance\n\n## Model time step (bench-model)\n\ngood table\n\n## Other\n"
        doc = write(os.path.join(docs, "performance.md"), before)
        good = write(os.path.join(tmp, "tiny.ini"), TINY_INI)
        rc, out, err = run([sys.executable, bench, "--no-reference", "--layouts", "1x1", "--tdma",
                            "reference", "--bandwidth", "none", "--configs", good, "--doc", doc],
                           timeout=120)
        assert rc == 1 and "Traceback" not in err and "failed (exit 2)" in out and \
            "left as it was: a run failed" in err, f"exit {rc}, want 1: {(out + err)[-800:]!r}"
        with open(doc) as f:
            assert f.read() == before, "the doc was changed"
        assert os.listdir(docs) == ["performance.md"], os.listdir(docs)


def test_bench_model_doc_refused():
    """A --doc that cannot be read as a document (a FIFO hung, /dev/zero and
    /dev/full ran out of memory, a binary file was a UnicodeDecodeError
    traceback, all after the whole benchmark; one larger than 16 MiB) or
    written (chmod 444): one line and exit 2 before anything is built or
    run (here with --dry-run, which went on and exited 0)."""
    with tempfile.TemporaryDirectory() as tmp:
        good = write(os.path.join(tmp, "good.ini"), TINY_INI)
        fifo = os.path.join(tmp, "fifo.md")
        os.mkfifo(fifo)
        binary = os.path.join(tmp, "binary.md")
        with open(binary, "wb") as f:
            f.write(b"# Performance\n\xff\xfe\x00\x01")
        nul = write(os.path.join(tmp, "nul.md"), "# Performance\n\0\n")
        large = os.path.join(tmp, "large.md")
        with open(large, "wb") as f:
            f.truncate((16 << 20) + 1)
        protected = write(os.path.join(tmp, "protected.md"), "# Performance\n")
        os.chmod(protected, 0o444)
        base = ["--dry-run", "--no-reference", "--layouts", "1x1", "--tdma", "reference",
                "--configs", good]
        for doc, message in (("/dev/zero", "not a regular file (a device)"),
                             ("/dev/full", "not a regular file (a device)"),
                             (fifo, "not a regular file (a FIFO)"),
                             (binary, "not UTF-8 text"), (nul, "a NUL byte"),
                             (large, "larger than 16 MiB"), (protected, "write-protected")):
            if not os.path.exists(doc):
                continue
            result = py(BENCH, *base, "--doc", doc, timeout=60, preexec_fn=bounded_memory)
            one_line(f"--doc {doc}", result, 2, message)
            assert f"--doc {doc}" in result[2], f"--doc {doc}: not named: {result[2]!r}"
        with open(binary, "rb") as f:
            assert f.read() == b"# Performance\n\xff\xfe\x00\x01", "the binary file changed"


def test_classic_cut_short():
    """A classic-format file (CDF-1, CDF-2, CDF-5; fixed and record
    variables) cut short, whose lacking data the netCDF library reads as
    zeros without an error: compare.py exits 2 naming it (it compared the
    zeros: "all agree" for two copies cut alike), and reference.py refuses
    it as initial.file (exit 2; it ran from a salinity of 0), as the model
    does; plot_fields.py gives its exit status for an unreadable history
    (1; it drew the zeros); the whole files are read."""
    flat = os.path.join(ROOT, "configs", "flat.ini")
    grid = ["--set", "grid.nx=8", "--set", "grid.ny=6", "--set", "grid.nz=4", "--set",
            "run.steps=1", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"):
            whole = os.path.join(tmp, f"{fmt}.nc")
            with netCDF4.Dataset(whole, "w", format=fmt) as nc:
                nc.createDimension("time", None)
                for d, n in (("z", 4), ("y", 6), ("x", 8)):
                    nc.createDimension(d, n)
                for name, units, base in (("temp", "degC", 10.0), ("salt", "g/kg", 35.0)):
                    v = nc.createVariable(name, "f8", ("z", "y", "x"))
                    v.units = units
                    v[:] = base + np.random.default_rng(1).random((4, 6, 8))
                for name, kind in (("step", "i2"), ("heat_content", "f8")):
                    nc.createVariable(name, kind, ("time",))[:] = np.arange(3)
            rc, out, err = py(COMPARE, whole, whole)
            assert rc == 0, f"{fmt}: the whole file: exit {rc}, {(out + err)[-600:]!r}"
            rc, out, err = py(REFERENCE, flat, *grid, "--set", f"initial.file={whole}",
                              "--output", os.path.join(tmp, "r.nc"), timeout=120)
            assert rc == 0, f"{fmt}: the whole file as initial.file: exit {rc}, {err[-600:]!r}"
            with open(whole, "rb") as f:
                data = f.read()
            for cut in (1, 200):
                short = os.path.join(tmp, f"{fmt}.cut{cut}.nc")
                with open(short, "wb") as f:
                    f.write(data[:-cut])
                copy = short + ".copy"
                shutil.copy(short, copy)
                one_line(f"{fmt} {cut} bytes short", py(COMPARE, copy, short), 2,
                         f"{copy}: cannot read: cut short: its header puts the data of variable")
                one_line(f"{fmt} {cut} bytes short: plot_fields.py",
                         py(PLOT_FIELDS, short, "-o", tmp), 1, "cannot be read: cut short")
                one_line(f"{fmt} {cut} bytes short as initial.file",
                         py(REFERENCE, flat, *grid, "--set", f"initial.file={short}",
                            "--output", os.path.join(tmp, "r.nc"), timeout=120), 2, "cut short")
        # a CDF-5 attribute of 2^63 values: the header check leaves the file
        # to the library (a ValueError traceback from the check, exit 1)
        be = lambda n, k: n.to_bytes(k, "big")  # noqa: E731
        hostile = os.path.join(tmp, "attribute_2_63.nc")
        with open(hostile, "wb") as f:
            f.write(b"CDF\x05" + be(0, 8) + be(0x0A, 4) + be(1, 8) + be(1, 8) + b"x\0\0\0"
                    + be(3, 8) + be(0x0C, 4) + be(1, 8) + be(1, 8) + b"a\0\0\0" + be(6, 4)
                    + be(2**63, 8) + be(0, 4) + be(0, 8) + bytes(64))
        for what, result, code in (
                ("reference.py", py(REFERENCE, flat, *grid, "--set", f"initial.file={hostile}",
                                    "--output", os.path.join(tmp, "r.nc"), timeout=120), 2),
                ("plot_fields.py", py(PLOT_FIELDS, hostile, "-o", tmp), 1),
                ("compare.py", py(COMPARE, hostile, hostile), None)):
            rc, out, err = result
            assert "Traceback" not in out + err and (code is None or rc == code), \
                f"a 2^63-value attribute, {what}: exit {rc}, {(out + err)[-600:]!r}"


def main(argv):
    global MODEL
    argv = list(argv)
    if "--minimodel" in argv:
        i = argv.index("--minimodel")
        if i + 1 >= len(argv):
            print("test_script_faults.py: --minimodel needs a path", file=sys.stderr)
            return 2
        MODEL = os.path.abspath(argv[i + 1])
        del argv[i:i + 2]
    return script_tests.run(globals(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
