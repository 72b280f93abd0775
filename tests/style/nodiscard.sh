#!/usr/bin/env bash
# nodiscard.sh SOURCE_DIR: every function that returns mm_err is declared
# MM_NODISCARD (model/mm_error.h), so that a result left unread fails the
# build (-Werror=unused-result): each declaration in a header, and each
# static function of a source file. The build alone cannot see a
# declaration without it. The check can fail: a snippet without it must be
# flagged first.
src="$1"
cd "$src" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t headers < <(git ls-files '*.h' '*.cuh' '*.hpp')
  mapfile -t sources < <(git ls-files '*.c' '*.cu' '*.cc' '*.cpp')
else
  mapfile -t headers < <(find . -path ./build\* -prune -o -path ./.venv -prune -o \
    \( -name '*.h' -o -name '*.cuh' -o -name '*.hpp' \) -print)
  mapfile -t sources < <(find . -path ./build\* -prune -o -path ./.venv -prune -o \
    \( -name '*.c' -o -name '*.cu' -o -name '*.cc' -o -name '*.cpp' \) -print)
fi
[ ${#headers[@]} -gt 20 ] && [ ${#sources[@]} -gt 50 ] ||
  { echo "FAIL: only ${#headers[@]} headers and ${#sources[@]} sources found in $src"; exit 1; }
# a function returning mm_err (not a pointer to one, not a cast), declared
# or defined on this line: in a header any, in a source a static one
in_header='(^|[^(*[:alnum:]_])mm_err[[:space:]]+\**[[:alnum:]_]+[[:space:]]*\('
in_source='^[[:space:]]*static[[:space:]]+(inline[[:space:]]+)?mm_err[[:space:]]+\**[[:alnum:]_]+[[:space:]]*\('
unmarked() { grep -HnE "$1" "${@:2}" 2>/dev/null | grep -v 'MM_NODISCARD'; }
# the check can fail
probe=$(mktemp -d) || exit 1
trap 'rm -rf "$probe"' EXIT
printf 'mm_err mm_probe(int x);\n' >"$probe/p.h"
printf 'static mm_err probe(int x) {\n  return x;\n}\n' >"$probe/p.c"
[ -n "$(unmarked "$in_header" "$probe/p.h")" ] && [ -n "$(unmarked "$in_source" "$probe/p.c")" ] ||
  { echo "FAIL: the check did not flag a declaration without MM_NODISCARD"; exit 1; }
bad=$( { unmarked "$in_header" "${headers[@]}"; unmarked "$in_source" "${sources[@]}"; } )
if [ -n "$bad" ]; then
  echo "FAIL: functions returning mm_err without MM_NODISCARD (model/mm_error.h):"
  echo "$bad"
  exit 1
fi
echo "ok: every function returning mm_err is MM_NODISCARD (${#headers[@]} headers, ${#sources[@]} sources)"
