#!/usr/bin/env python3
"""cf_check.py MINIMODEL SOURCE_DIR WORK: the history and restart files of
several configurations pass the IOOS compliance-checker's CF-1.8 checks with
no high- or medium-priority finding and the CF community's own checker
(NCAS cfchecks) with no error and no warning, and xarray decodes their time
axis as dates (run.start_date, run.calendar). Exit 0 or 1.

cfchecks exits 0 only without errors and warnings. It reads its tables
from the network unless given files: here the standard-name table that
compliance-checker ships, and the minimal area-type and region tables
beside this script (the files use neither). A copy of a history with
invalid units must fail it, so that a checker that checks nothing fails.

The checker runs with --criteria normal: its exit status is 0 when no high-
or medium-priority check fails, 1 when one does, 2 when a check raised an
exception (or the command line was refused). Its report is deleted before
each check and must be written anew; a status other than 0 fails, 1 with the
findings of the report."""

import json
import os
import subprocess
import sys

CASES = [  # config, extra --set, the dates of the first two records, calendar
    ("flat", [], ("2000-01-01T00:00:00", "2000-01-01T02:30:00"), "standard"),
    ("gyre_bowl", ["run.start_date=1990-06-01 12:00:00"],
     ("1990-06-01T12:00:00", "1990-06-01T22:00:00"), "standard"),
    ("channel_stretched", ["run.start_date=0001-01-01", "run.calendar=noleap"],
     ("0001-01-01T00:00:00", "0001-01-01T03:20:00"), "noleap"),
]


def cfchecks_command(venv):
    """The cfchecks command line, without the file, or None."""
    cfchecks = os.path.join(venv, "cfchecks")
    try:
        import compliance_checker
    except ImportError:
        return None
    names = os.path.join(os.path.dirname(compliance_checker.__file__), "data",
                         "cf-standard-name-table.xml")
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.access(cfchecks, os.X_OK) or not os.path.isfile(names):
        return None
    return [cfchecks, "-v", "1.8", "-s", names,
            "-a", os.path.join(here, "cf_area_type_table.xml"),
            "-r", os.path.join(here, "cf_region_names.xml")]


def cfchecks_findings(command, path):
    """(exit status, the ERROR and WARN lines) of cfchecks on path."""
    r = subprocess.run(command + [path], capture_output=True, text=True)
    out = r.stdout + r.stderr
    lines = [ln.strip() for ln in out.splitlines()
             if ln.lstrip().startswith(("ERROR:", "WARN:", "FATAL:", "Traceback"))]
    if "ERRORS detected:" not in out:  # it did not get to the end
        lines.append(f"no summary: {out[-300:]!r}")
    return r.returncode, lines


def main():
    mm, src, work = sys.argv[1:4]
    venv = os.path.dirname(sys.executable)
    checker = os.path.join(venv, "compliance-checker")
    if not os.access(checker, os.X_OK):
        print(f"FAIL: no compliance-checker in {venv} (scripts/setup installs it)")
        return 1
    cfchecks = cfchecks_command(venv)
    if cfchecks is None:
        print(f"FAIL: no cfchecks (or compliance-checker's standard-name table) in {venv} "
              "(scripts/setup installs cfchecker)")
        return 1
    import xarray as xr
    os.makedirs(work, exist_ok=True)
    bad = []
    for cfg, sets, dates, calendar in CASES:
        steps = None
        with open(os.path.join(src, "configs", f"{cfg}.ini")) as f:
            for line in f:
                if line.split("=")[0].strip() == "steps":
                    steps = int(line.split("=")[1].split(";")[0])
                    break
        args = [mm, "--quiet", "--set", f"output.dir={work}",
                "--set", f"output.restart_interval={steps}"]
        for s in sets:
            args += ["--set", s]
        r = subprocess.run(args + [os.path.join(src, "configs", f"{cfg}.ini")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"{cfg}: minimodel exit {r.returncode}: {r.stderr[-500:]}")
            continue
        for path in (f"{work}/{cfg}.nc", f"{work}/{cfg}.restart.nc"):
            out = f"{path}.cc.json"
            try:  # a report of an earlier run must not stand in for this one
                os.remove(out)
            except FileNotFoundError:
                pass
            r = subprocess.run([checker, "--test", "cf:1.8", "--criteria", "normal",
                                "-f", "json", "-o", out, path], capture_output=True, text=True)
            if r.returncode not in (0, 1):
                bad.append(f"{path}: compliance-checker exit {r.returncode} (a check raised an "
                           f"exception, or it refused the command line): {r.stderr[-500:]}")
                continue
            try:
                with open(out) as f:
                    res = json.load(f)["cf:1.8"]
            except (OSError, ValueError, KeyError) as e:
                bad.append(f"{path}: no report from the compliance-checker (exit "
                           f"{r.returncode}: {e})")
                continue
            found = False
            for level in ("high", "medium"):
                if res[f"{level}_count"]:
                    found = True
                    msgs = [m for p in res[f"{level}_priorities"] for m in p["msgs"]]
                    bad.append(f"{path}: {res[level + '_count']} {level}-priority findings: "
                               f"{msgs[:4]}")
            if r.returncode != 0:
                if not found:
                    bad.append(f"{path}: compliance-checker exit {r.returncode}: a check failed "
                               "at the normal criteria, yet the report holds no high- or "
                               "medium-priority finding")
                continue
            if not found:
                print(f"ok: {os.path.basename(path)}: no high- or medium-priority CF finding "
                      f"({res['low_count']} low)")
            rc, lines = cfchecks_findings(cfchecks, path)
            if rc != 0 or lines:
                bad.append(f"{path}: cfchecks exit {rc}: {lines[:4]}")
            else:
                print(f"ok: {os.path.basename(path)}: cfchecks finds no error and no warning")
        with xr.open_dataset(f"{work}/{cfg}.nc") as ds:
            # record 0 is the initial state, at run.start_date
            for i, want in enumerate(dates):
                t = ds["time"].values[i]
                text = t.isoformat() if hasattr(t, "isoformat") else str(t)
                if not text.startswith(want):
                    bad.append(f"{cfg}: xarray decodes time[{i}] as {text!r}, want {want}")
            if ds["time"].encoding.get("calendar") != calendar:
                bad.append(f"{cfg}: calendar {ds['time'].encoding.get('calendar')!r}, want "
                           f"{calendar}")
        print(f"ok: {cfg}: xarray decodes time as dates ({text}, {calendar})")
    # the negative control: invalid units in a copy of a history
    import shutil
    import netCDF4
    wrong = os.path.join(work, "wrong_units.nc")
    shutil.copyfile(f"{work}/{CASES[0][0]}.nc", wrong)
    with netCDF4.Dataset(wrong, "a") as ds:
        ds["temp"].units = "degrees_nonsense"
    rc, lines = cfchecks_findings(cfchecks, wrong)
    if rc == 0 or not any("Invalid units" in ln for ln in lines):
        bad.append(f"cfchecks passed a history with invalid units (exit {rc}): {lines[:4]}")
    else:
        print(f"ok: cfchecks refuses invalid units (exit {rc})")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
