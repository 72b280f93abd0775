#!/usr/bin/env bash
# long_message_utf8.sh MINIMODEL PYTHON
# A message longer than the error record leaves out its middle between two
# characters, not inside one: for a file name of 50 000 two-byte
# characters ("é") the message stays valid UTF-8 (it was cut inside an
# "é"), says how many bytes it left out, and keeps its end, the reason.
set -u
mm="$1"; py="$2"
name="$(printf 'é%.0s' $(seq 50000)).ini"
"$mm" --dry-run "$name" 2>&1 | "$py" -c '
import re, sys
raw = sys.stdin.buffer.read()
try:
    text = raw.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"FAIL: not valid UTF-8 ({e}): {raw[max(0, e.start - 20):e.start + 20]!r}")
m = re.search(r"é \[\.\.\. (\d+) bytes left out \.\.\.\] é", text)
if not m:
    sys.exit(f"FAIL: no cut between two characters in: {text[:60]!r}...{text[-200:]!r}")
if not text.endswith(": cannot open: File name too long\n"):
    sys.exit(f"FAIL: the reason is lost: {text[-120:]!r}")
kept = text.count("é")
left = int(m.group(1))
if 2 * kept + left != 2 * 50000:
    sys.exit(f"FAIL: {kept} characters kept and {left} bytes left out of 100000 bytes")
print(f"ok: valid UTF-8, {kept} characters kept, {left} bytes left out, the reason at the end")
'
