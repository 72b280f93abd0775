#!/usr/bin/env python3
"""Check a <run.name>.timing.json against the contract of app/report.c.

    check_timing.py FILE --ranks R --decomposition PXxPY --steps N [--stride S]
    check_timing.py FILE ... --self-test

Exits 0 when FILE holds every contract key, every phase, phase shares inside a
step adding up to 0.9..1.1, solve_s <= step_s on every recorded step, the
per_step list of the stride, and the expected ranks, decomposition and steps;
1 with the reasons otherwise. --self-test instead breaks a copy of FILE in
each way the check must catch and fails if any breakage goes unnoticed (so
that the check itself can be trusted to fail). Only the standard library.
"""

import argparse
import copy
import json
import math
import sys

TOP_KEYS = ["ranks", "decomposition", "grid", "steps", "backend", "tdma", "phases",
            "per_step", "points_per_s"]
PHASES_INSIDE = ["halo", "horizontal", "mixing", "solve", "diagnostics", "output"]
PHASE_KEYS = ["total_s", "mean_s", "min_rank_s", "max_rank_s", "share"]
STEP_KEYS = ["step", "step_s", "solve_s"]


def problems(d, ranks, decomposition, steps, stride):
    """Every way d breaks the contract, as a list of sentences (empty: fine)."""
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
    for k in ("backend", "tdma"):
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
    return out


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
    }
    ok = not problems(d, args.ranks, args.decomposition, args.steps, args.stride)
    if not ok:
        print("self-test: the unbroken file does not pass")
    for name, fn in cases.items():
        found = problems(broken(fn), args.ranks, args.decomposition, args.steps, args.stride)
        print(f"self-test: {name}: {'caught' if found else 'NOT CAUGHT'}"
              + (f" ({found[0]})" if found else ""))
        ok = ok and bool(found)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--decomposition", required=True, help="PXxPY, e.g. 2x1")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    args.decomposition = [int(n) for n in args.decomposition.split("x")]
    try:
        with open(args.file) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.file}: {e}")
        return 1
    if args.self_test:
        return 0 if self_test(d, args) else 1
    found = problems(d, args.ranks, args.decomposition, args.steps, args.stride)
    for p in found:
        print(f"{args.file}: {p}")
    if not found:
        share = sum(d["phases"][p]["share"] for p in PHASES_INSIDE)
        print(f"{args.file}: ok ({len(d['per_step'])} per_step records, phase shares add up "
              f"to {share:.4f})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
