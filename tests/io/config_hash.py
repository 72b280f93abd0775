#!/usr/bin/env python3
"""config_hash.py HISTORY RESOLVED_INI [HISTORY RESOLVED_INI ...]

The history's config_hash computed as docs/output.md says, from the case's
resolved configuration and independently of the C code: the lines
`section.key=value\\n` of the keys that determine the solution (every key
but run.name, run.steps, run.start_date, run.calendar, grid.ranks_x,
grid.ranks_y, initial.*, solver.*, output.*), in the order of the resolved
file (that of `minimodel --config-reference`), hashed with FNV-1a's prime
from 1469598103934665603. Exit 0 when every pair agrees, 1 otherwise; also
checks that FNV-1a's own offset basis would give another value, so that the
start is tested."""
import sys

import netCDF4

NOT_SOLUTION = {"run.name", "run.steps", "run.start_date", "run.calendar", "grid.ranks_x",
                "grid.ranks_y"}
NOT_SECTIONS = {"initial", "solver", "output"}


def lines(resolved):
    section = None
    with open(resolved, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in ";#":
                continue
            if line.startswith("["):
                section = line[1:line.index("]")]
                continue
            key, value = (part.strip() for part in line.split("=", 1))
            name = f"{section}.{key}"
            if section in NOT_SECTIONS or name in NOT_SOLUTION:
                continue
            yield f"{name}={value}\n"


def fnv(text, basis):
    h = basis
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 1099511628211) % 2**64
    return f"{h:016x}"


def main(args):
    if len(args) < 2 or len(args) % 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    bad = 0
    for history, resolved in zip(args[0::2], args[1::2]):
        text = "".join(lines(resolved))
        with netCDF4.Dataset(history) as d:
            have = d.getncattr("config_hash")
        want = fnv(text, 1469598103934665603)
        if have != want:
            print(f"FAIL: {history}: config_hash {have}, computed {want}")
            bad += 1
        elif fnv(text, 14695981039346656037) == have:
            print(f"FAIL: {history}: FNV-1a's offset basis gives the same hash: the start untested")
            bad += 1
        else:
            print(f"ok: {history}: config_hash {have} as computed from {resolved}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
