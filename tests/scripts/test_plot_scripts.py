#!/usr/bin/env python3
"""test_plot_scripts.py: scripts/plot_fields.py and scripts/plot_timing.py
on bad outputs and inputs: one line naming the problem and the documented
exit status, never a traceback; the name printed is the file written.

    python3 tests/scripts/test_plot_scripts.py

Makes a tiny history with scripts/reference.py and a timing file of its own.
Exit 0 or 1; 77 (skip) without numpy, netCDF4, xarray and matplotlib."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script_tests  # noqa: E402

script_tests.need("test_plot_scripts.py", ("numpy", "netCDF4", "xarray", "matplotlib"))

ROOT = script_tests.ROOT
SCRIPTS = os.path.join(ROOT, "scripts")

PHASES = ("halo", "horizontal", "mixing", "solve", "diagnostics", "output", "step")


def run(script, *args):
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, script)] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expect(what, result, code, message):
    """A list of what is wrong with (exit, stdout, stderr) against the exit
    status code and a message on one line of stderr."""
    rc, out, err = result
    bad = []
    if rc != code:
        bad.append(f"{what}: exit {rc}, want {code}")
    if message not in err or "Traceback" in err or len(err.strip().splitlines()) != 1:
        bad.append(f"{what}: stderr {err!r}, want one line with {message!r}")
    return bad


def timing_file(path):
    d = {"name": "t", "ranks": 1, "steps": 2,
         "phases": {p: {"mean_s": 1e-3, "total_s": 2e-3} for p in PHASES},
         "per_step": [{"step": n, "step_s": 2e-3, "solve_s": 1e-3} for n in (1, 2)]}
    with open(path, "w") as f:
        json.dump(d, f)


def check_plot_timing(tmp):
    bad = []
    good = os.path.join(tmp, "run.timing.json")
    timing_file(good)
    for name, text in (("list", "[1]"), ("null", "null"), ("no_phases", '{"ranks": 1}'),
                       ("phases_list", '{"ranks": 1, "steps": 1, "phases": [], "per_step": []}')):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        bad += expect(f"plot_timing {name}", run("plot_timing.py", path), 1,
                      "not a minimodel timing file")
    bad += expect("plot_timing -o x.xyz", run("plot_timing.py", good, "-o",
                                              os.path.join(tmp, "x.xyz")), 2,
                  "matplotlib cannot write .xyz files (it writes")
    # -o without an extension: matplotlib adds .png; the name printed is that file
    fig = os.path.join(tmp, "fig")
    rc, out, err = run("plot_timing.py", good, "-o", fig)
    if rc != 0 or out.strip() != fig + ".png" or not os.path.isfile(fig + ".png"):
        bad.append(f"plot_timing -o fig: exit {rc}, printed {out.strip()!r}, want {fig}.png "
                   f"written {err!r}")
    rc, out, err = run("plot_timing.py", good, "-o", os.path.join(tmp, "fig.pdf"))
    if rc != 0 or out.strip() != os.path.join(tmp, "fig.pdf"):
        bad.append(f"plot_timing -o fig.pdf: exit {rc}, printed {out.strip()!r} {err!r}")
    return bad


def check_plot_fields(tmp):
    ini = os.path.join(tmp, "h.ini")
    with open(ini, "w") as f:
        f.write("[run]\nname = h\nsteps = 2\n[grid]\nnx = 4\nny = 3\nnz = 3\n")
    history = os.path.join(tmp, "h.nc")
    rc, _out, err = run("reference.py", ini, "--quiet", "--output", history)
    if rc != 0:
        return [f"reference.py: exit {rc} {err}"]
    bad = []
    existing = os.path.join(tmp, "a.ini")
    with open(existing, "w") as f:
        f.write("[run]\n")
    bad += expect("plot_fields -o FILE", run("plot_fields.py", history, "-o", existing), 2,
                  f"-o {existing}: is a file, not a folder")
    with open(existing) as f:
        if f.read() != "[run]\n":
            bad.append("plot_fields -o FILE: the file was changed")
    rc, out, err = run("plot_fields.py", history, "-o", os.path.join(tmp, "pictures"))
    written = out.split()
    if rc != 0 or len(written) != 3 or not all(os.path.isfile(p) for p in written):
        bad.append(f"plot_fields -o DIR: exit {rc}, printed {out!r} {err!r}")
    return bad


def main():
    with tempfile.TemporaryDirectory() as tmp:
        bad = check_plot_timing(tmp) + check_plot_fields(tmp)
    for b in bad:
        print(b)
    print("ok" if not bad else f"{len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
