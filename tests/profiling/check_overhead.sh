#!/usr/bin/env bash
# check_overhead.sh COMMAND...: run timer_overhead and require its figures to
# be there and the timers to cost under 1 % of a step (docs/performance.md).
# The pair cost is a best-of-5 and a slower machine only lengthens the step,
# so the bound holds with a wide margin even on a busy machine.
out=$("$@" 2>&1); rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "check_overhead: exit status $rc"; exit 1; }
line=$(grep -E '^overhead_percent=' <<<"$out") || { echo "check_overhead: no summary line"; exit 1; }
pct=$(sed -E 's/^overhead_percent=([^ ]+) .*/\1/' <<<"$line")
pair=$(sed -E 's/.* pair_ns=([^ ]+) .*/\1/' <<<"$line")
awk -v p="$pct" -v n="$pair" 'BEGIN { exit !(p + 0 > 0 && p + 0 < 1 && n + 0 > 0 && n + 0 < 10000) }' ||
  { echo "check_overhead: overhead $pct % (pair $pair ns): want 0 < overhead < 1 % and pair < 10 us"; exit 1; }
echo "ok: timers cost $pct % of a step"
