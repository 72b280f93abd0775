#!/usr/bin/env bash
# mpi_checked.sh SOURCE_DIR: every MPI call of app/, model/ and io/ is checked
# through the error macros (MM_MPI, MM_MPI_ERR), compared with MPI_SUCCESS, or
# marked "unchecked:" with the reason (clean-up, the end of the program).
# Lists the calls that are none of these, and fails when there is one.
src="$1"
bad=$(grep -nE 'MPI_[A-Z][a-z_]+\(' "$src"/app/*.c "$src"/model/*.c "$src"/io/*.c |
  grep -vE 'MM_MPI\(|MM_MPI_ERR\(|unchecked:|[!=]= MPI_SUCCESS|MPI_Wtime\(|MPI_Error_string\(' |
  grep -vE 'const int rc = MPI_[A-Za-z_]+\(' | grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*)')
# a call kept in rc must be checked right after: MM_MPI(rc)
for f in "$src"/app/*.c "$src"/model/*.c "$src"/io/*.c; do
  awk -v f="$f" '/const int rc = MPI_[A-Za-z_]+\(/ { want = NR } want && /MM_MPI\(rc\)/ { want = 0 }
    want && NR > want + 4 { print f ":" want ": rc of an MPI call not checked"; want = 0 }' "$f"
done >"${TMPDIR:-/tmp}/mpi_checked.$$"
bad="$bad$(cat "${TMPDIR:-/tmp}/mpi_checked.$$")"
rm -f "${TMPDIR:-/tmp}/mpi_checked.$$"
if [ -n "$bad" ]; then
  echo "MPI calls whose result is not checked:"
  echo "$bad"
  exit 1
fi
echo "ok: every MPI call is checked"
