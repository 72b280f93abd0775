#!/usr/bin/env python3
"""check_scaling.py SCRIPT MODEL CONFIG OUT: runs scripts/scaling on CONFIG up
to 2 cores and checks what it wrote: six runs (strong and weak; 1x1, 2x1,
1x2), each with a median step > 0 and an efficiency that follows from the
1x1 run's time (strong: t1 / (P t); weak: t1 / t), the weak grids twice as
wide at P = 2, and the plot when matplotlib is there. Exit 0 or 1."""

import importlib.util
import json
import os
import subprocess
import sys


def main():
    script, model, config, out = sys.argv[1:5]
    # what an earlier run left must not pass for this run's output
    for name in ("scaling.json", "scaling.png"):
        try:
            os.remove(os.path.join(out, name))
        except FileNotFoundError:
            pass
    # a copy of the model from before scripts/scaling marked its copies
    # (.minimodel.id) is refused as a file of the user's once rebuilt
    if not os.path.exists(os.path.join(out, ".minimodel.id")):
        try:
            os.remove(os.path.join(out, "minimodel"))
        except FileNotFoundError:
            pass
    r = subprocess.run([sys.executable, script, "--config", config, "--max-cores", "2",
                        "--steps", "3", "--out", out, "--model", model],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"scaling: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return 1
    with open(os.path.join(out, "scaling.json")) as f:
        d = json.load(f)
    runs = d["runs"]
    bad = []
    want = {(k, rt) for k in ("strong", "weak") for rt in ((1, 1), (2, 1), (1, 2))}
    got = {(x["kind"], (x["ranks"], x["threads"])) for x in runs}
    if got != want:
        bad.append(f"runs {sorted(got)}, want {sorted(want)}")
    for kind in ("strong", "weak"):
        mine = {(x["ranks"], x["threads"]): x for x in runs if x["kind"] == kind}
        if (1, 1) not in mine:
            continue
        t1, nx1 = mine[(1, 1)]["step_median_s"], mine[(1, 1)]["grid"][0]
        for (ranks, threads), x in mine.items():
            p, t = ranks * threads, x["step_median_s"]
            eff = t1 / (p * t) if kind == "strong" else t1 / t
            if not (t > 0 and abs(x.get("efficiency", -1) - eff) <= 1e-9 * eff):
                bad.append(f"{kind} {ranks}x{threads}: efficiency {x.get('efficiency')}, "
                           f"want {eff}")
            want_nx = nx1 * (p if kind == "weak" else 1)
            if x["grid"][0] != want_nx:
                bad.append(f"{kind} {ranks}x{threads}: nx {x['grid'][0]}, want {want_nx}")
    if importlib.util.find_spec("matplotlib") and not os.path.getsize(
            os.path.join(out, "scaling.png")) > 1000:
        bad.append("no plot")
    for b in bad:
        print(b)
    print("ok" if not bad else f"{len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
