#!/usr/bin/env python3
"""Tests of scripts/reference.py and scripts/compare.py, independent of the C
model: analytic solutions and conservation laws of docs/physics.md.

    python3 tests/scripts/test_reference.py [-v] [TEST ...]

Exit status 0 when every test passes, 1 otherwise. Needs numpy and netCDF4:
when the running interpreter lacks them it re-runs itself with the
repository's .venv/bin/python if there is one, else exits 77 (skip).
"""

import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script_tests  # noqa: E402

script_tests.need("test_reference.py", ("numpy", "netCDF4"),
                  " (python3 -m venv .venv && .venv/bin/pip install numpy netCDF4)")
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402

ROOT = script_tests.ROOT
SCRIPTS = os.path.join(ROOT, "scripts")

sys.path.insert(0, SCRIPTS)
import reference as ref  # noqa: E402

REFERENCE = os.path.join(SCRIPTS, "reference.py")
COMPARE = os.path.join(SCRIPTS, "compare.py")


def config(*overrides):
    """A resolved configuration: defaults plus SECTION.KEY=VALUE overrides."""
    return ref.load_config(text="", overrides=list(overrides))


def initial_diagnostics(cfg):
    """Diagnostics of the initial state, computed apart from a run."""
    model = ref.Model(cfg)
    return ref.diagnostics(cfg, model.grid, model.T, model.S)


def run_script(*args):
    """Run a script with this interpreter; returns (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_ini(directory, text):
    path = os.path.join(directory, "case.ini")
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------
# (a) analytic decay of a vertical cosine mode
# ---------------------------------------------------------------------------
def test_mode_decay():
    """The mode pattern is an eigenvector of the backward-Euler vertical
    operator on uniform levels: after N steps its amplitude is exactly
    (1 / (1 + dt kappa_v lambda))^N, lambda = (4/h^2) sin^2(m pi / (2 nz))."""
    nz, steps, dt, kv, depth = 16, 40, 3600.0, 5.0, 4000.0
    h = depth / nz
    for m in (1, 2, 5, 15):
        cfg = config("grid.nx=3", "grid.ny=2", f"grid.nz={nz}", f"grid.depth={depth}",
                     "grid.bathymetry=flat", "grid.dz_surface=0", "physics.flow=none",
                     "physics.kappa_h=0", "physics.kappa_convect=0", f"physics.kappa_v={kv}",
                     "forcing.heat_flux=0", "initial.pattern=mode", f"initial.mode={m}",
                     f"run.dt={dt}", f"run.steps={steps}")
        records = ref.run(cfg)
        assert [r[0] for r in records] == [0, steps], "unexpected records"
        (_n, _t, T, S, _d) = records[-1]
        lam = (4 / h**2) * math.sin(m * math.pi / (2 * nz)) ** 2
        factor = (1 / (1 + dt * kv * lam)) ** steps
        assert factor < 0.9 or m == 1 and factor < 0.999, f"mode {m}: decay too weak to test"
        k = np.arange(nz)
        expect = (np.cos(m * math.pi * (k + 0.5) / nz) * factor)[:, None, None]
        err_t = np.abs(T - expect).max()
        err_s = np.abs((S - 35) - expect).max()
        assert err_t <= 1e-12, f"mode {m}: temperature off the analytic decay by {err_t:.3g}"
        assert err_s <= 1e-12, f"mode {m}: salinity off the analytic decay by {err_s:.3g}"


# ---------------------------------------------------------------------------
# (b) conservation of heat and salt
# ---------------------------------------------------------------------------
CONSERVING = ("grid.nx=12", "grid.ny=10", "grid.nz=8", "grid.bathymetry=bowl",
              "physics.flow=gyre", "physics.advection=superbee", "physics.kappa_convect=1",
              "physics.kappa_h=200", "physics.kappa_v=1e-4", "run.dt=4000",
              "initial.pattern=stratified", "initial.t_surface=2", "initial.t_bottom=15")


def test_conservation():
    """Gyre over a bowl with superbee, horizontal diffusion and convection, no
    surface flux: heat and salt content constant to 1e-13 over 100 steps."""
    cfg = config(*CONSERVING, "forcing.heat_flux=0", "run.steps=100", "output.interval=10")
    model = ref.Model(cfg)
    # The case must exercise what it claims: flow, land and convection.
    assert np.abs(model.U).max() > 0 and np.abs(model.V).max() > 0, "no flow"
    assert (model.grid.kmt == 0).any() and (model.grid.kmt > 1).any(), "no land or no depth"
    kappa = ref.convective_kappa(cfg, model.grid, model.T, model.S)
    assert (kappa > cfg["physics.kappa_v"]).any(), "the initial state has no convection"
    records = ref.run(cfg)
    assert [r[0] for r in records] == [0] + list(range(10, 101, 10)), "unexpected records"
    d0 = ref.diagnostics(cfg, model.grid, model.T, model.S)
    h0, m0 = d0["heat_content"], d0["salt_content"]
    for n, _t, T, _S, d in records:
        dh = abs(d["heat_content"] - h0) / abs(h0)
        dm = abs(d["salt_content"] - m0) / abs(m0)
        assert dh <= 1e-13, f"step {n}: heat content drifted by {dh:.3g} (relative)"
        assert dm <= 1e-13, f"step {n}: salt content drifted by {dm:.3g} (relative)"
    assert not np.array_equal(records[-1][2], model.T), "nothing happened"


# ---------------------------------------------------------------------------
# (c) surface heat flux
# ---------------------------------------------------------------------------
def test_heat_flux():
    """With a surface flux Q the heat content grows by Q * wet area * dt per step."""
    steps, dt = 60, 4000.0
    for Q in (-400.0, 250.0):
        cfg = config(*CONSERVING, f"forcing.heat_flux={Q}", f"run.steps={steps}",
                     "output.interval=20")
        assert cfg["run.dt"] == dt, cfg["run.dt"]  # CONSERVING's
        grid = ref.Grid(cfg)
        area = np.count_nonzero(grid.kmt) * cfg["grid.dx"] * cfg["grid.dy"]
        d0 = initial_diagnostics(cfg)
        h0, m0 = d0["heat_content"], d0["salt_content"]
        records = ref.run(cfg)
        assert [r[0] for r in records] == [0, 20, 40, 60]
        # record 0 is the initial state, computed apart
        assert records[0][4]["heat_content"] == h0 and records[0][4]["salt_content"] == m0
        for n, _t, _T, _S, d in records[1:]:
            expect = Q * area * dt * n
            err = abs((d["heat_content"] - h0) - expect) / abs(expect)
            assert err <= 1e-10, f"Q={Q}, step {n}: heat content change off by {err:.3g}"
            dm = abs(d["salt_content"] - m0) / m0
            assert dm <= 1e-13, f"Q={Q}, step {n}: salt content drifted by {dm:.3g}"


# ---------------------------------------------------------------------------
# (d) superbee keeps a step within its bounds
# ---------------------------------------------------------------------------
def test_superbee_bounds():
    """Superbee advection of the step pattern by a uniform flow in a channel
    periodic in x (Courant number 0.4) stays within [t_bottom, t_surface],
    moves the step, and conserves the tracer. (kappa_v = 0: the vertical
    solve is then the identity, free of round-off.)"""
    ts, tb = 20.0, 4.0
    cfg = config("grid.nx=32", "grid.ny=12", "grid.nz=2", "grid.periodic_x=true",
                 "grid.periodic_y=false", "grid.bathymetry=flat", "physics.flow=uniform",
                 "physics.flow_speed=0.1", "physics.advection=superbee", "physics.kappa_h=0",
                 "physics.kappa_v=0", "physics.kappa_convect=0", "run.dt=40000",
                 "initial.pattern=step", f"initial.t_surface={ts}", f"initial.t_bottom={tb}",
                 "run.steps=100", "output.interval=1")
    model = ref.Model(cfg)
    assert np.allclose(model.U[model.grid.wet], 0.1 * cfg["grid.dy"]), "flow is not uniform"
    assert not model.V.any(), "flow has a y component"
    T0 = model.T
    records = ref.run(cfg)
    for n, _t, T, _S, d in records:
        assert T.min() >= tb and T.max() <= ts, \
            f"step {n}: T in [{T.min()!r}, {T.max()!r}] leaves [{tb}, {ts}]"
        assert d["temp_min"] >= tb and d["temp_max"] <= ts
    T = records[-1][2]
    assert not np.array_equal(T, T0), "the step did not move"
    # 100 steps at Courant 0.4 move it by 40 cells = 8 cells around the channel.
    def centre(X):  # circular centre of mass of T - t_bottom along x, in cells
        w = (X - tb).sum(axis=(0, 1))
        angle = 2 * math.pi * np.arange(32) / 32
        return math.atan2((w * np.sin(angle)).sum(), (w * np.cos(angle)).sum()) * 32 / (2 * math.pi)
    shift = (centre(T) - centre(T0)) % 32
    assert abs(shift - 8) <= 0.5, f"step moved by {shift:.3f} cells, expected 8"
    assert T.max() > tb + 0.9 * (ts - tb), "superbee smeared the step away"
    assert abs(math.fsum(T.ravel()) - math.fsum(T0.ravel())) <= 1e-12 * math.fsum(T0.ravel())


def test_superbee_bounds_gyre():
    """The same in two dimensions: the step pattern stirred by the gyre
    (advective Courant number below 1/2) never leaves its initial bounds."""
    ts, tb = 20.0, 4.0
    cfg = config("grid.nx=24", "grid.ny=20", "grid.nz=1", "grid.bathymetry=flat",
                 "physics.flow=gyre", "physics.advection=superbee", "physics.kappa_h=0",
                 "physics.kappa_v=0", "run.dt=40000", "initial.pattern=step",
                 f"initial.t_surface={ts}", f"initial.t_bottom={tb}", "run.steps=150",
                 "output.interval=1")
    for n, _t, T, _S, _d in ref.run(cfg):
        assert T.min() >= tb and T.max() <= ts, \
            f"step {n}: T in [{T.min()!r}, {T.max()!r}] leaves [{tb}, {ts}]"


# ---------------------------------------------------------------------------
# (e) compare.py
# ---------------------------------------------------------------------------
def reference_history(tmp, name, ini_text):
    """The history of reference.py for the configuration ini_text, as
    tmp/name, and the configuration file."""
    path, ini = os.path.join(tmp, name), write_ini(tmp, ini_text)
    rc, out, err = run_script(REFERENCE, ini, "--output", path, "--quiet")
    assert rc == 0, f"reference.py failed: {err}"
    return path, ini


def test_compare():
    """compare.py: 0 on identical files, 1 on a perturbed value (naming its
    place), on a mask mismatch or a shape mismatch, 0 within --rtol, 2 on an
    unreadable file."""
    with tempfile.TemporaryDirectory() as tmp:
        a, ini = reference_history(tmp, "a.nc", "[run]\nsteps = 4\n[grid]\nnx = 6\nny = 5\nnz = 4\n"
                                           "bathymetry = bowl\n[output]\ninterval = 2\n")
        b = os.path.join(tmp, "b.nc")
        shutil.copy(a, b)
        rc, out, err = run_script(COMPARE, a, b)
        assert rc == 0, f"identical files: exit {rc}\n{out}{err}"
        for name in ("temp", "salt", "heat_content", "kmt", "step", "z_bnds"):
            assert any(line.startswith(name + ":") for line in out.splitlines()), \
                f"no line for {name}:\n{out}"

        # One value perturbed by a relative 1e-13.
        with netCDF4.Dataset(b, "a") as ds:
            assert ds["kmt"][3, 2] > 2, "test point is land"
            ds["temp"][1, 2, 3, 2] = ds["temp"][1, 2, 3, 2] * (1 + 1e-13)
        rc, out, err = run_script(COMPARE, a, b)
        assert rc == 1, f"perturbed file: exit {rc}\n{out}{err}"
        line = next(ln for ln in out.splitlines() if ln.startswith("temp:"))
        assert "time=1,z=2,y=3,x=2" in line and "FAIL" in line, f"bad report: {line}"
        assert "FAIL" not in "".join(ln for ln in out.splitlines() if ln.startswith("salt:"))
        rc, out, err = run_script(COMPARE, a, b, "--rtol", "1e-12")
        assert rc == 0, f"perturbation within rtol: exit {rc}\n{out}{err}"
        rc, out, err = run_script(COMPARE, a, b, "--vars", "salt,step")
        assert rc == 0 and "temp" not in out, f"--vars salt,step: exit {rc}\n{out}"
        rc, out, err = run_script(COMPARE, a, b, "--quiet")
        assert rc == 1 and out.strip().startswith("temp:"), f"--quiet: {out}"

        # A wet value replaced by the fill value: a mask mismatch.
        shutil.copy(a, b)
        with netCDF4.Dataset(b, "a") as ds:
            ds["salt"][0, 0, 2, 2] = np.ma.masked
        rc, out, err = run_script(COMPARE, a, b, "--rtol", "1")
        assert rc == 1 and "mask differs" in out, f"mask mismatch: exit {rc}\n{out}"

        # A different number of records: shape mismatch; a variable other than
        # the state and the diagnostics in one file only is a note.
        c = os.path.join(tmp, "c.nc")
        rc, _out, err = run_script(REFERENCE, ini, "--output", c, "--quiet",
                                   "--set", "output.interval=1")
        assert rc == 0, err
        with netCDF4.Dataset(c, "a") as ds:
            ds.createVariable("extra", "f8", ())
        rc, out, err = run_script(COMPARE, a, c)
        assert rc == 1 and "shape" in out and "extra: note" in out, f"{rc}\n{out}"
        rc, out, err = run_script(COMPARE, a, c, "--vars", "kmt,x")
        assert rc == 0, f"{rc}\n{out}"
        # --records-of-b: c (every step) holds a's steps (0, 2, 4) with their bits;
        # a lacks c's steps 1 and 3
        rc, out, err = run_script(COMPARE, c, a, "--records-of-b", "--vars", "temp,salt,step")
        assert rc == 0 and "1, 3 only in" in out, f"--records-of-b: exit {rc}\n{out}{err}"
        rc, out, err = run_script(COMPARE, a, c, "--records-of-b", "--vars", "temp,salt,step")
        assert rc == 1 and "lacks the record(s) of step(s) 1, 3" in out, f"{rc}\n{out}{err}"
        with netCDF4.Dataset(c, "a") as ds:  # a different state at step 2
            ds["temp"][2, 0, 2, 2] = ds["temp"][2, 0, 2, 2] + 1
        rc, out, err = run_script(COMPARE, c, a, "--records-of-b", "--vars", "temp")
        assert rc == 1 and "time=1,z=0,y=2,x=2" in out, f"{rc}\n{out}{err}"

        # --attributes: equal values with an attribute changed, added or gone
        shutil.copy(a, b)
        rc, out, err = run_script(COMPARE, a, b, "--attributes")
        assert rc == 0, f"--attributes, identical files: exit {rc}\n{out}{err}"
        with netCDF4.Dataset(b, "a") as ds:
            ds["time"].units = "s"
            ds["kmt"].delncattr("standard_name")
            ds["z"].comment = "added"
        rc, out, err = run_script(COMPARE, a, b, "--attributes", "--quiet")
        lines = {ln.split(":")[0]: ln for ln in out.splitlines()}
        assert rc == 1 and "units = 'seconds since" in lines.get("time", "") \
            and "standard_name only in one file" in lines.get("kmt", "") \
            and "comment only in one file" in lines.get("z", "") \
            and "salt" not in lines, f"--attributes: exit {rc}\n{out}{err}"
        rc, out, err = run_script(COMPARE, a, b)
        assert rc == 0, f"attributes are not compared without --attributes: exit {rc}\n{out}"

        rc, out, err = run_script(COMPARE, a, os.path.join(tmp, "missing.nc"))
        assert rc == 2, f"unreadable file: exit {rc}"
        rc, out, err = run_script(COMPARE, a)
        assert rc == 2, f"usage error: exit {rc}"


def test_scripts_faults():
    """compare.py and reference.py under the faults users meet: a FIFO as an
    input (refused, exit 2, not a wait for a writer), a report to a full disk
    (exit 2, no traceback), a Python without numpy (exit 2, not compare.py's
    1 of "the files differ"), --output that is the configuration file or
    initial.file (exit 2, the file intact), a history xarray wrote (time a
    fixed dimension, NaN _FillValue attributes), a step that is not a whole
    number."""
    with tempfile.TemporaryDirectory() as tmp:
        a, ini = reference_history(tmp, "a.nc", "[run]\nsteps = 4\n[grid]\nnx = 6\nny = 5\n"
                                           "nz = 4\n[output]\ninterval = 2\n")
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        for script, args in ((COMPARE, (fifo, a)), (COMPARE, (a, fifo)), (REFERENCE, (fifo,)),
                             (REFERENCE, (ini, "--set", f"initial.file={fifo}"))):
            p = subprocess.run([sys.executable, script] + list(args), capture_output=True,
                               text=True, timeout=60)
            assert p.returncode == 2 and "not a regular file (a FIFO)" in p.stderr, \
                f"{script} {args}: exit {p.returncode}, {p.stderr!r}"
        if os.path.exists("/dev/full"):
            with open("/dev/full", "w") as full:
                p = subprocess.run([sys.executable, COMPARE, a, a], stdout=full,
                                   stderr=subprocess.PIPE, text=True)
            assert p.returncode == 2 and "cannot write the report" in p.stderr \
                and "Traceback" not in p.stderr, f"/dev/full: {p.returncode}, {p.stderr!r}"
        for script in (COMPARE, REFERENCE):  # -S: no site-packages, so no numpy
            p = subprocess.run([sys.executable, "-S", script, a, a], capture_output=True,
                               text=True)
            assert p.returncode == 2 and ".venv/bin/python" in p.stderr, \
                f"{script} without numpy: exit {p.returncode}, {p.stderr!r}"
        # --output over an input of the run
        with open(ini) as f:
            ini_text = f.read()
        rc, out, err = run_script(REFERENCE, ini, "--output", ini, "--quiet")
        with open(ini) as f:
            assert rc == 2 and "is the configuration file" in err and f.read() == ini_text, \
                f"--output = the configuration: exit {rc}, {err!r}"
        init = os.path.join(tmp, "init.nc")
        write_initial(init, (4, 5, 6), "temp", {}, None, None)
        size = os.path.getsize(init)
        rc, out, err = run_script(REFERENCE, ini, "--set", f"initial.file={init}", "--output",
                                  init, "--quiet")
        assert rc == 2 and "is initial.file" in err and os.path.getsize(init) == size, \
            f"--output = initial.file: exit {rc}, {err!r}"
        # a device at --output: refused up front, as the model refuses it (it was
        # exit 1, "cannot create", from the library)
        rc, out, err = run_script(REFERENCE, ini, "--output", "/dev/null", "--quiet")
        assert rc == 2 and "/dev/null: not a regular file (a device)" in err and \
            "Traceback" not in err, f"{rc}, {err!r}"
        # what xarray writes: time a fixed dimension, _FillValue NaN
        try:
            import xarray as xr
        except ImportError:
            xr = None
        if xr is not None:
            fixed, sub = os.path.join(tmp, "fixed.nc"), os.path.join(tmp, "sub.nc")
            with xr.open_dataset(a) as ds:
                ds.load().to_netcdf(fixed, unlimited_dims=[])
                ds.isel(time=[1]).to_netcdf(sub, unlimited_dims=[])
            rc, out, err = run_script(COMPARE, fixed, sub, "--records-of-b", "--quiet")
            assert rc == 0, f"--records-of-b, fixed time: exit {rc}\n{out}{err}"
            rc, out, err = run_script(COMPARE, fixed, fixed, "--attributes", "--quiet")
            assert rc == 0, f"--attributes, NaN _FillValue: exit {rc}\n{out}{err}"
        b = os.path.join(tmp, "b.nc")
        copy_without(a, b, {"step"})
        with netCDF4.Dataset(b, "a") as ds:
            ds.createVariable("step", "f8", ("time",))[:] = np.nan
        rc, out, err = run_script(COMPARE, a, b, "--records-of-b")
        assert rc == 2 and "not a whole number" in err and "Traceback" not in err, \
            f"NaN step: exit {rc}, {err!r}"


def test_reference_write_and_memory_faults():
    """reference.py under a file-size limit (a full disk: its history cannot
    be written, SIGXFSZ ignored) ends with one line naming the file, exit 1;
    a grid whose arrays do not fit in the address space, exit 2; neither
    with a traceback."""
    import resource

    def limited(kind, value):
        def start():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(kind, (value, value))
        return start

    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, "[run]\nsteps = 20\n[grid]\nnx = 16\nny = 16\nnz = 8\n"
                             "[output]\ninterval = 1\n")
        out = os.path.join(tmp, "ref.nc")
        p = subprocess.run([sys.executable, REFERENCE, ini, "--output", out, "--quiet"],
                           capture_output=True, text=True,
                           preexec_fn=limited(resource.RLIMIT_FSIZE, 64 * 1024))
        assert p.returncode == 1 and f"{out}: cannot" in p.stderr and "full disk" in p.stderr \
            and "Traceback" not in p.stderr, f"file-size limit: exit {p.returncode}, {p.stderr!r}"
        big = write_ini(tmp, "[run]\nsteps = 1\n[grid]\nnx = 4000\nny = 4000\nnz = 50\n")
        p = subprocess.run([sys.executable, REFERENCE, big, "--output", out, "--quiet"],
                           capture_output=True, text=True,
                           preexec_fn=limited(resource.RLIMIT_AS, 3 << 30))
        assert p.returncode == 2 and "out of memory" in p.stderr \
            and "Traceback" not in p.stderr, f"address-space limit: exit {p.returncode}, " \
                                             f"{p.stderr!r}"


def test_reference_string_length_in_bytes():
    """A string value's length is counted in bytes, as the model counts it:
    150 two-byte characters are 304 bytes, more than output.dir takes."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, "[run]\nsteps = 1\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set",
                                  "output.dir=out/" + "\u00e9" * 150)
    assert rc == 2 and "too long (304 characters, at most 192)" in err, f"exit {rc}, {err!r}"


def copy_without(src, dst, drop):
    """Copy the NetCDF file src to dst without the variables in drop."""
    with netCDF4.Dataset(src) as si, netCDF4.Dataset(dst, "w") as so:
        for name, dim in si.dimensions.items():
            so.createDimension(name, None if dim.isunlimited() else len(dim))
        for name, v in si.variables.items():
            if name in drop:
                continue
            v.set_auto_maskandscale(False)
            fill = v.getncattr("_FillValue") if "_FillValue" in v.ncattrs() else None
            w = so.createVariable(name, v.dtype, v.dimensions, fill_value=fill)
            w.set_auto_maskandscale(False)
            w[...] = v[...]


def test_compare_missing():
    """compare.py fails (exit 1, naming the variable) when A lacks a state or
    diagnostic variable of B (the reference or baseline), unless it is named
    with --allow-missing; B may lack A's; other variables in one file only
    are notes; nothing compared fails, even with --allow-missing."""
    required = ["temp", "salt", "heat_content", "salt_content", "temp_min", "temp_max",
                "salt_min", "salt_max"]
    with tempfile.TemporaryDirectory() as tmp:
        b, _ini = reference_history(tmp, "b.nc", "[run]\nsteps = 2\n[grid]\nnx = 5\nny = 4\nnz = 3\n"
                                           "bathymetry = bowl\n")
        path = {}
        for name, drop in (("no_temp", ["temp"]), ("no_state", required),
                           ("no_kmt", ["kmt"])):
            path[name] = os.path.join(tmp, name + ".nc")
            copy_without(b, path[name], drop)

        rc, out, err = run_script(COMPARE, path["no_temp"], b)
        assert rc == 1 and "temp: FAIL" in out and "lacks this state variable" in out \
            and "failure(s)" in out, f"A without temp: exit {rc}\n{out}{err}"
        rc, out, err = run_script(COMPARE, "--quiet", path["no_temp"], b)
        assert rc == 1 and out.startswith("temp: FAIL"), f"--quiet: exit {rc}\n{out}"
        rc, out, err = run_script(COMPARE, path["no_state"], b, "--rtol", "1e-12")
        failing = {ln.split(":")[0] for ln in out.splitlines() if "FAIL" in ln}
        assert rc == 1 and failing == set(required), \
            f"A without the state and diagnostics: exit {rc}, failures {sorted(failing)}\n{out}"
        rc, out, err = run_script(COMPARE, path["no_temp"], b, "--allow-missing", "temp")
        assert rc == 0 and "temp: note: only in" in out, f"--allow-missing temp: {rc}\n{out}"
        rc, out, err = run_script(COMPARE, path["no_state"], b, "--allow-missing", "temp,salt")
        assert rc == 1 and "heat_content: FAIL" in out and "temp: note" in out, \
            f"--allow-missing temp,salt: exit {rc}\n{out}"
        # B may lack what A has; a variable other than the state and the
        # diagnostics in one file only is a note.
        for a_path, b_path in ((b, path["no_state"]), (b, path["no_kmt"]),
                               (path["no_kmt"], b)):
            rc, out, err = run_script(COMPARE, a_path, b_path)
            assert rc == 0 and "note: only in" in out, f"{a_path} vs {b_path}: {rc}\n{out}"

        # Nothing compared: files that share no variable; --vars naming none
        # of the shared ones.
        other = os.path.join(tmp, "other.nc")
        with netCDF4.Dataset(other, "w") as ds:
            ds.createDimension("q", 2)
            ds.createVariable("q_values", "f8", ("q",))[:] = [1.0, 2.0]
        for quiet in ([], ["--quiet"]):
            rc, out, err = run_script(COMPARE, *quiet, other, b,
                                      "--allow-missing", ",".join(required))
            assert rc == 1 and "no variable compared" in out, \
                f"no shared variable {quiet}: exit {rc}\n{out}{err}"
        rc, out, err = run_script(COMPARE, other, b)
        assert rc == 1 and "0 variable(s) compared" in out, f"no shared variable: {rc}\n{out}"
        rc, out, err = run_script(COMPARE, path["no_temp"], b, "--vars", "temp")
        assert rc == 1 and "no variable compared" in out, f"--vars temp: exit {rc}\n{out}"


def test_compare_wide_integers():
    """compare.py compares 64-bit integers exactly: values whose difference
    overflows int64 (2**62 against -2**62, INT64_MAX against -1), a uint64
    above INT64_MAX against an int64, and neighbours that a float64 does not
    tell apart (2**62 + 1 against 2**62) differ (exit 1, the true max_abs);
    equal ones agree (exit 0)."""
    def step_file(path, values, dtype):
        with netCDF4.Dataset(path, "w") as ds:
            ds.createDimension("time", None)
            ds.createVariable("step", dtype, ("time",))[:] = np.array(values, dtype=dtype)
        return path

    big, top = 2 ** 62, 2 ** 63 - 1
    with tempfile.TemporaryDirectory() as tmp:
        files = {name: step_file(os.path.join(tmp, name + ".nc"), values, dtype)
                 for name, values, dtype in (("plus", [big, 5], "i8"), ("minus", [-big, 5], "i8"),
                                             ("plus_copy", [big, 5], "i8"),
                                             ("next", [big + 1, 5], "i8"),
                                             ("max", [top], "i8"), ("minus_one", [-1], "i8"),
                                             ("umax", [2 ** 64 - 1], "u8"),
                                             ("umax_copy", [2 ** 64 - 1], "u8"),
                                             ("uplus", [big, 5], "u8"))}
        for a, b, max_abs in (("plus", "minus", 2 * big), ("minus", "plus", 2 * big),
                              ("max", "minus_one", 2 ** 63), ("minus_one", "max", 2 ** 63),
                              ("umax", "minus_one", 2 ** 64), ("minus_one", "umax", 2 ** 64),
                              ("next", "plus", 1), ("next", "uplus", 1)):
            rc, out, err = run_script(COMPARE, files[a], files[b])
            line = next((ln for ln in out.splitlines() if ln.startswith("step:")), "")
            assert rc == 1 and "FAIL" in line and "failure(s)" in out, \
                f"{a} vs {b}: exit {rc}, want 1\n{out}{err}"
            assert f"max_abs={float(max_abs):.6g} " in line and "at time=0" in line, \
                f"{a} vs {b}: want max_abs={float(max_abs):.6g} at time=0: {line}"
        for a, b in (("plus", "plus_copy"), ("umax", "umax_copy"), ("plus", "uplus"),
                     ("uplus", "plus")):
            rc, out, err = run_script(COMPARE, files[a], files[b])
            assert rc == 0 and "step: max_abs=0 max_rel=0 at -" in out and "all agree" in out, \
                f"{a} vs {b}: exit {rc}, want 0\n{out}{err}"


def test_compare_verdicts():
    """compare.py's verdicts where a tolerance or a file's structure could
    hide a difference: an infinity against a number or the other infinity
    fails at any tolerance; the default (bitwise) tells -0.0 from 0.0, a
    tolerance does not; a huge rtol where b = 0 does not fail a difference
    atol allows; an integer against a float64 compares exactly; dimensions
    named otherwise (a transposed variable of the same shape) fail;
    --records-of-b against a B of no record, and with a variable scalar in B,
    fails with a line (no traceback); only variables along the step's own
    dimension are records; variable-length and compound variables compare
    equal to themselves and not to others; a file with groups gets a
    warning; --baseline fails a baseline cut short or without A's state."""
    def one(path, values, dtype="f8", dims=("n",), extra=None):
        with netCDF4.Dataset(path, "w") as ds:
            for d, n in zip(dims, np.shape(values)):
                ds.createDimension(d, n)
            ds.createVariable("v", dtype, dims)[...] = np.asarray(values)
            if extra:
                extra(ds)
        return path

    def verdict(a, b, *opts):
        rc, out, err = run_script(COMPARE, a, b, *opts)
        assert "Traceback" not in err, err
        return rc, out, err

    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name + ".nc")  # noqa: E731
        one(f("one"), [1.0, 2.0])
        one(f("inf"), [np.inf, 2.0])
        one(f("minf"), [-np.inf, 2.0])
        for a, b in (("one", "inf"), ("minf", "inf"), ("inf", "one")):
            for opts in ((), ("--rtol", "1e-12"), ("--atol", "1e300")):
                rc, out, _ = verdict(f(a), f(b), *opts)
                assert rc == 1 and "an infinity against another value" in out, \
                    f"{a} vs {b} {opts}: exit {rc}\n{out}"
        assert verdict(f("inf"), f("inf"), "--rtol", "1")[0] == 0
        one(f("pos0"), [0.0, 2.0])
        one(f("neg0"), [-0.0, 2.0])
        rc, out, _ = verdict(f("neg0"), f("pos0"))
        assert rc == 1 and "a zero of the other sign at 1" in out, f"-0.0 vs 0.0: {rc}\n{out}"
        assert verdict(f("neg0"), f("pos0"), "--atol", "1e-300")[0] == 0
        one(f("half"), [0.5, 2.0])
        rc, out, _ = verdict(f("half"), f("pos0"), "--atol", "1", "--rtol", "1e300")
        assert rc == 0, f"rtol = 1e300, b = 0, within atol: exit {rc}\n{out}"
        # an integer against a float64: exact, and the types named
        one(f("int"), [2 ** 53 + 1], "i8", ("one",))
        one(f("flt"), [float(2 ** 53)], "f8", ("one",))
        one(f("int_same"), [2 ** 53], "i8", ("one",))
        rc, out, _ = verdict(f("int"), f("flt"))
        assert rc == 1 and "types int64 and float64" in out and "max_abs=1 " in out, \
            f"2**53 + 1 vs 2.0**53: exit {rc}\n{out}"
        assert verdict(f("int_same"), f("flt"))[0] == 0
        # a transposed variable of the same shape
        m = np.arange(4.0).reshape(2, 2)
        one(f("pq"), m, dims=("p", "q"))
        one(f("qp"), m.T.copy(), dims=("q", "p"))
        rc, out, _ = verdict(f("qp"), f("pq"))
        assert rc == 1 and "dimensions (q, p) vs (p, q)" in out, f"transposed: {rc}\n{out}"

        # --records-of-b
        def history(path, steps, foo_scalar=False, other=None):
            with netCDF4.Dataset(path, "w") as ds:
                ds.createDimension("time", None)
                ds.createVariable("step", "i4", ("time",))[:] = np.array(steps, "i4")
                ds.createVariable("temp", "f8", ("time",))[:] = np.array(steps, "f8") * 12345
                if foo_scalar:
                    ds.createVariable("foo", "f8", ())[...] = 1.0
                else:
                    ds.createVariable("foo", "f8", ("time",))[:] = np.ones(len(steps))
                if other is not None:  # a second unlimited dimension
                    ds.createDimension("other", None)
                    ds.createVariable("bar", "f8", ("other",))[:] = np.array(other)
            return path
        history(f("h2"), [0, 1])
        history(f("h0"), [])
        rc, out, _ = verdict(f("h2"), f("h0"), "--records-of-b")
        assert rc == 1 and "holds no record" in out, f"B of no record: exit {rc}\n{out}"
        history(f("hs"), [0, 1], foo_scalar=True)
        rc, out, _ = verdict(f("h2"), f("hs"), "--records-of-b")
        assert rc == 1 and "foo: FAIL: a scalar in" in out, f"scalar in B: exit {rc}\n{out}"
        history(f("hu"), [0, 1], other=[5.0])
        rc, out, _ = verdict(f("hu"), f("hu"), "--records-of-b")
        assert rc == 0, f"a second unlimited dimension: exit {rc}\n{out}"
        # --baseline: B must hold A's records from its first step on, and
        # A's state (temp here)
        history(f("h4"), [0, 10, 20, 30])
        history(f("b1"), [10])
        history(f("b3"), [10, 20, 30])
        rc, out, _ = verdict(f("h4"), f("b1"), "--records-of-b")
        assert rc == 0, f"without --baseline, B's steps only: exit {rc}\n{out}"
        rc, out, _ = verdict(f("h4"), f("b1"), "--records-of-b", "--baseline")
        assert rc == 1 and "lacks the record(s) of step(s) 20, 30" in out, \
            f"a baseline cut short: exit {rc}\n{out}"
        rc, out, _ = verdict(f("h4"), f("b3"), "--records-of-b", "--baseline")
        assert rc == 0 and "0 only in" in out, f"a baseline without step 0: exit {rc}\n{out}"
        with netCDF4.Dataset(f("nofields"), "w") as ds:
            ds.createDimension("time", None)
            ds.createVariable("step", "i4", ("time",))[:] = np.array([10, 20, 30], "i4")
        assert verdict(f("h4"), f("nofields"), "--records-of-b")[0] == 0
        rc, out, _ = verdict(f("h4"), f("nofields"), "--records-of-b", "--baseline")
        assert rc == 1 and "temp: FAIL: only in" in out and "the baseline" in out, \
            f"a baseline without temp: exit {rc}\n{out}"
        # a step twice (runs joined: the second record went uncompared, exit
        # 0), a record without a step (the fill value, compared as step
        # -2147483647) and a step of 5.5 (read as 5) are refused
        history(f("twice"), [0, 10, 20, 30, 30])
        for a, b in ((f("twice"), f("b3")), (f("b3"), f("twice"))):
            rc, out, err = verdict(a, b, "--records-of-b", "--baseline")
            assert rc == 2 and "records 3 and 4 both hold step 30" in err, \
                f"a step twice: exit {rc}\n{out}{err}"
        with netCDF4.Dataset(f("nostep"), "w") as ds:
            ds.createDimension("time", None)
            ds.createVariable("step", "i4", ("time",))[0:2] = np.array([10, 20], "i4")
            ds.createVariable("temp", "f8", ("time",))[0:4] = np.arange(4.0)
        rc, out, err = verdict(f("nostep"), f("b3"), "--records-of-b")
        assert rc == 2 and "record 2 has no step" in err, f"no step: exit {rc}\n{out}{err}"
        with netCDF4.Dataset(f("half"), "w") as ds:
            ds.createDimension("time", None)
            ds.createVariable("step", "f8", ("time",))[:] = np.array([10.0, 20.5])
        rc, out, err = verdict(f("half"), f("b3"), "--records-of-b")
        assert rc == 2 and "record 1: step = 20.5 is not a whole number" in err, \
            f"step 20.5: exit {rc}\n{out}{err}"

        # variable-length and compound variables; groups
        def vlen(path, rows):
            with netCDF4.Dataset(path, "w") as ds:
                vt = ds.createVLType(np.int32, "ragged")
                ds.createDimension("n", len(rows))
                v = ds.createVariable("v", vt, ("n",))
                for i, r in enumerate(rows):
                    v[i] = np.array(r, np.int32)
                ct = ds.createCompoundType(np.dtype([("a", "f8"), ("b", "i4")]), "pair")
                ds.createVariable("c", ct, ("n",))[:] = np.array(
                    [(1.5, 1)] * len(rows), dtype=[("a", "f8"), ("b", "i4")])
            return path
        vlen(f("vl"), [[1, 2], [3]])
        vlen(f("vl2"), [[1, 2], [4]])
        rc, out, _ = verdict(f("vl"), f("vl"))
        assert rc == 0 and "VLType, equal" in out and "CompoundType, equal" in out, \
            f"vlen and compound, the same file: exit {rc}\n{out}"
        rc, out, _ = verdict(f("vl"), f("vl2"))
        assert rc == 1 and "values differ, first at n=1" in out, f"vlen: exit {rc}\n{out}"
        # a compound of its fields swapped, a vlen of 0.0 against -0.0 (both
        # were "equal")
        def typed(path, pair, zero):
            with netCDF4.Dataset(path, "w") as ds:
                ds.createDimension("n", 1)
                ct = ds.createCompoundType(np.dtype(pair), "pair")
                ds.createVariable("c", ct, ("n",))[:] = np.array([(1.0, 2.0)], dtype=pair)
                vt = ds.createVLType(np.float64, "ragged")
                ds.createVariable("v", vt, ("n",))[0] = np.array([zero, np.nan])
            return path
        typed(f("ts"), [("temp", "f8"), ("salt", "f8")], 0.0)
        typed(f("st"), [("salt", "f8"), ("temp", "f8")], -0.0)
        rc, out, _ = verdict(f("ts"), f("st"))
        assert rc == 1 and "c: FAIL: types differ" in out and "v: FAIL: VLType values differ" in out, \
            f"compound fields swapped, vlen -0.0: exit {rc}\n{out}"
        assert verdict(f("st"), f("st"))[0] == 0, "NaN in a vlen against itself"
        one(f("grp"), [1.0, 2.0], extra=lambda ds: ds.createGroup("extra"))
        rc, out, err = verdict(f("one"), f("grp"))
        assert rc == 0 and "group(s) extra not compared" in err, f"groups: {rc}\n{err}"


# ---------------------------------------------------------------------------
# The command line and the history file
# ---------------------------------------------------------------------------
def test_command_line():
    """Default output path, records, layout of the history file, --set, and
    exit status 2 for bad or unsupported configurations."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nname = cli\nsteps = 7\n[grid]\nnx = 5\nny = 4\nnz = 3\n"
                             f"[output]\ndir = {tmp}/out\ninterval = 3\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", "grid.bathymetry=bowl")
        assert rc == 0 and out == "", f"exit {rc}\n{out}{err}"
        path = os.path.join(tmp, "out", "cli.reference.nc")
        with netCDF4.Dataset(path) as ds:
            assert list(ds["step"][:]) == [0, 3, 6, 7]
            assert np.allclose(ds["time"][:], [0, 1800, 3600, 4200])
            assert ds.dimensions["time"].isunlimited()
            assert {d: len(v) for d, v in ds.dimensions.items()} == \
                {"time": 4, "z": 3, "y": 4, "x": 5, "nv": 2}
            assert ds["temp"].dimensions == ("time", "z", "y", "x")
            assert ds["temp"]._FillValue == netCDF4.default_fillvals["f8"]  # NC_FILL_DOUBLE
            assert ds.source == "minimodel reference.py" and ds.Conventions == "CF-1.8"
            assert "bathymetry = bowl" in ds.configuration
            kmt = ds["kmt"][:]
            assert (kmt == 0).any()
            temp = ds["temp"][-1]
            land = np.arange(3)[:, None, None] >= kmt[None]
            assert (np.ma.getmaskarray(temp) == land).all(), "land is not the fill value"
            assert ds["z_bnds"][0, 0] == 0 and ds["z_bnds"][-1, 1] == 4000
        # output.initial_record = false: no record of the initial state.
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", "output.initial_record=false",
                                  "--output", os.path.join(tmp, "no0.nc"))
        assert rc == 0, err
        with netCDF4.Dataset(os.path.join(tmp, "no0.nc")) as ds:
            assert list(ds["step"][:]) == [3, 6, 7]
        # 0 steps: the initial state as step 0.
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", "run.steps=0",
                                  "--output", os.path.join(tmp, "zero.nc"))
        assert rc == 0, err
        with netCDF4.Dataset(os.path.join(tmp, "zero.nc")) as ds:
            assert list(ds["step"][:]) == [0] and ds["time"][0] == 0

        for bad, what in ((("--set", "initial.restart=x.nc"), "not supported"),
                          (("--set", "grid.nx=0"), "grid.nx"),
                          (("--set", "grid.foo=1"), "unknown key"),
                          (("--set", "run.steps =3"), "blanks around the key"),
                          (("--set", "physics.flow=gyre", "--set", "run.dt=1e6"),
                           "advective stability limit"),
                          (("--set", "physics.kappa_h=1e5"), "diffusive stability limit"),
                          (("--set", "physics.flow=gyre", "--set", "physics.kappa_h=1e3",
                            "--set", "run.dt=3e4"), "advective + diffusive stability limit")):
            rc, out, err = run_script(REFERENCE, ini, "--quiet", *bad)
            assert rc == 2 and what in err, f"{bad}: exit {rc}, {err!r}"
        ini2 = write_ini(tmp, "[grid]\nnx = 4\nnx = 5\n")
        rc, out, err = run_script(REFERENCE, ini2, "--quiet")
        assert rc == 2, f"duplicate key: exit {rc}"


def test_stretched_levels():
    """Stretched levels sum to the depth and grow linearly from dz_surface."""
    cfg = config("grid.nz=10", "grid.depth=4000", "grid.dz_surface=50")
    h, z_w, z, dzw = ref.levels(cfg)
    assert abs(z_w[-1] - 4000) <= 1e-9 and h[0] == 50
    assert np.allclose(np.diff(h), h[1] - h[0]) and h[1] > h[0]
    assert np.allclose(z, (z_w[:-1] + z_w[1:]) / 2) and dzw[-1] == 0


# ---------------------------------------------------------------------------
# The physically possible range
# ---------------------------------------------------------------------------
def write_initial(path, shape, var, atts, value, cell, dtype="f8"):
    """An initial.file of temp 10 and salt 35 on (z, y, x) of shape, of dtype;
    var gets the attributes atts and, unless value is None, value at cell."""
    with netCDF4.Dataset(path, "w") as ds:
        for dim, size in zip(("z", "y", "x"), shape):
            ds.createDimension(dim, size)
        for v, base in (("temp", 10.0), ("salt", 35.0)):
            a = np.full(shape, base)
            x = ds.createVariable(v, dtype, ("z", "y", "x"))
            if v == var:
                x.setncatts(atts)
                if value is not None:
                    a[cell] = value
            x[:] = a


def test_range():
    """A surface flux that heats the top cells past 110 degC stops the run
    with exit 1; an initial file with a wet value outside the range is
    refused with exit 2."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nname = hot\nsteps = 100\n[grid]\nnx = 4\nny = 3\nnz = 12\n"
                             f"depth = 1200\ndz_surface = 10\n[forcing]\nheat_flux = 1e5\n"
                             f"[output]\ndir = {tmp}/out\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet")
        assert rc == 1 and "outside the physically possible range" in err, f"exit {rc}, {err!r}"
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", "run.steps=15")
        assert rc == 0, f"15 steps: exit {rc}, {err!r}"
        for var, value in (("temp", 150.0), ("salt", -5.0)):
            path = os.path.join(tmp, f"{var}.nc")
            write_initial(path, (12, 3, 4), var, {}, value, (2, 1, 3))
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", f"initial.file={path}")
            assert rc == 2 and f"{var} has values outside the physically possible range" in err, \
                f"{var} = {value}: exit {rc}, {err!r}"


def test_dz_surface_one_level():
    """One level is the whole depth: another grid.dz_surface is refused, as
    the model does (cfg.dz_surface_one_level); dz_surface = depth is read."""
    try:
        config("grid.nz=1", "grid.depth=1200", "grid.dz_surface=1000")
    except ref.ConfigError as e:
        assert "with grid.nz = 1 the one level is grid.depth = 1200 m thick" in str(e), str(e)
    else:
        raise AssertionError("grid.nz = 1, dz_surface = 1000: accepted")
    assert config("grid.nz=1", "grid.depth=1200", "grid.dz_surface=1200")["grid.nz"] == 1


def test_initial_units_missing():
    """initial.file's fields in other units (temp in degF, salt in kg kg-1)
    are refused with exit 2, as the model does (io.initial); a wet value equal
    to the missing_value, or outside valid_min, valid_max or valid_range, is
    missing data, and a malformed valid range is refused; the model's units
    are read."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nname = u\nsteps = 2\n[grid]\nnx = 4\nny = 3\nnz = 6\n"
                             f"[output]\ndir = {tmp}/out\n")
        cases = (("temp", {"units": "degF"}, None, "temp has units = 'degF'"),
                 ("salt", {"units": "kg kg-1"}, None, "salt has units = 'kg kg-1'"),
                 ("temp", {"missing_value": -99.0}, -99.0, "temp has the missing_value"),
                 ("temp", {"units": "degree_Celsius"}, None, None),
                 ("salt", {"units": "PSU"}, None, None),
                 ("temp", {"units": "\u00b0C"}, None, None),  # an NC_STRING in the file
                 ("salt", {"units": "_"}, None, None),
                 ("temp", {"units": 1.0}, None, "temp: attribute units is not a text"),
                 ("temp", {"missing_value": np.array([-99.0, -98.0])}, -98.0,
                  "temp has the missing_value"),
                 ("temp", {"missing_value": "-99"}, None,
                  "temp: attribute missing_value is not 1 to 8 numbers"),
                 # CF: a value outside the valid range is missing data
                 ("temp", {"valid_max": 5.0}, None,
                  "temp has values outside its valid_max = 5 (missing data)"),
                 ("temp", {"valid_range": np.array([-2.0, 30.0])}, 31.0,
                  "temp has values outside its valid_range = [-2, 30] (missing data)"),
                 ("temp", {"valid_min": 0.0, "valid_max": 30.0}, -1.0,
                  "temp has values outside its valid_min = 0, valid_max = 30 (missing data)"),
                 ("temp", {"valid_range": np.array([-2.0, 30.0])}, 30.0, None),
                 ("salt", {"valid_min": 0.0}, None, None),
                 ("temp", {"valid_range": np.array([0.0, 30.0]), "valid_min": 0.0}, None,
                  "temp: attribute valid_range beside valid_min or valid_max"),
                 ("temp", {"valid_max": "5"}, None,
                  "temp: attribute valid_max is not one finite number"),
                 ("temp", {"valid_min": 20.0, "valid_max": 5.0}, None,
                  "temp: its valid range [20, 5] is empty"))
        # a float field against double marks (netCDF4-python writes a Python
        # float so): compared as floats, as io/initial.c does; the field's
        # value at its valid_max was refused, its missing_value missed
        cases += (("temp", {"valid_max": 30.1}, 30.1, None, "f4"),
                  ("temp", {"valid_max": 30.1}, 30.2, "temp has values outside its valid_max",
                   "f4"),
                  ("temp", {"missing_value": -9.9}, -9.9, "temp has the missing_value", "f4"))
        for n, (var, atts, value, want, *dtype) in enumerate(cases):
            path = os.path.join(tmp, f"in{n}.nc")
            write_initial(path, (6, 3, 4), var, atts, value, (1, 1, 1), *dtype)
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", f"initial.file={path}")
            if want:
                assert rc == 2 and want in err, f"{atts}: exit {rc}, {err!r}"
            else:
                assert rc == 0, f"{atts}: exit {rc}, {err!r}"


def test_initial_coords():
    """initial.file's coordinate variables must be the model's (io.initial,
    io/initial.c): z the level centres, positive down; y and x increasing.
    A salinity in units "1" named sea_water_salinity is a mass fraction."""
    nz, ny, nx = 6, 3, 4
    z = (np.arange(nz) + 0.5) * 4000.0 / nz  # grid.depth 4000, uniform levels
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nname = c\nsteps = 2\n[grid]\nnx = {nx}\nny = {ny}\n"
                             f"nz = {nz}\n[output]\ndir = {tmp}/out\n")
        cases = (({"z": z}, {}, None),
                 ({"z": z.astype(np.float32), "y": np.arange(ny), "x": np.arange(nx)}, {},
                  None),
                 ({"z": z[::-1]}, {}, "z[0] = "),
                 ({"z": -z}, {"positive": "up"}, "z has positive = 'up'"),
                 ({"z": 1.01 * z}, {}, "on other levels"),
                 ({"y": np.arange(ny)[::-1]}, {}, "y[1] = "),
                 ({"x": np.array([0.0, 1.0, 1.0, 2.0])}, {}, "x[2] = "),
                 ({"salt": ("1", "sea_water_salinity")}, {}, "salt has units = '1'"),
                 ({"salt": ("1", "sea_water_practical_salinity")}, {}, None))
        for n, (coords, zatts, want) in enumerate(cases):
            path = os.path.join(tmp, f"c{n}.nc")
            units = coords.pop("salt", None)
            write_initial(path, (nz, ny, nx), "salt",
                          {"units": units[0], "standard_name": units[1]} if units else {},
                          None, None)
            with netCDF4.Dataset(path, "a") as ds:
                for name, values in coords.items():
                    v = ds.createVariable(name, values.dtype, (name,))
                    if name == "z":
                        v.setncatts(zatts)
                    v[:] = values
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", f"initial.file={path}")
            if want:
                assert rc == 2 and want in err, f"{coords}: exit {rc}, {err!r}"
            else:
                assert rc == 0, f"{coords}: exit {rc}, {err!r}"


def test_set_value_blanks():
    """--set takes the value without the blanks around it, and refuses a ';'
    after a blank and control characters, as the model does
    (model/mm_config.c, override_value; the model: cli.set_value_blanks)."""
    cfg = ref.load_config(text="", overrides=["grid.periodic_x= yes ", "grid.nx=\t5 "])
    assert cfg["grid.periodic_x"] is True and cfg["grid.nx"] == 5, cfg
    for ov, want in (("run.name=a ;b", "';' would start a comment"),
                     ("run.name=a\x01b", "not valid UTF-8 text, or a control character")):
        try:
            ref.load_config(text="", overrides=[ov])
        except ref.ConfigError as e:
            assert want in str(e), f"{ov!r}: {e}"
        else:
            raise AssertionError(f"{ov!r}: accepted, want refused ({want})")


def test_all_land():
    """A grid with no wet cell is refused with exit 2, with the model's
    message (model/mm_model.c, check_wet)."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nsteps = 2\n[grid]\nnx = 1\nny = 1\nnz = 1\n"
                             f"depth = 1200\nbathymetry = seamount\n[output]\ndir = {tmp}/out\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet")
        want = ("grid.bathymetry = seamount on this grid (1 x 1 columns, 1 levels, "
                "grid.depth = 1200 m) has no wet cell")
        assert rc == 2 and want in err, f"exit {rc}, {err!r}"
        out_dir = os.path.join(tmp, "out")
        assert not os.path.isdir(out_dir) or not os.listdir(out_dir), \
            "files written before the refusal"


# ---------------------------------------------------------------------------
# The configuration file, read as the model reads it (docs/reliability.md,
# "Hostile input"; model/mm_config.c)
# ---------------------------------------------------------------------------
# (name, file bytes, the values the model resolves from it)
CONFIG_FILES = [
    # the calendars' other CF names; a '#' in a word; mode 0 of the mode
    # pattern (the uniform state), within initial.mode's range
    ("calendar_alias", b"[run]\ncalendar = 365_day\n", {"run.calendar": "noleap"}),
    ("hash_in_word", b"[output]\ndir = out#1\n", {"output.dir": "out#1"}),
    ("mode_zero", b"[initial]\npattern = mode\nmode = 0\n",
     {"initial.pattern": "mode", "initial.mode": 0}),
    ("utf8_bom", b"\xef\xbb\xbf[run]\nsteps = 2\n", {"run.steps": 2}),
    ("bom_crlf", b"\xef\xbb\xbf[run]\r\nsteps = 2\r\n", {"run.steps": 2}),
    ("cr_only", b"[run]\rsteps = 3\r[grid]\rnx = 5\r", {"run.steps": 3, "grid.nx": 5}),
    ("crlf", b"[run]\r\nsteps = 3\r\n[grid]\r\nnx = 5\r\n", {"run.steps": 3, "grid.nx": 5}),
    ("mixed_line_ends", b"[run]\r\nsteps = 3\r[grid]\nnx = 5", {"run.steps": 3, "grid.nx": 5}),
    ("indented_key", b"[run]\nsteps = 3\n  dt = 100\n", {"run.steps": 3, "run.dt": 100.0}),
    ("indented_key_tab", b"[run]\nsteps = 3\n\tdt = 100\n", {"run.steps": 3, "run.dt": 100.0}),
    ("indented_key_after_blank", b"[run]\nsteps = 3\n\n  dt = 100\n",
     {"run.steps": 3, "run.dt": 100.0}),
    ("indented_section", b"[run]\nsteps = 3\n  [grid]\n  nx = 6\n",
     {"run.steps": 3, "grid.nx": 6}),
    ("repeated_section", b"[grid]\nnx = 5\n[run]\nsteps = 2\n[grid]\nny = 6\n",
     {"grid.nx": 5, "grid.ny": 6, "run.steps": 2}),
    ("empty_unknown_section", b"[bogus]\n[grid]\nnx = 5\n", {"grid.nx": 5}),
    ("comments_and_colon", b"# a\n; b\n[grid] ; c\nnx : 5 ; five\n  ; d\n", {"grid.nx": 5}),
    ("comment_after_header", b"[run] ;c\nsteps = 2\n[grid];c\nnx = 5\n[output]\t \n",
     {"run.steps": 2, "grid.nx": 5}),
    ("bool_case", b"[grid]\nperiodic_x = TRUE\nperiodic_y = ON\n[output]\ninitial_record = No\n",
     {"grid.periodic_x": True, "grid.periodic_y": True, "output.initial_record": False}),
    ("output_dir_slashes", b"[output]\ndir = out//\n", {"output.dir": "out"}),
    ("output_dir_root", b"[output]\ndir = ///\n", {"output.dir": "/"}),
    ("output_dir_blank_slash", b"[output]\ndir = x //\n", {"output.dir": "x /"}),
]
# (name, file bytes, the model's message after "FILE")
# Files whose keys each read but do not make a configuration together (the
# checks across keys): refused by both with exit 2 and the same message, the
# file's name and line (the model's origin of the key) aside. They were
# read by reference.py, which ran them or blew up at step 1.
VALIDATED_FILES = [
    ("name_restart", b"[run]\nname = long.restart\n",
     "run.name = long.restart: must not end in .restart (its history, long.restart.nc, would be "
     "the restart file of run.name = long)"),
    ("periodic_one_column", b"[grid]\nnx = 1\nperiodic_x = true\n",
     "grid.nx = 1 with grid.periodic_x = true: the halo of 2 columns wraps around onto the "
     "block itself"),
    ("periodic_one_row", b"[grid]\nny = 1\nperiodic_y = true\n",
     "grid.ny = 1 with grid.periodic_y = true: the halo of 2 rows wraps around"),
    ("depth_too_thin", b"[grid]\nnx = 4\nny = 4\ndepth = 1e-300\n",
     "grid.depth = 1e-300: level 0 too thin for the vertical diffusion"),
    ("dz_surface_too_thin",
     b"[grid]\nnx = 4\nny = 4\nnz = 4\ndz_surface = 1e-300\ndepth = 1e-290\n",
     "grid.dz_surface = 1e-300: level 0 too thin for the vertical diffusion"),
]


def test_set_twice():
    """A key given twice with --set is refused, whatever the values, as the
    model does (cli.set_twice); the last one was taken."""
    try:
        config("grid.nx=1", "grid.nx=8")
    except ref.ConfigError as e:
        assert "--set grid.nx=1 and --set grid.nx=8: grid.nx given twice" in str(e), str(e)
    else:
        raise AssertionError("grid.nx given twice: accepted")


REFUSED_FILES = [
    # a '#' after a blank, meant as a comment; strtod's hexadecimal
    ("hash_comment", b"[output]\ndir = out # here\n",
     ":2: output.dir = out # here: a '#' after a blank: a comment after a value starts with "
     "';' ('#' starts a comment only at the start of a line)"),
    ("hex_number", b"[run]\ndt = 0x10\n",
     ":2: run.dt = 0x10: a decimal number expected, not hexadecimal; must be a number in "
     "(0, 100000000]"),
    ("repeated_section_same_key", b"[grid]\nnx = 5\n[grid]\nnx = 6\n",
     ":4: grid.nx: duplicate key (first set on line 2)"),
    ("duplicate_key", b"[grid]\nnx = 5\nnx = 6\n",
     ":3: grid.nx: duplicate key (first set on line 2)"),
    ("unclosed_section", b"[run\nsteps = 1\n", ":1: [run: section header without its closing ']'"),
    ("key_before_section", b"nx = 5\n", ":1: nx: key before any [section]"),
    ("empty_section", b"[run]\nsteps = 2\n[]\nnx = 5\n", ":3: []: a section header without a name"),
    ("blank_section", b"[ \t]\n", ":1: []: a section header without a name"),
    ("bom_key_before_section", b"\xef\xbb\xbfsteps = 2\n", ":1: steps: key before any [section]"),
    ("no_equals", b"[grid]\nnx\n", ":2: syntax error (expected [section] or key = value)"),
    # the first bad line is the error (inih reported a syntax error after
    # the errors of the lines that follow it)
    ("unknown_key_after_syntax_error", b"[grid]\nnx\nbogus = 1\n",
     ":2: syntax error (expected [section] or key = value)"),
    ("bad_value_after_syntax_error", b"[grid]\nnx\nny = abc\n",
     ":2: syntax error (expected [section] or key = value)"),
    ("second_bom", b"\xef\xbb\xbf\xef\xbb\xbf[grid]\nnx = 5\n",
     ":1: syntax error (expected [section] or key = value)"),
    ("comment_before_equals", b"[grid]\nnx ;= 3\n",
     ":2: syntax error (expected [section] or key = value)"),
    ("bom_unclosed_section", b"\xef\xbb\xbf [grid\nnx = 5\n",
     ":1: [grid: section header without its closing ']'"),
    # after a header's ']' only blanks and a comment (inih dropped the rest
    # of the line: ny = 7 was lost, 32 used)
    ("key_after_header", b"[run]\nsteps = 1\n[grid] ny = 7\nnx = 4\n",
     ":3: [grid] ny = 7: text after the section header's ']' (a key goes on a line of its own; "
     "a comment starts with ';')"),
    ("text_after_header", b"[grid]x\nnx = 7\n",
     ":1: [grid]x: text after the section header's ']' (a key goes on a line of its own; "
     "a comment starts with ';')"),
    ("two_brackets", b"[grid]]\nnx = 7\n",
     ":1: [grid]]: text after the section header's ']' (a key goes on a line of its own; "
     "a comment starts with ';')"),
    ("hash_after_header", b"  [grid] # the grid  \nnx = 7\n",
     ":1: [grid] # the grid: text after the section header's ']' (a key goes on a line of its "
     "own; a comment starts with ';')"),
    ("long_line", b"[run]\nname = " + b"a" * 200 + b"\n",
     ":2: line too long (207 characters, at most 198)"),
    ("control_character", b"[run]\nname = a\x01b\n", ":2: not valid UTF-8 text"),
    ("not_utf8", b"[run]\nsteps = 2\nname = \xff\n", ":3: not valid UTF-8 text"),
    ("nul_byte", b"[run]\nname = a\x00b\n", ": contains NUL bytes: not a configuration file"),
    ("bool_not_ascii", "[grid]\nperiodic_x = TRU\u00c9\n".encode(),
     ":2: grid.periodic_x = TRU\u00c9: must be true or false (or yes/no, on/off, 1/0, in any case)"),
    # blanks that are not C's isspace before a number (strtol and strtod
    # skip ASCII ones only; Python's int() and float() take these)
    ("nbsp_before_int", "[run]\nsteps = \u00a04\n".encode(),
     ":2: run.steps = \u00a04: must be an integer in [0, 1000000000]"),
    ("ideographic_space_before_real", "[run]\ndt = \u3000600\n".encode(),
     ":2: run.dt = \u3000600: must be a number in (0, 100000000]"),
]


def test_config_file_syntax():
    """Byte-order mark, CR, CR LF and mixed line ends, indented keys and
    headers, a section given twice: read to the values the model resolves
    (minimodel --dry-run); what the model refuses, refused with its
    message."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, want in CONFIG_FILES:
            path = os.path.join(tmp, name + ".ini")
            with open(path, "wb") as f:
                f.write(data)
            try:
                cfg = ref.load_config(path)
            except ref.ConfigError as e:
                raise AssertionError(f"{name}: refused: {e}") from None
            got = {key: cfg[key] for key in want}
            assert got == want, f"{name}: read {got}, want {want}"
            rest = {k: v for k, v in cfg.items() if k not in want}
            defaults = {k: v for k, v in config().items() if k not in want}
            assert rest == defaults, f"{name}: other keys changed"
        for name, data, message in REFUSED_FILES + VALIDATED_FILES:
            path = os.path.join(tmp, name + ".ini")
            with open(path, "wb") as f:
                f.write(data)
            try:
                ref.load_config(path)
            except ref.ConfigError as e:
                # VALIDATED_FILES: the message after the file's name
                assert str(e) == path + message or (name, data, message) in VALIDATED_FILES \
                    and message in str(e), f"{name}: {e}, want {path}{message}"
            else:
                raise AssertionError(f"{name}: read, want refused with {message}")
        # the command line: read as usual, exit 0; refused with exit 2
        path = os.path.join(tmp, "utf8_bom.ini")
        rc, out, err = run_script(REFERENCE, path, "--quiet", "--set", "grid.nx=3",
                                  "--set", "grid.ny=2", "--set", "grid.nz=2",
                                  "--output", os.path.join(tmp, "bom.nc"))
        assert rc == 0 and err == "", f"byte-order mark: exit {rc}, {err!r}"
        rc, out, err = run_script(REFERENCE, os.path.join(tmp, "unclosed_section.ini"), "--quiet")
        assert rc == 2 and "section header without its closing ']'" in err, \
            f"unclosed section: exit {rc}, {err!r}"


def test_output_is_directory():
    """--output naming a directory, output.dir naming a file: exit 2, a
    usage error, with the reason in one line, as the model (exit 1, which
    says the run failed, while --output /dev/full was 2), not "Permission
    denied" or "File exists"."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, "[run]\nsteps = 1\n[grid]\nnx = 3\nny = 2\nnz = 2\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--output", tmp)
        assert rc == 2 and err == f"reference.py: {tmp}: cannot create: is a directory (the " \
            "history is a file: name the file, not its folder)\n", f"exit {rc}, {err!r}"
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", f"output.dir={ini}")
        assert rc == 2 and err.count("\n") == 1 and "exists and is not a directory" in err, \
            f"exit {rc}, {err!r}"


def test_config_text():
    """The resolved configuration is written as the model writes it: reals
    as the shortest %g text that reads back (1e-05, 0.1, 1025)."""
    text = ref.config_text(config())
    for line in ("kappa_v = 1e-05", "flow_speed = 0.1", "rho0 = 1025", "alpha = 0.0002",
                 "beta = 0.00076", "dt = 600"):
        assert f"\n{line}\n" in text, f"{line!r} not in the resolved configuration"
    cfg = config("physics.kappa_v=0.1234567890123")
    assert "kappa_v = 0.1234567890123\n" in ref.config_text(cfg)


def test_start_date():
    """run.start_date is refused where it is not a date of run.calendar, as
    the model refuses it (cfg.start_date_calendars checks the model's
    verdicts against cftime's)."""
    good = [("standard", "2000-02-29"), ("noleap", "2001-02-28 23:59:59"),
            ("360_day", "2000-02-30"), ("julian", "1900-02-29"), ("all_leap", "2001-02-29"),
            ("standard", "1582-10-04"), ("standard", "1582-10-15")]
    bad = [("standard", "2001-02-29"), ("noleap", "2000-02-29"), ("standard", "1582-10-10"),
           ("proleptic_gregorian", "1900-02-29"), ("360_day", "2000-02-31"),
           ("standard", "2000-+1-+1"), ("standard", "2000-01-01 24:00:00"),
           ("standard", "0000-01-01"), ("standard", "2000-01-01T00:00:00")]
    for calendar, date in good:
        ref.load_config(text="", overrides=[f"run.calendar={calendar}", f"run.start_date={date}"])
    for calendar, date in bad:
        try:
            ref.load_config(text="", overrides=[f"run.calendar={calendar}",
                                                f"run.start_date={date}"])
        except ref.ConfigError as e:
            assert f"run.start_date = {date}: not a date of the {calendar} calendar" in str(e), e
        else:
            raise AssertionError(f"{calendar} {date}: accepted")


def test_superbee_limiter_signs():
    """The limiter B(a, b) by the signs of a and b, as docs/physics.md and
    the model (model.cell_fluxes) have it: 0 where they differ or one is
    zero, the limiter where both are tiny and of one sign (their product
    underflows to 0), sign(b) max(min(2|a|, |b|), min(|a|, 2|b|)) else."""
    a = np.array([1.0, -1.0, 1.0, 0.0, -0.0, 2.0, -3.0, 1e-200, -1e-200, 0.5])
    b = np.array([-2.0, 3.0, 0.0, 1.0, -1.0, 1.0, -2.0, 1e-200, -3e-200, 4.0])
    want = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0, -3.0, 1e-200, -2e-200, 1.0])
    got = ref.superbee_limiter(a, b)
    assert np.array_equal(got, want), f"{got} != {want}"
    assert not np.signbit(got[:5]).any(), f"a zero limiter is +0: {got[:5]}"
    assert (a[7:9] * b[7:9] == 0).all(), "the tiny products underflow"


def test_set_origin():
    """A refused value given with --set is named as the model names it,
    "--set: KEY = VALUE: ..." (it was the configuration file's name, where
    the value is not); a file's value names the file."""
    for ov, message in (("run.name=é", "run.name = é: must hold only letters"),
                        ("run.name=a.restart", "run.name = a.restart: must not end in .restart"),
                        ("initial.restart=x.nc", "initial.restart = x.nc: not supported"),
                        ("output.dir=", "output.dir: must not be empty"),
                        ("run.start_date=x", "run.start_date = x: not a date"),
                        ("grid.dz_surface=500", "grid.dz_surface = 500: must be <=")):
        try:
            ref.load_config(text="", overrides=[ov])
        except ref.ConfigError as e:
            assert str(e).startswith("--set: " + message), f"--set {ov}: {e}"
        else:
            raise AssertionError(f"--set {ov}: accepted")
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, "[run]\nname = é\n")
        rc, out, err = run_script(REFERENCE, ini, "--quiet")
        assert rc == 2 and err.startswith(f"reference.py: {ini}: run.name = é: "), \
            f"exit {rc}, {err!r}"
        ini = write_ini(tmp, "[run]\nsteps = 1\n")
        for ov in ("run.name=é", "initial.restart=x.nc"):
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--set", ov)
            assert rc == 2 and err.startswith("reference.py: --set: ") and ini not in err, \
                f"--set {ov}: exit {rc}, {err!r}"


def test_output_name_unusable():
    """An --output that names no file, empty or ending in '/': exit 2 with
    the reason (netCDF's "Malformed URL" and "Permission denied", exit 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, "[run]\nsteps = 1\n[grid]\nnx = 3\nny = 2\nnz = 2\n")
        for output, message in (("", "--output: an empty name"),
                                (os.path.join(tmp, "x.nc/"), "ends in '/', a folder's name")):
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--output", output)
            assert rc == 2 and err.count("\n") == 1 and message in err, \
                f"--output {output!r}: exit {rc}, {err!r}"
        assert os.listdir(tmp) == ["case.ini"], os.listdir(tmp)


def hold_lock(path, text):
    """A lock at path as a running model holds it: its descriptor."""
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, text.encode())
    return fd


def start_long_run(tmp, output, steps=1000000):
    """reference.py running a long case into output, a record a step; the
    process, once the history is made and has records."""
    ini = write_ini(tmp, f"[run]\nsteps = {steps}\n[grid]\nnx = 6\nny = 5\nnz = 3\n"
                         "[physics]\nflow = gyre\n[output]\ninterval = 1\n")
    p = subprocess.Popen([sys.executable, REFERENCE, ini, "--quiet", "--output", output],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time
    for _ in range(600):
        if os.path.exists(output):
            time.sleep(1)
            break
        assert p.poll() is None, f"ended, exit {p.returncode}: {p.communicate()}"
        time.sleep(0.05)
    else:
        p.kill()
        raise AssertionError("no history after 30 s")
    return p


def test_output_lock():
    """A history whose lock (the model's: D/N.lock for D/N.nc, flock) another
    run holds is refused with exit 2 and that run named, before the file is
    touched (the second run's create truncated the first's history, both
    went on: the history unreadable); reference.py holds the lock itself
    while it writes, with its own name and pid, and removes it at the end."""
    import fcntl
    with tempfile.TemporaryDirectory() as tmp:
        ini = write_ini(tmp, f"[run]\nname = lk\nsteps = 1\n[grid]\nnx = 3\nny = 2\nnz = 2\n"
                             f"[output]\ndir = {tmp}\n")
        output = os.path.join(tmp, "lk.nc")
        with open(output, "wb") as f:
            f.write(b"a history being written")
        fd = hold_lock(os.path.join(tmp, "lk.lock"), "pid 4242 on host elsewhere\n")
        try:
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--output", output)
            assert rc == 2 and err == f"reference.py: {tmp}/lk.lock: the outputs of this case " \
                "are in use by another run (pid 4242 on host elsewhere): wait for it to end, " \
                "or give --output another file\n", f"exit {rc}, {err!r}"
            with open(output, "rb") as f:
                assert f.read() == b"a history being written", "the history was touched"
            # the default output, <run.name>.reference.nc: its own lock
            fd2 = hold_lock(os.path.join(tmp, "lk.reference.lock"), "pid 7 on host h\n")
            rc, out, err = run_script(REFERENCE, ini, "--quiet")
            os.close(fd2)
            assert rc == 2 and "in use by another run (pid 7 on host h)" in err \
                and "another run.name or output.dir" in err, f"exit {rc}, {err!r}"
            assert not os.path.exists(os.path.join(tmp, "lk.reference.nc"))
        finally:
            os.close(fd)
        # the lock let go (its file left by the holder): the run goes, and
        # removes the lock file
        rc, out, err = run_script(REFERENCE, ini, "--quiet", "--output", output)
        assert rc == 0, f"exit {rc}, {err!r}"
        assert not os.path.exists(os.path.join(tmp, "lk.lock"))
        with netCDF4.Dataset(output) as ds:
            assert list(ds["step"][:]) == [0, 1]
        # a running reference.py holds the lock (the model's refusal
        # names it), and a second run is refused
        output = os.path.join(tmp, "long.nc")
        p = start_long_run(tmp, output)
        try:
            lock = os.path.join(tmp, "long.lock")
            with open(lock) as f:
                text = f.read()
            assert text.startswith(f"reference.py, pid {p.pid} on host "), text
            with open(lock) as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pass
                else:
                    raise AssertionError("the lock is not held while reference.py runs")
            rc, out, err = run_script(REFERENCE, ini, "--quiet", "--output", output)
            assert rc == 2 and f"(reference.py, pid {p.pid} on host " in err, \
                f"exit {rc}, {err!r}"
        finally:
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=60)
        assert p.returncode == 130, f"exit {p.returncode}, {err!r}"
        assert not os.path.exists(lock), "the lock file is left"
        with netCDF4.Dataset(output) as ds:
            assert len(ds["step"]) > 0


def test_stop_signals():
    """SIGTERM and SIGHUP stop a run as Ctrl-C does: the history closed
    with the records written (they ended the process at once, and the
    history kept none), exit 128 + the signal (143, 129), the lock file
    removed."""
    with tempfile.TemporaryDirectory() as tmp:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            output = os.path.join(tmp, f"{sig.name}.nc")
            p = start_long_run(tmp, output)
            p.send_signal(sig)
            _, err = p.communicate(timeout=60)
            want = 130 if sig == signal.SIGINT else 128 + sig
            assert p.returncode == want, f"{sig.name}: exit {p.returncode}, {err!r}"
            if sig != signal.SIGINT:
                assert err == f"reference.py: stopped by {sig.name}\n", f"{sig.name}: {err!r}"
            with netCDF4.Dataset(output) as ds:
                steps = list(ds["step"][:])
            assert steps and steps == list(range(len(steps))), f"{sig.name}: steps {steps}"
            assert not os.path.exists(output[:-3] + ".lock"), f"{sig.name}: lock file left"


if __name__ == "__main__":
    sys.exit(script_tests.run(globals(), sys.argv[1:]))
