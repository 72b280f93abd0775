"""The package's shared library (_minimodel_tdma.so, built from the
project's solvers by CMake) through ctypes: the C API of python/src/mm_py.h.
"""
import ctypes
import os

_ABI = 2  # MM_PY_ABI of mm_py.h

EINVAL, ENOMEM, ENOTSUP, EDEVICE, ESINGULAR = 1, 2, 3, 4, 5


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "_minimodel_tdma.so")
    if not os.path.exists(path):
        raise ImportError(
            f"minimodel: {path} is missing: the package is not built. Install it with "
            "`pip install ./python` from the project's root (scripts/setup does).")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:  # a library it links cannot be loaded
        raise ImportError(
            f"minimodel: {path} cannot be loaded: {e}. A package built with CUDA (automatic "
            "where nvcc is found) needs the CUDA runtime and cuSPARSE where it runs: install "
            "them, or build the package without CUDA: `pip install ./python "
            "-Ccmake.define.MINIMODEL_CUDA=OFF`") from e
    lib.mm_py_abi.restype = ctypes.c_int
    lib.mm_py_abi.argtypes = []
    if lib.mm_py_abi() != _ABI:
        raise ImportError(f"minimodel: {path} has C API {lib.mm_py_abi()}, the package {_ABI}: "
                          "reinstall the package")
    lib.mm_py_solve.restype = ctypes.c_int
    lib.mm_py_solve.argtypes = [
        ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
        ctypes.c_int]
    lib.mm_py_solve_from.restype = ctypes.c_int
    lib.mm_py_solve_from.argtypes = [
        ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_int]
    for name, res, args in [
            ("mm_py_backend_count", ctypes.c_int, []),
            ("mm_py_backend_name", ctypes.c_char_p, [ctypes.c_int]),
            ("mm_py_backend_description", ctypes.c_char_p, [ctypes.c_int]),
            ("mm_py_backend_flags", ctypes.c_int, [ctypes.c_int]),
            ("mm_py_auto_backend", ctypes.c_char_p, [ctypes.c_int]),
            ("mm_py_strerror", ctypes.c_char_p, [ctypes.c_int]),
            ("mm_py_max_threads", ctypes.c_int, []),
            ("mm_py_fork_single", ctypes.c_int, []),
            ("mm_py_ffi", ctypes.c_int, [])]:
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib, path


lib, path = _load()


def strerror(code):
    return lib.mm_py_strerror(code).decode()
