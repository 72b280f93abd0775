#!/usr/bin/env bash
# run_known.sh FUZZER ARGS...
# A file-reader harness's CTest run (fuzz/CMakeLists.txt), that tells one
# known libhdf5 1.10 bug from a finding.
#
# On some damaged global heaps libhdf5 1.10's H5HG_read takes an object's
# size and place from memory it did not initialise (an index past the heap's
# objects), and copies from there. What it reads depends on what the process
# allocated and freed before, so the crash depends on the inputs a fuzzing
# job read earlier and is not reproduced by its input alone; the test read in
# a process of its own (io/probe.c) can pass where the harness, after other
# inputs, then crashes (docs/reliability.md, "Known limits").
#
# Such a crash stops the fuzzer (every sanitizer report does); this wrapper
# then reads the report: when it is AddressSanitizer's memcpy-param-overlap
# and its first frame outside the sanitizer's run-time (named or not) is
# H5HG_read, it is the known bug, said in one line, and the fuzzer runs
# again, MAX_KNOWN runs in all (the known crash fuzzed past MAX_KNOWN - 1
# times); any other report (another kind, another first frame, an
# UndefinedBehaviorSanitizer's "runtime error:"), or any other failure, is
# the fuzzer's exit status. Exit 0 when a run ended without a finding.
set -u
MAX_KNOWN=${MINIMODEL_FUZZ_MAX_KNOWN:-3}
log=$(mktemp "${TMPDIR:-/tmp}/mm-fuzz-log.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

# The sanitizer reports of a log, one line each: the report's kind and its
# first frame outside the sanitizer's run-time ("-" when it has none).
reports() {
  awk '
    /==[0-9]+== *ERROR: / || /ERROR: libFuzzer: / {
      if (kind != "") print kind, (frame == "" ? "-" : frame)
      # "AddressSanitizer_memcpy-param-overlap", "libFuzzer_deadly_signal", ...
      kind = $0; sub(/.*ERROR: /, "", kind); sub(/ on .*/, "", kind); sub(/: memory ranges.*/, "", kind)
      sub(/: [0-9].*/, "", kind); gsub(/: /, "_", kind); gsub(/ /, "_", kind)
      frame = ""; next
    }
    kind != "" && frame == "" && /^ *#[0-9]+ 0x[0-9a-f]+ / {
      f = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ +/, "", f)
      if (f ~ /^in /) {
        sub(/^in /, "", f); sub(/ .*/, "", f)
        if (f !~ /^(__interceptor_|__asan|__sanitizer|__ubsan|__lsan|__interception)/ &&
            f !~ /^(fuzzer::|__libc_|__GI_|__pthread_kill|pthread_kill)/ &&
            f !~ /^(abort|raise|gsignal|memcpy|memmove|__restore_rt)$/)
          frame = f
      } else if (f !~ /(libclang_rt|libasan|libubsan|libc\.so|libpthread|ld-linux)/) {
        frame = "?"   # a frame with no name, outside the sanitizer: not known
      }
    }
    END { if (kind != "") print kind, (frame == "" ? "-" : frame) }
  ' "$1"
}

known=0
while :; do
  "$@" >"$log" 2>&1
  rc=$?
  cat "$log"
  [ $rc -eq 0 ] && exit 0
  found=$(reports "$log")
  # A finding unless every report is the known one (UndefinedBehaviorSanitizer's
  # reports have no "ERROR:" line: any "runtime error:" is a finding)
  if [ -z "$found" ] || echo "$found" | grep -qvx 'AddressSanitizer_memcpy-param-overlap H5HG_read' ||
    grep -q 'runtime error:' "$log"; then
    echo "run_known.sh: a finding (exit $rc): ${found:-no sanitizer report}" | head -5
    exit $rc
  fi
  known=$((known + 1))
  echo "run_known.sh: the known libhdf5 1.10 crash in H5HG_read (a damaged global heap read" \
    "through memory the library did not initialise; fuzz/run_known.sh), run $known of at" \
    "most $MAX_KNOWN"
  [ $known -lt "$MAX_KNOWN" ] || {
    echo "run_known.sh: $known runs in a row ended on it: stopped"
    exit $rc
  }
  echo "run_known.sh: fuzzing again"
done
