#!/usr/bin/env python3
"""test_config_reader.py MINIMODEL REFERENCE_PY: scripts/reference.py reads a
configuration file as the model does. Each file of test_reference.py's
CONFIG_FILES (byte-order mark, CR, CR LF and mixed line ends, indented keys
and headers, a section given twice, ...) resolves to the text that
`minimodel --dry-run` prints, and each of REFUSED_FILES is refused by both
with exit 2 and the same message. So the values test_reference.py states are
the model's. Exit 0 or 1; 77 (skip) without numpy and netCDF4."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference as cases  # noqa: E402  (re-runs under .venv, or exits 77)


def dry_run(model, path):
    """(exit status, resolved text or the error line) of minimodel --dry-run."""
    r = subprocess.run([model, "--dry-run", path], capture_output=True, text=True)
    if r.returncode == 0:
        return 0, r.stdout.split("\n# ")[0].rstrip("\n") + "\n"
    lines = [x for x in r.stderr.splitlines() if x.startswith("minimodel: error: ")]
    return r.returncode, lines[0][len("minimodel: error: "):] if lines else r.stderr


def reference(ref, path):
    """(exit status, resolved text or the message) of reference.py's reader."""
    try:
        return 0, ref.config_text(ref.load_config(path))
    except ref.ConfigError as e:
        return 2, str(e)


def main():
    if len(sys.argv) != 3:
        print("usage: test_config_reader.py MINIMODEL REFERENCE_PY", file=sys.stderr)
        return 2
    model, reference_py = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(reference_py)))
    import reference as ref
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, _want in cases.CONFIG_FILES + cases.REFUSED_FILES:
            path = os.path.join(tmp, name + ".ini")
            with open(path, "wb") as f:
                f.write(data)
            m, r = dry_run(model, path), reference(ref, path)
            if m != r:
                bad.append(f"{name}: minimodel exit {m[0]}:\n{m[1]}\nreference.py exit {r[0]}:\n"
                           f"{r[1]}")
    for b in bad:
        print(b)
    n = len(cases.CONFIG_FILES) + len(cases.REFUSED_FILES)
    print(f"ok: reference.py reads {n} files as minimodel does" if not bad
          else f"{len(bad)} of {n} files read otherwise")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
