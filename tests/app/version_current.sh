#!/usr/bin/env bash
# version_current.sh MINIMODEL SOURCE_DIR: `minimodel --version` names the
# tree the binary was built from (git describe --always --dirty --tags),
# stamped at build time, not at configure time. Skipped (77) outside a git
# checkout.
mm="$1"; src="$2"
want=$(git -C "$src" describe --always --dirty --tags 2>/dev/null) || { echo "no git checkout"; exit 77; }
got=$("$mm" --version)
[ "$got" = "minimodel $want" ] || { echo "FAIL: --version says '$got', the tree is $want"; exit 1; }
echo "ok: $got"
