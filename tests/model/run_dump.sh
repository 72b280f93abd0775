#!/usr/bin/env bash
# run_dump.sh OUT REGEX COMMAND...: remove OUT (tests/fresh.sh), run COMMAND
# (a dump_state run that writes OUT), and pass when it exits 0, its output
# matches the extended regex REGEX (the ranks, threads and stores it says it
# used), and it wrote OUT anew. A comparison of OUT then never reads a file
# left by an earlier run.
out="$1"; regex="$2"; shift 2
here="$(dirname "$0")"
"$here/../fresh.sh" "$out" -- "$here/../expect.sh" 0 "$regex" "$@" || exit 1
[ -s "$out" ] || { echo "run_dump.sh: $out was not written"; exit 1; }
