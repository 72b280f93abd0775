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
cd / && "$py" - "$whl" "$work/unpacked" <<'PYEOF' || fail "the unpacked wheel does not import or solve"
import sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
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
import numpy as np
import minimodel.tdma as t
assert t.__file__.startswith(dest + "/"), f"minimodel.tdma came from {t.__file__}"
rng = np.random.default_rng(7)
for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-4)):
    nz = 9
    lower = rng.uniform(-1, 1, (3, 4, nz)).astype(dtype)
    upper = rng.uniform(-1, 1, (3, 4, nz)).astype(dtype)
    diag = (3 + rng.uniform(0, 1, (3, 4, nz))).astype(dtype)
    rhs = rng.uniform(-1, 1, (3, 4, nz)).astype(dtype)
    depth = rng.integers(0, nz + 1, (3, 4)).astype(np.int32)
    depth[0, :4] = (0, 1, 2, nz)
    x = t.solve(lower, diag, upper, rhs, depth=depth)
    for j in range(3):
        for i in range(4):
            d = int(depth[j, i])
            want = rhs[j, i].astype(np.float64).copy()
            if d:
                a = np.diag(diag[j, i, :d].astype(np.float64))
                a += np.diag(lower[j, i, 1:d].astype(np.float64), -1)
                a += np.diag(upper[j, i, :d - 1].astype(np.float64), 1)
                want[:d] = np.linalg.solve(a, rhs[j, i, :d].astype(np.float64))
            err = np.max(np.abs(x[j, i] - want)) / max(1.0, np.max(np.abs(want)))
            assert err < tol, f"{dtype.__name__} column ({j}, {i}) depth {d}: error {err}"
print("the wheel", whl.rsplit("/", 1)[1], "imports from", dest, "and solves")
PYEOF
