#!/usr/bin/env bash
# help_env.sh MINIMODEL SOURCE_DIR: --help names every MINIMODEL_* environment
# variable the program reads (the fault-injection hooks as MINIMODEL_FAULT_*)
# and --config-reference. Fails when the scan of the sources finds too little
# to be the project's (a folder missing or without C files, fewer than
# MIN_VARS variables; all are read in model/mm_settings.c).
set -u
mm="$1"; src="$2"
MIN_VARS=10
dirs=(app model io solvers)
for d in "${dirs[@]}"; do
  [ -d "$src/$d" ] || { echo "FAIL: $src/$d: no such folder"; exit 1; }
  compgen -G "$src/$d/*.c" >/dev/null || { echo "FAIL: $src/$d: no C files"; exit 1; }
done
[ -f "$src/model/mm_settings.c" ] || { echo "FAIL: $src/model/mm_settings.c: missing"; exit 1; }
help=$("$mm" --help) || { echo "FAIL: --help exits $?"; exit 1; }
vars=$(grep -rhoE '"MINIMODEL_[A-Z_]+"' "${dirs[@]/#/$src/}" | tr -d '"' | sort -u)
n=$(grep -c . <<<"$vars")
[ "$n" -ge "$MIN_VARS" ] ||
  { echo "FAIL: only $n MINIMODEL_* variables found in ${dirs[*]}: not the project's sources?"; exit 1; }
missing=""
for v in $vars; do
  case "$v" in MINIMODEL_FAULT_*) v=MINIMODEL_FAULT_ ;; esac
  grep -q -- "$v" <<<"$help" || missing="$missing $v"
done
grep -q -- "--config-reference" <<<"$help" || missing="$missing --config-reference"
[ -z "$missing" ] || { echo "FAIL: --help does not name:$missing"; exit 1; }
echo "ok: --help names every MINIMODEL_* variable ($n found) and --config-reference"
