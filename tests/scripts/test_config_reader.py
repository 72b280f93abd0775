#!/usr/bin/env python3
"""test_config_reader.py MINIMODEL REFERENCE_PY: scripts/reference.py reads a
configuration file as the model does. Each file of test_reference.py's
CONFIG_FILES (byte-order mark, CR, CR LF and mixed line ends, indented keys
and headers, a section given twice, ...) resolves to the text that
`minimodel --dry-run` prints, and each of REFUSED_FILES is refused by both
with exit 2 and the same message, and each of VALIDATED_FILES (keys that
do not make a configuration together) with the same message but for the
file's name and line (and the model's closing "; set with it: ..." list of
where the other keys in it were given). So the values test_reference.py states are the
model's. Exit 0 or 1; 77 (skip) without numpy and netCDF4."""

import os
import re
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


def tdma_names(model, ref, tmp):
    """solver.tdma: a name that no build has is refused by both; every
    solver of this build (the names the model's refusal lists, for a step in
    host and in device memory) is read by reference.py."""
    bad = []
    for backend in ("cpu", "emulated", "cuda"):
        path = os.path.join(tmp, f"tdma_{backend}.ini")
        with open(path, "w") as f:
            f.write(f"[solver]\nbackend = {backend}\ntdma = bogus\n")
        m, r = dry_run(model, path), reference(ref, path)
        if m[0] != 2 or "not a" not in m[1] or "(available: " not in m[1]:
            bad.append(f"tdma = bogus, backend = {backend}: minimodel exit {m[0]}: {m[1]}")
            continue
        if r[0] != 2 or "solver.tdma = bogus: not a" not in r[1]:
            bad.append(f"tdma = bogus, backend = {backend}: reference.py exit {r[0]}: {r[1]}")
        # (the list ends at its ")": with backend = emulated a sentence follows)
        names = m[1].split("(available: ")[1].split(")")[0].split(", ")
        for name in names:
            with open(path, "w") as f:
                f.write(f"[solver]\nbackend = {backend}\ntdma = {name}\n")
            r = reference(ref, path)
            if r[0] != 0:
                bad.append(f"tdma = {name}, backend = {backend}: a solver of this build, "
                           f"refused by reference.py: {r[1]}")
    return bad


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
        for name, data, _want in cases.VALIDATED_FILES:
            path = os.path.join(tmp, name + ".ini")
            with open(path, "wb") as f:
                f.write(data)
            m, r = dry_run(model, path), reference(ref, path)
            # the message without "FILE:LINE: " (the model) or "FILE: ", and
            # without the model's "; set with it: KEY (FILE:LINE), ...", where
            # the other keys of the number refused were given (the reference
            # keeps no lines)
            unplaced = [re.sub(r"^" + re.escape(path) + r"(:[0-9]+)?: ", "", x[1]) for x in (m, r)]
            unplaced[0] = re.sub(r"; set with it: [^;]*$", "", unplaced[0])
            if m[0] != 2 or r[0] != 2 or unplaced[0] != unplaced[1]:
                bad.append(f"{name}: minimodel exit {m[0]}:\n{m[1]}\nreference.py exit {r[0]}:\n"
                           f"{r[1]}")
        bad += tdma_names(model, ref, tmp)
    for b in bad:
        print(b)
    n = len(cases.CONFIG_FILES) + len(cases.REFUSED_FILES) + len(cases.VALIDATED_FILES)
    print(f"ok: reference.py reads {n} files as minimodel does" if not bad
          else f"{len(bad)} of {n} files read otherwise")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
