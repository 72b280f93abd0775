#!/usr/bin/env bash
# wheel.sh PYTHON SOURCE_DIR WORK
# python.wheel: `pip wheel python/` makes one wheel of the package, and that
# wheel alone, unpacked away from the source tree and from .venv's installed
# copy, imports and solves. pip runs as scripts/setup runs it (the .venv's
# jax, no build isolation, the same CMake options), so scikit-build-core
# reuses setup's build folder (python/build/) and nothing is compiled again.
set -u
py="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
"$py" -m pip wheel --disable-pip-version-check --no-build-isolation --no-deps \
  -Ccmake.define.MINIMODEL_JAX=ON "$src/python" -w "$work/dist" >"$work/log" 2>&1 ||
  { cat "$work/log"; fail "pip wheel python/ failed"; }
shopt -s nullglob
wheels=("$work"/dist/*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "pip wheel made ${#wheels[@]} wheels: ${wheels[*]}"
whl="${wheels[0]}"
case "$(basename "$whl")" in
  minimodel-*-py3-none-*.whl) ;;
  *) fail "the wheel's name is not minimodel-VERSION-py3-none-PLATFORM: $(basename "$whl")" ;;
esac
# Unpacked and imported from there alone: the cwd is not the source tree,
# the unpacked folder comes first, and the module must come from it.
cd / && "$py" - "$whl" "$work/unpacked" "$src/tests/python" <<'PYEOF' || fail "the unpacked wheel does not import or solve"
import sys, zipfile
whl, dest, tests = sys.argv[1:4]
with zipfile.ZipFile(whl) as z:
    names = set(z.namelist())
    for want in ("minimodel/__init__.py", "minimodel/tdma.py", "minimodel/jax.py",
                 "minimodel/_lib.py", "minimodel/_minimodel_tdma.so"):
        assert want in names, f"{want} is not in the wheel"
    meta = [n for n in names if n.endswith(".dist-info/METADATA")]
    assert len(meta) == 1, meta
    text = z.read(meta[0]).decode()
    assert "\nName: minimodel\n" in text, "METADATA does not name the package minimodel"
    z.extractall(dest)
sys.path.insert(0, dest)
sys.path.append(tests)  # conftest: the suites' systems and dense solve
import minimodel.tdma as t
from conftest import DTYPES, assert_close, dense_solve, system
assert t.__file__.startswith(dest + "/"), f"minimodel.tdma came from {t.__file__}"
for dtype in DTYPES:
    lower, diag, upper, rhs, depth = system((3, 4), 9, dtype, seed=7)
    x = t.solve(lower, diag, upper, rhs, depth=depth)
    assert_close(x, dense_solve(lower, diag, upper, rhs, depth), dtype)
print("the wheel", whl.rsplit("/", 1)[1], "imports from", dest, "and solves")
PYEOF
