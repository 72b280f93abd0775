#!/usr/bin/env bash
# tmpdir.sh MINIMODEL SOURCE_DIR WORK: a run started without mpirun whose
# temporary directory cannot hold Open MPI's session files is refused with
# exit 2 and one line before MPI starts (MPI_Init failed with pages of Open
# MPI's errors, exit 1); one that can is run. Open MPI takes the first of
# TMPDIR, TEMP and TMP that is set, also empty (then the root), and joins it
# from the root.
#   refused: a file; a path under a file; a link to nothing, and a path
#     under one; a relative path; as a user other than root, an empty
#     TMPDIR (the root) and a directory not writable; as root, a file
#     system with 5 free inodes (Open MPI failed with 8);
#   run: a path not made yet; TMPDIR empty and TEMP a file (TEMP is not
#     looked at), as root.
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
umount "$work/few" 2>/dev/null # left mounted by a run that was killed
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
flat="$src/configs/flat.ini"
touch a_file
ln -s "$work/nothing" dangling
# expect CODE REGEX VAR=VALUE...: the dry run with these variables
expect() {
  local code="$1" regex="$2"; shift 2
  env -u OMPI_MCA_orte_tmpdir_base -u TMPDIR -u TEMP -u TMP "$@" \
    timeout -k 5 60 "$mm" --dry-run "$flat" >log 2>&1
  local rc=$?
  [ $rc = "$code" ] || fail "$*: exit $rc, expected $code"
  grep -qE -- "$regex" log || fail "$*: the output does not match /$regex/"
  echo "ok: $*: exit $rc"
}
refused() { expect 2 "^minimodel: error: $1: MPI keeps its session files there; set it to a writable directory$" "${@:2}"; }
refused "TMPDIR = $work/a_file: $work/a_file is not a directory" TMPDIR="$work/a_file"
refused "TMPDIR = $work/a_file/x: $work/a_file is not a directory" TMPDIR="$work/a_file/x"
refused "TMPDIR = $work/dangling: $work/dangling is a symbolic link to nothing" TMPDIR="$work/dangling"
refused "TMPDIR = $work/dangling/x: $work/dangling is a symbolic link to nothing" TMPDIR="$work/dangling/x"
refused "TMPDIR = rel: not an absolute path \(Open MPI would make its files in /rel\)" TMPDIR=rel
refused "TEMP = $work/a_file: $work/a_file is not a directory" TEMP="$work/a_file"
expect 0 "configuration valid" TMPDIR="$work/not/made/yet"
[ ! -e /rel ] || fail "/rel was made"
if [ "$(id -u)" = 0 ]; then
  expect 0 "configuration valid" TMPDIR= TEMP="$work/a_file"
  # a file system with too few free inodes for the session's files (5), and
  # one with enough (39): tmpfs mounted here
  mkdir few
  trap 'umount "$work/few" 2>/dev/null' EXIT
  if mount -t tmpfs -o size=4m,nr_inodes=6 tmpfs few 2>/dev/null; then
    refused "TMPDIR = $work/few: $work/few has 5 free inodes, fewer than the 16 that MPI's files take" \
      TMPDIR="$work/few"
    umount few
    mount -t tmpfs -o size=4m,nr_inodes=40 tmpfs few || fail "mount"
    expect 0 "configuration valid" TMPDIR="$work/few"
    umount few
  fi
  if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
    mkdir -p "$work/closed" && chmod 755 "$work/closed" "$work"
    cp "$flat" "$work/flat.ini" && chmod 644 "$work/flat.ini"
    flat="$work/flat.ini"
    for v in "TMPDIR=" "TMPDIR=$work/closed"; do
      runuser -u nobody -- env -u OMPI_MCA_orte_tmpdir_base -u TEMP -u TMP "$v" \
        timeout -k 5 60 "$mm" --dry-run "$flat" >log 2>&1
      rc=$?
      [ $rc = 2 ] && grep -q "is not writable (Permission denied): MPI keeps its session files" log ||
        fail "$v as nobody: exit $rc"
      echo "ok: $v as nobody: exit 2"
    done
  fi
fi
echo ok
