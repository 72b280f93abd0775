#!/usr/bin/env python3
"""test_key_table.py MINIMODEL REFERENCE_PY: scripts/reference.py's key table
(KEYS) is the C key table that `minimodel --config-reference` prints: the
same keys in the same sections, each with the same type, default, range (and
whether it is open below) and choices. Exit 0 or 1."""

import importlib.util
import re
import subprocess
import sys

TYPES = {"integer": "int", "number": "real", "bool": "bool", "string": "str", "choice": "enum"}


def c_table(mm):
    """{(section, key): (type, default, lo, hi, lo_open, choices)} from the markdown."""
    text = subprocess.run([mm, "--config-reference"], capture_output=True, text=True,
                          check=True).stdout
    out, section = {}, None
    for line in text.splitlines():
        m = re.match(r"## \[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"\| `(\w+)` \| (\w+) \| `([^`]*)` \| [^|]* \| ([^|]*) \|", line)
        if not m:
            continue
        key, typ, default, allowed = m.group(1), TYPES[m.group(2)], m.group(3), m.group(4).strip()
        lo = hi = None
        lo_open = False
        choices = None
        r = re.match(r"([\[(])([^,]+), ([^\]]+)\]", allowed)
        if r and typ in ("int", "real"):
            lo_open, lo, hi = r.group(1) == "(", float(r.group(2)), float(r.group(3))
        elif typ == "enum":
            choices = allowed.replace(",", "|")
        out[(section, key)] = (typ, default, lo, hi, lo_open, choices)
    return out


def main():
    mm, ref = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("reference", ref)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    c = c_table(mm)
    py = {}
    for (s, k, typ, default, lo, hi, lo_open, choices) in reference.KEYS:
        big = getattr(reference, "BIG", 1e300)
        lo = None if lo is None or abs(lo) >= big else float(lo)
        hi = None if hi is None or abs(hi) >= big else float(hi)
        py[(s, k)] = (typ, default, lo, hi, bool(lo_open) and lo is not None, choices)
    bad = []
    for key in sorted(set(c) | set(py)):
        if key not in py:
            bad.append(f"{key[0]}.{key[1]}: in minimodel, not in reference.py")
        elif key not in c:
            bad.append(f"{key[0]}.{key[1]}: in reference.py, not in minimodel")
        else:
            a, b = c[key], py[key]
            names = ("type", "default", "minimum", "maximum", "open minimum", "choices")
            for name, x, y in zip(names, a, b):
                if name in ("minimum", "maximum") and x is not None and y is not None:
                    same = abs(x - y) <= 1e-12 * max(abs(x), abs(y), 1.0)
                elif name == "default" and a[0] == "real":
                    same = float(x) == float(y)
                else:
                    same = x == y
                if not same and not (name == "open minimum" and a[2] is None):
                    bad.append(f"{key[0]}.{key[1]}: {name} {x!r} in minimodel, {y!r} in "
                               f"reference.py")
    # every default within its own range or among its choices (a default
    # that is not would be left unset by mm_config_defaults)
    for (s, k), (typ, default, lo, hi, lo_open, choices) in sorted(c.items()):
        if typ in ("int", "real") and default != "":
            v = float(default)
            if (lo is not None and (v < lo or (lo_open and v == lo))) or (hi is not None and v > hi):
                bad.append(f"{s}.{k}: default {default} out of its range in minimodel")
        elif typ == "enum" and default not in choices.split("|"):
            bad.append(f"{s}.{k}: default {default!r} not one of {choices} in minimodel")
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"ok: reference.py's key table is minimodel's ({len(c)} keys)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
