#!/usr/bin/env bash
# url_input.sh MINIMODEL PYTHON SOURCE_DIR WORK
# An input named by a URL (initial.file = http://...): netCDF's network
# client took it and waited on a server that accepts and never answers until
# the read's time limit (600 s). Refused at once, exit 2, with a message
# that an input is a file, and the server never connected to; the same for
# initial.restart, a file:// name and a missing file; the reference says the
# same for initial.file.
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
for _ in $(seq 50); do [ -s "$work/server" ] && break; sleep 0.1; done
port=$(head -1 "$work/server")
[ -n "$port" ] || fail "the server did not start"
url="http://127.0.0.1:$port/x.nc"
hint="(an input is a file: a URL is not read; copy the file here)"
check() { # KEY VALUE MESSAGE
  local start=$SECONDS
  timeout -k 5 60 "$mm" --quiet --set run.steps=2 --set output.dir="$work/out" \
    --set "$1=$2" "$src/configs/flat.ini" >"$work/log" 2>&1
  local rc=$?
  [ $rc = 2 ] || fail "$1 = $2: exit $rc, want 2"
  grep -qF "$2: cannot open: $3" "$work/log" || fail "$1 = $2: not the message '$3'"
  [ $((SECONDS - start)) -le 20 ] || fail "$1 = $2: $((SECONDS - start)) s"
  [ ! -e "$work/out/flat.nc" ] || fail "$1 = $2: a history was written"
  echo "ok: $1 = $2 refused: $3"
}
check initial.file "$url" "No such file or directory $hint"
check initial.restart "$url" "No such file or directory $hint"
check initial.file "file://$src/configs/flat.ini" "No such file or directory $hint"
check initial.file "$work/missing.nc" "No such file or directory"
grep -q connected "$work/server" && fail "the server was connected to"
echo "ok: the server was never connected to"
# the reference
timeout -k 5 60 "$py" "$src/scripts/reference.py" --quiet --set "initial.file=$url" \
  --output "$work/ref.nc" "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "$url: cannot open: No such file or directory $hint" "$work/log" ||
  fail "reference.py: exit $rc"
grep -q connected "$work/server" && fail "the reference connected to the server"
echo "ok: reference.py refused the URL too"
