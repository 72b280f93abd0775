#!/usr/bin/env python3
"""Check a <run.name>.timing.json against the contract of app/report.c.

    check_timing.py FILE --ranks R --decomposition PXxPY --steps N [--stride S]
                    [--bandwidth GBPS|probe] [--history NC]
    check_timing.py FILE ... --self-test

Exits 0 when FILE holds every contract key, every phase, phase shares inside a
step adding up to 0.9..1.1, solve_s <= step_s on every recorded step, the
per_step list of the stride, and the expected ranks, decomposition and steps;
the phases' memory traffic (bytes = the bytes per wet cell of
app/mm_bandwidth.h, here written again, x wet_cells x steps, or x calls for
diagnostics, exactly, bytes and wet_cells written as whole numbers; gbps =
bytes / total_s; with --bandwidth, x_floor = total_s / (bytes / bandwidth) and
the bandwidth and its source at the top; with --history, wet_cells = the sum
of the history's kmt); 1 with the reasons otherwise, one line each (also: FILE
or the history cannot be read, or FILE is not a JSON object of the contract's
shape); 2 a usage error (a --decomposition not PXxPY of whole numbers >= 1, a
--stride or --steps below 1 and 0). --self-test instead breaks a copy of FILE
in each way the check must catch and fails if any breakage goes unnoticed (so
that the check itself can be trusted to fail); it needs a FILE that passes the
check first. Only the standard library (and netCDF4 for --history).
"""

import argparse
import copy
import json
import math
import sys

TOP_KEYS = ["ranks", "decomposition", "grid", "steps", "backend", "tdma", "phases",
            "per_step", "points_per_s", "version"]
PHASES_INSIDE = ["halo", "horizontal", "mixing", "solve", "diagnostics", "output"]
PHASE_KEYS = ["total_s", "mean_s", "min_rank_s", "max_rank_s", "share"]
STEP_KEYS = ["step", "step_s", "solve_s"]
# least bytes per wet cell of each phase with a floor (per step; diagnostics
# per call): the CPU step with kappa_w in memory (a solver without
# mm_tdma_fused_mixing) or built inside the solve, and the GPU step with a
# mixing kernel or with kappa_w built inside the solve
BYTES_PER_CELL = {
    "cpu": {"horizontal": 56, "solve": 40, "diagnostics": 16, "step": 80},
    "cpu-kappa-in-solve": {"horizontal": 48, "solve": 32, "diagnostics": 16, "step": 80},
    "gpu": {"horizontal": 48, "mixing": 24, "solve": 40, "diagnostics": 16, "step": 80},
    "gpu-kappa-in-solve": {"horizontal": 48, "solve": 32, "diagnostics": 16, "step": 80},
}


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-300)


def traffic_problems(d, steps, bandwidth, wet_cells):
    """The bytes, GB/s and x_floor of the phases."""
    out = []
    wet = d.get("wet_cells")
    if not (isinstance(wet, int) and not isinstance(wet, bool) and wet > 0):
        return [f"wet_cells = {wet!r}: want a whole number > 0, written as one"]
    if wet_cells is not None and wet != wet_cells:
        out.append(f"wet_cells = {wet}, the history's kmt adds up to {wet_cells}")
    in_solve = d.get("kappa_in_solve")
    if not isinstance(in_solve, bool):
        return [f"kappa_in_solve = {in_solve!r}: want true or false"]
    # the diffusivity built inside the solve: no mixing pass, on any backend
    # (the device's events around an empty mixing slot booked 1 call a step)
    mixing_calls = (d["phases"].get("mixing") or {}).get("calls")
    if in_solve and mixing_calls != 0:
        out.append(f"kappa_in_solve = true but phases.mixing.calls = {mixing_calls!r}: want 0")
    if d["backend"] != "cpu":
        table = BYTES_PER_CELL["gpu-kappa-in-solve" if in_solve else "gpu"]
    else:
        table = BYTES_PER_CELL["cpu-kappa-in-solve" if in_solve else "cpu"]
    if bandwidth is not None:
        if bandwidth == "probe":
            if d.get("bandwidth_source") != "probe" or not (d.get("bandwidth_gbps") or 0) > 0:
                out.append(f"bandwidth {d.get('bandwidth_gbps')!r} from "
                           f"{d.get('bandwidth_source')!r}: want a probe's value > 0")
        elif d.get("bandwidth_gbps") != float(bandwidth) or d.get("bandwidth_source") != "given":
            out.append(f"bandwidth {d.get('bandwidth_gbps')!r} ({d.get('bandwidth_source')!r}): "
                       f"want {bandwidth} (given)")
    elif "bandwidth_gbps" in d or any("x_floor" in ph for ph in d["phases"].values()):
        out.append("bandwidth figures without --bandwidth")
    for name, ph in d["phases"].items():
        per_cell = table.get(name, 0)
        if not per_cell:
            if "bytes" in ph or "gbps" in ph:
                out.append(f"phases.{name}: bytes or gbps for a phase without a floor")
            continue
        count = ph["calls"] if name == "diagnostics" else steps
        want = per_cell * wet * count  # exact: whole numbers
        got = ph.get("bytes", -1)
        if not isinstance(got, int) or isinstance(got, bool) or got != want:
            out.append(f"phases.{name}.bytes = {got!r}, want {per_cell} x {wet} x "
                       f"{count} = {want}, written as a whole number")
            continue
        if ph["total_s"] > 0 and not close(ph.get("gbps", -1), want / ph["total_s"] / 1e9):
            out.append(f"phases.{name}.gbps = {ph.get('gbps')}, want bytes / total_s")
        if "bandwidth_gbps" in d and ph["total_s"] > 0:
            x = ph["total_s"] / (want / (d["bandwidth_gbps"] * 1e9))
            if not close(ph.get("x_floor", -1), x):
                out.append(f"phases.{name}.x_floor = {ph.get('x_floor')}, want {x}")
    return out


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def shape_problems(d):
    """What keeps d from having the contract's shape (an object with phases
    of numbers and per_step records of numbers), checked before the values
    are: a sentence, or []."""
    if not isinstance(d, dict):
        kind = {list: "an array", str: "a string", bool: "true or false",
                type(None): "null"}.get(type(d), "a number")
        return [f"the file holds {kind}, not a JSON object"]
    if "phases" in d and not (isinstance(d["phases"], dict) and
                              all(isinstance(ph, dict) for ph in d["phases"].values())):
        return ["phases is not an object of objects"]
    if "per_step" in d:
        if not isinstance(d["per_step"], list):
            return ["per_step is not a list"]
        for i, r in enumerate(d["per_step"]):
            if not isinstance(r, dict):
                return [f"per_step[{i}] = {r!r}: not an object"]
            bad = [k for k in STEP_KEYS if k in r and not is_number(r[k])]
            if bad:
                return [f"per_step[{i}]: {', '.join(f'{k} = {r[k]!r}' for k in bad)}: "
                        "not a number"]
    if "decomposition" in d and not (isinstance(d["decomposition"], list)
                                     and len(d["decomposition"]) == 2):
        return [f"decomposition = {d['decomposition']!r}: want [PX, PY]"]
    return []


def problems(d, ranks, decomposition, steps, stride, bandwidth=None, wet_cells=None):
    """Every way d breaks the contract, as a list of sentences (empty: fine)."""
    shape = shape_problems(d)
    if shape:
        return shape
    try:
        return value_problems(d, ranks, decomposition, steps, stride, bandwidth, wet_cells)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        # a hand-edited file of some other shape than the checks above know
        return [f"not of the contract's shape ({type(e).__name__}: {e})"]


def value_problems(d, ranks, decomposition, steps, stride, bandwidth=None, wet_cells=None):
    """problems() of a d of the contract's shape."""
    out = []
    missing = [k for k in TOP_KEYS if k not in d]
    if missing:
        return [f"missing keys {missing}"]
    if d["ranks"] != ranks:
        out.append(f"ranks = {d['ranks']}, want {ranks}")
    if list(d["decomposition"]) != list(decomposition):
        out.append(f"decomposition = {d['decomposition']}, want {decomposition}")
    if not (isinstance(d["grid"], list) and len(d["grid"]) == 3
            and all(isinstance(n, int) and n > 0 for n in d["grid"])):
        out.append(f"grid = {d['grid']}: want [nx, ny, nz]")
    if d["steps"] != steps:
        out.append(f"steps = {d['steps']}, want {steps}")
    if not (isinstance(d["points_per_s"], (int, float)) and d["points_per_s"] > 0):
        out.append(f"points_per_s = {d['points_per_s']}: want > 0")
    for k in ("backend", "tdma", "version"):
        if not (isinstance(d[k], str) and d[k]):
            out.append(f"{k} = {d[k]!r}: want a name")

    phases = d["phases"]
    for name in PHASES_INSIDE + ["step"]:
        if name not in phases:
            out.append(f"phase {name} missing")
            continue
        ph = phases[name]
        bad = [k for k in PHASE_KEYS
               if not (isinstance(ph.get(k), (int, float)) and math.isfinite(ph[k]) and ph[k] >= 0)]
        if bad:
            out.append(f"phases.{name}: {bad} missing or not a number >= 0")
            continue
        # total_s is the mean over ranks: between the fastest and the slowest rank
        if not ph["min_rank_s"] <= ph["total_s"] * (1 + 1e-9) + 1e-12:
            out.append(f"phases.{name}: min_rank_s {ph['min_rank_s']} > total_s {ph['total_s']}")
        if not ph["total_s"] <= ph["max_rank_s"] * (1 + 1e-9) + 1e-12:
            out.append(f"phases.{name}: total_s {ph['total_s']} > max_rank_s {ph['max_rank_s']}")
    if out:
        return out
    share_sum = sum(phases[p]["share"] for p in PHASES_INSIDE)
    if not 0.9 <= share_sum <= 1.1:
        out.append(f"shares of the phases inside a step add up to {share_sum:.4f}, want 0.9..1.1")
    if abs(phases["step"]["share"] - 1) > 1e-9:
        out.append(f"phases.step.share = {phases['step']['share']}, want 1")
    total = phases["step"]["total_s"]
    for p in PHASES_INSIDE:
        want = phases[p]["total_s"] / total if total > 0 else 0
        if abs(phases[p]["share"] - want) > 1e-6:
            out.append(f"phases.{p}.share = {phases[p]['share']}, want total_s / step total_s "
                       f"= {want}")
        if abs(phases[p]["mean_s"] * steps - phases[p]["total_s"]) > 1e-6 * max(1, total):
            out.append(f"phases.{p}.mean_s x steps != total_s")

    per = d["per_step"]
    want_ids = [s for s in range(1, steps + 1) if s % stride == 0]
    ids = [r.get("step") for r in per]
    if ids != want_ids:
        out.append(f"per_step holds steps {ids[:6]}... ({len(ids)}), want {want_ids[:6]}... "
                   f"({len(want_ids)}) for stride {stride}")
    for r in per:
        if any(k not in r for k in STEP_KEYS):
            out.append(f"per_step entry {r} lacks one of {STEP_KEYS}")
            break
        if not (0 <= r["solve_s"] <= r["step_s"]):
            out.append(f"step {r['step']}: solve_s {r['solve_s']} not in [0, step_s "
                       f"{r['step_s']}]")
    return out + traffic_problems(d, steps, bandwidth, wet_cells)


def self_test(d, args):
    """Each breakage must be caught; the unbroken file must pass."""
    def broken(fn):
        e = copy.deepcopy(d)
        fn(e)
        return e

    first = d["per_step"][0]["step"] if d["per_step"] else None
    cases = {
        "missing points_per_s": lambda e: e.pop("points_per_s"),
        "missing per_step": lambda e: e.pop("per_step"),
        "phase solve missing": lambda e: e["phases"].pop("solve"),
        "phase key missing": lambda e: e["phases"]["halo"].pop("max_rank_s"),
        "shares too small": lambda e: [e["phases"][p].update(share=e["phases"][p]["share"] / 2)
                                       for p in PHASES_INSIDE],
        "shares too large": lambda e: e["phases"]["halo"].update(share=0.5 + e["phases"]["halo"]
                                                             ["share"]),
        "solve_s > step_s": lambda e: e["per_step"][-1].update(
            solve_s=2 * e["per_step"][-1]["step_s"] + 1),
        "per_step short": lambda e: e["per_step"].pop(),
        "per_step wrong steps": lambda e: e["per_step"][0].update(step=(first or 0) + 1),
        "ranks wrong": lambda e: e.update(ranks=e["ranks"] + 1),
        "decomposition wrong": lambda e: e.update(decomposition=e["decomposition"][::-1]
                                                  if e["decomposition"][0] !=
                                                  e["decomposition"][1] else [9, 9]),
        "steps wrong": lambda e: e.update(steps=e["steps"] + 1),
        "wet_cells wrong": lambda e: e.update(wet_cells=e["wet_cells"] + 1),
        "solve bytes wrong": lambda e: e["phases"]["solve"].update(
            bytes=e["phases"]["solve"]["bytes"] * 1.01),
        "step gbps wrong": lambda e: e["phases"]["step"].update(
            gbps=e["phases"]["step"]["gbps"] * 2),
        "bytes for halo": lambda e: e["phases"]["halo"].update(bytes=1.0),
        # a count to nine significant digits, or as a float, is not the count
        "solve bytes rounded": lambda e: e["phases"]["solve"].update(
            bytes=float(f"{e['phases']['solve']['bytes']:.9g}")),
        "step bytes off by one": lambda e: e["phases"]["step"].update(
            bytes=e["phases"]["step"]["bytes"] + 1),
        "wet_cells a float": lambda e: e.update(wet_cells=float(e["wet_cells"])),
    }
    if args.bandwidth is not None:
        cases["x_floor wrong"] = lambda e: e["phases"]["horizontal"].update(
            x_floor=e["phases"]["horizontal"]["x_floor"] / 2)
        cases["bandwidth missing"] = lambda e: e.pop("bandwidth_gbps")
    def check(e):
        return problems(e, args.ranks, args.decomposition, args.steps, args.stride,
                        args.bandwidth, args.wet_cells)

    unbroken = check(d)
    if unbroken:  # the breakages below assume a file of the contract
        print(f"self-test: the unbroken file does not pass ({unbroken[0]})")
        return False
    ok = True
    for name, fn in cases.items():
        try:
            e = broken(fn)
        except (KeyError, TypeError, IndexError, AttributeError) as err:
            print(f"self-test: {name}: cannot be made on this file ({type(err).__name__}: "
                  f"{err}); skipped")
            continue
        found = check(e)
        print(f"self-test: {name}: {'caught' if found else 'NOT CAUGHT'}"
              + (f" ({found[0]})" if found else ""))
        ok = ok and bool(found)
    return ok


def main():
    try:
        return check_file()
    except KeyboardInterrupt:
        print("check_timing.py: interrupted", file=sys.stderr)
        return 130


def check_file():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--decomposition", required=True, help="PXxPY, e.g. 2x1")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--bandwidth", help="the bandwidth given to minimodel (GB/s), or probe")
    ap.add_argument("--history", help="the run's history file: wet_cells = the sum of its kmt")
    ap.add_argument("--kappa-in-solve", choices=["true", "false"],
                    help="the value kappa_in_solve must have (the solver in use)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()

    def usage(msg):  # one line (argparse's error() adds the usage)
        print(f"check_timing.py: {msg}", file=sys.stderr)
        return 2

    parts = args.decomposition.split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        return usage(f"--decomposition {args.decomposition}: want PXxPY, whole numbers >= 1 "
                     "(e.g. 2x1)")
    args.decomposition = [int(n) for n in parts]
    if args.stride < 1:
        return usage(f"--stride {args.stride}: must be at least 1")
    if args.steps < 0:
        return usage(f"--steps {args.steps}: must be at least 0")
    args.wet_cells = None
    if args.history:
        try:
            import netCDF4
            with netCDF4.Dataset(args.history) as nc:
                args.wet_cells = int(nc["kmt"][:].filled(0).sum())
        except ImportError:
            print(f"{args.history}: --history needs netCDF4 (scripts/setup puts it in .venv)")
            return 1
        except (OSError, RuntimeError, KeyError, IndexError, ValueError, TypeError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            print(f"{args.history}: cannot read kmt: {first}")
            return 1
    try:
        with open(args.file) as f:
            d = json.load(f)
    except OSError as e:
        print(f"{args.file}: {e.strerror or e}")
        return 1
    except RecursionError:
        print(f"{args.file}: nested too deep to read")
        return 1
    except ValueError as e:
        print(f"{args.file}: {(str(e).splitlines() or ['not JSON'])[0]}")
        return 1
    if args.self_test:
        return 0 if self_test(d, args) else 1
    found = problems(d, args.ranks, args.decomposition, args.steps, args.stride, args.bandwidth,
                     args.wet_cells)
    if args.kappa_in_solve and isinstance(d, dict) and \
            d.get("kappa_in_solve") != (args.kappa_in_solve == "true"):
        found.append(f"kappa_in_solve = {d.get('kappa_in_solve')!r}, want {args.kappa_in_solve}")
    for p in found:
        print(f"{args.file}: {p}")
    if not found and isinstance(d, dict):
        share = sum(d["phases"][p]["share"] for p in PHASES_INSIDE)
        print(f"{args.file}: ok ({len(d['per_step'])} per_step records, phase shares add up "
              f"to {share:.4f})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
