#!/usr/bin/env bash
# url_input.sh MINIMODEL PYTHON SOURCE_DIR WORK
# An input named by a URL (initial.file = http://...): netCDF's network
# client took it and waited on a server that accepts and never answers until
# the read's time limit (600 s). A path with "://" in initial.file,
# initial.restart or output.dir is refused at once, exit 2, before anything
# is read or written, and the server is never connected to: also where a
# local file of that name exists (netCDF would still take it for a URL:
# "http:/HOST:PORT/x.nc" made as folders), and for a file:// name; a
# missing file is refused with the reason. So are paths that netCDF would
# rewrite to another file's (a backslash, a leading drive letter), the file
# it would have opened left as it was. The reference says the same.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work"
# a server that accepts and never answers; it writes its port, then a line
# for each connection
"$py" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); print("connected", flush=True); time.sleep(3600)
' >"$work/server" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$work/server" ] && break; sleep 0.1; done
port=$(head -1 "$work/server")
[ -n "$port" ] || fail "the server did not start"
url="http://127.0.0.1:$port/x.nc"
why="a path with '://' is a URL to the netCDF library, which reads no URL here: give a local path without '://' (copy or rename the file)"
# a local file at the URL's name (relative to the run's folder)
mkdir -p "$work/http:/127.0.0.1:$port"
cp "$src/configs/flat.ini" "$work/http:/127.0.0.1:$port/x.nc"
check() { # KEY VALUE MESSAGE
  local start=$SECONDS out=(--set output.dir="$work/out")
  [ "$1" = output.dir ] && out=()
  (cd "$work" && timeout -k 5 60 "$mm" --quiet --set run.steps=2 "${out[@]}" \
    --set "$1=$2" "$src/configs/flat.ini") >"$work/log" 2>&1
  local rc=$?
  [ $rc = 2 ] || fail "$1 = $2: exit $rc, want 2"
  grep -qF "$3" "$work/log" || fail "$1 = $2: not the message '$3'"
  [ $((SECONDS - start)) -le 20 ] || fail "$1 = $2: $((SECONDS - start)) s"
  [ ! -e "$work/out" ] || fail "$1 = $2: output written"
  echo "ok: $1 = $2 refused: $3"
}
check initial.file "$url" "initial.file = $url: $why"
check initial.restart "$url" "initial.restart = $url: $why"
check initial.file "file://$src/configs/flat.ini" "$why"
check output.dir "s3://bucket/run" "output.dir = s3://bucket/run: $why"
check initial.file "$work/missing.nc" "$work/missing.nc: cannot open: No such file or directory"
grep -q connected "$work/server" && fail "the server was connected to"
echo "ok: the server was never connected to"

# Paths the netCDF library rewrites before it opens them (4.9): each '\' as
# '/', and "c:/x" (a drive letter) as "/c/x". A history in out\x was
# created, and truncated, in out/x; a restart named d\r.nc was read from
# d/r.nc (another step: exit 0, a silently wrong start). Refused, exit 2,
# the file that netCDF would have opened as it was.
backslash="the netCDF library reads '\\' in a path as '/' (a Windows separator) and would open another file than the one named: give a path without '\\' (rename the file or folder)"
drive="the netCDF library reads a path that starts with a letter and ':' as a Windows drive ('c:/x' as '/c/x') and would open another file than the one named: write it as './c:/x'"
mkdir -p "$work/o/x" "$work/d"
echo precious >"$work/o/x/flat.nc"
echo precious >"$work/d/r.nc"
cp "$work/d/r.nc" "$work/d\\r.nc"
check output.dir 'o\x' "output.dir = o\\x: $backslash"
check initial.restart 'd\r.nc' "initial.restart = d\\r.nc: $backslash"
check initial.file 'd\r.nc' "initial.file = d\\r.nc: $backslash"
check output.dir 'c:' "output.dir = c:: $drive"
check output.dir 'C:/out' "output.dir = C:/out: $drive"
check initial.restart 'd:/r.nc' "initial.restart = d:/r.nc: $drive"
[ "$(cat "$work/o/x/flat.nc")" = precious ] || fail "o/x/flat.nc was changed"
[ ! -e "$work/o\\x" ] || fail "a folder o\\x was made"
# the drive's own form works where it is written as the message says
(cd "$work" && timeout -k 5 60 "$mm" --quiet --set run.steps=2 --set output.dir=./c: \
  "$src/configs/flat.ini") >"$work/log" 2>&1 || fail "output.dir = ./c:: exit $?"
[ -s "$work/c:/flat.nc" ] || fail "output.dir = ./c:: no c:/flat.nc"
echo "ok: output.dir = ./c: writes c:/flat.nc"
# the reference
(cd "$work" && timeout -k 5 60 "$py" "$src/scripts/reference.py" --quiet --set "initial.file=$url" \
  --output "$work/ref.nc" "$src/configs/flat.ini") >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "initial.file = $url: $why" "$work/log" || fail "reference.py: exit $rc"
grep -q connected "$work/server" && fail "the reference connected to the server"
echo "ok: reference.py refused the URL too"
(cd "$work" && timeout -k 5 60 "$py" "$src/scripts/reference.py" --quiet \
  --set 'initial.restart=d\r.nc' --output "$work/ref.nc" "$src/configs/flat.ini") >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "initial.restart = d\\r.nc: $backslash" "$work/log" ||
  fail "reference.py, a backslash: exit $rc"
(cd "$work" && timeout -k 5 60 "$py" "$src/scripts/reference.py" --quiet \
  --set 'initial.file=c:/x.nc' --output "$work/ref.nc" "$src/configs/flat.ini") >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "initial.file = c:/x.nc: $drive" "$work/log" ||
  fail "reference.py, a drive: exit $rc"
mkdir -p "$work/a"
(cd "$work" && timeout -k 5 60 "$py" "$src/scripts/reference.py" --quiet --output 'a\b.nc' \
  "$src/configs/flat.ini") >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "reference.py: --output a\\b.nc: $backslash" "$work/log" ||
  fail "reference.py --output a\\b.nc: exit $rc"
[ ! -e "$work/a/b.nc" ] || fail "reference.py --output a\\b.nc wrote a/b.nc"
echo "ok: reference.py refused the backslash and the drive too, also in --output"
