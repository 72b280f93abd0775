#!/usr/bin/env python3
"""The column solver's Python and JAX entry points against their peers, in
one run.

    .venv/bin/python scripts/bench_peers.py [--systems 100000] [--levels 100]
        [--repeats 7] [--threads 1,2] [--precision double,single]
        [--tdma-bench build/tdma-bench] [--jsonl FILE] [--docs docs/performance.md]

For each precision (double, single) and thread count (1, 2), on arrays of
shape (systems, levels), levels last, every column full depth:

  tdma-bench-simd   the project's benchmark binary, `tdma-bench --backend simd`
                    (its own problem, caches flushed between repeats)
  numpy-solve       minimodel.tdma.solve(lower, diag, upper, b, out=b): in place
  jax-donated       jax.jit(minimodel.jax.tdma, donate_argnums=3): solved in
                    the right-hand side's buffer
  jax               jax.jit(minimodel.jax.tdma): XLA copies rhs first
  scan-transposes   the seed's two lax.scan sweeps with its transposes (arrays
                    (systems, levels) in, .T inside the jitted function)
  scan-levels-first the same scans on arrays already (levels, systems): no
                    transposes
  numba             a Numba Thomas, prange over blocks of columns
  veros             Veros's solve_implicit (VEROS_BACKEND=jax), when veros
                    imports; on arrays (systems / 100, 100, levels)

Each case (precision, thread count) runs in its own worker process
(OMP_NUM_THREADS, NUMBA_NUM_THREADS, and for one thread XLA's intra-op pool
set to one thread). Timing: one warm-up call of each peer (compilation), then
--repeats rounds; a round runs tdma-bench once (`--repeats 1`: its warm-up,
cache flush and one timed call) and every other peer once, in an order that
rotates from round to round, so that the load of a shared machine falls on
all alike. Each call starts from a fresh copy of the right-hand side made
outside the timed region and waits for its result (block_until_ready).
Median and best over the rounds; paired_ratio is the median over rounds of
the peer's time over tdma-bench's in the same round. Every peer's solution
is compared with minimodel.tdma.solve's (max_rel_diff: max |x - x_solve| /
max |x_solve|).

Output: one JSON line per peer and case (stdout, and appended to --jsonl
FILE with the key run, the start of the run in UTC), then a
table of medians and ratios (peer median / tdma-bench simd median of the same
case; the scans over jax-donated). With --docs FILE the table, the machine,
the date and the command replace what stands between the markers
<!-- bench_peers:begin --> and <!-- bench_peers:end --> in FILE.

Both files are checked before the runs (exit 2): --jsonl a regular file
(or none yet) in a folder that exists, --docs a regular file of UTF-8 text
up to 16 MiB with both markers, each writable (not a folder, FIFO or
device such as /dev/full). Each is written whole or not at all, through a
temporary file beside it renamed onto it (scripts/mm_figure.py): one that
cannot be written after the runs (a full disk) is left as it was.

Exit status: 0 done, 1 a run failed (tdma-bench, a worker), 2 usage (also
a --jsonl or --docs refused before the runs) or a --jsonl or --docs that
could not be written after them, 130 interrupted (Ctrl-C).
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_figure  # noqa: E402
PEERS = ["tdma-bench-simd", "numpy-solve", "jax-donated", "jax", "scan-transposes",
         "scan-levels-first", "numba", "veros"]
BEGIN, END = "<!-- bench_peers:begin -->", "<!-- bench_peers:end -->"


# ---- worker: one precision, one thread count ---------------------------------

def problem(ncol, nz, dtype, seed=1):
    """Random diagonally dominant systems (systems, levels)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lower = rng.uniform(-1, 1, (ncol, nz))
    upper = rng.uniform(-1, 1, (ncol, nz))
    diag = np.abs(lower) + np.abs(upper) + rng.uniform(1, 2, (ncol, nz))
    rhs = rng.uniform(-1, 1, (ncol, nz))
    return [a.astype(dtype) for a in (lower, diag, upper, rhs)]


class Peer:
    """One contender: call(arg) is timed, prepare() makes its argument
    outside the timing (a fresh right-hand side); result(out) gives the
    solution as (systems, levels)."""

    def __init__(self, name, call, prepare, result=lambda x: x, **extra):
        self.name, self.call, self.prepare, self.result, self.extra = (
            name, call, prepare, result, extra)
        self.times, self.out = [], None

    def warm_up(self):
        self.out = self.call(self.prepare())

    def once(self):
        # the previous result is freed first, outside the timing (a JAX
        # array's buffer is unmapped when the last reference goes)
        self.out = None
        arg = self.prepare()
        t0 = time.perf_counter()
        self.out = self.call(arg)
        self.times.append(time.perf_counter() - t0)


def tdma_bench_once(path, ncol, nz, precision, threads, stream_mb=None):
    """One timed call of `tdma-bench --backend simd` (after its warm-up call
    and cache flush): its median_ms with --repeats 1, in seconds. A failure
    ends the worker with tdma-bench's own message."""
    cmd = [path, "--systems", str(ncol), "--levels", str(nz), "--backend", "simd",
           "--precision", precision, "--threads", str(threads), "--repeats", "1", "--json"]
    if stream_mb:
        cmd += ["--stream-mb", str(stream_mb)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"bench_peers: cannot run {path}: {e.strerror}")
    if res.returncode != 0 or not res.stdout.strip():
        # its message, not the usage after it nor a note before it
        said = [x for x in res.stderr.splitlines()
                if x.strip() and not x.startswith(("tdma-bench: note:", "usage:", " "))]
        said = said[0] if said else "(nothing on stderr)"
        sys.exit(f"bench_peers: tdma-bench failed (exit {res.returncode}): {said}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def seed_scans(jax, jnp):
    """The seed's TDMA as two lax.scan sweeps (written anew here): the forward
    sweep carries (c', d'), the backward sweep x, over levels."""

    def sweeps(a, b, c, d):  # (levels, systems)
        def compute_primes(last_primes, x):
            last_cp, last_dp = last_primes
            a, b, c, d = x
            denom = 1.0 / (b - a * last_cp)
            cp = c * denom
            dp = (d - a * last_dp) * denom
            return (cp, dp), (cp, dp)

        init = jnp.zeros(a.shape[1:], a.dtype)
        _, (cp, dp) = jax.lax.scan(compute_primes, (init, init), (a, b, c, d))

        def backsubstitution(last_x, x):
            cp, dp = x
            new_x = dp - cp * last_x
            return new_x, new_x

        _, sol = jax.lax.scan(backsubstitution, init, (cp[::-1], dp[::-1]))
        return sol[::-1]

    def with_transposes(a, b, c, d):  # (systems, levels), as the seed
        return sweeps(a.T, b.T, c.T, d.T).T

    return jax.jit(with_transposes), jax.jit(sweeps)


def numba_solver(numba, np):
    block = 256

    @numba.njit(parallel=True, cache=False)
    def thomas(a, b, c, d, out):
        ncol, nz = d.shape
        nblk = (ncol + block - 1) // block
        for blk in numba.prange(nblk):
            cp = np.empty(nz, d.dtype)
            for i in range(blk * block, min(ncol, (blk + 1) * block)):
                m = 1 / b[i, 0]
                cp[0] = c[i, 0] * m
                out[i, 0] = d[i, 0] * m
                for k in range(1, nz):
                    m = 1 / (b[i, k] - a[i, k] * cp[k - 1])
                    cp[k] = c[i, k] * m
                    out[i, k] = (d[i, k] - a[i, k] * out[i, k - 1]) * m
                for k in range(nz - 2, -1, -1):
                    out[i, k] = out[i, k] - cp[k] * out[i, k + 1]

    return thomas


def worker(args):
    import numpy as np

    os.environ.setdefault("VEROS_BACKEND", "jax")
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    import minimodel.jax as mjax
    import minimodel.tdma as tdma

    dtype = np.float64 if args.precision == "double" else np.float32
    ncol, nz, threads = args.systems, args.levels, args.threads
    lower, diag, upper, rhs = problem(ncol, nz, dtype)
    ref = tdma.solve(lower, diag, upper, rhs, threads=threads)
    scale = float(np.max(np.abs(ref)))
    common = dict(precision=args.precision, threads=threads, systems=ncol, levels=nz,
                  repeats=args.repeats)
    peers, skipped = [], {}

    def restorer():
        """A work array of its own, restored to rhs before each call."""
        work = np.empty_like(rhs)

        def restore():
            np.copyto(work, rhs)
            return work

        return restore

    # minimodel.tdma.solve in place (out=rhs) on the restored work array
    peers.append(Peer("numpy-solve",
                      lambda w: tdma.solve(lower, diag, upper, w, out=w, threads=threads),
                      restorer(), backend=tdma.auto_backend()))

    # minimodel.jax.tdma under jit, donated and not
    jl, jd, ju, jb = (jnp.asarray(a) for a in (lower, diag, upper, rhs))
    donated = jax.jit(lambda l, d, u, b: mjax.tdma(l, d, u, b, threads=threads),
                      donate_argnums=3)
    plain = jax.jit(lambda l, d, u, b: mjax.tdma(l, d, u, b, threads=threads))

    def fresh():
        b = jnp.array(jb, copy=True)
        b.block_until_ready()
        return b

    peers.append(Peer("jax-donated", lambda b: donated(jl, jd, ju, b).block_until_ready(), fresh))
    peers.append(Peer("jax", lambda b: plain(jl, jd, ju, b).block_until_ready(), lambda: jb))

    # the seed's scans, with its transposes and on levels-first arrays
    with_t, levels_first = seed_scans(jax, jnp)
    peers.append(Peer("scan-transposes", lambda b: with_t(jl, jd, ju, b).block_until_ready(),
                      lambda: jb))
    tl, td, tu, tb = (jnp.asarray(np.ascontiguousarray(a.T)) for a in (lower, diag, upper, rhs))
    peers.append(Peer("scan-levels-first",
                      lambda b: levels_first(tl, td, tu, b).block_until_ready(), lambda: tb,
                      result=lambda x: np.asarray(x).T))

    # Numba
    try:
        import numba
    except ImportError:
        skipped["numba"] = "numba is not installed (pip install numba)"
    else:
        numba.set_num_threads(threads)
        thomas = numba_solver(numba, np)
        peers.append(Peer("numba", lambda w: (thomas(lower, diag, upper, rhs, w), w)[1], restorer(),
                          version=numba.__version__))

    # Veros's solve_implicit
    try:
        import veros
        from veros.core.utilities import solve_implicit
    except Exception as e:  # not installed, or not importable with this jax
        skipped["veros"] = f"veros does not import: {type(e).__name__}: {e}"
    else:
        from veros import runtime_settings

        try:
            from veros.core.special.tdma_ import HAS_CPU_EXT
        except ImportError:
            HAS_CPU_EXT = False
        use = runtime_settings.use_special_tdma
        path = "Veros's TDMA extension" if HAS_CPU_EXT and use in (None, True) else "lax.scan"
        shape = (ncol // 100, 100, nz) if ncol % 100 == 0 else (ncol, 1, nz)
        va, vb, vc, vd = (jnp.asarray(a.reshape(shape)) for a in (lower, diag, upper, rhs))
        water = jnp.ones(shape, bool)
        edge = jnp.zeros(shape, bool).at[..., 0].set(True)
        # Veros's levels go up from the bottom, so its edge level is k = 0:
        # there lower is dropped, as minimodel ignores lower[..., 0].
        peers.append(Peer("veros",
                          lambda b: solve_implicit(va, vb, vc, b, water, edge).block_until_ready(),
                          lambda: vd, version=veros.__version__, backend=runtime_settings.backend,
                          tdma=path))

    # Warm-up (compilation), then rounds: every peer once per round, the
    # order rotating, and one tdma-bench call per round, so that a change of
    # the machine's load falls on all of them alike.
    for p in peers:
        p.warm_up()
    bench = []
    for r in range(args.repeats):
        bench.append(tdma_bench_once(args.tdma_bench, ncol, nz, args.precision, threads,
                                     args.stream_mb))
        k = r % len(peers)
        for p in peers[k:] + peers[:k]:
            p.once()
    med = [b["median_ms"] for b in bench]
    print(json.dumps(dict(peer="tdma-bench-simd", median_ms=float(np.median(med)),
                          best_ms=float(min(b["ms"] for b in bench)),
                          max_residual=bench[0]["max_residual"],
                          stream_gbps=float(np.median([b["stream_gbps"] for b in bench])),
                          floor_ms=float(np.median([b["floor_ms"] for b in bench])),
                          pass_ms=float(np.median([b["pass_ms"] for b in bench])),
                          times_ms=[round(m, 4) for m in med], **common)), flush=True)
    for p in peers:
        x = np.asarray(p.result(p.out), np.float64).reshape(ref.shape)
        diff = float(np.max(np.abs(x - ref))) / scale
        ms = 1e3 * np.asarray(p.times)
        paired = np.median(ms / np.asarray(med))
        print(json.dumps(dict(peer=p.name, median_ms=float(np.median(ms)), best_ms=float(ms.min()),
                              paired_ratio=float(paired), max_rel_diff=diff,
                              times_ms=[round(float(m), 4) for m in ms], **common, **p.extra)),
              flush=True)
    for name, why in skipped.items():
        print(json.dumps(dict(peer=name, skipped=why, **common)), flush=True)


# ---- driver -------------------------------------------------------------------

def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    flags = ""
    try:
        cpuinfo = open("/proc/cpuinfo").read()
        flags = "AVX-512" if "avx512f" in cpuinfo else "AVX2" if "avx2" in cpuinfo else ""
    except OSError:
        pass
    osname = platform.platform()
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs ({flags}), {mem:.0f} GiB, {osname}"


def versions():
    out = {"python": platform.python_version()}
    import importlib.metadata as md

    for pkg in ("numpy", "jax", "jaxlib", "numba", "veros", "minimodel"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def find_tdma_bench(given):
    if given:
        return os.path.abspath(given)
    for cand in ("build/tdma-bench", "build-solvers/tdma-bench", "build-gpu/tdma-bench"):
        p = os.path.join(ROOT, cand)
        if os.access(p, os.X_OK):
            return p
    sys.exit("bench_peers: no tdma-bench binary (scripts/build makes build/tdma-bench); "
             "give --tdma-bench PATH")


def fmt(ms):
    return f"{ms:.3g}" if ms < 1000 else f"{ms:.0f}"


def table(records, a):
    lines = []
    cases = [(p, t) for p in a.precision for t in a.threads]
    by = {(r["peer"], r["precision"], r["threads"]): r for r in records}
    head = "| peer | " + " | ".join(f"{p}, {t} thr" for p, t in cases) + " |"
    lines += [head, "|---|" + "---:|" * len(cases)]
    for peer in PEERS[:1] + ["pass"] + PEERS[1:]:
        cells = []
        for p, t in cases:
            r = by.get(("tdma-bench-simd" if peer == "pass" else peer, p, t))
            base = by.get(("tdma-bench-simd", p, t))
            if not r:
                cells.append("-")
            elif "skipped" in r:
                cells.append("skipped")
            elif peer == "tdma-bench-simd":
                cells.append(f"{fmt(r['median_ms'])} ms")
            elif peer == "pass":
                cells.append(f"{fmt(r['pass_ms'])} ms ({r['pass_ms'] / r['median_ms']:.2f}x)"
                             if "pass_ms" in r else "-")
            else:
                ratio = f" ({r['median_ms'] / base['median_ms']:.2f}x)" if base else ""
                cells.append(f"{fmt(r['median_ms'])} ms{ratio}")
        lines.append(f"| {peer} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Targets, same run: jax-donated / tdma-bench simd at most 1.5, "
                 "scan-levels-first / jax-donated at least 10. Ratio of the medians; in "
                 "brackets the paired ratio, the median over the rounds of the ratio within "
                 "a round. Last column: the scan over the pass, the factor that a solve "
                 "running as fast as this machine's memory allows would reach:")
    lines.append("")
    lines.append("| case | jax-donated / tdma-bench simd | scan-levels-first / jax-donated | "
                 "scan-transposes / jax-donated | scan-levels-first / pass |")
    lines.append("|---|---:|---:|---:|---:|")

    def ratio(num, den):
        paired = sorted(x / y for x, y in zip(num["times_ms"], den["times_ms"]))
        n = len(paired)
        pm = paired[n // 2] if n % 2 else 0.5 * (paired[n // 2 - 1] + paired[n // 2])
        return f"{num['median_ms'] / den['median_ms']:.2f} ({pm:.2f})"

    for p, t in cases:
        d, s = by.get(("jax-donated", p, t)), by.get(("tdma-bench-simd", p, t))
        lf, tr = by.get(("scan-levels-first", p, t)), by.get(("scan-transposes", p, t))
        if not (d and s and lf and tr):
            continue
        at_pass = f"{lf['median_ms'] / s['pass_ms']:.2f}" if s.get("pass_ms") else "-"
        lines.append(f"| {p}, {t} thr | {ratio(d, s)} | {ratio(lf, d)} | {ratio(tr, d)} | "
                     f"{at_pass} |")
    skipped = [r for r in records if "skipped" in r]
    for why in sorted({f"{r['peer']}: {r['skipped']}" for r in skipped}):
        lines.append("")
        lines.append(f"Skipped: {why}.")
    return "\n".join(lines)


def whole(low, high=None):
    """An argparse type: a whole number in [low, high]."""
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(
                f"{n} is not within {low}..{high}" if high is not None else f"{n} is below {low}")
        return n
    return parse


def thread_list(text):
    """An argparse type: comma-separated thread counts, each 1..1024."""
    return [whole(1, 1024)(t) for t in text.split(",")]


def read_docs(path):
    """The text of the --docs file and its parts (head, tail) around the
    markers; ValueError (why, one line) when it cannot be read or lacks a
    marker."""
    try:
        doc = mm_figure.read_text(path)
    except mm_figure.InputRefused as e:
        raise ValueError(f"--docs {path}: {e}") from None
    except OSError as e:
        raise ValueError(f"--docs {path}: {e.strerror or e}") from None
    head, _, rest = doc.partition(BEGIN)
    if not rest or END not in rest:
        raise ValueError(f"--docs {path}: no {BEGIN} ... {END} markers")
    return head, rest.split(END, 1)[1]


def docs_problem(path):
    """Why the --docs file cannot be read and written, or None."""
    try:
        read_docs(path)
        mm_figure.check_target(path)
    except ValueError as e:
        return str(e)
    except mm_figure.FigureError as e:
        return f"--docs: {e}"
    return None


def write_results(a, records, text):
    """Append records to --jsonl and put text between the markers of
    --docs, each written whole or not at all; the lines saying what could
    not be written."""
    problems = []
    if a.jsonl:
        lines = "".join(json.dumps(r) + "\n" for r in records).encode()
        try:
            old = mm_figure.read_input(a.jsonl) if os.path.lexists(a.jsonl) else b""
            if old and not old.endswith(b"\n"):
                old += b"\n"
            mm_figure.write_atomic(a.jsonl, lambda f: f.write(old + lines))
        except mm_figure.InputRefused as e:
            problems.append(f"--jsonl {a.jsonl}: {e}: the lines are not added")
        except mm_figure.FigureError as e:
            problems.append(f"--jsonl {e}: left as it was")
        except OSError as e:
            problems.append(f"--jsonl {a.jsonl}: cannot be read: {e.strerror or e}: the lines "
                            "are not added")
    if a.docs:
        try:
            head, tail = read_docs(a.docs)
            mm_figure.write_text(a.docs, head + BEGIN + "\n" + text + "\n" + END + tail)
        except ValueError as e:
            problems.append(f"{e}: the table is not put in it")
        except mm_figure.FigureError as e:
            problems.append(f"--docs {e}: left as it was")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=whole(1), default=100000)
    ap.add_argument("--levels", type=whole(1, 10000), default=100)
    ap.add_argument("--repeats", type=whole(1), default=7)
    ap.add_argument("--threads", type=thread_list, default="1,2")
    ap.add_argument("--stream-mb", dest="stream_mb", type=whole(1, 1 << 20),
                    help="tdma-bench's --stream-mb (its default: 4 x the L3 cache, >= 256 MB)")
    ap.add_argument("--precision", default="double,single")
    ap.add_argument("--tdma-bench", dest="tdma_bench")
    ap.add_argument("--jsonl", help="also append the JSON lines to this file (key run: the start)")
    ap.add_argument("--docs", help="replace the results between the markers in this file")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.threads = a.threads[0]
        return worker(a)
    a.precision = a.precision.split(",")
    if not all(p in ("double", "single") for p in a.precision):
        ap.error("--precision takes double and/or single")
    # where the results go, checked before the minutes of the runs
    if a.jsonl:
        parent = os.path.dirname(os.path.abspath(a.jsonl))
        if os.path.isdir(a.jsonl) or not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            ap.error(f"--jsonl {a.jsonl}: not a file that can be written (a folder, or its "
                     "folder missing or not writable)")
        try:  # a FIFO or /dev/full passed, and failed only after the runs
            mm_figure.check_target(a.jsonl)
        except mm_figure.FigureError as e:
            ap.error(f"--jsonl: not a file that can be written: {e}")
    if a.docs:
        problem = docs_problem(a.docs)
        if problem:
            ap.error(problem)
    bench = find_tdma_bench(a.tdma_bench)
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()
    records = []
    for p in a.precision:
        for t in a.threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(t), NUMBA_NUM_THREADS=str(t),
                       VEROS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
            if t == 1:
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                    " intra_op_parallelism_threads=1").strip()
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--systems",
                   str(a.systems), "--levels", str(a.levels), "--repeats", str(a.repeats),
                   "--threads", str(t), "--precision", p, "--tdma-bench", bench]
            if a.stream_mb:
                cmd += ["--stream-mb", str(a.stream_mb)]
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/")
            got = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
            for r in got:
                print(json.dumps(r), flush=True)
            records += got
            if res.returncode != 0:
                sys.stderr.write(res.stderr[-3000:])
                sys.exit(f"bench_peers: the worker ({p}, {t} threads) failed")
    load1 = os.getloadavg()
    for r in records:
        r["run"] = started.strftime("%Y-%m-%dT%H:%MZ")
    argv = ["scripts/bench_peers.py"] + sys.argv[1:]
    tab = table(records, a)
    vers = versions()
    text = "\n".join([
        f"- Run: {started.strftime('%Y-%m-%d %H:%M')} UTC, "
        f"`.venv/bin/python {' '.join(shlex.quote(x) for x in argv)}`",
        f"- Machine: {machine()}; load average {load0[0]:.1f} at the start, "
        f"{load1[0]:.1f} at the end",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()),
        f"- {a.systems} systems x {a.levels} levels, every column full depth; median of "
        f"{a.repeats} rounds after one warm-up call each (peers interleaved, tdma-bench "
        "once a round); in brackets the median over tdma-bench simd's median of the same "
        "case",
        "",
        tab,
    ])
    problems = write_results(a, records, text)
    print()
    print(text, flush=True)
    for p in problems:
        print(f"bench_peers: {p}", file=sys.stderr)
    return 2 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("bench_peers: interrupted", file=sys.stderr)
        sys.exit(130)
    except MemoryError:  # NumPy's arrays of --systems x --levels (a traceback before)
        print("bench_peers: out of memory for the systems' arrays: give fewer --systems or "
              "--levels", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:  # the reader went away (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
