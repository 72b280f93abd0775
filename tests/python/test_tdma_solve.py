"""python.tdma.solve: minimodel.tdma.solve against dense solves
(numpy.linalg.solve): random diagonally dominant systems with random depths
(0, 1, 2 and nz among them), float64 and float32, 1-D, 2-D and 3-D leading
shapes, every backend, thread counts, in place (out=rhs) and into a given
out; in a child forked after a threaded solve."""
import numpy as np
import pytest

import minimodel
import minimodel.tdma as tdma
from conftest import assert_close, dense_solve, run_script, system

SHAPES = [((), 9), ((37,), 12), ((5, 7), 10), ((3, 4, 5), 6), ((40,), 1), ((6,), 2)]


def test_package_is_built():
    # The installed package, not the sources: its library is there.
    assert minimodel.tdma._lib.path.endswith("_minimodel_tdma.so")
    assert set(tdma.backends()) >= {"reference", "simd", "omp"}
    assert tdma.auto_backend() in tdma.backends()
    assert tdma.max_threads() >= 1


@pytest.mark.parametrize("lead,nz", SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("backend", ["auto", "reference", "simd", "omp"])
def test_against_dense(lead, nz, backend, dtype):
    lower, diag, upper, rhs, depth = system(lead, nz, dtype, seed=len(lead) * 100 + nz)
    before = rhs.copy()
    x = tdma.solve(lower, diag, upper, rhs, depth=depth, backend=backend)
    assert x.shape == rhs.shape and x.dtype == rhs.dtype
    np.testing.assert_array_equal(rhs, before)  # not touched without out
    assert_close(x, dense_solve(lower, diag, upper, rhs, depth), dtype)
    # below each column's depth the result is the right-hand side
    flat_x, flat_b = x.reshape(-1, nz), rhs.reshape(-1, nz)
    for c, d in enumerate(np.asarray(depth).reshape(-1)):
        np.testing.assert_array_equal(flat_x[c, d:], flat_b[c, d:])


def test_full_depth_default(dtype):
    lower, diag, upper, rhs, depth = system((50,), 16, dtype, seed=3, depths=False)
    x = tdma.solve(lower, diag, upper, rhs)
    assert_close(x, dense_solve(lower, diag, upper, rhs, depth), dtype)


def test_exact_backends_bitwise(dtype):
    # big enough for threads (the solvers go parallel from 32768 unknowns)
    lower, diag, upper, rhs, depth = system((700, 3), 20, dtype, seed=4)
    ref = tdma.solve(lower, diag, upper, rhs, depth=depth, backend="reference")
    for backend in tdma.backends():
        if not tdma.describe()[backend][1]:
            continue
        for threads in (None, 1, 2, 3):
            x = tdma.solve(lower, diag, upper, rhs, depth=depth, backend=backend, threads=threads)
            np.testing.assert_array_equal(x, ref, err_msg=f"{backend}, threads {threads}")
    assert tdma.max_threads() >= 1  # restored after threads=


def test_threads_restored():
    before = tdma.max_threads()
    lower, diag, upper, rhs, depth = system((2000,), 20, np.float64, seed=5)
    tdma.solve(lower, diag, upper, rhs, depth=depth, backend="omp", threads=3)
    assert tdma.max_threads() == before


def test_in_place(dtype):
    lower, diag, upper, rhs, depth = system((11, 13), 8, dtype, seed=6)
    ref = dense_solve(lower, diag, upper, rhs, depth)
    b = rhs.copy()
    x = tdma.solve(lower, diag, upper, b, depth=depth, out=b)
    assert x is b
    assert_close(b, ref, dtype)
    # a view of rhs's own memory is the same as rhs
    b = rhs.copy()
    x = tdma.solve(lower, diag, upper, b, depth=depth, out=b.reshape(b.shape))
    assert_close(b, ref, dtype)


def test_out(dtype):
    lower, diag, upper, rhs, depth = system((9,), 7, dtype, seed=7)
    out = np.full_like(rhs, 123.0)
    x = tdma.solve(lower, diag, upper, rhs, depth=depth, out=out)
    assert x is out
    assert_close(out, dense_solve(lower, diag, upper, rhs, depth), dtype)


def test_depth_dtypes():
    lower, diag, upper, rhs, depth = system((30,), 9, np.float64, seed=8)
    ref = tdma.solve(lower, diag, upper, rhs, depth=depth)
    for dt in (np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64):
        np.testing.assert_array_equal(tdma.solve(lower, diag, upper, rhs, depth=depth.astype(dt)), ref)
    np.testing.assert_array_equal(tdma.solve(lower, diag, upper, rhs, depth=list(depth)), ref)
    # a non-contiguous depth is fine: it is converted
    d2 = np.repeat(depth, 2)[::2]
    np.testing.assert_array_equal(tdma.solve(lower, diag, upper, rhs, depth=d2), ref)


def test_empty_batches(dtype):
    for lead in [(0,), (3, 0), (0, 4)]:
        z = np.zeros(lead + (5,), dtype)
        x = tdma.solve(z, z + 1, z, z, depth=np.zeros(lead, np.int32))
        assert x.shape == z.shape
        x = tdma.solve(z, z + 1, z, z)
        assert x.shape == z.shape


def test_single_level(dtype):
    lower, diag, upper, rhs, depth = system((25,), 1, dtype, seed=9)
    x = tdma.solve(lower, diag, upper, rhs, depth=depth)
    assert_close(x, dense_solve(lower, diag, upper, rhs, depth), dtype)


def test_concurrent_calls(dtype):
    # the library is called without the GIL: threads solving at once, each
    # with its own thread count, give the bits of one call after another
    from concurrent.futures import ThreadPoolExecutor

    systems = [system((900,), 40, dtype, seed=20 + i) for i in range(6)]
    expect = [tdma.solve(*s[:4], depth=s[4], backend="reference") for s in systems]
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda i: tdma.solve(*systems[i][:4], depth=systems[i][4],
                                                 threads=1 + i % 3), range(6)))
    for g, e in zip(got, expect):
        np.testing.assert_array_equal(g, e)


FORK_SCRIPT = r"""
import multiprocessing as mp
import numpy as np
import minimodel.tdma as T

a = np.ones((1000, 50))
args = (-0.1 * a, a, -0.1 * a, a)
parent = T.solve(*args)  # 50000 unknowns, 2 threads: the parent starts its OpenMP team
with mp.get_context("fork").Pool(2) as pool:
    child = pool.apply_async(T.solve, args).get(timeout=30)
    asked = pool.apply_async(T.solve, args, {"backend": "omp", "threads": 2}).get(timeout=30)
    child_threads = pool.apply_async(T.max_threads).get(timeout=30)
np.testing.assert_array_equal(child, parent)
np.testing.assert_array_equal(asked, parent)
assert child_threads == 1, child_threads
assert T.max_threads() == 2, T.max_threads()  # the parent keeps its threads
np.testing.assert_array_equal(T.solve(*args, threads=2), parent)
print("ok")
"""


def test_forked_child_after_threaded_solve():
    """libgomp's thread team does not survive fork: a child whose parent had
    solved with threads hung in its first threaded solve. Such a child now
    solves with one thread (threads= included) and gets the parent's bits."""
    r = run_script(FORK_SCRIPT, timeout=120, env={"OMP_NUM_THREADS": "2"})
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
