#!/usr/bin/env bash
# python.readme: the first python block of the README's "## Python and JAX"
# section runs as written with the .venv's Python (the installed package),
# from an empty directory.
set -u
py="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
awk '/^## Python and JAX/ {s = 1} s && /^```python/ {b = 1; next} b && /^```/ {exit} b' \
  "$src/README.md" >"$work/example.py"
[ "$(grep -c . "$work/example.py")" -ge 10 ] || { echo "FAIL: no example found in the README"; exit 1; }
(cd "$work" && "$py" example.py) || { echo "FAIL: the README's example"; exit 1; }
echo "ok"
