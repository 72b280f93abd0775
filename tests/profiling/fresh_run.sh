#!/usr/bin/env bash
# fresh_run.sh DIR NAME COMMAND...: runs COMMAND (a run of case NAME writing
# into DIR) after removing what an earlier run of NAME left there
# (NAME.timing.json, NAME.nc, ...; tests/fresh.sh), so that the tests that
# read these files read this run's, not a stale one. Creates DIR when missing.
set -u
dir="$1"; name="$2"; shift 2
mkdir -p "$dir" || exit 1
exec "$(dirname "$0")/../fresh.sh" "$dir/$name".* -- "$@"
