#!/usr/bin/env bash
# set_values.sh MINIMODEL CONFIG
# --set values follow the rules of a line of the configuration file, so that
# the resolved text (--dry-run, the history's configuration attribute) reads
# back as the same configuration: blanks around the value are trimmed; a ';'
# that would start a comment, a control character (newline, tab is allowed)
# or invalid UTF-8 are refused with exit 2.
set -u
mm="$1"; ini="$2"
failed=0
expect() { # code regex args...
  local code="$1" regex="$2"; shift 2
  local out; out=$("$mm" --dry-run "$@" "$ini" 2>&1); local rc=$?
  if [ $rc -ne "$code" ] || ! grep -qE -- "$regex" <<<"$out"; then
    printf 'FAIL: %s: exit %s (expected %s), output:\n%s\n' "$*" "$rc" "$code" "$out"
    failed=1
  else
    echo "ok: $*"
  fi
}
expect 0 '^dir = a b$' --set 'output.dir=  a b  '
expect 0 '^dir = a;b$' --set 'output.dir=a;b'
expect 2 "output.dir = a ;b: ';' would start a comment" --set 'output.dir=a ;b'
expect 2 "output.dir = ;b: ';' would start a comment" --set 'output.dir=;b'
expect 2 'output.dir: not valid UTF-8 text, or a control character' --set $'output.dir=a\nname = b'
expect 2 'run.name: not valid UTF-8 text, or a control character' --set $'run.name=caf\xe9'
expect 2 'initial.file: not valid UTF-8 text, or a control character' --set $'initial.file=a\x01b'
expect 0 '^dir = température$' --set 'output.dir=température'
exit $failed
