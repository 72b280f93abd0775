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
or else its achieved GB/s (phases.NAME.gbps), grouped by phase. Run names,
backends and --title are drawn as they are ($ starts no matplotlib
mathtext). Long runs get a rolling median of the solve share (--smooth).

The default output is the first input with .timing.json replaced by
.timing.png; an -o name without an extension gets .png (as matplotlib's
savefig gives it), one with an extension names the format (png, pdf, svg,
...: those matplotlib writes). The name printed is the file written. The
picture is written to a temporary file beside it and renamed into place
when complete (scripts/mm_figure.py): a failed write leaves an existing
file as it was. An output that exists and is not a regular file
(/dev/null), that the user cannot write (also one without any write
permission, chmod 444, when run as root) or that is one of the inputs is
refused, before anything is read. Inputs must be regular files (a FIFO,
/dev/zero are refused) of at most 256 MiB. Needs matplotlib (scripts/setup
puts it in .venv):

    .venv/bin/python scripts/plot_timing.py output/default.timing.json -o docs/timing.png

Exit status: 0 written (also when the reader of the name printed went
away, as `| head` does), 1 an input cannot be read or lacks the keys used
(also: valid JSON that is not a timing file, or whose times, GB/s or
ratios are not finite numbers >= 0: NaN, Infinity, a negative time, a
string, an integer too large for a float, nesting too deep to read; and a
timing file with no steps timed, no per_step record with step_s > 0, as a
run of 0 steps writes: its panels would be empty), 2 usage error (also: an
input that is not a regular file or is larger than 256 MiB; an -o format
matplotlib does not write, an -o that is a folder, an existing one or a
name ending in /, or an output refused as above; an output that cannot be
written, such as on a full disk, which leaves no half-written picture;
and its name that cannot be printed, standard output on a full disk), 130
interrupted (Ctrl-C).
"""

import argparse
import heapq
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_figure  # noqa: E402
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
    """The timing file as a dict; SystemExit(1) with a message when unusable,
    SystemExit(2) when it is not a regular file (a FIFO waited for ever,
    /dev/zero ran out of memory) or is larger than mm_figure.INPUT_LIMIT."""
    try:
        d = json.loads(mm_figure.read_input(path).decode("utf-8"))
    except mm_figure.InputRefused as e:
        print(f"plot_timing: {path}: {e}", file=sys.stderr)
        sys.exit(2)
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
        stride, steps = d.get("per_step_stride"), d.get("steps")
        why = (f"per_step_stride = {stride} (output.timing_stride) is beyond the run's {steps} "
               "steps" if isinstance(stride, int) and isinstance(steps, int) and 0 < steps < stride
               else "a run of 0 steps?")
        sys.exit(f"plot_timing: {path}: no steps timed (no per_step record with step_s > 0; "
                 f"{why}): nothing to plot")
    return d


def label(d, path, names):
    """A run's label: its name, ranks and solver; the file name when names clash."""
    name = d.get("name") or os.path.basename(path).replace(".timing.json", "")
    ranks = d["ranks"]
    text = f"{mm_figure.literal(name)}\n{ranks} rank{'s' if ranks != 1 else ''}"
    if d.get("backend") not in (None, "cpu"):
        text += f", {mm_figure.literal(d['backend'])}"
    if d.get("tdma"):
        text += f", {mm_figure.literal(d['tdma'])}"
    if names.count(text) > 0:  # same case twice: tell the files apart
        text += f"\n{mm_figure.literal(os.path.basename(path))}"
    names.append(text)
    return text


def rolling_median(v, w):
    """Median of the values v[i - w//2 .. i + w//2] around each i (fewer at
    the ends; of an even count, the mean of the middle two). The window
    slides one value in and one out per step, kept as two heaps (the lower
    half, the upper half; values that left are dropped when they come to
    the top): n log w, not a sort per step (100000 records with the default
    window of 1/40 of them took 36 s)."""
    h = w // 2
    n = len(v)
    lo, hi = [], []  # (-value, -index): max-heap of the lower half; (value, index): the upper
    nlo = nhi = 0  # values in the window in each (values that left may still be in them)
    gone = bytearray(n)  # the indices that left the window
    out = []

    def prune(heap, sign):
        while heap and gone[sign * heap[0][1]]:
            heapq.heappop(heap)

    for i in range(-h, n):  # the window around i; from i = -h on, as values come in
        j = i + h
        if j < n:
            x = v[j]
            if not lo or (x, j) < (-lo[0][0], -lo[0][1]):
                heapq.heappush(lo, (-x, -j))
                nlo += 1
            else:
                heapq.heappush(hi, (x, j))
                nhi += 1
        j = i - h - 1
        if j >= 0:
            gone[j] = 1
            if (v[j], j) <= (-lo[0][0], -lo[0][1]):
                nlo -= 1
                prune(lo, -1)
            else:
                nhi -= 1
                prune(hi, 1)
        if nlo > nhi + 1:
            y, k = heapq.heappop(lo)
            heapq.heappush(hi, (-y, -k))
            nlo, nhi = nlo - 1, nhi + 1
            prune(lo, -1)
        elif nlo < nhi:
            y, k = heapq.heappop(hi)
            heapq.heappush(lo, (-y, -k))
            nlo, nhi = nlo + 1, nhi - 1
            prune(hi, 1)
        if i >= 0:
            out.append(-lo[0][0] if (nlo + nhi) % 2 else 0.5 * (-lo[0][0] + hi[0][0]))
    return out


def default_output(first):
    base = first[:-len(".timing.json")] if first.endswith(".timing.json") else \
        os.path.splitext(first)[0]
    return base + ".timing.png"


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
    ap.add_argument("-o", "--output",
                    help="the picture to write; its format from the extension (png, pdf, svg, "
                         "...), .png added to a name without one (default: the first input "
                         "with .timing.json replaced by .timing.png)")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--smooth", type=int, metavar="N",
                    help="rolling median of N steps in the left panel (default: none up to 60 "
                         "records, else about 1/40 of them; 1 = raw only)")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    try:  # before any work: a folder, a format matplotlib does not write, a protected file
        out = mm_figure.output_name(args.output or default_output(args.files[0]))
        mm_figure.check_target(out, inputs=args.files)
    except mm_figure.FigureError as e:
        print(f"plot_timing: {e}", file=sys.stderr)
        return 2
    runs = [(p, load(p)) for p in args.files]

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
        fig.suptitle(mm_figure.literal(args.title))
    fig.tight_layout()
    try:  # a full disk: the target left as it was, no half-written picture
        mm_figure.save(fig, out, inputs=args.files, dpi=110)
    except mm_figure.FigureError as e:
        print(f"plot_timing: {e}", file=sys.stderr)
        return 2
    finally:
        plt.close(fig)
    # the reader going away (| head) is no fault: the picture is written
    problem = mm_stdout.print_lines([out])
    if problem:  # a full disk (> /dev/full)
        print(f"plot_timing: cannot print the name of the picture: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
