#!/usr/bin/env bash
# mpi_checked.sh SOURCE_DIR: every MPI call of the program's C sources (app/,
# model/, model/bench/, io/, solvers/) is checked through the error macros
# (MM_MPI, MM_MPI_ERR), compared with MPI_SUCCESS, kept in `rc` and checked
# within 4 lines (MM_MPI(rc)), or marked "unchecked:" with the reason
# (clean-up, the end of the program). A wrapper of MPI's profiling interface
# (app/file_watch.c) is not a call where it is defined (`int MPI_X(` at the
# start of a line), and its PMPI_ call's code goes back to its caller (kept
# in `const int code` or returned). Each call counts: a line with two calls
# and one check fails. Lists the calls that are none of these, and fails when
# there is one, or when the scan finds too little to be the project's sources
# (a folder missing or without C files, fewer than MIN_CALLS calls).
set -u
src="$1"
MIN_CALLS=50
dirs=(app model model/bench io solvers)
files=()
for d in "${dirs[@]}"; do
  [ -d "$src/$d" ] || { echo "FAIL: $src/$d: no such folder"; exit 1; }
  found=0
  for f in "$src/$d"/*.c "$src/$d"/*.h; do
    [ -f "$f" ] || continue
    files+=("$f")
    found=1
  done
  [ "$found" = 1 ] || { echo "FAIL: $src/$d: no C files"; exit 1; }
done
# per line: the MPI calls (MPI_Wtime and MPI_Error_string cannot fail) and
# the checks; comment lines skipped
report=$(awk '
  FNR == 1 { want = 0 }
  /^[ \t]*(\/\*|\*)/ { next }
  /^int MPI_[A-Za-z_]+\(/ { next }
  {
    line = $0
    calls = gsub(/MPI_[A-Z][a-z_]+\(/, "&", line) - gsub(/MPI_(Wtime|Error_string)\(/, "&", line)
    if (calls > 0) {
      total += calls
      checked = gsub(/MM_MPI\(MPI_|MM_MPI_ERR\(MPI_|[!=]= MPI_SUCCESS|(^|[^A-Za-z_])rc = MPI_|const int code = PMPI_|return PMPI_/, "&", line)
      if (line !~ /unchecked:/ && checked < calls)
        printf "%s:%d: %d MPI call(s), %d checked: %s\n", FILENAME, FNR, calls, checked, $0
    }
    # a call kept in rc must be checked right after: MM_MPI(rc)
    if (line ~ /(^|[^A-Za-z_])rc = MPI_[A-Za-z_]+\(/) want = FNR
    else if (want && line ~ /MM_MPI\(rc\)/) want = 0
    else if (want && FNR > want + 4) { print FILENAME ":" want ": rc of an MPI call not checked"; want = 0 }
  }
  END { print "TOTAL " total + 0 }' "${files[@]}")
total=$(sed -n 's/^TOTAL //p' <<<"$report")
bad=$(grep -v '^TOTAL ' <<<"$report")
if [ -n "$bad" ]; then
  echo "MPI calls whose result is not checked:"
  echo "$bad"
  exit 1
fi
if [ "$total" -lt "$MIN_CALLS" ]; then
  echo "FAIL: only $total MPI calls in ${#files[@]} files of ${dirs[*]}: not the project's sources?"
  exit 1
fi
echo "ok: every MPI call is checked ($total calls in ${#files[@]} files of ${dirs[*]})"
