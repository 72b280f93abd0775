#!/usr/bin/env bash
# fuzz_known.sh SOURCE_DIR WORK
# fuzz/run_known.sh, the fuzz stage's wrapper of the file-reader harnesses,
# against stand-in fuzzers that print given reports: the known libhdf5 crash
# in H5HG_read (a report as the fuzz stage printed it) is fuzzed past, in 3
# runs at most; any other report (another kind in H5HG_read, a frame
# without a name before it, one in minimodel's code, a leak, an abort, an
# UndefinedBehaviorSanitizer report), a failure without a report, or a
# finding after the known crash is the fuzzer's exit status.
set -u
src="$1"; work="$2"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/known.txt" <<'EOF'
=================================================================
==9232==ERROR: AddressSanitizer: memcpy-param-overlap: memory ranges [0x621000035d08,0x62737468ab67) and [0x621000038588, 0x62737468d3e7) overlap
    #0 0x7fd7b8647f4f in __interceptor_memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827
    #1 0x7fd7b736d62c in H5HG_read (/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103+0x16d62c)
    #2 0x7fd7b74c12bf  (/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103+0x2c12bf)
    #3 0x7fd7b7450234 in H5T__conv_vlen (/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103+0x250234)
    #7 0x7fd7b8cc289b in H5DSget_num_scales (/lib/x86_64-linux-gnu/libhdf5_openmpi_hl.so.100+0xa89b)
    #9 0x7fd7b76b097e in nc4_get_var_meta (/lib/x86_64-linux-gnu/libnetcdf_mpi.so.19+0xb097e)
    #12 0x55a71ac084e5 in mm_initial_read /work/main/io/initial.c:330
SUMMARY: AddressSanitizer: memcpy-param-overlap ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827 in __interceptor_memcpy
EOF
# the same kind of report, raised in minimodel's own code
sed 's/in H5HG_read (.*/in mm_initial_valid_range \/work\/main\/io\/initial.c:80/' "$work/known.txt" >"$work/ours.txt"
grep -q "#1 .* in mm_initial_valid_range" "$work/ours.txt" || fail "the stand-in report was not made"
# a leak that HDF5's H5HG_read allocated: LeakSanitizer's, not the known crash
cat >"$work/leak.txt" <<'EOF'
==77==ERROR: LeakSanitizer: detected memory leaks
Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f in H5HG_read (/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103+0x16d62c)
EOF
# a harness's own abort: libFuzzer's deadly-signal report
cat >"$work/abort.txt" <<'EOF'
mm_initial_read: error 1 without a proper message: ''
==5== ERROR: libFuzzer: deadly signal
    #0 0x5 in __sanitizer_print_stack_trace
    #1 0x5 in fuzzer::PrintStackTrace() FuzzerUtil.cpp:210:5
    #2 0x5 in fuzzer::Fuzzer::CrashCallback() FuzzerLoop.cpp:233:3
    #3 0x7f  (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f)
    #4 0x7f in __pthread_kill_implementation nptl/pthread_kill.c:44:76
    #5 0x7f in raise signal/../sysdeps/posix/raise.c:26:13
    #6 0x7f in abort stdlib/abort.c:79:7
    #7 0x5 in fuzz_check_refusal fuzz_common.h:76:5
EOF

# another kind of report with H5HG_read first: not the known bug
sed 's/memcpy-param-overlap: memory ranges.*/heap-buffer-overflow on address 0x6020 at pc 0x7f bp 0x7f sp 0x7f/' \
  "$work/known.txt" >"$work/overflow.txt"
grep -q "heap-buffer-overflow on address" "$work/overflow.txt" || fail "the stand-in overflow was not made"
# the known kind, but a frame without a name (a function of libhdf5 that
# H5HG_read called) first
sed 's|^    #1 0x7fd7b736d62c in H5HG_read|    #1 0x7fd7b7 (/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103+0x16d700)\n&|' \
  "$work/known.txt" >"$work/unnamed.txt"
grep -q "^    #1 0x7fd7b7 (/lib" "$work/unnamed.txt" || fail "the stand-in unnamed frame was not made"
# the known crash's report after an UndefinedBehaviorSanitizer report, which
# has no "ERROR:" line of its own
{ echo "fuzz_common.h:76:5: runtime error: signed integer overflow"; cat "$work/known.txt"; } \
  >"$work/ubsan.txt"

# A stand-in fuzzer: the reports named in $work/plan, one per call (a name,
# or "ok" for a run without a finding); each call appends its arguments to
# $work/calls.
cat >"$work/fuzzer" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$work/calls"
n=\$(wc -l <"$work/calls")
step=\$(sed -n "\${n}p" "$work/plan")
case "\$step" in
  ok) echo "INFO: exiting: 0 time: 30s"; exit 0 ;;
  none) echo "INFO: something else failed"; exit 3 ;;
  *) echo "INFO: log from the inner process:"; cat "$work/\$step.txt"; exit 1 ;;
esac
EOF
chmod +x "$work/fuzzer"

# PLAN... EXPECTED_RC EXPECTED_CALLS NAME: run the wrapper on that plan
check() {
  local expect_rc=$1 expect_calls=$2 name=$3
  shift 3
  printf '%s\n' "$@" >"$work/plan"
  rm -f "$work/calls"
  bash "$src/fuzz/run_known.sh" "$work/fuzzer" -max_total_time=30 corpus >"$work/out" 2>&1
  local rc=$?
  local calls
  calls=$(wc -l <"$work/calls")
  [ "$rc" -eq "$expect_rc" ] || fail "$name: exit $rc, expected $expect_rc: $(cat "$work/out")"
  [ "$calls" -eq "$expect_calls" ] || fail "$name: the fuzzer ran $calls times, expected $expect_calls"
  grep -qx -- "-max_total_time=30 corpus" "$work/calls" || fail "$name: arguments not passed on"
  echo "ok: $name"
}
check 0 1 "no finding" ok
check 0 2 "the known crash, then no finding" known ok
grep -q "the known libhdf5 1.10 crash in H5HG_read" "$work/out" || fail "the known crash not said"
grep -q "in H5HG_read (/lib" "$work/out" || fail "the known crash's report not printed"
check 0 3 "the known crash twice" known known ok
check 1 3 "the known crash three times in a row" known known known ok
grep -q "3 runs in a row ended on it" "$work/out" || fail "no word of the limit"
check 1 1 "the same crash in minimodel's code" ours
grep -q "a finding (exit 1): AddressSanitizer_memcpy-param-overlap mm_initial_valid_range" "$work/out" ||
  fail "the finding not named: $(cat "$work/out")"
check 1 2 "the known crash, then a finding" known ours
check 1 1 "a leak allocated in H5HG_read" leak
check 1 1 "the harness's abort" abort
grep -q "libFuzzer_deadly_signal fuzz_check_refusal" "$work/out" || fail "the abort not named: $(cat "$work/out")"
check 3 1 "a failure without a report" none
check 1 1 "an UndefinedBehaviorSanitizer report before the known crash" ubsan
check 1 1 "a heap-buffer-overflow in H5HG_read" overflow
grep -q "a finding (exit 1): AddressSanitizer_heap-buffer-overflow H5HG_read" "$work/out" ||
  fail "the overflow not named: $(cat "$work/out")"
check 1 1 "a frame without a name before H5HG_read" unnamed
echo "all passed"
