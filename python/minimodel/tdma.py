"""The batched tridiagonal column solver for NumPy arrays.

    x = minimodel.tdma.solve(lower, diag, upper, rhs)

Arrays of shape (..., nz), levels last (level k of column c at [c * nz + k]
of the flattened array, the model's layout), all float64 or all float32,
C-contiguous. Row k of a column's system is

    lower[k] x[k-1] + diag[k] x[k] + upper[k] x[k+1] = rhs[k]

(lower[..., 0] and upper[..., nz-1] are not used). Every argument is checked
before the library is called: a wrong shape, dtype, layout or depth raises
TypeError or ValueError with a message.
"""
import numbers

import numpy as np

from . import _lib

__all__ = ["solve", "backends", "auto_backend", "max_threads"]

_MAX_THREADS = 1024


def _table():
    rows = []
    for i in range(_lib.lib.mm_py_backend_count()):
        flags = _lib.lib.mm_py_backend_flags(i)
        rows.append((_lib.lib.mm_py_backend_name(i).decode(), bool(flags & 1), bool(flags & 2),
                     _lib.lib.mm_py_backend_description(i).decode()))
    return tuple(rows)


_BACKENDS = _table()


def backends(device=False):
    """Names of the solver backends compiled into the package, for `solve`
    (host memory; "auto" is accepted as well), or with device=True those that
    solve GPU memory (minimodel.jax.tdma uses them on a GPU)."""
    return tuple(name for name, dev, _, _ in _BACKENDS if dev == bool(device))


def describe():
    """{name: (device memory, bitwise equal to reference, description)} of
    every backend compiled in."""
    return {name: (dev, exact, desc) for name, dev, exact, desc in _BACKENDS}


def auto_backend():
    """The backend backend="auto" takes for host memory."""
    name = _lib.lib.mm_py_auto_backend(0)
    return name.decode() if name else None


def max_threads():
    """OpenMP threads a solve with threads=None uses (OMP_NUM_THREADS, within
    the cap that solve's threads describes)."""
    return _lib.lib.mm_py_max_threads()


def _check_array(name, a, dtype=None):
    """a as a plain ndarray view, its dtype checked (dtype: that of rhs).

    The view is of the base class: its shape, strides, dtype, flags and
    pointer are the memory's own, whatever properties a subclass of ndarray
    gives itself (one whose shape said more than its memory held made the
    solver read or write past it)."""
    if not isinstance(a, np.ndarray) or isinstance(a, np.ma.MaskedArray):
        raise TypeError(f"{name} must be a numpy.ndarray, not {type(a).__name__}")
    a = np.ndarray.view(a, np.ndarray)
    if a.dtype.kind == "f" and a.dtype.itemsize in (4, 8) and not a.dtype.isnative:
        fix = ("pass an array in native byte order to take the result" if name == "out" else
               f"pass {name}.astype({name}.dtype.newbyteorder('='))")
        raise TypeError(f"{name} has dtype {a.dtype.str}, not in this machine's byte order: "
                        f"float64 or float32 (native byte order) are supported; {fix}")
    if dtype is None:
        if a.dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"{name} has dtype {a.dtype}: float64 or float32 (native byte "
                            "order) are supported")
    elif a.dtype != dtype:
        raise TypeError(f"{name} has dtype {a.dtype}, rhs {dtype}: all arrays must have one dtype")
    return a


def _check_layout(name, a):
    if not a.flags.c_contiguous:
        raise ValueError(f"{name} is not C-contiguous (levels last, a column's levels adjacent); "
                         f"pass numpy.ascontiguousarray({name})")
    if not a.flags.aligned:
        raise ValueError(f"{name} is not aligned to its dtype; pass a copy")


def _memory_of(obj):
    """The memory an object exposes through the buffer protocol (an ndarray,
    a memoryview, array.array, bytearray), as an ndarray; None where it
    exposes none (a list) or none NumPy can view."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        return np.asarray(memoryview(obj))
    except (TypeError, ValueError, NotImplementedError):
        return None


def _is_bool(v):
    # Python's and NumPy's bools, also a 0-d bool array inside a list
    return isinstance(v, (bool, np.bool_)) or getattr(v, "dtype", None) == np.bool_


def _check_depth(depth, lead, nz):
    """The depths as the solver's own copy: C ints, C-contiguous, checked.

    A copy, not the caller's array: the solver runs without the GIL, and an
    array that another thread changes between the check and the solve would
    make it read and write past its columns."""
    if isinstance(depth, np.ma.MaskedArray):
        raise TypeError("depth must not be a masked array (its mask would be ignored): pass "
                        "integers, e.g. depth.filled(0) for no wet level where masked")
    from_list = False  # d holds a list's integers as Python objects
    if isinstance(depth, np.ndarray):
        d = np.array(depth, copy=True, order="C")  # a base-class copy (subok=False)
    else:
        try:
            d = np.array(depth, copy=True, order="C")
            # Python sequences: each element as it was written (NumPy makes
            # bools among integers 0 or 1, and integers it cannot hold in one
            # dtype float64 or objects)
            as_objects = (np.array(depth, dtype=object)
                          if isinstance(depth, (list, tuple)) and d.size else None)
        except Exception as e:  # ragged lists and the like
            raise TypeError(f"depth must be an integer array of shape {lead}: {e}") from None
        if as_objects is not None:
            values = list(as_objects.flat)
            if d.dtype != np.bool_ and any(_is_bool(v) for v in values):
                raise TypeError("depth has a bool among its integers: numbers of levels are "
                                "needed")
            if d.dtype.kind not in "iu" and values and all(
                    isinstance(v, numbers.Integral) for v in values):
                d, from_list = as_objects, True  # integers NumPy holds in no integer dtype
        if d.size == 0 and d.dtype.kind == "f":  # [] is float64 to numpy
            d = d.astype(np.intc)
    if d.dtype.kind not in "iu":
        if d.dtype == object and d.size and all(isinstance(v, numbers.Integral)
                                                 and not _is_bool(v) for v in d.flat):
            lo, hi = min(d.flat), max(d.flat)  # Python integers beyond int64 are objects
            if lo < 0 or hi > nz:
                raise ValueError(f"depth must be within 0..{nz} (nz, the last dimension); "
                                 f"found {lo}..{hi}")
            if from_list:
                if d.shape != lead:
                    raise ValueError(f"depth has shape {d.shape}, the columns of rhs {lead}")
                return np.array([int(v) for v in d.flat], dtype=np.intc).reshape(lead)
        raise TypeError(f"depth has dtype {d.dtype}: an integer dtype is needed")
    if d.shape != lead:
        raise ValueError(f"depth has shape {d.shape}, the columns of rhs {lead}")
    if d.size:
        lo, hi = d.min(), d.max()
        if lo < 0 or hi > nz:
            raise ValueError(f"depth must be within 0..{nz} (nz, the last dimension); "
                             f"found {lo}..{hi}")
    # C ints (the range is checked: no wrap), C-contiguous and aligned; d is
    # this call's own array, which no other thread can change
    return np.require(d, dtype=np.intc, requirements=["C", "A"])


def solve(lower, diag, upper, rhs, *, depth=None, backend="auto", threads=None, out=None):
    """Solves every column's tridiagonal system; returns the solution.

    lower, diag, upper, rhs: numpy arrays of one shape (..., nz), nz >= 1, and
        one dtype, float64 or float32, C-contiguous.
    depth: integers of shape (...): the wet levels of each column, 0..nz
        (default: nz everywhere). Only the top depth levels of a column are
        solved; below them, and in a column of depth 0, the result is rhs.
    backend: "auto" or a name of backends().
    threads: OpenMP threads for this call (None: the library's default,
        OMP_NUM_THREADS; the `omp` and `simd` backends use them). At most
        as many as the CPUs this process may use, and OMP_THREAD_LIMIT, are
        started: more cannot be faster, the bits are the same for any
        count, and a team of hundreds that fails to start ends the
        process.
    out: where to write the solution, an array like rhs (writeable, not
        overlapping lower, diag, upper or depth); out=rhs solves in place. Default:
        a new array. rhs is copied into out only once the solver and its
        workspace are ready, so a call that raises leaves out as it was.

    The Thomas algorithm, without pivoting (that is what makes it fast):
    exact to rounding where every pivot stays well away from zero, as in a
    strictly diagonally dominant matrix (|diag| > |lower| + |upper| in every
    row), such as implicit vertical diffusion's. Otherwise no
    error is raised: a zero pivot gives inf or NaN in its column, a tiny one
    an inaccurate solution; check np.isfinite(x), or use a pivoting solver
    (scipy.linalg.solve_banded) for such matrices. A pivot below about
    1e-308 (float64) or 1e-38 (float32) in magnitude, a subnormal number
    whose reciprocal overflows, counts as zero: scale such rows first.

    After fork: libgomp's OpenMP threads do not survive os.fork (a child
    whose parent had solved with threads would hang). In a process forked
    (multiprocessing's "fork") from one that had solved with more than one
    thread, every solve runs on one thread, threads= included, and
    max_threads() is 1; the results are the same bits. Use the "spawn" or
    "forkserver" start method for threaded solves in child processes.
    """
    rhs = _check_array("rhs", rhs)
    dtype = rhs.dtype
    lower = _check_array("lower", lower, dtype)
    diag = _check_array("diag", diag, dtype)
    upper = _check_array("upper", upper, dtype)
    if rhs.ndim < 1:
        raise ValueError("rhs must have at least one dimension (..., nz)")
    for name, a in (("lower", lower), ("diag", diag), ("upper", upper)):
        if a.shape != rhs.shape:
            raise ValueError(f"{name} has shape {a.shape}, rhs {rhs.shape}: all must be equal")
    nz = rhs.shape[-1]
    if nz < 1:
        raise ValueError("the last dimension (levels, nz) must be at least 1")
    if nz > 2**31 - 1:
        raise ValueError(f"nz = {nz} levels is more than the solvers take (2^31 - 1)")
    for name, a in (("lower", lower), ("diag", diag), ("upper", upper), ("rhs", rhs)):
        _check_layout(name, a)
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a str, not {type(backend).__name__}")
    if backend != "auto" and backend not in backends():
        if backend in backends(device=True):
            raise ValueError(f"backend {backend!r} solves GPU memory; NumPy arrays are host "
                             "memory (minimodel.jax.tdma takes it on a GPU)")
        raise ValueError(f"unknown backend {backend!r}; known: "
                         f"{', '.join(('auto',) + backends())}")
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
            raise TypeError(f"threads must be an int or None, not {type(threads).__name__}")
        if not 1 <= threads <= _MAX_THREADS:
            raise ValueError(f"threads must be within 1..{_MAX_THREADS}, not {threads}")
    lead = rhs.shape[:-1]
    ncol = rhs.size // nz
    d = None if depth is None else _check_depth(depth, lead, nz)

    fill = False  # out is filled from rhs (by the library, see below)
    given = out  # returned as given (the caller's class); `out` is its base view
    if out is None:
        out = given = np.array(rhs, dtype=dtype, order="C", copy=True)
    else:
        out = _check_array("out", out, dtype)
        if out.shape != rhs.shape:
            raise ValueError(f"out has shape {out.shape}, rhs {rhs.shape}")
        _check_layout("out", out)
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        for name, a in (("lower", lower), ("diag", diag), ("upper", upper)):
            if out.size and np.may_share_memory(out, a):
                raise ValueError(f"out overlaps {name}: the solve would overwrite it while "
                                 "reading it")
        same = (out.size == 0 or out.__array_interface__["data"][0]
                == rhs.__array_interface__["data"][0])
        if not same and np.may_share_memory(out, rhs):
            raise ValueError("out overlaps rhs without being rhs")
        # (the solver reads its own copy of the depths, but writing the
        # solution over them is a caller's mistake)
        depth_memory = _memory_of(depth)
        if (depth_memory is not None and out.size
                and np.may_share_memory(out, depth_memory)):
            raise ValueError("out overlaps depth: the solution would be written over the "
                             "depths given")
        fill = not same
    if ncol == 0:  # out has no element
        return given
    if d is None:
        d = np.full(ncol, nz, dtype=np.intc)
    # out apart from rhs: filled from rhs by the library, after the solver and
    # its workspace are made, so that a failure there leaves out as it was
    src = rhs.ctypes.data if fill else None
    rc = _lib.lib.mm_py_solve_from(backend.encode(), int(dtype == np.float32), ncol, nz,
                                   d.ctypes.data, lower.ctypes.data, diag.ctypes.data,
                                   upper.ctypes.data, src, out.ctypes.data,
                                   0 if threads is None else int(threads))
    if rc:
        msg = f"minimodel.tdma.solve ({backend}): {_lib.strerror(rc)}"
        if rc == _lib.ESINGULAR:
            raise np.linalg.LinAlgError(msg)
        if rc == _lib.ENOMEM:
            raise MemoryError(msg)
        if rc == _lib.EINVAL:
            raise ValueError(msg)
        raise RuntimeError(msg)
    return given
