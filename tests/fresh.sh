#!/bin/sh
# fresh.sh PATH... -- COMMAND [ARG...]: remove each PATH (file or folder,
# recursively), then run COMMAND in this process (exec), so that a test that
# reads what COMMAND writes never reads an earlier run's files. Exit status:
# COMMAND's; 2 for a usage error (no --, no COMMAND, an empty PATH, or one
# that is / or ends in / . or ..) or a PATH that cannot be removed.
usage() {
  echo "fresh.sh: $1" >&2
  echo "usage: fresh.sh PATH... -- COMMAND [ARG...]" >&2
  exit 2
}
n=0
for arg in "$@"; do
  [ "$arg" = "--" ] && break
  n=$((n + 1))
done
[ "$n" -lt "$#" ] || usage "no -- before the command"
[ "$n" -ge 1 ] || usage "no path to remove"
[ $((n + 1)) -lt "$#" ] || usage "no command after --"
# check every path before removing any
i=0
for path in "$@"; do
  [ "$i" -lt "$n" ] || break
  i=$((i + 1))
  case "$path" in
  "") usage "an empty path" ;;
  */. | */.. | . | ..) usage "refusing to remove '$path'" ;;
  esac
  # / in any spelling: //, /./, /../
  case "$(printf '%s' "$path" | tr -s /)" in
  / | /. | /.. | /./ | /../) usage "refusing to remove '$path'" ;;
  esac
done
while [ "$n" -gt 0 ]; do
  rm -rf -- "$1" || { echo "fresh.sh: cannot remove '$1'" >&2; exit 2; }
  if [ -e "$1" ] || [ -L "$1" ]; then
    echo "fresh.sh: '$1' is still there" >&2
    exit 2
  fi
  shift
  n=$((n - 1))
done
shift # the --
exec "$@"
