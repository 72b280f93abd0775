"""Checks tdma-bench --json output: one object per line with the documented
keys and sane values (no timing thresholds). Negative controls: a line with a
key missing, and one whose pass_ratio is not median_ms / pass_ms, must be
rejected by the same check."""
import json
import math
import sys

KEYS = ["backend", "mode", "systems", "levels", "precision", "threads", "ms", "gbps",
        "max_residual", "median_ms", "pass_ms", "pass_ratio"]
DEVICE = ("cuda", "cusparse")  # their rows have no pass ratio (the pass runs on the host)


def check(obj):
    missing = [k for k in KEYS if k not in obj]
    if missing:
        return f"missing keys {missing}"
    if obj["mode"] not in ("solve", "fused") or obj["precision"] not in ("double", "single"):
        return "bad mode/precision"
    if not (obj["ms"] > 0 and obj["gbps"] > 0 and math.isfinite(obj["max_residual"])):
        return "bad figures"
    if not (obj["pass_ms"] > 0 and math.isfinite(obj["pass_ms"])):
        return "bad pass_ms"
    want = 0 if obj["backend"] in DEVICE else obj["median_ms"] / obj["pass_ms"]
    if not math.isclose(obj["pass_ratio"], want, rel_tol=1e-4):
        return f"pass_ratio {obj['pass_ratio']}, want median_ms / pass_ms = {want}"
    tol = 1e-12 if obj["precision"] == "double" else 1e-4
    if not obj["max_residual"] <= tol:
        return f"residual {obj['max_residual']} > {tol}"
    return None


def main(path):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    if not lines:
        print("no JSON lines")
        return 1
    for line in lines:
        err = check(json.loads(line))
        if err:
            print(f"{err}: {line}")
            return 1
    broken = json.loads(lines[0])
    del broken["gbps"]
    if check(broken) is None:
        print("negative control: a line without gbps passed")
        return 1
    broken = json.loads(lines[0])
    broken["pass_ratio"] *= 2
    if check(broken) is None:
        print("negative control: a line whose pass_ratio is not median_ms / pass_ms passed")
        return 1
    print(f"{len(lines)} JSON lines ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
