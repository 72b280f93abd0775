"""Helpers of the Python package's tests: random diagonally dominant
systems with random depths, and the dense solve they are checked against."""
import numpy as np
import pytest

DTYPES = (np.float64, np.float32)
# Relative to the largest |x| of a solve: rounding of the Thomas algorithm on
# diagonally dominant systems against LAPACK's pivoted LU.
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5}


def system(lead, nz, dtype, seed=0, depths=True, nan_unused=True):
    """lower, diag, upper, rhs of shape lead + (nz,) and depths of shape
    lead: diagonally dominant (|diag| >= |lower| + |upper| + 0.5), depths
    0, 1, 2 and nz among them where there are enough columns, the rest
    random. Levels at and below a column's depth hold NaN in the
    coefficients (never read), as do lower[..., 0] and upper[..., -1].
    depths=False: every column full; nan_unused=False: no NaN anywhere."""
    rng = np.random.default_rng(seed)
    shape = tuple(lead) + (nz,)
    lower = rng.uniform(-1, 1, shape)
    upper = rng.uniform(-1, 1, shape)
    diag = (np.abs(lower) + np.abs(upper) + rng.uniform(0.5, 2, shape)) * rng.choice([-1, 1], shape)
    rhs = rng.uniform(-1, 1, shape)
    ncol = int(np.prod(lead, dtype=np.int64))
    if depths:
        d = rng.integers(0, nz + 1, ncol)
        special = [0, 1, 2, nz]
        d[: min(ncol, 4)] = [min(s, nz) for s in special][: min(ncol, 4)]
        if ncol == 1:
            d[0] = nz
        d = d.reshape(lead)
    else:
        d = np.full(lead, nz)
    flat = d.reshape(-1)
    lo, di, up = (a.reshape(ncol, nz) for a in (lower, diag, upper))
    for c in range(ncol if nan_unused else 0):
        lo[c, flat[c]:] = up[c, flat[c]:] = di[c, flat[c]:] = np.nan
    if nan_unused:
        lower[..., 0] = np.nan
        upper[..., -1] = np.nan
    return tuple(a.astype(dtype) for a in (lower, diag, upper, rhs)) + (d,)


def dense_solve(lower, diag, upper, rhs, depth):
    """The solution by numpy.linalg.solve on each column's dense matrix (top
    depth levels, in float64); rhs below the depth."""
    nz = rhs.shape[-1]
    ncol = rhs.size // nz
    out = rhs.astype(np.float64).reshape(ncol, nz).copy()
    lo, di, up = (a.astype(np.float64).reshape(ncol, nz) for a in (lower, diag, upper))
    dep = np.broadcast_to(depth, rhs.shape[:-1]).reshape(-1)
    for c in range(ncol):
        n = int(dep[c])
        if n == 0:
            continue
        a = np.diag(di[c, :n])
        if n > 1:
            a += np.diag(lo[c, 1:n], -1) + np.diag(up[c, : n - 1], 1)
        out[c, :n] = np.linalg.solve(a, out[c, :n])
    return out.reshape(rhs.shape)


def assert_close(x, ref, dtype):
    x = np.asarray(x, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
    err = float(np.max(np.abs(x - ref))) if ref.size else 0.0
    assert np.all(np.isfinite(x)), "non-finite values in the solution"
    assert err <= TOL[np.dtype(dtype)] * scale, f"max error {err:.3g} (scale {scale:.3g})"


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    return request.param


def run_script(code, timeout=120, env=None):
    """Runs Python code in a new process (its own process group, so that a
    hang ends the test, children and all, instead of pytest); returns the
    CompletedProcess-like (returncode, stdout, stderr). A run past timeout
    seconds fails the test."""
    import os
    import signal
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=dict(os.environ, **(env or {})))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"the script did not end within {timeout} s (hung):\n{out}\n{err}")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
