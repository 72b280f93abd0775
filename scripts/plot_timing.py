#!/usr/bin/env python3
"""Plot minimodel timing files (<output.dir>/<run.name>.timing.json).

    scripts/plot_timing.py RUN.timing.json [MORE.timing.json ...] [-o OUT.png]

Left panels: the time of each recorded step (per_step step_s, the slowest
rank's) against the step number, one line per run, with each run's median
marked (a dashed line); below it the solve's share of each recorded step
(per_step solve_s / step_s). Middle panel: the mean time per step
of each phase (phases.NAME.mean_s) stacked into one bar per run, runs side by
side. Right panel, when a run has the phases' memory traffic: each phase's
ratio to its memory floor (phases.NAME.x_floor, runs made with --bandwidth),
or else its achieved GB/s (phases.NAME.gbps), grouped by phase. The default output is the first input with .timing.json replaced by
.timing.png; an -o name without an extension gets .png, one with an extension
names the format (png, pdf, svg, ...: those matplotlib writes). The name
written is printed. Needs matplotlib (scripts/setup puts it in .venv):

    .venv/bin/python scripts/plot_timing.py output/default.timing.json -o docs/timing.png

Exit status: 0 written (also when the reader of the name printed went
away, as `| head` does), 1 an input cannot be read or lacks the keys used
(also: valid JSON that is not a timing file, or whose times, GB/s or
ratios are not finite numbers >= 0: NaN, Infinity, a negative time, a
string, an integer too large for a float, nesting too deep to read; and a
timing file with no steps timed, no per_step record with step_s > 0, as a
run of 0 steps writes: its panels would be empty), 2
usage error (also: an -o format matplotlib does not write, or an -o that is
a folder: an existing one, or a name ending in /; and an output that cannot
be written, such as on a full disk, which is then removed, not left
half-written; and its name that cannot be printed, standard output on a
full disk), 130 interrupted (Ctrl-C).
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_stdout  # noqa: E402

# The parts of a step, bottom to top, with fixed colours so that figures compare.
PHASES = [("halo", "#4c72b0"), ("horizontal", "#55a868"), ("mixing", "#8172b2"),
          ("solve", "#c44e52"), ("diagnostics", "#ccb974"), ("output", "#64b5cd")]
UNTIMED = "#bbbbbb"


def is_number(v):
    """A finite JSON number (not true/false, NaN, Infinity, nor an integer
    too large for a float)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def is_time(v):
    """A finite number >= 0 (seconds, GB/s, ratios)."""
    return is_number(v) and v >= 0


def timing_problem(d):
    """What keeps d (a parsed JSON file) from being a timing file this script
    can plot, or None: ranks, steps, phases.NAME.mean_s of every phase and
    the step, per_step records with step, step_s and solve_s."""
    if not isinstance(d, dict):
        kind = {list: "an array", str: "a string", bool: "true or false",
                type(None): "null"}.get(type(d), "a number")
        return f"the file holds {kind}, not a JSON object"
    missing = [k for k in ("ranks", "steps", "phases", "per_step") if k not in d]
    phases = d.get("phases", {})
    if not isinstance(phases, dict):
        return "phases is not an object"
    missing += [f"phases.{p}" for p, _ in PHASES + [("step", None)] if p not in phases]
    if missing:
        return f"missing {', '.join(missing)}"
    if not is_number(d["ranks"]) or d["ranks"] < 1:
        return "ranks is not a number >= 1"
    if "bandwidth_gbps" in d and not is_time(d["bandwidth_gbps"]):
        return "bandwidth_gbps is not a finite number >= 0"
    for p, _ in PHASES + [("step", None)]:
        if not isinstance(phases[p], dict) or not is_time(phases[p].get("mean_s")):
            return f"phases.{p}.mean_s is not a finite number >= 0"
        for k in ("gbps", "x_floor"):
            if k in phases[p] and not is_time(phases[p][k]):
                return f"phases.{p}.{k} is not a finite number >= 0"
    if not isinstance(d["per_step"], list):
        return "per_step is not a list"
    for i, r in enumerate(d["per_step"]):
        if not isinstance(r, dict) or not is_number(r.get("step")) or \
                not all(is_time(r.get(k)) for k in ("step_s", "solve_s")):
            return (f"per_step[{i}] lacks a number step, or step_s and solve_s as finite "
                    "numbers >= 0")
    return None


def load(path):
    """The timing file as a dict; SystemExit(1) with a message when unusable."""
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        sys.exit(f"plot_timing: {path}: {e.strerror or e}")
    except RecursionError:
        sys.exit(f"plot_timing: {path}: not a minimodel timing file (nested too deep to read)")
    except ValueError as e:  # not JSON, or not UTF-8; also an integer of too many digits
        sys.exit(f"plot_timing: {path}: {str(e).splitlines()[0] if str(e) else 'not JSON'}")
    problem = timing_problem(d)
    if problem:
        sys.exit(f"plot_timing: {path}: not a minimodel timing file ({problem})")
    if not any(r["step_s"] > 0 for r in d["per_step"]):
        sys.exit(f"plot_timing: {path}: no steps timed (no per_step record with step_s > 0; "
                 "a run of 0 steps?): nothing to plot")
    return d


def label(d, path, names):
    """A run's label: its name, ranks and solver; the file name when names clash."""
    name = d.get("name") or os.path.basename(path).replace(".timing.json", "")
    ranks = d["ranks"]
    text = f"{name}\n{ranks} rank{'s' if ranks != 1 else ''}"
    if d.get("backend") not in (None, "cpu"):
        text += f", {d['backend']}"
    if d.get("tdma"):
        text += f", {d['tdma']}"
    if names.count(text) > 0:  # same case twice: tell the files apart
        text += f"\n{os.path.basename(path)}"
    names.append(text)
    return text


def rolling_median(v, w):
    """Median of the w values centred on each (fewer at the ends)."""
    h = w // 2
    out = []
    for i in range(len(v)):
        win = sorted(v[max(0, i - h):i + h + 1])
        n = len(win)
        out.append(win[n // 2] if n % 2 else 0.5 * (win[n // 2 - 1] + win[n // 2]))
    return out


def default_output(first):
    base = first[:-len(".timing.json")] if first.endswith(".timing.json") else \
        os.path.splitext(first)[0]
    return base + ".timing.png"


def output_name(out, formats):
    """The file -o names, with .png added when it has no extension (as
    matplotlib does); SystemExit(2) when its extension is not a format
    matplotlib writes."""
    ext = os.path.splitext(out)[1]
    if not ext:
        return out + ".png"
    if ext[1:].lower() not in formats:
        print(f"plot_timing: -o {out}: matplotlib cannot write {ext} files (it writes "
              f"{', '.join('.' + f for f in sorted(formats))})", file=sys.stderr)
        sys.exit(2)
    return out


def main(argv=None):
    try:
        return plot(argv)
    except KeyboardInterrupt:
        print("plot_timing: interrupted", file=sys.stderr)
        return 130


def plot(argv=None):
    ap = argparse.ArgumentParser(
        description="Plot minimodel timing files: the solve's share per step and the phases "
                    "per step of each run.")
    ap.add_argument("files", nargs="+", metavar="RUN.timing.json")
    ap.add_argument("-o", "--output", help="PNG to write (default: next to the first input)")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--smooth", type=int, metavar="N",
                    help="rolling median of N steps in the left panel (default: none up to 60 "
                         "records, else about 1/40 of them; 1 = raw only)")
    args = ap.parse_args(argv)

    if args.output is not None and (os.path.isdir(args.output) or
                                    args.output.endswith(("/", os.sep))):
        print(f"plot_timing: -o {args.output}: is a folder, not a file (-o names the "
              "file to write)", file=sys.stderr)
        return 2
    runs = [(p, load(p)) for p in args.files]

    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    out = output_name(args.output or default_output(args.files[0]),
                      FigureCanvasBase.get_supported_filetypes())
    if os.path.isdir(out):
        print(f"plot_timing: -o {out}: is a folder, not a file", file=sys.stderr)
        return 2

    names = []
    labels = [label(d, p, names) for p, d in runs]
    traffic = [name for name, _ in PHASES + [("step", None)]
               if any("gbps" in d["phases"][name] for _, d in runs)]
    ratio = bool(traffic) and all("bandwidth_gbps" in d for _, d in runs)
    width = max(10.0, 6.0 + 1.1 * len(runs)) + (4.5 if traffic else 0.0)
    ratios = [3, max(2, len(runs))] + ([3] if traffic else [])
    fig = plt.figure(figsize=(width, 7.2))
    grid = fig.add_gridspec(2, len(ratios), width_ratios=ratios)
    ax_step = fig.add_subplot(grid[0, 0])
    ax_share = fig.add_subplot(grid[1, 0], sharex=ax_step)
    ax_bar = fig.add_subplot(grid[:, 1])
    axes = [ax_share, ax_bar] + ([fig.add_subplot(grid[:, 2])] if traffic else [])

    # top left: time of every recorded step, the run's median dashed
    for (path, d), text in zip(runs, labels):
        recs = [r for r in d["per_step"] if r.get("step_s", 0) > 0]
        if not recs:
            continue
        ms = [1e3 * r["step_s"] for r in recs]
        srt = sorted(ms)
        med = srt[len(srt) // 2] if len(srt) % 2 else 0.5 * (srt[len(srt) // 2 - 1] +
                                                             srt[len(srt) // 2])
        (line,) = ax_step.plot([r["step"] for r in recs], ms, linewidth=0.8,
                               label=f"{text.replace(chr(10), ', ')}: median {med:.3g} ms")
        ax_step.axhline(med, color=line.get_color(), linestyle="--", linewidth=1.2)
    ax_step.set_ylabel("step time (ms)")
    ax_step.set_title("Time of each step (dashed: median)")
    ax_step.set_ylim(bottom=0)
    ax_step.grid(alpha=0.3)
    ax_step.legend(fontsize="small")

    # left: solve share of every recorded step; on long runs a rolling median
    # on top, since single steps of a busy machine spike (a rank descheduled)
    window = 1
    for (path, d), text in zip(runs, labels):
        recs = [r for r in d["per_step"] if r.get("step_s", 0) > 0]
        steps = [r["step"] for r in recs]
        share = [100.0 * r["solve_s"] / r["step_s"] for r in recs]
        w = args.smooth if args.smooth is not None else (1 if len(recs) <= 60 else
                                                         len(recs) // 40 | 1)
        window = max(window, w)
        name = text.replace("\n", ", ")
        if w <= 1:
            style = {"marker": "o", "markersize": 3} if len(steps) <= 60 else {}
            ax_share.plot(steps, share, linewidth=1, label=name, **style)
        else:
            (raw,) = ax_share.plot(steps, share, linewidth=0.6, alpha=0.3)
            ax_share.plot(steps, rolling_median(share, w), linewidth=1.6, color=raw.get_color(),
                          label=name)
    ax_share.set_xlabel("step")
    ax_share.set_ylabel("solve share of the step (%)")
    ax_share.set_title("Solve share per step" +
                       (f" (lines: median of {window} steps)" if window > 1 else ""))
    ax_share.set_ylim(bottom=0)
    ax_share.grid(alpha=0.3)
    ax_share.legend(fontsize="small")

    # right: stacked phases, mean time per step in ms
    xs = range(len(runs))
    bottoms = [0.0] * len(runs)
    for phase, colour in PHASES:
        h = [1e3 * d["phases"][phase]["mean_s"] for _, d in runs]
        ax_bar.bar(xs, h, bottom=bottoms, color=colour, label=phase, width=0.6)
        bottoms = [b + v for b, v in zip(bottoms, h)]
    # what the parts do not cover (untimed glue), so that each bar is the whole step
    rest = [max(0.0, 1e3 * d["phases"]["step"]["mean_s"] - b) for (_, d), b in zip(runs, bottoms)]
    if any(r > 0 for r in rest):
        ax_bar.bar(xs, rest, bottom=bottoms, color=UNTIMED, label="untimed", width=0.6)
    for x, (_, d) in zip(xs, runs):
        step_ms = 1e3 * d["phases"]["step"]["mean_s"]
        ax_bar.annotate(f"{step_ms:.3g}", (x, step_ms), ha="center", va="bottom",
                        fontsize="small", xytext=(0, 2), textcoords="offset points")
    ax_bar.set_xticks(list(xs))
    ax_bar.set_xticklabels(labels, fontsize="small")
    ax_bar.set_ylabel("mean time per step (ms)")
    ax_bar.set_title("Phases of a step")
    ax_bar.margins(y=0.12)
    ax_bar.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))

    # right: each phase against its memory floor (or its GB/s), runs side by side
    if traffic:
        ax_bw = axes[2]
        key = "x_floor" if ratio else "gbps"
        bar_w = 0.8 / len(runs)
        for r, ((_, d), text) in enumerate(zip(runs, labels)):
            vals = [d["phases"][name].get(key, 0.0) for name in traffic]
            ax_bw.bar([i + (r - (len(runs) - 1) / 2) * bar_w for i in range(len(traffic))], vals,
                      width=bar_w, label=text.replace("\n", ", "))
        if ratio:
            ax_bw.axhline(1.0, color="black", linewidth=0.8)
        ax_bw.set_xticks(range(len(traffic)))
        ax_bw.set_xticklabels(traffic, fontsize="small")
        ax_bw.set_ylabel("time over the memory floor (x)" if ratio else "achieved GB/s")
        ax_bw.set_title("Phases against their memory floor" if ratio else "Memory traffic")
        ax_bw.grid(axis="y", alpha=0.3)
        ax_bw.legend(fontsize="small")

    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=110)
    except OSError as e:  # a full disk: no half-written picture left behind
        try:
            os.remove(out)
        except OSError:
            pass
        print(f"plot_timing: {out}: cannot be written: {e.strerror or e}", file=sys.stderr)
        return 2
    # the reader going away (| head) is no fault: the picture is written
    problem = mm_stdout.print_lines([out])
    if problem:  # a full disk (> /dev/full)
        print(f"plot_timing: cannot print the name of the picture: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
