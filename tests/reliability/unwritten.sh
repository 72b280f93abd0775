#!/usr/bin/env bash
# unwritten.sh PATH COMMAND...: run COMMAND and exit with its status, or
# with 3 when PATH exists afterwards (something was written that should not
# have been). PATH must not exist before.
path="$1"; shift
rm -rf "$path"
"$@"
rc=$?
[ -e "$path" ] && { echo "unwritten.sh: $path was written"; exit 3; }
exit $rc
