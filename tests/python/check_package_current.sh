#!/usr/bin/env bash
# python.package.current: the package in .venv was built from this tree's
# sources (the hash scripts/setup recorded when it installed it).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
want="$("$root/scripts/python-package-hash")"
have="$(cat "$root/.venv/minimodel-package.stamp" 2>/dev/null || echo none)"
if [ "$want" != "$have" ]; then
  echo "the minimodel package in .venv is not built from these sources (stamp $have, sources $want): run scripts/setup"
  exit 1
fi
echo "the package in .venv is built from these sources ($want)"
