#!/usr/bin/env bash
# A configuration error in any case stops the run with exit 2 before any
# computation: the first (valid) case must not have written anything.
mm="$1"; dir="$2"
rm -rf "$dir"; mkdir -p "$dir"
printf '[run]\nname = good\nsteps = 2\n[grid]\nnx = 4\nny = 4\nnz = 2\n[output]\ndir = %s/out\n' "$dir" > "$dir/good.ini"
printf '[run]\nname = bad\nsteps = 2\n[grid]\nnx = 4\nbogus = 1\n[output]\ndir = %s/out\n' "$dir" > "$dir/bad.ini"
"$mm" "$dir/good.ini" "$dir/bad.ini" > "$dir/log" 2>&1; rc=$?
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc"; cat "$dir/log"; exit 1; }
grep -q "bad.ini:6: grid.bogus: unknown key" "$dir/log" || { echo "message missing"; cat "$dir/log"; exit 1; }
[ ! -e "$dir/out" ] || { echo "output written despite the configuration error:"; ls -R "$dir/out"; exit 1; }
# and the good case alone does write there (the check above can fail)
"$mm" --quiet "$dir/good.ini" > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
[ -e "$dir/out/good.nc" ] || { echo "good case wrote no output"; exit 1; }
echo "ok"
