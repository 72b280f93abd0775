#!/usr/bin/env bash
# readme_output.sh MINIMODEL SOURCE_DIR WORK: the commands of the README's
# "## Output" section run as written, from a directory laid out like the
# repository after scripts/run (output/default.nc and its timing file, the
# .venv and scripts/), each with exit status 0, and the pictures they
# promise are written.
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
ln -s "$src/.venv" "$work/.venv"
ln -s "$src/scripts" "$work/scripts"
(cd "$work" && mpirun --oversubscribe -np 2 "$mm" --quiet "$src/configs/default.ini" >run.log 2>&1) ||
  fail "scripts/run's case: $(cat "$work/run.log")"
[ -f "$work/output/default.nc" ] || fail "no output/default.nc"
# the first sh block after "## Output"
awk '/^## Output/ {s = 1} s && /^```sh/ {b = 1; next} b && /^```/ {exit} b' "$src/README.md" \
  >"$work/commands.sh"
[ "$(grep -c . "$work/commands.sh")" -ge 3 ] || fail "no commands found in the README"
while IFS= read -r cmd; do
  [ -n "$cmd" ] || continue
  (cd "$work" && bash -c "$cmd") >"$work/cmd.log" 2>&1 || fail "'$cmd': $(cat "$work/cmd.log")"
  echo "ok: $cmd"
done <"$work/commands.sh"
for png in default.temp.surface.png default.temp.section.png default.diagnostics.png \
           default.timing.png; do
  [ -s "$work/output/$png" ] || fail "output/$png not written"
done
echo "ok"
