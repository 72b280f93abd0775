#!/usr/bin/env bash
# with_path.sh KIND PATH COMMAND...: make PATH a KIND, run COMMAND, remove
# what was made, exit with COMMAND's status.
#   fifo       PATH is a named pipe (nobody writes to it)
#   dir        PATH is a directory (its parent is made too)
#   no_inodes  PATH is a directory on a small tmpfs with no inode left: a new
#              file there fails with ENOSPC (the files named in
#              $WITH_PATH_KEEP, space-separated, are made before the inodes
#              run out; those of $WITH_PATH_COPY are copied there;
#              WITH_PATH_INODES=N leaves N free after all). Needs
#              root and mount; exit 77 (CTest: skipped) where
#              that is not possible.
kind="$1"; path="$2"; shift 2
case "$kind" in
  fifo)
    rm -rf "$path"; mkdir -p "$(dirname "$path")"
    mkfifo "$path" || exit 1
    "$@"; rc=$?
    rm -f "$path"
    exit $rc ;;
  dir)
    rm -rf "$path"; mkdir -p "$path" || exit 1
    "$@"; rc=$?
    rm -rf "$path"
    exit $rc ;;
  no_inodes)
    umount "$path" 2>/dev/null
    rm -rf "$path"; mkdir -p "$path" || exit 1
    if ! mount -t tmpfs -o size=16m,nr_inodes=8 tmpfs "$path" 2>/dev/null; then
      echo "cannot mount a tmpfs (needs root): skipped"; rmdir "$path"; exit 77
    fi
    trap 'umount "$path"; rmdir "$path"' EXIT
    for keep in ${WITH_PATH_KEEP:-}; do : >"$path/$keep" || exit 1; done
    for copy in ${WITH_PATH_COPY:-}; do cp "$copy" "$path/" || exit 1; done
    i=0
    while [ "$i" -lt 100 ] && : 2>/dev/null > "$path/inode_$i"; do i=$((i + 1)); done
    if : 2>/dev/null > "$path/one_more"; then echo "the tmpfs still has inodes"; exit 1; fi
    # WITH_PATH_INODES=N: N inodes left free after all
    for ((j = 0; j < ${WITH_PATH_INODES:-0}; j++)); do rm "$path/inode_$((i - 1 - j))" || exit 1; done
    "$@" ;;
  *)
    echo "with_path.sh: unknown kind $kind"; exit 1 ;;
esac
