#!/usr/bin/env bash
# stream_is_output.sh MINIMODEL SOURCE_DIR WORK MPIEXEC [ITS OPTIONS...]
# A run whose standard output or error is one of the files it writes
# (`minimodel c.ini > output/c.nc`, or the launcher's under mpirun) is
# refused with exit 2 before anything is written: the progress and the
# table went into the history, which the run then reported "ok" though no
# library could read it; a lock file given as the log was removed at the
# end. A log beside the outputs is fine.
set -u
mm="$1"; src="$2"; work="$3"; mpiexec=("${@:4}")
rm -rf "$work"
mkdir -p "$work/out"
fail() { echo "FAIL: $*"; ls -la "$work/out"; exit 1; }
cfg="$src/configs/flat.ini"
run=(--set output.dir="$work/out" --set run.steps=2 --set grid.nx=8 --set grid.ny=6 --set grid.nz=4)
expect_refused() { # NAME RC LOG REGEX
  [ "$2" -eq 2 ] || fail "$1: exit $2, expected 2"
  grep -qE "$4" "$3" || fail "$1: no message matching '$4' in: $(cat "$3")"
  ! ls "$work/out" | grep -qv "^flat\.\(nc\|lock\|timing\.json\)$\|^log$" ||
    fail "$1: files written: $(ls "$work/out")"
  echo "ok: $1"
}
# stdout is the history (made by the shell before the run)
"$mm" "${run[@]}" "$cfg" >"$work/out/flat.nc" 2>"$work/err"
expect_refused "stdout = history" $? "$work/err" \
  "flat.ini: the standard output is the case's history file \(.*/out/flat.nc\), which the run writes: redirect it to another file"
[ ! -s "$work/out/flat.nc" ] || fail "stdout = history: something was written into it"
# stderr is the lock file, which the run would remove at its end
"$mm" "${run[@]}" "$cfg" >/dev/null 2>"$work/out/flat.lock"
expect_refused "stderr = lock" $? "$work/out/flat.lock" "the standard error is the case's lock file"
[ -f "$work/out/flat.lock" ] || fail "stderr = lock: the file is gone"
rm -f "$work/out/flat.lock"
# under the launcher, its stdout is where the ranks' output goes
timeout -k 10 120 "${mpiexec[@]}" -np 2 "$mm" "${run[@]}" "$cfg" >"$work/out/flat.timing.json" 2>&1
expect_refused "mpiexec stdout = timing file" $? "$work/out/flat.timing.json" \
  "the launcher's standard output \(where the ranks' goes\) is the case's timing file"
rm -f "$work/out/flat.timing.json"
# mpiexec started where a rank variable is set already (a shell of another
# job): the launcher is told from its ranks' wrappers by the values
PMIX_RANK=0 OMPI_COMM_WORLD_SIZE=7 timeout -k 10 120 "${mpiexec[@]}" -np 2 "$mm" "${run[@]}" "$cfg" \
  >"$work/out/flat.nc" 2>&1
expect_refused "mpiexec with inherited rank variables" $? "$work/out/flat.nc" \
  "the launcher's standard output \(where the ranks' goes\) is the case's history file"
rm -f "$work/out/flat.nc"
# mpiexec as the first process of a PID namespace (a container's entry
# point), where it can be made here
if unshare -pf --mount-proc true 2>/dev/null; then
  unshare -pf --mount-proc timeout -k 10 120 "${mpiexec[@]}" -np 2 "$mm" "${run[@]}" "$cfg" \
    >"$work/out/flat.nc" 2>&1
  expect_refused "mpiexec as process 1" $? "$work/out/flat.nc" \
    "the launcher's standard output \(where the ranks' goes\) is the case's history file"
  rm -f "$work/out/flat.nc"
else
  echo "skipped: mpiexec as process 1 (unshare -p not permitted here)"
fi
# a dry run writes no file: its text goes where it is sent
"$mm" --dry-run "${run[@]}" "$cfg" >"$work/out/flat.nc" 2>&1 || fail "a dry run into flat.nc: exit $?"
grep -q "^name = flat" "$work/out/flat.nc" || fail "a dry run into flat.nc: no text"
echo "ok: a dry run into flat.nc"
rm -f "$work/out/flat.nc"
# a link at a renamed file's name to the log: the rename replaces the link,
# the log is kept
ln -s ../log2 "$work/out/flat.timing.json"
"$mm" "${run[@]}" "$cfg" >"$work/log2" 2>&1 || fail "a link at the timing file to the log: exit $?: $(cat "$work/log2")"
grep -q "summary of 1 case" "$work/log2" || fail "a link at the timing file to the log: the log lost"
[ ! -L "$work/out/flat.timing.json" ] || fail "the link at the timing file was not replaced"
echo "ok: a link at the timing file's name to the log"
# a second name (a hard link) of the timing file at the crash file's name:
# the run removes both, and the log went with them; refused
"$mm" "${run[@]}" "$cfg" >/dev/null 2>&1 || fail "a run to make the timing file: exit $?"
ln -f "$work/out/flat.timing.json" "$work/out/flat.crash.nc"
"$mm" "${run[@]}" "$cfg" >"$work/out/flat.timing.json" 2>"$work/err"
rc=$?
[ $rc -eq 2 ] || fail "stdout = timing file with a second name: exit $rc, expected 2"
grep -q "the standard output is the case's crash file" "$work/err" ||
  fail "stdout = timing file with a second name: $(cat "$work/err")"
echo "ok: stdout = the timing file with a second name that the run removes too"
rm -rf "$work/out"; mkdir -p "$work/out"
# the restart file's name, in a case that writes no restart (restart_interval
# 0): the run leaves it alone, so the log is kept; with restarts, refused
"$mm" "${run[@]}" "$cfg" >"$work/out/flat.restart.nc" 2>&1 ||
  fail "stdout = the restart file of a case without restarts: exit $?"
grep -q "summary of 1 case" "$work/out/flat.restart.nc" || fail "the log at the restart file's name lost"
"$mm" "${run[@]}" --set output.restart_interval=1 "$cfg" >"$work/out/flat.restart.nc" 2>"$work/err"
rc=$?
[ $rc -eq 2 ] && grep -q "the standard output is the case's restart file" "$work/err" ||
  fail "stdout = the restart file of a case with restarts: exit $rc: $(cat "$work/err")"
echo "ok: the restart file's name as the log, refused only where the case writes restarts"
rm -rf "$work/out"; mkdir -p "$work/out"
# a pipe to a program writing the history's name (`| tee out/flat.nc`) is
# not seen; the run makes a new history, not written over the file tee
# holds, so the history reads (it had the log written into it, and exit 0)
"$mm" "${run[@]}" "$cfg" >/dev/null 2>&1 || fail "a first run: exit $?"
# (the file opened before the run starts, as tee has it open by then, in
# all but a race the test would lose: tee started late truncates the new
# history)
exec 3>"$work/out/flat.nc"
"$mm" "${run[@]}" "$cfg" 2>&1 | cat >&3
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "| tee the history: exit ${PIPESTATUS[0]}"
exec 3>&-
ncdump -h "$work/out/flat.nc" >/dev/null 2>&1 || fail "| tee the history: the history does not read"
echo "ok: | tee the history's name: the history reads"
rm -rf "$work/out"; mkdir -p "$work/out"
# a run again replaces the history by a new file: a hard link kept to the
# earlier one keeps its records
"$mm" "${run[@]}" "$cfg" >/dev/null 2>&1 || fail "a first run: exit $?"
ln "$work/out/flat.nc" "$work/kept.nc" && cp "$work/kept.nc" "$work/copy.nc"
"$mm" "${run[@]}" --set output.interval=1 "$cfg" >/dev/null 2>&1 || fail "a second run: exit $?"
cmp -s "$work/kept.nc" "$work/copy.nc" || fail "a hard link to the earlier history was written over"
cmp -s "$work/kept.nc" "$work/out/flat.nc" && fail "the second run left the earlier history at the name"
ncdump -h "$work/out/flat.nc" | grep -q "time = UNLIMITED ; // (3 currently)" ||
  fail "the second history: $(ncdump -h "$work/out/flat.nc" | grep 'time =')"
echo "ok: a hard link to the earlier history keeps it"
rm -rf "$work/out"; mkdir -p "$work/out"
# a log in the output folder, not one of the outputs: runs
"$mm" "${run[@]}" "$cfg" >"$work/out/log" 2>&1 || fail "a log beside the outputs: exit $?: $(cat "$work/out/log")"
ncdump -h "$work/out/flat.nc" >/dev/null || fail "a log beside the outputs: the history does not read"
echo "ok: a log beside the outputs"
