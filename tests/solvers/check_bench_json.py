"""Checks tdma-bench --json output: one object per line with the documented
keys and sane values (no timing thresholds), bytes the exact count of the
least bytes. Negative controls: a line with a key missing, one whose
pass_ratio is not median_ms / pass_ms, and one whose bytes are not the count,
must be rejected by the same check."""
import json
import math
import sys

KEYS = ["backend", "mode", "systems", "levels", "precision", "threads", "ms", "gbps",
        "max_residual", "median_ms", "pass_ms", "pass_ratio", "nrhs", "wet_levels", "bytes"]
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
    # the least bytes: a, b, c (fused: kappa) read, each right-hand side read
    # and written, every digit of the count (it was rounded to six)
    elem = 8 if obj["precision"] == "double" else 4
    want = ((1 if obj["mode"] == "fused" else 3) + 2 * obj["nrhs"]) * elem * obj["wet_levels"]
    if not (isinstance(obj["bytes"], int) and obj["bytes"] == want):
        return f"bytes {obj['bytes']!r}, want {want}, a whole number"
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
    broken = json.loads(lines[0])
    broken["bytes"] = float(f"{broken['bytes']:.6g}") + (1 if broken["bytes"] < 1e6 else 0)
    if check(broken) is None:
        print("negative control: a line whose bytes are not the count passed")
        return 1
    print(f"{len(lines)} JSON lines ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
