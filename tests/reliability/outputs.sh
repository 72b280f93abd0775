#!/usr/bin/env bash
# outputs.sh MODE MINIMODEL PYTHON SOURCE_DIR WORK
# No run silently replaces the output of another, or its own input:
#  duplicate: two cases of one invocation that would write one file (the
#     same output.dir spelt two ways, run.name a and a.restart, one file
#     given twice, an output of one that is a link to an output of the
#     other) are refused with exit 2 before any case runs;
#  own_input: an initial.file or initial.restart that is the case's own
#     history, restart or crash file (also through a symbolic link) is
#     refused with exit 2, and nothing is written; continuing in place
#     (initial.restart = its own restart file) still works; another case's
#     output as an input is refused (a later case would replace it after it
#     is read, an earlier one before), except an earlier case's restart file
#     as initial.restart (a chain), which runs;
#     The case's own resolved configuration as its configuration file is
#     run where it reproduces the case (the same text written back), and
#     refused with a --set or as another case's file;
#  output_dir: an output.dir that is a file, a link to nothing, a loop of
#     links or under a file, or one whose files' absolute paths would be
#     too long, is refused with exit 2 before any case runs; so is a FIFO, a
#     device or a file of /proc at the history's name (or linked there);
#  lock: a second run of a case that is running (held with SIGSTOP once it
#     has written its history file) is refused with exit 2, naming the lock
#     file and the pid holding it, and the first ends intact (bit for bit a
#     run alone); a lock held by another program is refused too; a lock
#     file left by a killed run does not block; a lock file name that is a
#     symbolic link, a directory or a FIFO is refused, and nothing is
#     written through it.
set -u
mode="$1"; mm="$2"; py="$3"; src="$4"; work="$5"
ini="$src/configs/gyre_bowl.ini"
fail() { echo "FAIL: $mode: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 5 120 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" >"$work/log" 2>&1; }
# expect CODE REGEX ARGS...: a run ends with CODE and its output matches REGEX
expect() {
  local code="$1" regex="$2"; shift 2
  run "$@"; local rc=$?
  [ $rc = "$code" ] || fail "exit $rc, expected $code: $*"
  grep -qE -- "$regex" "$work/log" || fail "output does not match /$regex/: $*"
}
sums() { (cd "$work/out" && md5sum -- * 2>/dev/null); }
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
rm -rf "$work"; mkdir -p "$work/x"
cd "$work" || exit 1
case_ini() { # FILE NAME DIR [more lines]: a short case
  local f="$1" name="$2" dir="$3"; shift 3
  { printf '[run]\nname = %s\nsteps = 4\n[grid]\nnx = 12\nny = 10\nnz = 4\n[output]\ndir = %s\nrestart_interval = 2\n' \
      "$name" "$dir"; printf '%s\n' "$@"; } >"$f"
}

case "$mode" in
duplicate)
  case_ini a.ini flat out/
  case_ini b.ini flat ./x/../out
  case_ini c.ini flat.restart out
  case_ini d.ini other out
  expect 2 "cases 1 \(a.ini\) and 2 \(b.ini\) would both write $work/out/flat.nc .*give one of them another run.name or output.dir" a.ini b.ini
  [ ! -e out ] || fail "a.ini b.ini: something was written before the refusal"
  # a run.name whose history is another name's restart file is refused by
  # itself (across invocations too, where no case sees the other)
  expect 2 "c.ini:2: run.name = flat.restart: must not end in .restart" d.ini a.ini c.ini
  [ ! -e out ] || fail "d.ini a.ini c.ini: something was written before the refusal"
  expect 2 "cases 1 \(a.ini\) and 2 \(a.ini\) would both write $work/out/flat.nc" a.ini a.ini
  # cases that share output.dir but no file run, and both write their files
  expect 0 "" a.ini d.ini
  [ -f out/flat.nc ] && [ -f out/other.nc ] || fail "a.ini d.ini: a history file is missing"
  # two directories, one file: out2/flat.nc is a link to out/other.nc
  case_ini e.ini flat out2
  mkdir out2 && ln -s ../out/other.nc out2/flat.nc
  before=$(sums)
  expect 2 "cases 1 \(e.ini\) and 2 \(d.ini\) would both write $work/out/other.nc \(through the symbolic link $work/out2/flat.nc\)" e.ini d.ini
  [ "$(sums)" = "$before" ] || fail "e.ini d.ini: the refused run changed the files in out/"
  # a history's name that is a link, in one directory, to another case's
  # history (it was written through, exit 0: case 1's history held case 2's
  # records), to another case's restart file, or to its own case's; in two
  # directories, to a history not made yet (a dangling link)
  case_ini h.ini linked out
  ln -s other.nc out/linked.nc
  before=$(sums)
  expect 2 "cases 1 \(d.ini\) and 2 \(h.ini\) would both write $work/out/other.nc \(through the symbolic link $work/out/linked.nc\)" d.ini h.ini
  [ "$(sums)" = "$before" ] || fail "d.ini h.ini: the refused run changed the files in out/"
  ln -sf flat.restart.nc out/linked.nc
  before=$(sums)
  expect 2 "would both write $work/out/flat.restart.nc \(through the symbolic link $work/out/linked.nc\)" h.ini a.ini
  [ "$(sums)" = "$before" ] || fail "h.ini a.ini: the refused run changed the files in out/"
  ln -sf linked.restart.nc out/linked.nc
  before=$(sums)
  expect 2 "h.ini: its history file and its restart file would be one file, $work/out/linked.restart.nc \(through the symbolic link $work/out/linked.nc\)" h.ini
  [ "$(sums)" = "$before" ] || fail "h.ini: the refused runs changed the files in out/"
  case_ini i.ini fresh out5
  case_ini j.ini late out6
  mkdir out6 && ln -s ../out5/fresh.nc out6/late.nc
  expect 2 "cases 1 \(i.ini\) and 2 \(j.ini\) would both write $work/out5/fresh.nc \(through the symbolic link $work/out6/late.nc\)" i.ini j.ini
  [ ! -e out5 ] || fail "i.ini j.ini: something was written before the refusal"
  rm out/linked.nc
  before=$(sums)
  # a case's output.dir that is another case's file, or under it (it failed
  # with exit 1 after the other case had run)
  case_ini k.ini k out/other.nc
  expect 2 "k.ini:9: output.dir = out/other.nc is case 1's \(d.ini\) history file \($work/out/other.nc\)" d.ini k.ini
  case_ini l.ini l out/other.timing.json/sub
  expect 2 "l.ini:9: output.dir = out/other.timing.json/sub is under case 1's \(d.ini\) timing file" d.ini l.ini
  [ "$(sums)" = "$before" ] || fail "k.ini, l.ini: the refused runs changed the files in out/"
  # a link at the name of a file renamed into place is no clash: the rename
  # replaces the link
  case_ini f.ini other2 out3
  mkdir out3 && ln -s ../out/flat.restart.nc out3/other2.restart.nc
  ln -s ../out/other.nc out3/other2.timing.json # the same for the timing file
  cp out/other.nc other_before.nc
  expect 0 "" a.ini f.ini
  [ -f out3/other2.restart.nc ] && [ ! -L out3/other2.restart.nc ] ||
    fail "a.ini f.ini: the restart file did not replace the link"
  [ -f out3/other2.timing.json ] && [ ! -L out3/other2.timing.json ] ||
    fail "a.ini f.ini: the timing file did not replace the link"
  cmp -s out/other.nc other_before.nc || fail "a.ini f.ini: the file a timing link named was written"
  # a link at the name of a .tmp that is written and renamed (the timing file,
  # the resolved configuration): the .tmp is made anew, the file the link
  # names is not written (it was: fopen followed the link)
  case_ini g.ini other3 out4
  mkdir out4 && echo precious >victim.txt
  ln -s ../victim.txt out4/other3.timing.json.tmp
  ln -s ../victim.txt out4/other3.resolved.ini.tmp
  ln -s ../victim.txt out4/other3.restart.nc.tmp
  expect 0 "" g.ini
  [ "$(cat victim.txt)" = precious ] || fail "g.ini: the file a .tmp link named was written"
  [ -f out4/other3.timing.json ] && [ ! -L out4/other3.timing.json ] &&
    [ -f out4/other3.resolved.ini ] && [ ! -L out4/other3.resolved.ini ] ||
    fail "g.ini: the timing file or the resolved configuration is a link"
  [ -f out4/other3.restart.nc ] && [ ! -L out4/other3.restart.nc ] ||
    fail "g.ini: the restart file is a link"
  ;;
own_input)
  case_ini a.ini flat out
  run a.ini || fail "first run"
  ln -s out/flat.nc history_link.nc
  cp out/flat.restart.nc out/flat.crash.nc # a crash file, as after a blow-up
  before=$(sums)
  expect 2 "--set: initial.file = out/flat.restart.nc is this case's own restart file \($work/out/flat.restart.nc\), which the run replaces" \
    --set initial.file=out/flat.restart.nc a.ini
  expect 2 "--set: initial.file = ./out/../out/flat.nc is this case's own history file" \
    --set initial.file=./out/../out/flat.nc a.ini
  expect 2 "--set: initial.file = out/flat.crash.nc is this case's own crash file" \
    --set initial.file=out/flat.crash.nc a.ini
  expect 2 "--set: initial.restart = history_link.nc is this case's own history file \($work/out/flat.nc\)" \
    --set initial.restart=history_link.nc a.ini
  expect 2 "--set: initial.restart = out/flat.crash.nc is this case's own crash file" \
    --set initial.restart=out/flat.crash.nc a.ini
  [ "$(sums)" = "$before" ] || fail "a refused run changed the files in out/"
  # the case's own resolved configuration as its configuration file: run
  # again as it is (the same text written back), it reproduces the case;
  # with a --set, or as the file of another case, it is refused unchanged
  rm out/flat.crash.nc
  cp out/flat.resolved.ini resolved_before.ini
  before=$(sums)
  expect 2 "out/flat.resolved.ini: this configuration file is this case's own resolved configuration \($work/out/flat.resolved.ini\), which the run would replace with another text" \
    --set run.steps=6 out/flat.resolved.ini
  [ "$(sums)" = "$before" ] || fail "a refused run changed the files in out/"
  # edited into another case (run.name = other), it is the file case 1
  # (a.ini) writes
  sed 's/^name = flat$/name = other/' resolved_before.ini >out/flat.resolved.ini
  cp out/flat.resolved.ini edited.ini
  expect 2 "out/flat.resolved.ini: this configuration file is case 1's resolved configuration" \
    a.ini out/flat.resolved.ini
  cmp -s edited.ini out/flat.resolved.ini || fail "a refused run changed the edited file"
  cp resolved_before.ini out/flat.resolved.ini
  [ "$(sums)" = "$before" ] || fail "a refused run changed the files in out/"
  cp out/flat.nc first.nc
  expect 0 "" out/flat.resolved.ini
  cmp -s resolved_before.ini out/flat.resolved.ini || fail "the resolved configuration run again changed"
  cmp_nc first.nc out/flat.nc || fail "the case run again from its resolved configuration differs"
  # continuing in place from its own restart file (step 4) to step 6
  expect 0 "" --set initial.restart=out/flat.restart.nc --set run.steps=6 a.ini
  # another case's output as an input: a later case would replace it after
  # it is read, an earlier one before (the user's file of that name lost);
  # only an earlier case's restart file as initial.restart (a chain) runs
  mkdir cross
  case_ini cross/b.ini b cross/D
  case_ini cross/a_file.ini a cross/D "[initial]" "file = cross/D/b.nc"
  case_ini cross/a_restart.ini a cross/D "[initial]" "restart = cross/D/b.restart.nc"
  run cross/b.ini || fail "cross: case b alone"
  rm cross/D/b.lock 2>/dev/null
  before=$(cd cross/D && md5sum -- *)
  expect 2 "cross/a_file.ini:12: initial.file = cross/D/b.nc is case 2's \(cross/b.ini\) history file \($work/cross/D/b.nc\), which that case replaces after this case has read it" \
    cross/a_file.ini cross/b.ini
  expect 2 "cross/a_restart.ini:12: initial.restart = cross/D/b.restart.nc is case 2's \(cross/b.ini\) restart file \($work/cross/D/b.restart.nc\), which that case replaces after this case has read it" \
    cross/a_restart.ini cross/b.ini
  expect 2 "cross/a_file.ini:12: initial.file = cross/D/b.nc is case 1's \(cross/b.ini\) history file \($work/cross/D/b.nc\), which that case replaces before this case reads it" \
    cross/b.ini cross/a_file.ini
  [ "$(cd cross/D && md5sum -- *)" = "$before" ] || fail "a refused run changed the files in cross/D/"
  expect 0 "" cross/b.ini cross/a_restart.ini
  [ -f cross/D/a.nc ] || fail "the chain (case 2 from case 1's restart file) did not run"
  # a branch listed before the run it branches from, which continues in
  # place: the branch reads the restart file before it is replaced
  case_ini cross/b_on.ini b cross/D "[initial]" "restart = cross/D/b.restart.nc"
  sed -i 's/^steps = 4$/steps = 6/' cross/b_on.ini
  case_ini cross/branch.ini branch cross/E "[initial]" "restart = cross/D/b.restart.nc"
  expect 0 "" cross/branch.ini cross/b_on.ini
  [ -f cross/E/branch.nc ] || fail "the branch did not run"
  ;;
output_dir)
  # an output.dir that cannot be one is refused with exit 2 before any case
  # runs, with what is wrong with it
  case_ini a.ini flat out
  touch afile
  ln -s "$work/nothing/here" dangling
  ln -s loop1 loop2
  ln -s loop2 loop1
  case_ini b.ini other afile
  # named where the value was set: the line of its file, --set (after the
  # case's file where several cases run), the case's file for a default
  expect 2 "^minimodel: error: b.ini:9: output.dir = afile: exists and is not a directory$" a.ini b.ini
  expect 2 "^minimodel: error: a.ini: --set: output.dir = afile: exists and is not a directory$" \
    --set output.dir=afile a.ini b.ini
  expect 2 "^minimodel: error: --set: output.dir = afile: exists and is not a directory$" \
    --set output.dir=afile a.ini
  grep -v '^dir = ' a.ini >default.ini && mkdir output_is_file && touch output_is_file/output
  (cd output_is_file && expect 2 "^minimodel: error: \.\./default.ini: output.dir = output: exists and is not a directory$" ../default.ini)
  [ ! -e out ] || fail "case 1 ran before case 2's output.dir was refused"
  expect 2 "--set: output.dir = dangling: is a symbolic link to '$work/nothing/here', which does not exist" \
    --set output.dir=dangling a.ini
  expect 2 "--set: output.dir = loop1: too many levels of symbolic links" --set output.dir=loop1 a.ini
  expect 2 "--set: output.dir = afile/x: a part of the path before its last name is not a directory" \
    --set output.dir=afile/x a.ini
  [ ! -e out ] && [ ! -e "$work/nothing" ] || fail "something was written"
  # a missing parent: before any case runs (exit 2; it was exit 1 when the
  # case ran), not its parents created
  expect 2 "--set: output.dir = no/x: its folder no does not exist \(minimodel creates output.dir, not its parents\)" \
    --set output.dir=no/x a.ini
  [ ! -e no ] || fail "the missing parent was made"
  # a parent that exists, where no folder can be made (/proc, /sys, even by
  # root, whose access() passes there): before any case runs, with the
  # file system's reason (it was exit 1 when the case ran, after the cases
  # before it)
  case_ini p.ini inproc /proc/minimodel_x
  expect 2 "p.ini:9: output.dir = /proc/minimodel_x: cannot be created in '/proc': [A-Za-z ]+$" a.ini p.ini
  [ ! -e out ] || fail "case 1 ran before case 2's output.dir in /proc was refused"
  expect 2 "--set: output.dir = /sys/minimodel_x: cannot be created in '/sys': [A-Za-z ]+$" \
    --set output.dir=/sys/minimodel_x a.ini
  # the folder made to find that out is gone; where one can be made, too
  expect 0 "" --set output.dir=made a.ini
  [ -f made/flat.nc ] || fail "no history in the output.dir made"
  ! ls -A . /proc /sys | grep -q minimodel-probe || fail "a probe folder was left"
  # a link to a directory is a directory
  mkdir real && ln -s real linked
  expect 0 "" --set output.dir=linked a.ini
  [ -f real/flat.nc ] || fail "no history through the link"
  # the history is written in place, through a link at its name: a FIFO, a
  # device or a file of /proc there is refused before any case runs (the
  # ranks but one waited in the create for ever), nothing written
  mkdir odd
  for what in "fifo:a FIFO" "/dev/full:a character device" "/proc/self/status:a file of /proc"; do
    rm -f odd/flat.nc
    if [ "${what%%:*}" = fifo ]; then mkfifo odd/flat.nc; else ln -s "${what%%:*}" odd/flat.nc; fi
    expect 2 "a.ini: $work/odd/flat.nc is ${what#*:}, where the case writes its history file: move it away" \
      --set output.dir=odd a.ini
    [ "$(ls odd)" = flat.nc ] || fail "${what#*:} at the history's name: something was written: $(ls odd)"
  done
  # files whose absolute path would be too long for MPI-IO (it failed to
  # create the history, "Permission denied", or crashed the rank in its
  # close): refused, also through a short link to a deep folder
  deep="$work"
  while [ ${#deep} -lt 3900 ]; do deep="$deep/$(printf 'd%.0s' {1..200})"; done
  mkdir -p "$deep" && ln -s "$deep" short
  long="the absolute paths of the case's files would be up to [0-9]+ bytes long \($deep/out/flat\.\.\.\), more than the [0-9]+ this system's libraries take"
  expect 2 "--set: output.dir = short/out: $long" --set output.dir=short/out a.ini
  (cd "$deep" && expect 2 "a.ini:9: output.dir = out: $long" "$work/a.ini")
  [ ! -e "$deep/out" ] || fail "a deep output.dir: something was written"
  ;;
lock)
  # the reference: the case alone
  case_args=(--set run.steps=2000 --set output.interval=500 --set output.restart_interval=1000 "$ini")
  run --set output.dir="$work/ref" "${case_args[@]}" || fail "reference run"
  # ranks RUN: the ranks of the run started in the background as RUN (timeout, mpirun, ranks)
  ranks() { pgrep -P "$(pgrep -x -P "$1" mpirun)" | tr '\n' ' '; }
  # the first run, held (SIGSTOP) once it has written its history file
  timeout -k 5 300 mpirun --oversubscribe -np 2 "$mm" --quiet --set output.dir="$work/out" \
    "${case_args[@]}" >"$work/first.log" 2>&1 &
  first=$!
  for ((i = 0; i < 3000; i++)); do
    [ -e out/gyre_bowl.nc ] && break
    kill -0 $first 2>/dev/null || fail "the first run ended early: $(cat first.log)"
    sleep 0.02
  done
  held=$(ranks $first)
  kill -STOP $held
  pid=$(sed -n 's/^pid \([0-9]*\) on host .*/\1/p' out/gyre_bowl.lock 2>/dev/null)
  # the second run of the same case, the held lock with another name too (a
  # snapshot of the folder): refused as in use, not as a hard link to remove
  ln out/gyre_bowl.lock "$work/snapshot.lock" || fail "cannot link the lock"
  expect 2 "$work/out/gyre_bowl.lock: the outputs of this case are in use by another run \(pid $pid on host [^)]*\)" \
    --set output.dir="$work/out" "${case_args[@]}"
  rm -f "$work/snapshot.lock"
  kill -CONT $held
  [ -n "$pid" ] || fail "no pid in the lock file"
  wait $first || { cat first.log; fail "the first run failed"; }
  for f in gyre_bowl.nc gyre_bowl.restart.nc; do
    cmp_nc "ref/$f" "out/$f" || fail "out/$f differs from the run alone"
  done
  [ ! -e out/gyre_bowl.lock ] || fail "the lock file is left after the run"
  # a lock held by another program (flock(1)): refused, no pid known
  # (flock(1) makes the file before it takes the lock: the command it runs
  # says when the lock is held)
  rm -f held
  flock out/gyre_bowl.lock sh -c 'touch held; exec sleep 60' &
  holder=$!
  for ((i = 0; i < 3000; i++)); do [ -e held ] && break; sleep 0.01; done
  [ -e held ] || fail "flock(1) did not take the lock within 30 s"
  expect 2 "out/gyre_bowl.lock: the outputs of this case are in use by another run" \
    --set output.dir=out --set run.steps=2 "$ini"
  pkill -P $holder; kill $holder 2>/dev/null; wait $holder 2>/dev/null
  # a stale lock file from a killed run (kill -9 of mpirun and every rank) does not block
  timeout -k 5 300 mpirun --oversubscribe -np 2 "$mm" --quiet --set output.dir="$work/stale" \
    --set run.steps=1000000 "$ini" >"$work/killed.log" 2>&1 &
  killed=$!
  for ((i = 0; i < 3000; i++)); do [ -e stale/gyre_bowl.nc ] && break; sleep 0.02; done
  dead=("$(pgrep -x -P $killed mpirun)" $(ranks $killed))
  kill -9 "${dead[@]}"; wait $killed 2>/dev/null
  # the lock goes when the killed ranks are gone (a process under ASan takes a while)
  for ((i = 0; i < 600; i++)); do
    alive=0
    for p in "${dead[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.05
  done
  [ -e stale/gyre_bowl.lock ] || fail "the killed run left no lock file: the test tests nothing"
  expect 0 "" --set output.dir="$work/stale" --set run.steps=2 "$ini"
  [ ! -e stale/gyre_bowl.lock ] || fail "the lock file is left after the run"
  # a lock file name that is a symbolic link: refused, the file it names
  # and the link left as they were
  mkdir linked && echo "a file of the user's" >victim.txt && ln -s ../victim.txt linked/gyre_bowl.lock
  expect 2 "linked/gyre_bowl.lock: the lock file's name is a symbolic link" \
    --set output.dir="$work/linked" --set run.steps=2 "$ini"
  [ "$(cat victim.txt)" = "a file of the user's" ] || fail "the file the lock link names was written"
  [ -L linked/gyre_bowl.lock ] || fail "the lock link was removed"
  # ... or a hard link (the same file under another name): refused, that
  # file left as it was (the lock text was written into it)
  mkdir hardlinked && echo "a file of the user's" >kept.txt && ln kept.txt hardlinked/gyre_bowl.lock
  expect 2 "hardlinked/gyre_bowl.lock: the lock file's name is a hard link" \
    --set output.dir="$work/hardlinked" --set run.steps=2 "$ini"
  [ "$(cat kept.txt)" = "a file of the user's" ] || fail "the file the lock's hard link names was written"
  # ... or a directory, or a FIFO: refused (not "cannot create", exit 1)
  mkdir -p dirlock/gyre_bowl.lock fifolock && mkfifo fifolock/gyre_bowl.lock
  expect 2 "dirlock/gyre_bowl.lock is a directory, where the case writes its lock file" \
    --set output.dir="$work/dirlock" --set run.steps=2 "$ini"
  # a directory at the restart or timing file's name: refused before any
  # step (it was found after restart_interval steps, or the whole run)
  for f in restart.nc timing.json restart.nc.tmp; do
    mkdir -p "dir_$f/gyre_bowl.$f/sub"
    expect 2 "dir_$f/gyre_bowl.$f is a directory, where the case writes its" \
      --set output.dir="$work/dir_$f" --set run.steps=2 --set output.restart_interval=1 "$ini"
    [ -z "$(ls "dir_$f" | grep -v "^gyre_bowl.$f\$")" ] || fail "dir_$f: something was written"
  done
  # ... but not a restart file's name in a case that writes none, nor a
  # symbolic link to a directory where a file is renamed into place (the
  # link is replaced)
  expect 0 "" --set output.dir="$work/dir_restart.nc" --set run.steps=2 \
    --set output.restart_interval=0 "$ini"
  mkdir -p linkdir/elsewhere && ln -s elsewhere linkdir/gyre_bowl.timing.json
  expect 0 "" --set output.dir="$work/linkdir" --set run.steps=2 "$ini"
  [ -f linkdir/gyre_bowl.timing.json ] && [ ! -L linkdir/gyre_bowl.timing.json ] ||
    fail "the link at the timing file's name was not replaced by the file"
  expect 2 "fifolock/gyre_bowl.lock: the lock file's name is a FIFO" \
    --set output.dir="$work/fifolock" --set run.steps=2 "$ini"
  ;;
*) fail "unknown mode" ;;
esac
echo "ok: $mode"
