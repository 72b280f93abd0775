#!/usr/bin/env python3
"""check_dates.py DATE_CHECK: run.start_date is accepted exactly where it is a
date of run.calendar. The verdicts of the model's check (the date_check
program) for every day 0 to 32 of every month 0 to 13 of years around the
calendars' rules (leap years, century years, the standard calendar's switch
in October 1582), in each of the six calendars, against cftime's, an
independent implementation of the CF calendars; then the form of the text
(digits only, the separators, the time of day). Exit 0 or 1."""

import subprocess
import sys

import cftime

CALENDARS = ["standard", "proleptic_gregorian", "noleap", "all_leap", "360_day", "julian"]
YEARS = [1, 4, 100, 200, 1500, 1581, 1582, 1583, 1600, 1700, 1900, 2000, 2001, 2004, 2100, 9999]


def cftime_ok(cal, y, m, d):
    try:
        cftime.datetime(y, m, d, calendar=cal)
        return True
    except ValueError:
        return False


def main():
    cases = []  # (calendar, text, expected verdict)
    for cal in CALENDARS:
        for y in YEARS:
            for m in range(0, 14):
                for d in range(0, 33):
                    ok = 1 <= m <= 12 and 1 <= d <= 31 and cftime_ok(cal, y, m, d)
                    cases.append((cal, f"{y:04d}-{m:02d}-{d:02d}", ok))
        # the form of the text and the time of day, where cftime has no say
        for text, ok in [("2000-01-01 00:00:00", True), ("2000-01-01 23:59:59", True),
                         ("2000-01-01 24:00:00", False), ("2000-01-01 12:60:00", False),
                         ("2000-01-01 12:00:60", False), ("2000-+1-+1", False),
                         ("2000-01-01 +1:+2:+3", False), ("2000-1-01", False),
                         ("2000-01-01T00:00:00", False), ("2000-01-01\t00:00:00", False),
                         ("2000-01-01 ", False), (" 2000-01-01", False), ("0000-01-01", False),
                         ("-200-01-01", False), ("2000/01/01", False), ("", False)]:
            cases.append((cal, text, ok))
    run = subprocess.run([sys.argv[1]], input="".join(f"{c} {t}\n" for c, t, _ in cases),
                         capture_output=True, text=True, check=False)
    verdicts = run.stdout.splitlines()
    if run.returncode != 0 or len(verdicts) != len(cases):
        print(f"FAIL: date_check exit {run.returncode}, {len(verdicts)} verdicts for "
              f"{len(cases)} dates: {run.stderr}")
        return 1
    wrong = [(c, t, ok, v) for (c, t, ok), v in zip(cases, verdicts) if (v == "ok") != ok]
    for c, t, ok, v in wrong[:20]:
        print(f"FAIL: {c} '{t}': expected {'ok' if ok else 'bad'}, the model said {v}")
    if wrong:
        print(f"FAIL: {len(wrong)} of {len(cases)} verdicts differ")
        return 1
    bad = sum(1 for _, _, ok in cases if not ok)
    print(f"PASS: {len(cases)} dates in 6 calendars ({bad} refused) agree with cftime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
