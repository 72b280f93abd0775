#!/usr/bin/env bash
# history_link_lock.sh MINIMODEL SOURCE_DIR WORK
# A history whose name is a symbolic link is written through it, into the
# file it leads to; the run then also takes the lock beside that file (its
# name with .lock for .nc), the lock a run writing that file under its own
# name holds. Two runs, one writing out/flat.nc, the other out2/flat.nc ->
# ../out/flat.nc, each held its own lock, both ended "ok", and the history
# was unreadable. Here this script holds out/flat.lock as the first run
# would (flock(1)):
#   - the run through the link is refused, exit 2, naming that lock, and
#     out/flat.nc is not touched;
#   - with the lock free it runs, writes out/flat.nc through the link, and
#     leaves neither lock file;
#   - a link to a history not made yet (a dangling link) is locked alike;
#   - a continuation writes a history not made yet through its link.
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
command -v flock >/dev/null || fail "no flock(1) (util-linux)"
rm -rf "$work"; mkdir -p "$work/out" "$work/out2"
cd "$work" || exit 1
run() { timeout -k 5 120 "$mm" --quiet --set run.steps=2 --set output.dir=out2 "$src/configs/flat.ini" >log 2>&1 9>&-; }
echo "a history kept" >out/flat.nc
ln -s ../out/flat.nc out2/flat.nc
exec 9>out/flat.lock
flock -n 9 || fail "flock(1) did not take the lock"
run
rc=$?
[ $rc = 2 ] || fail "through the link while out/flat.lock is held: exit $rc, expected 2"
grep -q "out/flat.lock: the outputs of this case are in use by another run" log ||
  fail "the message does not name out/flat.lock"
[ "$(cat out/flat.nc)" = "a history kept" ] || fail "out/flat.nc was written"
[ ! -e out2/flat.lock ] || fail "the refused run left its own lock file"
echo "ok: refused while the target's lock is held"
exec 9>&-
run || fail "through the link with the lock free: exit $?"
[ -L out2/flat.nc ] && ncdump -h out/flat.nc >/dev/null 2>&1 || fail "out/flat.nc is not the history"
[ ! -e out/flat.lock ] && [ ! -e out2/flat.lock ] || fail "a lock file was left"
echo "ok: run through the link, no lock file left"
rm -f out/flat.nc out/flat.lock
exec 9>out/flat.lock
flock -n 9 || fail "flock(1) did not take the lock"
run
rc=$?
[ $rc = 2 ] && [ ! -e out/flat.nc ] || fail "a dangling link while the target's lock is held: exit $rc, expected 2, nothing made"
echo "ok: a dangling link is locked alike"
exec 9>&-
rm -f out/flat.lock

# a continuation (initial.restart) whose history is a link to a file not
# made yet starts a history through it at the restart step, as a run from
# the start does; it was refused, "out2/flat.nc: cannot open: No such file
# or directory", naming a name that is there
rm -rf out/* out2/*
cont() { timeout -k 5 120 "$mm" --quiet --set run.steps=4 --set output.restart_interval=2 \
  --set output.dir=out2 "$@" "$src/configs/flat.ini" >log 2>&1; }
cont || fail "the run to continue from: exit $?"
rm out2/flat.nc && ln -s ../out/flat.nc out2/flat.nc
cont --set initial.restart=out2/flat.restart.nc || fail "the continuation through a dangling link: exit $?"
[ -L out2/flat.nc ] || fail "the link was replaced"
steps=$(ncdump -v step out/flat.nc 2>/dev/null | sed -n 's/^ *step = \(.*\) ;$/\1/p')
[ "$steps" = "4" ] || fail "the history through the link has steps '$steps', expected 4 (from the restart step)"
echo "ok: a continuation writes a history not made yet through its link"
