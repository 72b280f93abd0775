#!/usr/bin/env python3
"""check_list_json.py TDMA_BENCH: `tdma-bench --list --json` prints one JSON
object per backend (it printed the table): the keys backend, exact,
device_memory, available, auto and description of the right types; the
backends those of `--list`'s table, in its order; exactly one chosen by
auto, the one the table's "auto -> NAME" names; exit 0."""
import json
import subprocess
import sys

bench = sys.argv[1]
table = subprocess.run([bench, "--list"], capture_output=True, text=True, check=True).stdout
lines = table.splitlines()
names = [line.split()[0] for line in lines[1:] if not line.startswith("auto -> ")]
auto = [line.split()[-1] for line in lines if line.startswith("auto -> ")]
r = subprocess.run([bench, "--list", "--json"], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"FAIL: exit {r.returncode}: {r.stderr}")
rows = []
for line in r.stdout.splitlines():
    try:
        rows.append(json.loads(line))
    except json.JSONDecodeError as e:
        sys.exit(f"FAIL: not a JSON line ({e}): {line!r}")
types = {"backend": str, "exact": bool, "device_memory": bool, "available": bool, "auto": bool,
         "description": str}
for row in rows:
    if set(row) != set(types) or any(not isinstance(row[k], t) for k, t in types.items()):
        sys.exit(f"FAIL: keys or types: {row}")
if [row["backend"] for row in rows] != names:
    sys.exit(f"FAIL: backends {[row['backend'] for row in rows]}, the table's {names}")
chosen = [row["backend"] for row in rows if row["auto"]]
if chosen != auto:
    sys.exit(f"FAIL: auto picks {chosen}, the table says {auto}")
if not all(row["available"] for row in rows if row["backend"] in chosen):
    sys.exit("FAIL: auto picks a backend that is not available")
print(f"ok: {len(rows)} backends as JSON lines, auto -> {chosen[0]}")
