#!/usr/bin/env python3
"""Plots tdma-bench / bench_numpy_tdma.py JSON lines (docs/performance.md).

    plot_tdma_bench.py RESULTS.jsonl [more.jsonl ...] [-o docs/tdma_bench.png]
                       [--run LABEL] [--markdown]

One panel per (precision, mode). In each, the shapes (systems x levels) along
x; per backend a bar with the median time at 2 threads (or the largest thread
count in the data) and a dot at 1 thread; a black tick marks the bandwidth
floor (bytes / STREAM triad of the same run, at the same thread count as the
bars). Log scale: the backends span three orders of magnitude. Lines that are
not JSON objects are ignored, so raw benchmark logs can be passed as they are.
Lines may carry a "run" label (docs/tdma_bench.jsonl holds two runs): --run
keeps one run (default: the last label in the input); where a result occurs
twice the later line wins.
With --markdown it also prints the tables of docs/performance.md: per shape,
median time and its ratio to the paired bandwidth floor for every backend,
thread count, precision and mode.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["simd", "omp", "reference", "lapack", "numpy"]
COLORS = {"simd": "#1b9e77", "omp": "#7570b3", "reference": "#d95f02", "lapack": "#e7298a",
          "numpy": "#666666"}


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return rows


def median_ms(r):
    return r.get("median_ms", r["ms"])


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
    p.add_argument("-o", "--output", default="docs/tdma_bench.png")
    p.add_argument("--markdown", action="store_true", help="also print the tables")
    p.add_argument("--run", help='keep only lines with this "run" label')
    args = p.parse_args(argv)
    rows = load(args.results)
    labels = [r["run"] for r in rows if "run" in r]
    run = args.run or (labels[-1] if labels else None)
    if run is not None:
        rows = [r for r in rows if r.get("run", run) == run]
    if not rows:
        p.error("no JSON lines in the input" + (f" for run {run}" if run else ""))
    if args.markdown:
        print(markdown(rows))

    precisions = [x for x in ("double", "single") if any(r["precision"] == x for r in rows)]
    modes = [x for x in ("solve", "fused") if any(r["mode"] == x for r in rows)]
    shapes = sorted({(r["systems"], r["levels"]) for r in rows}, key=lambda s: s[0] * s[1])
    backends = [b for b in ORDER if any(r["backend"] == b for r in rows)]
    backends += sorted({r["backend"] for r in rows} - set(backends))
    tmax = max(r["threads"] for r in rows if r["backend"] != "numpy")

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
                               label=be if s_i == 0 else None)
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
        title += f"; run {run}"
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output} ({len(rows)} results)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
