#!/usr/bin/env bash
# expect.sh CODE REGEX COMMAND...: run COMMAND, pass when it exits with CODE
# and its output (stdout + stderr) matches the extended regex REGEX.
code="$1"; regex="$2"; shift 2
out=$("$@" 2>&1); rc=$?
if [ "$rc" -ne "$code" ]; then
  printf 'expected exit %s, got %s from: %s\n%s\n' "$code" "$rc" "$*" "$out"; exit 1
fi
if ! grep -qE -- "$regex" <<<"$out"; then
  printf 'output does not match /%s/:\n%s\n' "$regex" "$out"; exit 1
fi
echo "ok: exit $rc, output matches /$regex/"
