#!/usr/bin/env bash
# leak_probe.sh PROBE: under the asan preset (docs/reliability.md, "Sanitizer
# build"), leak_probe's block on each of 2 ranks is reported, and nothing
# else is: each rank's summary is of those 4096 bytes alone (Open MPI's
# leaks suppressed, minimodel's own not), and the run fails. Exit 77 (skipped)
# in a build without AddressSanitizer.
probe="$1"
out=$(timeout -k 10 120 mpirun --oversubscribe -np 2 "$probe" 2>&1)
rc=$?
fail() { printf 'FAIL: %s\n%s\n' "$*" "$out"; exit 1; }
grep -q "^leak_probe: not built with AddressSanitizer" <<<"$out" && exit 77
[ $rc -ne 0 ] || fail "exit 0: the leak was not reported"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the run hung (exit $rc)"
[ "$(grep -c '^Direct leak of 4096 byte(s) in 1 object(s) allocated from:' <<<"$out")" = 2 ] ||
  fail "not one leak of 4096 bytes on each rank"
[ "$(grep -c 'in mm_probe_leak' <<<"$out")" = 2 ] || fail "the leaks' stacks do not name mm_probe_leak"
[ "$(grep -c '^SUMMARY: AddressSanitizer: 4096 byte(s) leaked in 1 allocation(s)\.$' <<<"$out")" = 2 ] ||
  fail "another leak reported (a suppression missing, or the stacks unnamed)"
echo "ok: exit $rc, each rank's block reported and nothing else"
