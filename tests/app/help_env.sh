#!/usr/bin/env bash
# help_env.sh MINIMODEL SOURCE_DIR: --help names every MINIMODEL_* environment
# variable the program reads (the fault-injection hooks as MINIMODEL_FAULT_*)
# and --config-reference.
mm="$1"; src="$2"
help=$("$mm" --help) || { echo "FAIL: --help exits $?"; exit 1; }
missing=""
for v in $(grep -rhoE '"MINIMODEL_[A-Z_]+"' "$src"/app "$src"/model "$src"/io "$src"/solvers |
           tr -d '"' | sort -u); do
  case "$v" in MINIMODEL_FAULT_*) v=MINIMODEL_FAULT_ ;; esac
  grep -q -- "$v" <<<"$help" || missing="$missing $v"
done
grep -q -- "--config-reference" <<<"$help" || missing="$missing --config-reference"
[ -z "$missing" ] || { echo "FAIL: --help does not name:$missing"; exit 1; }
echo "ok: --help names every MINIMODEL_* variable and --config-reference"
