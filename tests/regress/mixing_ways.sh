#!/usr/bin/env bash
# mixing_ways.sh INSIDE.timing.json APART.timing.json COMMAND...: runs
# COMMAND (the comparison of the two runs' histories) once the timing files
# say that the first run built kappa_w inside the solve and the second
# apart; else the comparison would be of one code with itself.
inside="$1"; apart="$2"; shift 2
grep -q '"kappa_in_solve": true' "$inside" ||
  { echo "FAIL: $inside: kappa_w was not built inside the solve"; exit 1; }
grep -q '"kappa_in_solve": false' "$apart" ||
  { echo "FAIL: $apart: kappa_w was built inside the solve"; exit 1; }
exec "$@"
