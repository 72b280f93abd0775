#!/usr/bin/env python3
"""NumPy baseline for tdma-bench: the Thomas algorithm vectorised over columns.

    bench_numpy_tdma.py --systems M --levels N [--precision double|single]
                        [--fused] [--repeats R] [--json]

Arrays are (M, N), C order: columns along the leading axis, a column's levels
contiguous, the layout of the C solvers. The recurrence loops over levels in
Python, each step one NumPy operation over all M columns (the way
scripts/reference.py and most NumPy ocean codes write it). Same problems as
tdma-bench: random diagonally dominant systems with one right-hand side, or
with --fused the coefficients of docs/physics.md from random diffusivities on a
stretched grid with two right-hand sides (T, S). Every column is full depth.

Timing: one warm-up, then --repeats runs from the same right-hand sides; best
and median. With --json one line with the keys of tdma-bench --json
(backend "numpy"): backend, mode, systems, levels, precision, threads, ms,
gbps, max_residual (+ median_ms, nrhs, bytes). gbps uses tdma-bench's byte
model (8 (3 + 2 nrhs) bytes per level for a plain solve in double, 8 (1 + 2
nrhs) fused; half in single). max_residual: max over systems of
max_k |(A x - d)_k| / max_k |d_k| in long double.
"""
import argparse
import json
import sys
import time

import numpy as np


def thomas(a, b, c, rhs):
    """Solves the (M, N) systems in place on every array of rhs."""
    n = b.shape[1]
    cp = np.empty_like(b)
    m = 1 / b[:, 0]
    cp[:, 0] = c[:, 0] * m
    for d in rhs:
        d[:, 0] = d[:, 0] * m
    for k in range(1, n):
        m = 1 / (b[:, k] - a[:, k] * cp[:, k - 1])
        cp[:, k] = c[:, k] * m
        for d in rhs:
            d[:, k] = (d[:, k] - a[:, k] * d[:, k - 1]) * m
    for k in range(n - 2, -1, -1):
        for d in rhs:
            d[:, k] = d[:, k] - cp[:, k] * d[:, k + 1]


def coefficients(kappa, g, inv_h):
    """a, b, c of docs/physics.md (vertical step) for full-depth columns."""
    alpha = kappa * g  # interface below each level; the bottom one is not used
    a = np.zeros_like(kappa)
    c = np.zeros_like(kappa)
    a[:, 1:] = -alpha[:, :-1] * inv_h[1:]
    c[:, :-1] = -alpha[:, :-1] * inv_h[:-1]
    b = (1 - a) - c
    return a, b, c


def fused(kappa, g, inv_h, rhs):
    """Builds the coefficients level by level while solving (T and S share them)."""
    n = kappa.shape[1]
    one = kappa.dtype.type(1)
    cp = np.empty_like(kappa)
    prev = None
    for k in range(n):
        up = prev if k > 0 else np.zeros_like(kappa[:, 0])
        dn = kappa[:, k] * g[k] if k < n - 1 else np.zeros_like(kappa[:, 0])
        a = -up * inv_h[k]
        c = -dn * inv_h[k]
        b = (one - a) - c
        if k == 0:
            m = one / b
            for d in rhs:
                d[:, 0] = d[:, 0] * m
        else:
            m = one / (b - a * cp[:, k - 1])
            for d in rhs:
                d[:, k] = (d[:, k] - a * d[:, k - 1]) * m
        cp[:, k] = c * m
        prev = dn
    for k in range(n - 2, -1, -1):
        for d in rhs:
            d[:, k] = d[:, k] - cp[:, k] * d[:, k + 1]


def residual(a, b, c, x, d, chunk=1 << 16):
    """max over systems of max_k |(A x - d)_k| / max_k |d_k|, in long double
    (in chunks of systems, to bound the memory of the long double copies)."""
    worst = 0.0
    for i in range(0, b.shape[0], chunk):
        sl = slice(i, i + chunk)
        ac, bc, cc, xc, dc = (np.asarray(v[sl], dtype=np.longdouble) for v in (a, b, c, x, d))
        r = bc * xc
        r[:, 1:] += ac[:, 1:] * xc[:, :-1]
        r[:, :-1] += cc[:, :-1] * xc[:, 1:]
        r -= dc
        num = np.abs(r).max(axis=1)
        den = np.abs(dc).max(axis=1)
        worst = max(worst, float(np.max(np.where(den > 0, num / np.where(den > 0, den, 1), num))))
    return worst


def problem(m, n, dtype, is_fused, rng):
    if is_fused:
        h = 5.0 + 195.0 * (np.arange(n) / (n - 1) if n > 1 else np.zeros(1))
        zc = np.cumsum(h) - 0.5 * h
        g = np.zeros(n)
        g[:-1] = 3600.0 / np.diff(zc)
        kappa = np.exp(rng.uniform(np.log(1e-5), np.log(1e-1), (m, n)))
        rhs = [rng.uniform(-2, 28, (m, n)), rng.uniform(34, 36, (m, n))]
        return dict(kappa=kappa.astype(dtype), g=g.astype(dtype), inv_h=(1 / h).astype(dtype),
                    rhs=[r.astype(dtype) for r in rhs])
    a = rng.uniform(-1, 1, (m, n))
    c = rng.uniform(-1, 1, (m, n))
    b = (np.abs(a) + np.abs(c) + 1 + rng.uniform(0, 1, (m, n))) * np.where(
        rng.uniform(0, 1, (m, n)) < 0.5, -1, 1)
    return dict(a=a.astype(dtype), b=b.astype(dtype), c=c.astype(dtype),
                rhs=[rng.uniform(-2, 28, (m, n)).astype(dtype)])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", type=int, required=True)
    p.add_argument("--levels", type=int, required=True)
    p.add_argument("--precision", choices=["double", "single"], default="double")
    p.add_argument("--fused", action="store_true")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)  # bad arguments: argparse prints a message, exits 2
    if args.systems < 1 or args.levels < 1 or args.repeats < 1:
        p.error("--systems, --levels and --repeats must be >= 1")

    dtype = np.float32 if args.precision == "single" else np.float64
    prob = problem(args.systems, args.levels, dtype, args.fused, np.random.default_rng(args.seed))
    rhs0 = prob["rhs"]
    nrhs = len(rhs0)

    def run():
        x = [r.copy() for r in rhs0]
        t0 = time.perf_counter()
        if args.fused:
            fused(prob["kappa"], prob["g"], prob["inv_h"], x)
        else:
            thomas(prob["a"], prob["b"], prob["c"], x)
        return time.perf_counter() - t0, x

    run()  # warm-up
    times = []
    for _ in range(args.repeats):
        t, x = run()
        times.append(t)
    times.sort()
    best = times[0]
    median = float(np.median(times))

    if args.fused:
        a, b, c = coefficients(prob["kappa"], prob["g"], prob["inv_h"])
    else:
        a, b, c = prob["a"], prob["b"], prob["c"]
    res = max(residual(a, b, c, xi, di) for xi, di in zip(x, rhs0))

    es = np.dtype(dtype).itemsize
    per_level = (1 + 2 * nrhs) if args.fused else (3 + 2 * nrhs)
    nbytes = per_level * es * args.systems * args.levels
    out = dict(backend="numpy", mode="fused" if args.fused else "solve", systems=args.systems,
               levels=args.levels, precision=args.precision, threads=1, ms=best * 1e3,
               gbps=nbytes / best / 1e9, max_residual=res, median_ms=median * 1e3, nrhs=nrhs,
               bytes=nbytes, repeats=args.repeats, numpy=np.__version__)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"numpy {out['mode']} {args.systems} x {args.levels} {args.precision}: "
              f"best {out['ms']:.1f} ms, median {out['median_ms']:.1f} ms, "
              f"{out['gbps']:.2f} GB/s, max residual {res:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
