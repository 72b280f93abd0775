#!/usr/bin/env python3
"""Plots tdma-bench / bench_numpy_tdma.py JSON lines (docs/performance.md).

    plot_tdma_bench.py RESULTS.jsonl [more.jsonl ...] [-o OUT.png]
                       [--run LABEL] [--markdown]

One panel per (precision, mode). In each, the shapes (systems x levels) along
x; per backend a bar with the median time at 2 threads (or the largest thread
count in the data) and a dot at 1 thread; a black tick marks the bandwidth
floor (bytes / STREAM triad of the same run, at the same thread count as the
bars). Log scale: the backends span three orders of magnitude. Lines that are
not JSON objects are ignored, so raw benchmark logs can be passed as they are.
JSON objects that are not timing results are skipped, with a note on standard
error (per file: how many, and the first one's line): a result has backend,
mode (solve or fused), precision (double or single), systems, levels and
threads (whole numbers >= 1), and ms or median_ms (a number > 0); floor_ms,
stream_gbps and paired_floor_ratio, where present, are numbers >= 0 (0: not
measured). So the
lines of `tdma-bench --list --json` and of scripts/bench_peers.py
(docs/bench_peers.jsonl: peers, not backends and modes) are not results.
Lines may carry a "run" label (docs/tdma_bench.jsonl labels each run with
its date and time, and gains one with each run kept): --run LABEL keeps the lines of that label alone; without --run, the lines of the
last label in the input and those without a label are kept; where a result
occurs twice the later line wins.
With --markdown it also prints the tables of docs/performance.md: per shape,
median time and its ratio to the paired bandwidth floor for every backend,
thread count, precision and mode. Backend names and run labels are drawn
as they are ($ is no matplotlib mathtext).

-o names the picture: its format from the extension (png, pdf, svg, ...:
those matplotlib writes); a name without one gets .png, as matplotlib's
savefig gives it, and the name printed ("wrote NAME.png") is the file
written. The default is docs/tdma_bench.png of the repository this script
is in (whatever the current folder), the figure of docs/performance.md,
which it replaces. The picture is written to a temporary file beside it
and renamed into place when complete (scripts/mm_figure.py): a failed
write leaves an existing file as it was. An existing file that is not
regular (/dev/null), that the user cannot write (also one without any
write permission, chmod 444, when run as root) or that is one of the
inputs is refused, before anything is read. Inputs must be regular files
(a FIFO, /dev/zero are refused) of at most 256 MiB.

Exit status: 0 written, 2 usage or input (one line: an input that cannot be
read, is not a regular file or is larger than 256 MiB, no result in the
input, or none for --run; an -o format matplotlib does not write, or an -o
refused as above; an -o that cannot be written, a full disk, which leaves
no half-written picture; the tables or the name of the picture that
cannot be printed, standard output on a full disk; a reader that went
away, as `| head` does, is no fault), 130 interrupted (Ctrl-C).
"""
import argparse
import io
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_figure  # noqa: E402
import mm_stdout  # noqa: E402

# the figure of docs/performance.md, in the repository of this script
DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "docs", "tdma_bench.png")

ORDER = ["simd", "omp", "reference", "lapack", "numpy"]
COLORS = {"simd": "#1b9e77", "omp": "#7570b3", "reference": "#d95f02", "lapack": "#e7298a",
          "numpy": "#666666"}


def is_number(v, whole=False, zero=False):
    """A finite JSON number > 0 (not true/false); with whole, an integer;
    with zero, 0 too."""
    if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)):
        return False
    try:
        return math.isfinite(float(v)) and (v > 0 or (zero and v == 0))
    except OverflowError:
        return False


def is_result(r):
    """Whether r (a parsed JSON object) is a timing result this script can
    plot (the keys in the docstring)."""
    return (isinstance(r.get("backend"), str) and r.get("mode") in ("solve", "fused")
            and r.get("precision") in ("double", "single")
            and all(is_number(r.get(k), whole=True) for k in ("systems", "levels", "threads"))
            and is_number(r.get("median_ms", r.get("ms")))
            and all(is_number(r[k], zero=True) for k in ("floor_ms", "stream_gbps",
                                                          "paired_floor_ratio") if k in r))


def load(paths):
    """The results of the files, and (path, count, first line) of the JSON
    objects skipped in each; SystemExit(2) with one line when a file cannot
    be read, is not a regular file (a FIFO, /dev/zero) or is larger than
    mm_figure.INPUT_LIMIT."""
    rows, notes = [], []
    for path in paths:
        skipped = []
        try:
            data = mm_figure.read_input(path)
        except mm_figure.InputRefused as e:
            print(f"plot_tdma_bench.py: {path}: {e}", file=sys.stderr)
            sys.exit(2)
        except OSError as e:
            print(f"plot_tdma_bench.py: {path}: cannot be read: {e.strerror or e}",
                  file=sys.stderr)
            sys.exit(2)
        # errors="replace": a raw log's stray bytes are on lines that are skipped anyway
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(r, dict):
                    continue
                if is_result(r):
                    rows.append(r)
                else:
                    skipped.append(number)
        if skipped:
            notes.append((path, len(skipped), skipped[0]))
    return rows, notes


def median_ms(r):
    """The result's median_ms, else its ms (is_result checks the one used)."""
    return r["median_ms"] if "median_ms" in r else r["ms"]


def markdown(rows):
    """Tables for docs/performance.md, one per shape."""
    combos = [(p, m) for p in ("double", "single") for m in ("solve", "fused")
              if any(r["precision"] == p and r["mode"] == m for r in rows)]
    shapes = sorted({(r["systems"], r["levels"]) for r in rows}, key=lambda s: s[0] * s[1])
    names = [b for b in ORDER if any(r["backend"] == b for r in rows)]
    names += sorted({r["backend"] for r in rows} - set(names))
    out = []
    for m, n in shapes:
        sel = [r for r in rows if (r["systems"], r["levels"]) == (m, n)]
        out.append(f"**{m:,} systems x {n} levels**\n")
        head = "| backend | threads | " + " | ".join(f"{p} {md}" for p, md in combos) + " |"
        out.append(head)
        out.append("|---|---:|" + "---:|" * len(combos))
        for be in names:
            for t in sorted({r["threads"] for r in sel if r["backend"] == be}, reverse=True):
                cells = []
                for p, md in combos:
                    hit = [r for r in sel if r["backend"] == be and r["threads"] == t
                           and r["precision"] == p and r["mode"] == md]
                    if not hit:
                        cells.append("")
                        continue
                    r = hit[-1]
                    cell = f"{median_ms(r):.3g} ms"
                    if r.get("paired_floor_ratio"):
                        cell += f" ({r['paired_floor_ratio']:.2f}x)"
                    cells.append(cell)
                out.append(f"| {be} | {t} | " + " | ".join(cells) + " |")
        floors = []
        for p, md in combos:
            for t in sorted({r["threads"] for r in sel if r.get("floor_ms")}, reverse=True):
                hit = [r for r in sel if r["precision"] == p and r["mode"] == md
                       and r["threads"] == t and r.get("stream_gbps")]
                if hit:
                    floors.append(f"{p} {md}, {t} thr: STREAM {max(h['stream_gbps'] for h in hit):.1f} GB/s, "
                                  f"floor {min(h['floor_ms'] for h in hit):.3g} ms")
        out.append("")
        out.append("Floors: " + "; ".join(floors) + ".")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", nargs="+")
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                   help="the picture to write; its format from the extension (png, pdf, svg, "
                        "...), .png added to a name without one (default: docs/tdma_bench.png "
                        "of this script's repository, %(default)s)")
    p.add_argument("--markdown", action="store_true", help="also print the tables")
    p.add_argument("--run", help='keep only lines with this "run" label')
    args = p.parse_args(argv)
    try:  # before any work: a format matplotlib does not write, a protected file, an input
        out = mm_figure.output_name(args.output)
        mm_figure.check_target(out, inputs=args.results)
    except mm_figure.FigureError as e:
        print(f"plot_tdma_bench.py: {e}", file=sys.stderr)
        return 2
    rows, notes = load(args.results)
    labels = [r["run"] for r in rows if "run" in r]
    run = args.run or (labels[-1] if labels else None)
    if args.run:  # that label alone: lines without one are no match (--run nope drew them)
        rows = [r for r in rows if r.get("run") == run]
    elif run is not None:
        rows = [r for r in rows if r.get("run", run) == run]
    skipped = sum(n for _, n, _ in notes)
    if not rows:  # one line, which counts the lines skipped
        print("plot_tdma_bench.py: no tdma-bench results in the input"
              + (f" for run {run}" if run else "")
              + (f" ({skipped} JSON line(s) skipped: not results, without backend, mode, "
                 "precision, systems, levels, threads or ms)" if skipped else ""),
              file=sys.stderr)
        return 2
    for path, n, first in notes:
        print(f"plot_tdma_bench.py: {path}: skipped {n} JSON line(s) that are not tdma-bench "
              f"results (the first: line {first})", file=sys.stderr)
    # the reader going away (| head) is no fault; tables that cannot be
    # written (a full disk) are exit 2
    if args.markdown:
        problem = mm_stdout.print_lines([markdown(rows)])
        if problem:
            print(f"plot_tdma_bench.py: cannot write the tables: {problem}", file=sys.stderr)
            return 2

    precisions = [x for x in ("double", "single") if any(r["precision"] == x for r in rows)]
    modes = [x for x in ("solve", "fused") if any(r["mode"] == x for r in rows)]
    shapes = sorted({(r["systems"], r["levels"]) for r in rows}, key=lambda s: s[0] * s[1])
    backends = [b for b in ORDER if any(r["backend"] == b for r in rows)]
    backends += sorted({r["backend"] for r in rows} - set(backends))
    tmax = max((r["threads"] for r in rows if r["backend"] != "numpy"), default=1)

    fig, axes = plt.subplots(len(precisions), len(modes), figsize=(6.5 * len(modes), 4.2 * len(precisions)),
                             squeeze=False)
    width = 0.8 / len(backends)
    for i, prec in enumerate(precisions):
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            sel = [r for r in rows if r["precision"] == prec and r["mode"] == mode]
            for b_i, be in enumerate(backends):
                for s_i, (m, n) in enumerate(shapes):
                    x = s_i + (b_i - (len(backends) - 1) / 2) * width
                    same = [r for r in sel if r["backend"] == be and (r["systems"], r["levels"]) == (m, n)]
                    multi = [r for r in same if r["threads"] == tmax or be == "numpy"]
                    one = [r for r in same if r["threads"] == 1 and be != "numpy"]
                    if multi:
                        ax.bar(x, median_ms(multi[-1]), width, color=COLORS.get(be, "#999999"),
                               label=mm_figure.literal(be) if s_i == 0 else None)
                    if one:
                        ax.plot(x, median_ms(one[-1]), "o", ms=4, color="black",
                                mfc="white", label="1 thread" if (b_i == 0 and s_i == 0) else None)
            for s_i, (m, n) in enumerate(shapes):
                floors = [r["floor_ms"] for r in sel if (r["systems"], r["levels"]) == (m, n)
                          and r.get("floor_ms") and r["threads"] == tmax]
                if floors:
                    ax.hlines(min(floors), s_i - 0.45, s_i + 0.45, colors="black", linewidth=2,
                              label=f"floor ({tmax} threads)" if s_i == 0 else None)
            ax.set_yscale("log")
            ax.set_xticks(range(len(shapes)))
            ax.set_xticklabels([f"{m:,} x {n}" for m, n in shapes])
            ax.set_ylabel("median time (ms)")
            ax.set_title(f"{prec}, {'fused T+S' if mode == 'fused' else 'plain solve'}")
            ax.grid(axis="y", which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=8, ncol=2)
    title = f"tdma-bench: bars {tmax} threads (numpy: 1), dots 1 thread"
    if run:
        title += f"; run {mm_figure.literal(run)}"
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    try:  # no such folder, a full disk: the target left as it was
        mm_figure.save(fig, out, inputs=args.results, dpi=110)
    except mm_figure.FigureError as e:
        print(f"plot_tdma_bench.py: {e}", file=sys.stderr)
        return 2
    finally:
        plt.close(fig)
    problem = mm_stdout.print_lines([f"wrote {out} ({len(rows)} results)"])
    if problem:
        print(f"plot_tdma_bench.py: cannot print the name of the picture: {problem}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("plot_tdma_bench.py: interrupted", file=sys.stderr)
        sys.exit(130)
