# Sourced by the reliability scripts that act on the files of a run while it
# runs. long_run MM SRC OUT LOG: starts gyre_bowl.ini for 1000000 steps, a
# record every 1000, no restart, into OUT, its output into LOG; sets pid and
# returns once the history holds more than 100000 bytes (a few records).
# Calls fail (the caller's) when the run ends first.
long_run() {
  local mm="$1" src="$2" out="$3" log="$4" i
  timeout -k 10 300 "$mm" --quiet --set output.dir="$out" --set run.steps=1000000 \
    --set output.interval=1000 --set output.restart_interval=0 \
    "$src/configs/gyre_bowl.ini" >"$log" 2>&1 &
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    [ "$(stat -c %s "$out/gyre_bowl.nc" 2>/dev/null || echo 0)" -gt 100000 ] && return 0
    kill -0 $pid 2>/dev/null || fail "the run ended first"
    sleep 0.02
  done
  fail "the history did not grow past 100000 bytes within 60 s"
}
