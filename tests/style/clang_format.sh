#!/usr/bin/env bash
# clang_format.sh SOURCE_DIR: every C, C++ and CUDA file of the project is as
# clang-format 14 writes it with .clang-format; a difference fails, naming
# the files (fix: clang-format -i FILE...). The check can fail: a badly
# formatted snippet must be flagged first.
src="$1"
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null && "$c" --version | grep -q "version 14\."; then cf="$c"; break; fi
done
[ -n "$cf" ] || { echo "FAIL: no clang-format 14 (scripts/setup installs it)"; exit 1; }
cd "$src" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cc' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path ./build\* -prune -o -path ./.venv -prune -o \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cc' -o \
       -name '*.cpp' -o -name '*.hpp' \) -print)
fi
[ ${#files[@]} -gt 50 ] || { echo "FAIL: only ${#files[@]} source files found in $src"; exit 1; }
# the check can fail
if printf 'int  f( int x ){return x;}\n' |
   "$cf" --dry-run --Werror --assume-filename=x.c >/dev/null 2>&1; then
  echo "FAIL: $cf did not flag a badly formatted snippet"; exit 1
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue # deleted in the work tree
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "FAIL: ${#bad[@]} file(s) not formatted with .clang-format ($cf): ${bad[*]}"
  echo "fix: $cf -i ${bad[*]}"
  exit 1
fi
echo "ok: ${#files[@]} files formatted as .clang-format says ($cf)"
