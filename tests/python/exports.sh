#!/usr/bin/env bash
# exports.sh PYTHON SOURCE_DIR: the installed package's library exports the
# C API that src/mm_py.h marks MM_PY_EXPORT and the XLA FFI handlers that
# src/mm_tdma_ffi.cc defines (where it was built with them), and nothing
# else: not the solvers linked into it (mm_tdma_*, mm_simd_*), not the C++
# of the FFI headers (python/CMakeLists.txt).
py="$1"; src="$2"
fail() { echo "FAIL: $*"; exit 1; }
lib=$("$py" -c "import minimodel._lib as l; print(l.lib._name)") || fail "the package does not import"
[ -f "$lib" ] || fail "no library at '$lib'"
# the names the sources promise, read from them (not from the library)
want=$(sed -n 's/^MM_PY_EXPORT [^(]*[ *]\(mm_py_[a-z_]*\)(.*/\1/p' "$src/python/src/mm_py.h")
[ "$(wc -l <<<"$want")" -ge 10 ] || fail "fewer than 10 MM_PY_EXPORT functions read from mm_py.h: $want"
# the FFI handlers: none (0), the CPU one (1), or it and the CUDA one (2),
# in the order the source defines them
ffi=$("$py" -c "import minimodel._lib as l; print(l.lib.mm_py_ffi())") || fail "mm_py_ffi"
if [ "$ffi" -gt 0 ]; then
  want+=$'\n'$(sed -n 's/^XLA_FFI_DEFINE_HANDLER_SYMBOL(\([a-z_]*\),.*/\1/p' \
    "$src/python/src/mm_tdma_ffi.cc" | head -n "$ffi")
fi
want=$(LC_ALL=C sort -u <<<"$want")
# defined, global or weak, in the dynamic symbol table
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWVDBR]$/ {print $3}' | LC_ALL=C sort -u)
[ "$have" = "$want" ] || fail "$(basename "$lib") exports:
$(diff <(echo "$want") <(echo "$have") | sed -n 's/^[<>] /  &/p')
(< promised and missing, > exported and not promised)"
echo "ok: $(basename "$lib") exports the $(wc -l <<<"$want") promised functions and nothing else"
