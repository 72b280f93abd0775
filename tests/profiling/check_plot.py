#!/usr/bin/env python3
"""check_plot.py PLOT_SCRIPT OUT_DIR RUN.timing.json [MORE.timing.json ...]

Runs scripts/plot_timing.py twice with this interpreter: with -o into OUT_DIR,
and without -o on a copy of the first input in OUT_DIR (the default output goes
next to the input). Each PNG must exist, carry the PNG signature and a
non-trivial image size. A bad input must make the script fail. Exit 77 (test
skipped) when matplotlib is missing.
"""

import importlib.util
import os
import shutil
import struct
import subprocess
import sys


def png_size(path):
    """(width, height) from the IHDR chunk; ValueError if not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def main():
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib missing: skipped (run scripts/setup)")
        return 77
    script, out_dir, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    named = os.path.join(out_dir, "named.png")
    copy = os.path.join(out_dir, "first.timing.json")
    shutil.copyfile(inputs[0], copy)
    default = os.path.join(out_dir, "first.timing.png")
    for path in (named, default):
        if os.path.exists(path):
            os.remove(path)
    runs = [[script, *inputs, "-o", named], [script, copy, *inputs[1:]]]
    for args, png in zip(runs, (named, default)):
        r = subprocess.run([sys.executable, *args], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"plot_timing failed ({r.returncode}): {r.stderr}")
            return 1
        if not os.path.exists(png):
            print(f"{png}: not written (output: {r.stdout.strip()})")
            return 1
        size = os.path.getsize(png)
        w, h = png_size(png)
        print(f"{png}: {size} bytes, {w} x {h}")
        if size < 5000 or w < 400 or h < 200:
            print(f"{png}: too small to hold the two panels")
            return 1
    # an input that is not a timing file must be refused
    bad = os.path.join(out_dir, "bad.timing.json")
    with open(bad, "w") as f:
        f.write('{"ranks": 1}')
    r = subprocess.run([sys.executable, script, bad, "-o", os.path.join(out_dir, "bad.png")],
                       capture_output=True, text=True)
    if r.returncode == 0:
        print("plot_timing accepted a file without phases")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
