"""python.jax.tdma: minimodel.jax.tdma (XLA FFI) on the CPU against
jnp.linalg.solve on the dense matrices: under jit, vmap (batch dimensions
become columns, no transposes) and grad (all four inputs, custom linear solve),
float64 (jax_enable_x64) and float32, 1-D, 2-D and 3-D shapes; second
derivatives (hessian, grad of grad), jvp and linear_transpose; a donated
right-hand side solved in place; the bits of minimodel.tdma.solve; the
argument errors; the memory of a large call given back; sharded arrays."""
import re

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minimodel.jax as mjax  # noqa: E402
import minimodel.tdma as tdma  # noqa: E402
from conftest import TOL, run_script, system  # noqa: E402

SHAPES = [((), 9), ((23,), 12), ((4, 6), 10), ((3, 2, 5), 7), ((8,), 1)]
cpu = jax.devices("cpu")[0]


def dense(lower, diag, upper):
    nz = diag.shape[-1]
    i = jnp.arange(nz)
    a = jnp.zeros(diag.shape + (nz,), diag.dtype)
    a = a.at[..., i, i].set(diag)
    a = a.at[..., i[1:], i[:-1]].set(lower[..., 1:])
    return a.at[..., i[:-1], i[1:]].set(upper[..., :-1])


def dense_solve(lower, diag, upper, rhs):
    return jnp.linalg.solve(dense(lower, diag, upper), rhs[..., None])[..., 0]


def close(x, ref, dtype, what=""):
    x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
    assert np.all(np.isfinite(x)), f"{what}: non-finite values"
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(x - ref)))
    assert err <= 4 * TOL[np.dtype(dtype)] * scale, f"{what}: max error {err:.3g}"


def primitives(jaxpr, where=()):
    """(where, primitive name) of every equation of a jaxpr and of the
    jaxprs in its equations' parameters, where: the parameter names (and
    fields) leading to it."""
    for eqn in jaxpr.eqns:
        yield where, eqn.primitive.name
        for key, value in eqn.params.items():
            if hasattr(value, "_fields"):  # a named tuple of jaxprs
                items = [((key, f), v) for f, v in zip(value._fields, value)]
            elif isinstance(value, (tuple, list)):
                items = [((key,), v) for v in value]
            else:
                items = [((key,), value)]
            for sub_where, sub in items:
                sub = getattr(sub, "jaxpr", sub)
                if hasattr(sub, "eqns"):
                    yield from primitives(sub, where + sub_where)


def jsystem(lead, nz, dtype, seed=0, nan_unused=True):
    return tuple(jnp.asarray(a) for a in system(lead, nz, dtype, seed=seed, depths=False,
                                                   nan_unused=nan_unused)[:4])


def test_handlers_registered():
    assert mjax.ffi_kind in (1, 2)


@pytest.mark.parametrize("lead,nz", SHAPES, ids=lambda v: str(v))
def test_jit_against_dense(lead, nz, dtype):
    lower, diag, upper, rhs = jsystem(lead, nz, dtype, seed=nz)
    x = jax.jit(mjax.tdma)(lower, diag, upper, rhs)
    assert x.shape == rhs.shape and x.dtype == rhs.dtype
    clean = [jnp.nan_to_num(a) for a in (lower, diag, upper)]  # NaN where never read
    ref = jax.jit(dense_solve)(*[a.astype(jnp.float64) for a in clean], rhs.astype(jnp.float64))
    close(x, ref, dtype, "jit")
    close(mjax.tdma(lower, diag, upper, rhs), ref, dtype, "eager")


def test_same_bits_as_numpy_entry(dtype):
    lower, diag, upper, rhs = jsystem((300, 4), 30, dtype, seed=2)
    x = jax.jit(mjax.tdma)(lower, diag, upper, rhs)
    ref = tdma.solve(*[np.asarray(a) for a in (lower, diag, upper, rhs)])
    np.testing.assert_array_equal(np.asarray(x), ref)
    for threads in (1, 2):
        np.testing.assert_array_equal(np.asarray(mjax.tdma(lower, diag, upper, rhs,
                                                           threads=threads)), ref)


def test_vmap(dtype):
    lower, diag, upper, rhs = jsystem((5, 6), 9, dtype, seed=3)
    direct = mjax.tdma(lower, diag, upper, rhs)
    f = jax.jit(jax.vmap(mjax.tdma))
    np.testing.assert_array_equal(np.asarray(f(lower, diag, upper, rhs)), np.asarray(direct))
    g = jax.jit(jax.vmap(jax.vmap(mjax.tdma)))
    np.testing.assert_array_equal(np.asarray(g(lower, diag, upper, rhs)), np.asarray(direct))
    # one system, many right-hand sides: the coefficients broadcast
    h = jax.jit(jax.vmap(mjax.tdma, in_axes=(None, None, None, 0)))
    many = h(lower[0], diag[0], upper[0], rhs)
    ref = jnp.stack([mjax.tdma(lower[0], diag[0], upper[0], r) for r in rhs])
    np.testing.assert_array_equal(np.asarray(many), np.asarray(ref))
    # batch dimensions are columns: one custom call, no transposes (the
    # jaxpr's linear solve holds the solve and, for derivatives only, the
    # transposed solve: one FFI call each; the linear solve sits inside the
    # jit that minimodel.jax.tdma calls)
    jaxpr = jax.make_jaxpr(jax.vmap(jax.vmap(mjax.tdma)))(lower, diag, upper, rhs).jaxpr
    prims = list(primitives(jaxpr))
    assert not [p for p in prims if p[1] == "transpose"], prims
    calls = [where for where, name in prims if name == "ffi_call"]
    assert sorted(calls) == [("jaxpr", "jaxprs", "solve"),
                             ("jaxpr", "jaxprs", "transpose_solve")], calls
    for f in (jax.vmap(mjax.tdma), jax.vmap(jax.vmap(mjax.tdma))):
        hlo = jax.jit(f).lower(lower, diag, upper, rhs).compile().as_text()
        assert "transpose(" not in hlo
        assert hlo.count('custom_call_target="minimodel_tdma"') == 1


@pytest.mark.parametrize("lead,nz", [((), 6), ((7,), 5), ((2, 3), 4), ((4,), 1)],
                         ids=lambda v: str(v))
def test_grad_all_inputs(lead, nz, dtype):
    lower, diag, upper, rhs = jsystem(lead, nz, dtype, seed=10 + nz, nan_unused=False)
    w = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, rhs.shape), dtype)

    def loss(f):
        return lambda lo, d, u, b: jnp.sum(w * f(lo, d, u, b) ** 2)

    g = jax.jit(jax.grad(loss(mjax.tdma), argnums=(0, 1, 2, 3)))(lower, diag, upper, rhs)
    wide = [a.astype(jnp.float64) for a in (lower, diag, upper, rhs)]
    w = w.astype(jnp.float64)
    ref = jax.jit(jax.grad(loss(dense_solve), argnums=(0, 1, 2, 3)))(*wide)
    for name, a, r in zip(("lower", "diag", "upper", "rhs"), g, ref):
        assert a.shape == rhs.shape and a.dtype == rhs.dtype
        close(a, r, dtype, f"grad {name}")
    # the unused entries get zero
    assert float(jnp.max(jnp.abs(g[0][..., 0]))) == 0.0
    assert float(jnp.max(jnp.abs(g[2][..., -1]))) == 0.0


def test_grad_under_vmap(dtype):
    lower, diag, upper, rhs = jsystem((3, 4), 6, dtype, seed=5, nan_unused=False)

    def loss(lo, d, u, b):
        return jnp.sum(mjax.tdma(lo, d, u, b) ** 3)

    g = jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1, 2, 3))))(lower, diag, upper, rhs)
    wide = [a.astype(jnp.float64) for a in (lower, diag, upper, rhs)]
    ref = jax.jit(jax.vmap(jax.grad(lambda lo, d, u, b: jnp.sum(dense_solve(lo, d, u, b) ** 3),
                                    argnums=(0, 1, 2, 3))))(*wide)
    for a, r in zip(g, ref):
        close(a, r, dtype, "vmap(grad)")


def test_donated_rhs_in_place(dtype):
    lower, diag, upper, rhs = jsystem((64, 3), 20, dtype, seed=6)
    expect = np.asarray(mjax.tdma(lower, diag, upper, rhs))
    f = jax.jit(mjax.tdma, donate_argnums=3)
    b = jnp.array(rhs, copy=True)
    ptr = b.unsafe_buffer_pointer()
    x = f(lower, diag, upper, b)
    assert x.unsafe_buffer_pointer() == ptr, "the donated right-hand side was copied"
    assert b.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), expect)
    # not donated: the right-hand side is kept
    keep = np.asarray(rhs).copy()
    y = jax.jit(mjax.tdma)(lower, diag, upper, rhs)
    np.testing.assert_array_equal(np.asarray(rhs), keep)
    np.testing.assert_array_equal(np.asarray(y), expect)


def test_empty_batch():
    z = jnp.zeros((0, 4))
    assert jax.jit(mjax.tdma)(z, z + 1, z, z).shape == (0, 4)
    assert jax.vmap(mjax.tdma)(z, z + 1, z, z).shape == (0, 4)


def test_errors():
    lower, diag, upper, rhs = jsystem((4,), 5, np.float64, nan_unused=False)
    with pytest.raises(TypeError, match="lower has dtype float32"):
        mjax.tdma(lower.astype(jnp.float32), diag, upper, rhs)
    with pytest.raises(TypeError, match="rhs has dtype int"):
        mjax.tdma(*[a.astype(jnp.int32) for a in (lower, diag, upper, rhs)])
    with pytest.raises(ValueError, match="upper has shape"):
        mjax.tdma(lower, diag, upper[:, :4], rhs)
    with pytest.raises(ValueError, match="nz >= 1"):
        z = jnp.zeros((3, 0))
        mjax.tdma(z, z, z, z)
    with pytest.raises(ValueError, match="nz >= 1"):
        s = jnp.float64(1.0)
        mjax.tdma(s, s, s, s)
    with pytest.raises(TypeError, match="must be an array"):
        mjax.tdma([1.0], diag, upper, rhs)
    # a look-alike with a shape and a dtype is not data
    with pytest.raises(TypeError, match="diag must be an array .*not ShapeDtypeStruct"):
        mjax.tdma(lower, jax.ShapeDtypeStruct(diag.shape, diag.dtype), upper, rhs)
    with pytest.raises(ValueError, match="threads must be within"):
        mjax.tdma(lower, diag, upper, rhs, threads=0)
    with pytest.raises(TypeError, match="threads must be an int"):
        mjax.tdma(lower, diag, upper, rhs, threads=1.5)
    # traced under jit: the message says how to pass it
    with pytest.raises(TypeError, match="static_argnames='threads'"):
        jax.jit(mjax.tdma)(lower, diag, upper, rhs, threads=2)
    # a concrete JAX or NumPy scalar, called eagerly: not the jit hint
    for t in (jnp.int32(2), np.array(2)):
        with pytest.raises(TypeError, match=r"threads must be an int or None, not \w+; pass a "
                           r"Python int \(int\(threads\)\)$"):
            mjax.tdma(lower, diag, upper, rhs, threads=t)
    # NumPy arrays of a dtype JAX cannot take: named, before JAX's conversion
    for dt in (object, "U3", "datetime64[s]"):
        with pytest.raises(TypeError, match=re.escape(f"upper has dtype {np.dtype(dt)}: float32 or float64")):
            mjax.tdma(lower, diag, np.zeros(rhs.shape, dt), rhs)
    # byte-swapped NumPy arrays: named, with the conversion JAX needs
    with pytest.raises(TypeError, match="diag has dtype >f8, not in this machine's byte order"):
        mjax.tdma(lower, np.asarray(diag).astype(">f8"), upper, rhs)
    # NumPy inputs are taken as arrays
    np.testing.assert_array_equal(
        np.asarray(mjax.tdma(*[np.asarray(a) for a in (lower, diag, upper, rhs)])),
        np.asarray(mjax.tdma(lower, diag, upper, rhs)))


@pytest.mark.parametrize("lead,nz", [((), 5), ((3,), 4), ((2,), 1)], ids=lambda v: str(v))
def test_second_derivatives(lead, nz, dtype):
    """grad of grad, jax.hessian (forward over reverse), jax.jvp and
    jax.linear_transpose of the solve, against the dense solve."""
    # NaN in lower[..., 0] and upper[..., -1]: never read, nor in a derivative
    lower, diag, upper, rhs = jsystem(lead, nz, dtype, seed=30 + nz)
    wide = [a.astype(jnp.float64) for a in (lower, diag, upper, rhs)]

    def loss(f):
        return lambda lo, d, u, b: jnp.sum(jnp.sin(f(lo, d, u, b)))

    f, ref = loss(mjax.tdma), loss(dense_solve)
    for argnum in range(4):
        h = jax.jit(jax.hessian(f, argnums=argnum))(lower, diag, upper, rhs)
        assert h.shape == rhs.shape * 2 and h.dtype == rhs.dtype
        close(h, jax.hessian(ref, argnums=argnum)(*wide), dtype, f"hessian {argnum}")

    def gg(f):  # grad (w.r.t. diag) of a function of the gradient (w.r.t. rhs)
        return jax.grad(lambda lo, d, u, b: jnp.sum(jax.grad(f, argnums=3)(lo, d, u, b) ** 2),
                        argnums=(0, 1, 2, 3))

    for name, a, r in zip(("lower", "diag", "upper", "rhs"), jax.jit(gg(f))(lower, diag, upper, rhs),
                          gg(ref)(*wide)):
        close(a, r, dtype, f"grad of grad {name}")
    tangents = [jnp.asarray(np.random.default_rng(2).uniform(-1, 1, rhs.shape), dtype)] * 4
    _, t = jax.jvp(mjax.tdma, (lower, diag, upper, rhs), tuple(tangents))
    _, tr = jax.jvp(dense_solve, tuple(wide), tuple(x.astype(jnp.float64) for x in tangents))
    close(t, tr, dtype, "jvp")
    lt = jax.linear_transpose(lambda b: mjax.tdma(lower, diag, upper, b), rhs)(tangents[0])[0]
    ltr = jax.linear_transpose(lambda b: dense_solve(*wide[:3], b), wide[3])(
        tangents[0].astype(jnp.float64))[0]
    close(lt, ltr, dtype, "linear_transpose")


DEPTH_CACHE_SCRIPT = r"""
import gc
import jax.numpy as jnp
import minimodel.jax as mjax

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

s = jnp.ones((64, 3), jnp.float32)
mjax.tdma(s, s + 3, s, s).block_until_ready()
gc.collect()
before = rss()
n = 20_000_000  # columns of one level: 80 MB of float32 per array, 80 MB of depths
a = jnp.ones((n, 1), jnp.float32)
mjax.tdma(a, a, a, a).block_until_ready()
del a
gc.collect()
mjax.tdma(s, s + 3, s, s).block_until_ready()
kept = rss() - before
print(kept / 2**20)
assert kept < 40 * 2**20, f"{kept / 2**20:.0f} MB kept after the large call"
print("ok")
"""


def test_large_call_memory_returned():
    """The CPU handler's depths of full columns: kept between calls only for
    small calls, so that a call of many columns does not leave its depths
    (4 bytes a column, per XLA thread) in memory for the life of the process.
    Measured on VmRSS in a process of its own: 80 MB of depths before."""
    r = run_script(DEPTH_CACHE_SCRIPT, timeout=240)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


SHARDED_SCRIPT = r"""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import minimodel.jax as mjax
import minimodel.tdma as tdma

assert len(jax.devices()) == 4, jax.devices()
rng = np.random.default_rng(5)
shape = (8, 12)
l, u = rng.uniform(-1, 0, shape), rng.uniform(-1, 0, shape)
d, b = 2.5 - l - u, rng.uniform(size=shape)
want = tdma.solve(l, d, u, b)


def same(x, what):
    assert np.array_equal(np.asarray(x), want), what


explicit = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,))
auto = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))

# columns sharded: jit, eager (no mesh context), donated, grad, shard_map
cols = [jax.device_put(a, NamedSharding(explicit, P("x", None))) for a in (l, d, u, b)]
same(jax.jit(mjax.tdma)(*cols), "jit, columns sharded")
same(mjax.tdma(*cols), "eager, columns sharded")
rhs = jax.device_put(b, NamedSharding(explicit, P("x", None)))
same(jax.jit(mjax.tdma, donate_argnums=3)(*cols[:3], rhs), "donated, columns sharded")
loss = lambda diag: jnp.sum(mjax.tdma(cols[0], diag, cols[2], cols[3]) ** 2)
with jax.set_mesh(explicit):
    g = jax.grad(loss)(cols[1])
g_plain = jax.grad(lambda diag: jnp.sum(mjax.tdma(l, diag, u, b) ** 2))(d)
assert np.array_equal(np.asarray(g), np.asarray(g_plain)), "grad, columns sharded"
f = jax.jit(jax.shard_map(mjax.tdma, mesh=explicit, in_specs=P("x", None), out_specs=P("x", None)))
same(f(*cols), "shard_map")

# ... each device solves its own columns: one call on its block of 2 of the
# 8 columns, nothing gathered (every operand was gathered whole onto every
# device, and each solved all 8), also for the derivative's two solves
import re
def device_calls(compiled):
    text = compiled.as_text()
    return re.findall(r"(\S+) custom-call\(", text), text.count("all-gather(")
calls, gathers = device_calls(jax.jit(mjax.tdma).lower(*cols).compile())
assert calls == ["f64[2,12]{1,0}"] and gathers == 0, (calls, gathers)
calls, gathers = device_calls(jax.jit(jax.grad(loss)).lower(cols[1]).compile())
assert calls == ["f64[2,12]{1,0}"] * 2 and gathers == 0, (calls, gathers)
# operands of other shardings take rhs's (they were refused by the
# multiplication of the derivative's matrix-vector product); a mesh axis of
# one device over the levels splits nothing: not refused
grid = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
mixed = [jax.device_put(l, NamedSharding(grid, P("y", None))),
         jax.device_put(d, NamedSharding(grid, P())), u,  # replicated, a NumPy array
         jax.device_put(b, NamedSharding(grid, P("x", None)))]
same(jax.jit(mjax.tdma)(*mixed), "operands of other shardings")
calls, gathers = device_calls(jax.jit(mjax.tdma).lower(*mixed).compile())
assert calls == ["f64[4,12]{1,0}"], calls
one = jax.make_mesh((4, 1), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
same(mjax.tdma(*[jax.device_put(a, NamedSharding(one, P("x", "y"))) for a in (l, d, u, b)]),
     "levels over a mesh axis of one device")

# operands on two meshes: refused, naming them (JAX's IndivisibleError came
# from inside the call)
two = [jax.device_put(l, NamedSharding(explicit, P("x", None))), d, u,
       jax.device_put(b, NamedSharding(grid, P("x", None)))]
for call, what in ((jax.jit(mjax.tdma), "jit"), (mjax.tdma, "eager")):
    try:
        call(*two)
    except ValueError as e:
        assert "lower and rhs are on different meshes" in str(e), e
    else:
        raise AssertionError(f"{what}: operands on two meshes were not refused")

# levels sharded over an Explicit axis: refused with the reshard that fixes it
levels = [jax.device_put(a, NamedSharding(explicit, P(None, "x"))) for a in (l, d, u, b)]
for call, what in ((jax.jit(mjax.tdma), "jit"), (mjax.tdma, "eager")):
    try:
        call(*levels)
    except ValueError as e:
        assert "lower is sharded over its levels" in str(e), e
        assert "jax.sharding.reshard(lower, jax.P(None, None))" in str(e), e
    else:
        raise AssertionError(f"{what}: levels sharded were not refused")
with jax.set_mesh(explicit):
    fixed = [jax.sharding.reshard(a, jax.P(None, None)) for a in levels]
    same(jax.jit(mjax.tdma)(*fixed), "levels resharded as the message says")

# Auto axes: the compiler gathers a column's levels itself
for spec in (P("x", None), P(None, "x")):
    args = [jax.device_put(a, NamedSharding(auto, spec)) for a in (l, d, u, b)]
    same(jax.jit(mjax.tdma)(*args), f"jit, Auto axes {spec}")
print("ok")
"""


def test_sharded_arrays():
    """Arrays sharded over 4 host devices: the columns sharded (Explicit axes)
    under jit, eagerly, donated, under grad and shard_map, with the bits of
    minimodel.tdma.solve, each device solving its own columns (the compiled
    program's custom calls, no all-gather); operands of other shardings; the
    levels sharded over an Explicit axis refused with a ValueError that names
    the reshard, which then works, and over an axis of one device not
    refused; operands on two meshes refused with a ValueError naming them;
    Auto axes either way."""
    r = run_script(SHARDED_SCRIPT, timeout=240)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
