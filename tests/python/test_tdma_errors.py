"""python.tdma.errors: every bad argument of minimodel.tdma.solve raises
TypeError or ValueError with a message, before the library is called, and
leaves rhs and out untouched: wrong shapes, dtypes (also between the
arrays), non-contiguous and Fortran-ordered arrays, depths out of range or of
a wrong dtype or shape or masked, unknown backends, bad thread counts,
read-only or aliasing out (depth over out's memory also as a memoryview),
subclasses of ndarray whose shape, dtype or flags are not their memory's
(checked by the memory). An unaligned depth is copied, never passed on
unaligned; a solve that fails after the checks (out of memory) leaves out
untouched."""
import numpy as np
import pytest

import minimodel.tdma as tdma
from conftest import run_script, system


@pytest.fixture
def sys4():
    lower, diag, upper, rhs, depth = system((6, 5), 8, np.float64, seed=1, depths=False, nan_unused=False)
    return lower, diag, upper, rhs, depth


def memory(a):
    """a's memory as a plain ndarray (a subclass's own shape aside); None
    for what is not an ndarray"""
    return np.ndarray.view(a, np.ndarray) if isinstance(a, np.ndarray) else None


def raises(exc, match, *args, **kw):
    lower, diag, upper, rhs = args
    saved = [np.array(memory(a), copy=True) if memory(a) is not None else None for a in args]
    out = memory(kw.get("out"))
    out_saved = np.array(out, copy=True) if out is not None else None
    with pytest.raises(exc, match=match):
        tdma.solve(*args, **kw)
    for a, s in zip(args, saved):
        if s is not None:
            np.testing.assert_array_equal(memory(a), s)
    if out_saved is not None:
        np.testing.assert_array_equal(out, out_saved)


def test_shapes(sys4):
    lower, diag, upper, rhs, depth = sys4
    raises(ValueError, "lower has shape", lower[:, :4], diag, upper, rhs)
    raises(ValueError, "upper has shape", lower, diag, upper[..., :7].copy(), rhs)
    raises(ValueError, "diag has shape", lower, diag.reshape(5, 6, 8), upper, rhs)
    s = np.float64(1.0)
    raises(ValueError, "at least one dimension", np.array(s), np.array(s), np.array(s), np.array(s))
    z = np.zeros((4, 0))
    raises(ValueError, "at least 1", z, z, z, z)
    z = np.zeros((0,))
    raises(ValueError, "at least 1", z, z, z, z)


def test_dtypes(sys4):
    lower, diag, upper, rhs, depth = sys4
    raises(TypeError, "lower has dtype float32", lower.astype(np.float32), diag, upper, rhs)
    raises(TypeError, "upper has dtype float32, rhs float64", lower, diag, upper.astype(np.float32), rhs)
    f = [a.astype(np.float32) for a in (lower, diag, upper)]
    raises(TypeError, "diag has dtype float64, rhs float32", f[0], diag, f[2], rhs.astype(np.float32))
    for dt in (np.int64, np.int32, np.float16, np.complex128, np.longdouble, object, bool):
        a = [x.astype(dt) for x in (lower, diag, upper, rhs)]
        raises(TypeError, "dtype", *a)
    big = [x.astype(">f8") for x in (lower, diag, upper, rhs)]
    raises(TypeError, "native byte order", *big)
    # one array byte-swapped: its byte order is named, not a dtype mismatch
    for i, name in enumerate(("lower", "diag", "upper")):
        a = [lower, diag, upper, rhs]
        a[i] = a[i].astype(">f8")
        raises(TypeError, f"{name} has dtype >f8, not in this machine's byte order", *a)
    with pytest.raises(TypeError, match="out has dtype >f8, not in this machine's byte order: "
                       ".*pass an array in native byte order to take the result"):
        tdma.solve(lower, diag, upper, rhs, out=np.empty(rhs.shape, ">f8"))
    # a byte-swapped float16 is named for its dtype: swapping it would not help
    raises(TypeError, "lower has dtype >f2, rhs float64", lower.astype(">f2"), diag, upper, rhs)
    raises(TypeError, "numpy.ndarray", lower.tolist(), diag, upper, rhs)
    raises(TypeError, "numpy.ndarray", lower, diag, upper, rhs.tolist())
    raises(TypeError, "numpy.ndarray", lower, diag, upper, None)
    raises(TypeError, "numpy.ndarray", lower, diag, np.ma.masked_array(upper), rhs)


def test_layout(sys4):
    lower, diag, upper, rhs, depth = sys4
    raises(ValueError, "rhs is not C-contiguous", lower, diag, upper, np.asfortranarray(rhs))
    raises(ValueError, "lower is not C-contiguous", np.asfortranarray(lower), diag, upper, rhs)
    wide = np.repeat(diag, 2, axis=-1)
    raises(ValueError, "diag is not C-contiguous", lower, wide[..., ::2], upper, rhs)
    t = np.ascontiguousarray(np.swapaxes(upper, 0, 1))
    raises(ValueError, "upper is not C-contiguous", lower, diag, np.swapaxes(t, 0, 1), rhs)
    # unaligned: float64 at an odd byte offset
    buf = np.zeros(rhs.nbytes + 1, np.uint8)
    una = buf[1:].view(np.float64).reshape(rhs.shape)
    una[...] = rhs
    raises(ValueError, "not aligned", lower, diag, upper, una)


def test_depth(sys4):
    lower, diag, upper, rhs, depth = sys4
    for bad in (9, 2**31, 2**40):
        d = depth.astype(np.int64)
        d[2, 3] = bad
        raises(ValueError, r"depth must be within 0\.\.8", lower, diag, upper, rhs, depth=d)
    d = depth.astype(np.int64)
    d[0, 0] = -1
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs, depth=d)
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs,
           depth=np.full(depth.shape, 2**64 - 1, np.uint64))
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs,
           depth=np.full(depth.shape, -2**63, np.int64))
    raises(TypeError, "depth has dtype float64", lower, diag, upper, rhs, depth=depth.astype(float))
    raises(TypeError, "depth has dtype bool", lower, diag, upper, rhs, depth=depth > 0)
    raises(TypeError, "depth has dtype object", lower, diag, upper, rhs, depth=depth.astype(object))
    # Python integers beyond int64 (NumPy keeps them as objects): out of range, not a dtype
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs,
           depth=np.full(depth.shape, 2**70, dtype=object))
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs,
           depth=[[2**70] * depth.shape[1]] * depth.shape[0])
    raises(TypeError, "depth has dtype <U", lower, diag, upper, rhs, depth=depth.astype(str))
    raises(ValueError, "depth has shape", lower, diag, upper, rhs, depth=depth.T)
    raises(ValueError, "depth has shape", lower, diag, upper, rhs, depth=depth[:, :4])
    raises(ValueError, "depth has shape", lower, diag, upper, rhs, depth=8)
    raises(ValueError, "depth has shape", lower, diag, upper, rhs, depth=depth.reshape(-1))
    raises(TypeError, "depth", lower, diag, upper, rhs, depth=[[1, 2], [3]])
    # a bool among integers in a list would be taken as 0 or 1
    bools = depth.tolist()
    bools[1][2] = True
    raises(TypeError, "depth has a bool among its integers", lower, diag, upper, rhs, depth=bools)


def test_empty_depth_list():
    # [] for no columns is an empty integer array, not a float64 one
    z = np.zeros((0, 4))
    assert tdma.solve(z, z, z, z, depth=[]).shape == (0, 4)
    z = np.zeros((2, 0, 4))
    assert tdma.solve(z, z, z, z, depth=[[], []]).shape == (2, 0, 4)


def test_masked_depth(sys4):
    # its mask would be ignored: refused, as masked coefficients are
    lower, diag, upper, rhs, depth = sys4
    for mask in (depth < 0, depth == depth.max()):
        masked = np.ma.masked_array(depth, mask=mask)
        raises(TypeError, "depth must not be a masked array", lower, diag, upper, rhs,
               depth=masked)
        raises(TypeError, "depth must not be a masked array", lower, diag, upper, rhs,
               depth=masked, out=rhs.copy())


def test_unaligned_depth_is_copied(sys4, monkeypatch):
    # C ints at an odd byte offset: solved as an aligned copy, never passed on
    # to the library unaligned (C requires an int's alignment)
    lower, diag, upper, rhs, depth = sys4
    depth = depth.copy()
    depth[0, :3] = [0, 1, 5]
    ref = tdma.solve(lower, diag, upper, rhs, depth=depth)
    buf = np.zeros(depth.size * 4 + 8, np.uint8)
    una = buf[1:1 + depth.size * 4].view(np.intc).reshape(depth.shape)
    una[...] = depth
    assert not una.flags.aligned
    seen = []
    for name in ("mm_py_solve", "mm_py_solve_from"):
        f = getattr(tdma._lib.lib, name, None)
        if f is None:
            continue

        def spy(*a, _f=f):
            seen.append(a[4])
            return _f(*a)
        monkeypatch.setattr(tdma._lib.lib, name, spy)
    np.testing.assert_array_equal(tdma.solve(lower, diag, upper, rhs, depth=una), ref)
    out = np.zeros_like(rhs)
    tdma.solve(lower, diag, upper, rhs, depth=una, out=out)
    np.testing.assert_array_equal(out, ref)
    assert len(seen) == 2
    assert all(p % np.dtype(np.intc).alignment == 0 for p in seen), seen


def test_backend_and_threads(sys4):
    lower, diag, upper, rhs, depth = sys4
    raises(ValueError, "unknown backend 'nope'; known: auto", lower, diag, upper, rhs, backend="nope")
    raises(ValueError, "unknown backend ''", lower, diag, upper, rhs, backend="")
    raises(TypeError, "backend must be a str", lower, diag, upper, rhs, backend=b"simd")
    raises(TypeError, "backend must be a str", lower, diag, upper, rhs, backend=None)
    for name in tdma.backends(device=True):
        raises(ValueError, "GPU memory", lower, diag, upper, rhs, backend=name)
    for bad in (0, -1, 10**6):
        raises(ValueError, "threads must be within", lower, diag, upper, rhs, threads=bad)
    for bad in (True, 2.0, "2"):
        raises(TypeError, "threads must be an int", lower, diag, upper, rhs, threads=bad)
    assert tdma.solve(lower, diag, upper, rhs, threads=np.int64(2)).shape == rhs.shape


def test_threads_capped():
    # threads=1024, which the checks take, under a limit on address space
    # that leaves room for a thread stack per CPU but not for 1024 of them
    # (8 GiB): the OpenMP runtime, failing to start the team, ended the
    # process (exit 1); the solve now opens at most one thread per CPU it may
    # use and gives the same bits. max_threads() stays within that cap and
    # within OMP_THREAD_LIMIT.
    code = (
        "import os, resource, numpy as np, minimodel.tdma as t\n"
        "a = np.ones((70000, 2)); ref = t.solve(-.1*a, 2*a, -.1*a, a, threads=1)\n"
        "n = len(os.sched_getaffinity(0))\n"
        "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status')\n"
        "      if l.startswith('VmSize:')][0]\n"
        "room = vm + (n + 16) * (8 << 20) + (512 << 20)\n"
        "assert room < 1024 * (8 << 20), 'too many CPUs for this test'\n"
        "resource.setrlimit(resource.RLIMIT_AS, (room, resource.RLIM_INFINITY))\n"
        "for b in ('simd', 'omp'):\n"
        "    x = t.solve(-.1*a, 2*a, -.1*a, a, backend=b, threads=1024)\n"
        "    assert np.array_equal(x, ref), b\n"
        "assert 1 <= t.max_threads() <= n, (t.max_threads(), n)\n"
        "print('solved')\n")
    r = run_script(code, env={"OMP_NUM_THREADS": "100000", "OMP_STACKSIZE": "8M"})
    assert r.returncode == 0 and "solved" in r.stdout, (r.returncode, r.stdout, r.stderr)
    r = run_script("import minimodel.tdma as t; print(t.max_threads())",
                   env={"OMP_NUM_THREADS": "4", "OMP_THREAD_LIMIT": "1"})
    assert r.returncode == 0 and r.stdout.strip() == "1", (r.stdout, r.stderr)


def test_out(sys4):
    lower, diag, upper, rhs, depth = sys4
    ro = rhs.copy()
    ro.flags.writeable = False
    raises(ValueError, "out is read-only", lower, diag, upper, ro, out=ro)
    raises(ValueError, "out is read-only", lower, diag, upper, rhs, out=ro)
    # a read-only rhs is fine without out
    assert tdma.solve(lower, diag, upper, ro).shape == rhs.shape
    raises(ValueError, "out has shape", lower, diag, upper, rhs, out=np.zeros((6, 5, 7)))
    raises(TypeError, "out has dtype float32", lower, diag, upper, rhs, out=np.zeros(rhs.shape, np.float32))
    raises(TypeError, "out must be a numpy.ndarray", lower, diag, upper, rhs, out=[0.0])
    raises(ValueError, "out is not C-contiguous", lower, diag, upper, rhs,
           out=np.zeros(rhs.shape, order="F"))
    b = lower.copy()
    raises(ValueError, "out overlaps lower", b, diag, upper, rhs, out=b)
    raises(ValueError, "out overlaps upper", lower, diag, b, b, out=b)
    raises(ValueError, "out overlaps diag", lower, b, upper, rhs, out=b)
    # out shifted by a level over rhs's memory
    big = np.zeros(rhs.size + 1)
    r = big[:-1].reshape(rhs.shape)
    r[...] = rhs
    raises(ValueError, "out overlaps rhs without being rhs", lower, diag, upper, r,
           out=big[1:].reshape(rhs.shape))
    # depth in out's memory (C ints, so not copied): in place, and with out apart
    # from rhs (filled from rhs before the solve); both crashed the solver
    ncol = rhs.size // rhs.shape[-1]
    for inplace in (True, False):
        o = rhs.copy()
        dep = o.reshape(-1).view(np.intc)[:ncol]
        dep[...] = rhs.shape[-1]
        dep = dep.reshape(rhs.shape[:-1])
        raises(ValueError, "out overlaps depth", lower, diag, upper, o if inplace else rhs,
               depth=dep, out=o)
        # the same memory as a memoryview (no ndarray): refused as well
        o = rhs.copy()
        dep = o.reshape(-1).view(np.intc)[:ncol]
        dep[...] = rhs.shape[-1]
        raises(ValueError, "out overlaps depth", lower, diag, upper, o if inplace else rhs,
               depth=memoryview(dep.reshape(rhs.shape[:-1])), out=o)


def test_no_crash_on_hostile_sizes():
    # nz = 1, one column, zero columns, zero-depth everywhere, huge leading dims of size 0
    one = np.ones((1,))
    np.testing.assert_array_equal(tdma.solve(one, 2 * one, one, 3 * one), [1.5])
    z = np.zeros((0, 0, 3), np.float32)
    assert tdma.solve(z, z, z, z).shape == (0, 0, 3)
    lower, diag, upper, rhs, depth = system((4,), 5, np.float64)
    x = tdma.solve(lower, diag, upper, rhs, depth=np.zeros(4, np.int8))
    np.testing.assert_array_equal(x, rhs)
    raises(ValueError, "within 0..5", lower, diag, upper, rhs, depth=np.full(4, 6, np.int8))


@pytest.mark.parametrize("backend", tdma.backends())
def test_zero_pivot_no_error(backend):
    """The documented limit (README, solve's docstring): the Thomas
    algorithm does not pivot, so a matrix whose first pivot is 0 (but which
    is not singular: [[0, 1], [1, 1]]) gives non-finite values in its column
    and no exception; the other columns are solved."""
    lower = np.array([[0.0, 1.0], [0.0, -1.0]])
    diag = np.array([[0.0, 1.0], [4.0, 4.0]])
    upper = np.array([[1.0, 0.0], [-1.0, 0.0]])
    rhs = np.array([[1.0, 2.0], [3.0, 3.0]])
    x = tdma.solve(lower, diag, upper, rhs, backend=backend)
    assert not np.isfinite(x[0]).all(), x[0]
    np.testing.assert_allclose(x[1], np.linalg.solve([[4.0, -1.0], [-1.0, 4.0]], rhs[1]),
                               rtol=1e-15)


OUT_KEPT_SCRIPT = r"""
import resource
import numpy as np
import minimodel.tdma as T

def vm_size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

nz = 1_000_000
z = np.ones((8, nz))
lower, upper = -0.1 * z, -0.1 * z
for dtype in (np.float64, np.float32):
    args = [a.astype(dtype) for a in (lower, z, upper, z)]
    out = np.full_like(args[3], 7.0)
    # simd reserves c' and d' of a tile of columns, (1 + 1) * nz * 64 bytes
    # (128 MB here), when it solves a batch of half a tile or more (8
    # columns: a tile is 8 float64 or 16 float32 columns; fewer are solved
    # column by column): under this limit it cannot, after every argument
    # was found good
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + 48 * 2**20, hard))
    try:
        T.solve(*args, backend="simd", threads=4, out=out)
    except MemoryError as e:
        assert "out of memory" in str(e), e
    else:
        raise AssertionError("no MemoryError")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert (out == 7.0).all(), "out was written by a solve that failed"
    # without the limit the same call solves
    x = T.solve(*args, backend="simd", threads=4, out=out)
    assert x is out
    np.testing.assert_array_equal(out, T.solve(*args, backend="reference"))
print("ok")
"""


def test_failed_solve_leaves_out():
    """A solve that fails after the argument checks (here the solver's
    workspace cannot be had, under an address-space limit) raises and leaves
    out as it was: rhs is copied into out only once the solver and its
    workspace are ready."""
    r = run_script(OUT_KEPT_SCRIPT, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


DEPTH_RACE_SCRIPT = """
import threading, time
import numpy as np, minimodel.tdma as T
ncol, nz = 10000, 10
rng = np.random.default_rng(0)
l = rng.uniform(-1, 0, (ncol, nz)); u = rng.uniform(-1, 0, (ncol, nz)); d = 3 - l - u
b = rng.uniform(size=(ncol, nz))
depth = np.full(ncol, nz, np.intc)
stop = False
def flip():  # another thread: the last column's depth far out of range, and back
    while not stop:
        depth[-1] = 1 << 20
        depth[-1] = nz
t = threading.Thread(target=flip); t.start()
solved = refused = 0
try:
    for backend in T.backends():
        t0 = time.time()
        while time.time() - t0 < 0.5:
            try:
                x = T.solve(l, d, u, b, depth=depth, backend=backend, threads=1)
                solved += 1
            except ValueError:
                refused += 1
finally:
    stop = True; t.join()
print("solved", solved, "refused", refused)
"""


def test_depth_changed_by_another_thread():
    # The solver runs without the GIL: depths that another thread changes
    # after the checks must not reach it (it read and wrote past its columns,
    # a segfault within 0.2 s): each call solves its own copy, checked.
    r = run_script(DEPTH_RACE_SCRIPT, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    solved = r.stdout.split()
    assert solved[0] == "solved" and int(solved[1]) > 0, r.stdout


class _LyingDepth(np.ndarray):
    # min() and max() that pass any range check
    def min(self, *a, **k):
        return 0

    def max(self, *a, **k):
        return 1


def test_depth_subclass_checked_as_values(sys4):
    # a subclass of ndarray is checked by its values (its own copy, a plain
    # ndarray), and out is left as it was
    lower, diag, upper, rhs, depth = sys4
    lying = np.array(depth, dtype=np.intc)
    lying[0, 0] = 1 << 20
    out = np.full_like(rhs, 7.0)
    raises(ValueError, r"within 0\.\.8", lower, diag, upper, rhs, depth=lying.view(_LyingDepth),
           out=out)


class _LyingArray(np.ndarray):
    # a shape, a dtype and flags of its own, none of them its memory's
    lie = None

    @property
    def shape(self):
        return self.lie.shape

    @property
    def dtype(self):
        return self.lie.dtype

    @property
    def flags(self):
        return self.lie.flags

    @property
    def size(self):
        return self.lie.size


def _liar(memory, like):
    a = memory.view(_LyingArray)
    a.lie = like
    return a


def test_array_subclass_checked_by_its_memory(sys4):
    # each array is checked by its memory (a base-class view), not by the
    # properties a subclass gives itself: one that claimed rhs's shape over
    # 8 elements made the solver write (out) or read (lower) past them
    lower, diag, upper, rhs, depth = sys4
    raises(ValueError, r"out has shape \(8,\)", lower, diag, upper, rhs,
           out=_liar(np.zeros(8), rhs))
    raises(ValueError, r"lower has shape \(1,\)", _liar(np.ones(1), rhs), diag, upper, rhs)
    raises(ValueError, r"rhs must have at least one dimension",
           lower, diag, upper, _liar(np.array(1.0), rhs))
    # its dtype: float32 memory that says float64
    raises(TypeError, "diag has dtype float32, rhs float64", lower,
           _liar(diag.astype(np.float32), diag), upper, rhs)
    # its layout: a Fortran-ordered array that says C-contiguous
    raises(ValueError, "upper is not C-contiguous", lower, diag,
           _liar(np.asfortranarray(upper), upper), rhs)
    # a subclass that tells the truth is solved, and out is returned as given
    honest = rhs.copy().view(_LyingArray)
    honest.lie = np.ndarray.view(honest, np.ndarray)
    x = tdma.solve(lower, diag, upper, rhs, out=honest)
    assert x is honest
    np.testing.assert_array_equal(memory(x), tdma.solve(lower, diag, upper, rhs))


def test_depth_list_bools_and_mixed_integers(sys4):
    lower, diag, upper, rhs, depth = sys4
    # a 0-d bool array among integers would be taken as 1
    bools = depth.tolist()
    bools[0][1] = np.array(True)
    raises(TypeError, "depth has a bool among its integers", lower, diag, upper, rhs, depth=bools)
    # integers that NumPy holds in no integer dtype together (uint64 and a
    # negative: float64 to it): out of range, not "dtype float64"
    mixed = depth.tolist()
    mixed[0][0], mixed[0][1] = np.uint64(5), -1
    raises(ValueError, r"within 0\.\.8 .*found -1\.\.", lower, diag, upper, rhs, depth=mixed)
    # and in range: solved as the same integers in an int array
    mixed[0][1] = 3
    want = tdma.solve(lower, diag, upper, rhs, depth=np.array(mixed, dtype=np.int64))
    np.testing.assert_array_equal(tdma.solve(lower, diag, upper, rhs, depth=mixed), want)


def test_library_refuses_depths_before_filling_out(sys4):
    # the library's own entry (what solve() calls with its checked copy):
    # depths out of range are refused before out is filled from rhs
    from minimodel import _lib
    lower, diag, upper, rhs, depth = sys4
    ncol, nz = rhs.size // rhs.shape[-1], rhs.shape[-1]
    bad = np.array(depth, dtype=np.intc).reshape(-1)
    for value in (nz + 1, -1):
        bad[-1] = value
        out = np.full_like(rhs, 7.0)
        rc = _lib.lib.mm_py_solve_from(b"auto", 0, ncol, nz, bad.ctypes.data, lower.ctypes.data,
                                       diag.ctypes.data, upper.ctypes.data, rhs.ctypes.data,
                                       out.ctypes.data, 1)
        assert rc == _lib.EINVAL, f"depth {value}: rc {rc}"
        assert (out == 7.0).all(), f"depth {value}: out was written"


def test_library_that_cannot_load():
    """A shared library the package's library links that cannot be loaded
    (the CUDA runtime of a package built with CUDA, on a machine without
    it) is an ImportError that says so and how to build without CUDA: it
    was ctypes' OSError."""
    code = (
        "import ctypes\n"
        "def refuse(path, *a, **k):\n"
        "    raise OSError('libcudart.so.13: cannot open shared object file')\n"
        "ctypes.CDLL = refuse\n"
        "try:\n"
        "    import minimodel.tdma\n"
        "except ImportError as e:\n"
        "    print('ImportError:', e)\n")
    r = run_script(code)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "ImportError: minimodel: " in r.stdout, r.stdout
    assert "_minimodel_tdma.so cannot be loaded: libcudart.so.13: cannot open" in r.stdout, r.stdout
    assert "-Ccmake.define.MINIMODEL_CUDA=OFF" in r.stdout, r.stdout


def test_jax_attribute_without_jax():
    """Without JAX, minimodel.jax is a missing attribute (hasattr False,
    getattr's default), whose message says why: hasattr raised ImportError."""
    code = (
        "import sys\n"
        "sys.modules['jax'] = None  # JAX not importable\n"
        "import minimodel\n"
        "print('hasattr', hasattr(minimodel, 'jax'))\n"
        "print('getattr', getattr(minimodel, 'jax', 'default'))\n"
        "try:\n"
        "    minimodel.jax\n"
        "except AttributeError as e:\n"
        "    print('AttributeError:', e, '| from', type(e.__cause__).__name__)\n"
        "import minimodel.tdma\n"
        "print('tdma', minimodel.tdma.backends()[0])\n")
    r = run_script(code)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "hasattr False" in r.stdout and "getattr default" in r.stdout, r.stdout
    assert "has no attribute 'jax'" in r.stdout and "needs JAX" in r.stdout, r.stdout
    assert "| from ImportError" in r.stdout, r.stdout
    assert "tdma " in r.stdout, r.stdout


def test_jax_too_old():
    """A JAX without jax.ffi (older than 0.7) is refused on import with an
    ImportError naming the version needed, not an AttributeError from the
    registration, which minimodel.jax's getattr turned into "no attribute"."""
    code = (
        "import jax\n"
        "del jax.ffi  # as in a JAX older than jax.ffi\n"
        "try:\n"
        "    import minimodel.jax\n"
        "except ImportError as e:\n"
        "    print('ImportError:', e)\n"
        "import minimodel\n"
        "try:\n"
        "    minimodel.jax\n"
        "except AttributeError as e:\n"
        "    print('AttributeError:', e)\n")
    r = run_script(code)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "ImportError: minimodel.jax needs jax 0.7 or later" in r.stdout, r.stdout
    assert "has no attribute 'jax': minimodel.jax needs jax 0.7" in r.stdout, r.stdout
