"""The batched tridiagonal column solver as a JAX function.

    x = minimodel.jax.tdma(lower, diag, upper, rhs)

Arrays of one shape (..., nz), levels last, and one dtype (float32, or
float64 with jax_enable_x64): the layout and the rows of
minimodel.tdma.solve, every column solved over all nz levels. The solve is
one XLA FFI call (jax.ffi.ffi_call) into the project's solvers:

- under jax.jit it is one custom call in the compiled program;
- under jax.vmap the batch dimensions become more leading dimensions, that
  is more columns, with no transposes (vmap_method "broadcast_all");
- derivatives of every order, forward and reverse (jax.grad, jax.jvp,
  jax.hessian, grad of grad, jax.linear_transpose in rhs), through
  jax.lax.custom_linear_solve: the tangent of x is a solve with the same
  matrix, dx = A^-1 (drhs - dA x), and the adjoint a solve with the
  transposed one (lower'[k] = upper[k-1], upper'[k] = lower[k+1]), so that
  lower_bar[k] = -lam[k] x[k-1], diag_bar = -lam x, upper_bar[k] =
  -lam[k] x[k+1], rhs_bar = lam; each is one more FFI call, itself
  differentiable;
- the result is aliased to rhs (input_output_aliases {3: 0}): with
  jax.jit(minimodel.jax.tdma, donate_argnums=3) the right-hand side's buffer
  is solved in place, without a copy;
- on the CPU the `auto` backend of the solvers (OpenMP threads: threads=n,
  or OMP_NUM_THREADS; one thread in a process forked after a threaded solve,
  as minimodel.tdma.solve), on a GPU the `cuda` backend when the package was
  built with CUDA;
- sharded arrays: the columns (leading axes) may be sharded, under jit and
  called eagerly (the call is jitted inside). Over mesh axes of type
  Explicit each device solves its own columns, in one call on its block
  (the call is put in a jax.shard_map), the four operands taking rhs's
  sharding; so does a call inside the user's shard_map. A column's levels
  must be on one device: an array whose last axis is split over Explicit
  mesh axes is refused (ValueError) with the reshard that fixes it. Over
  Auto axes, and over an axis that jax.vmap maps, the compiler gathers the
  operands whole onto every device, and each solves every column (the call
  has no partitioning rule): shard the columns over Explicit axes, as
  leading axes of the arrays rather than a vmapped one, or call it in
  shard_map.
"""
import functools
import numbers

try:
    import jax
    import jax.numpy as jnp
except ImportError as e:
    raise ImportError(f"minimodel.jax needs jax (pip install jax): {e}") from e
if not (hasattr(jax, "ffi") and hasattr(jax, "shard_map")):
    # (an AttributeError from jax.ffi below would read as "minimodel has no
    # attribute 'jax'", with no reason)
    raise ImportError(f"minimodel.jax needs jax 0.7 or later (jax.ffi, jax.shard_map); this is "
                      f"jax {getattr(jax, '__version__', '(no version)')}: pip install -U jax")
import numpy as np

from . import _lib

__all__ = ["tdma"]

_TARGET = "minimodel_tdma"
_MAX_THREADS = 1024


def _register():
    kind = _lib.lib.mm_py_ffi()
    if kind == 0:
        raise ImportError("minimodel was built without its JAX FFI handlers (jax was not "
                          "importable where it was built): reinstall it with jax installed")
    jax.ffi.register_ffi_target(_TARGET, jax.ffi.pycapsule(_lib.lib.mm_tdma_ffi_cpu),
                                platform="cpu")
    if kind == 2:
        jax.ffi.register_ffi_target(_TARGET, jax.ffi.pycapsule(_lib.lib.mm_tdma_ffi_cuda),
                                    platform="CUDA")
    return kind


#: 1: the CPU handler; 2: the CUDA one as well.
ffi_kind = _register()


def _ffi(lower, diag, upper, rhs, threads):
    call = jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(rhs.shape, rhs.dtype),
                            vmap_method="broadcast_all", input_output_aliases={3: 0})
    return call(lower, diag, upper, rhs, threads=np.int32(threads))


def _call(lower, diag, upper, rhs, threads):
    mesh, spec = _mesh_spec(rhs)
    if mesh is None or not any(_parts(mesh, s) > 1 for s in spec[:-1]):
        return _ffi(lower, diag, upper, rhs, threads)
    # the columns split over devices (Explicit mesh axes; _tdma gave all four
    # operands rhs's sharding): each device solves its own, in one call on
    # its block; without shard_map the compiler would gather every operand
    # whole onto every device and solve every column there
    cols = jax.sharding.PartitionSpec(*spec)
    return jax.shard_map(lambda *xs: _ffi(*xs, threads), mesh=mesh, in_specs=(cols,) * 4,
                         out_specs=cols)(lower, diag, upper, rhs)


def _shift_down(x):
    """y[..., k] = x[..., k-1], y[..., 0] = 0"""
    return jnp.concatenate([jnp.zeros_like(x[..., :1]), x[..., :-1]], axis=-1)


def _shift_up(x):
    """y[..., k] = x[..., k+1], y[..., nz-1] = 0"""
    return jnp.concatenate([x[..., 1:], jnp.zeros_like(x[..., :1])], axis=-1)


def _mesh_spec(a):
    """The mesh and the PartitionSpec (a tuple, an entry per axis) of a's type
    (its Explicit mesh axes), else (None, None)."""
    typeof = getattr(jax, "typeof", None)
    sharding = getattr(typeof(a), "sharding", None) if typeof else None
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if (mesh is None or spec is None or len(spec) != a.ndim or getattr(mesh, "empty", True)
            or not hasattr(jax, "shard_map")):
        return None, None
    return mesh, tuple(spec)


def _parts(mesh, entry):
    """The number of parts that a PartitionSpec entry (None, a mesh axis or a
    tuple of them) splits its axis into."""
    names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
    return int(np.prod([mesh.shape[n] for n in names], dtype=np.int64))


@functools.partial(jax.jit, static_argnums=4)
def _tdma(lower, diag, upper, rhs, threads):
    # A x = rhs as a linear solve that JAX knows the derivatives of: the
    # matrix-vector product A x (differentiable in the coefficients: its
    # tangent gives d(A) x), the solve (the FFI call) and the solve with A^T
    # (the FFI call on A^T's diagonals: its sub-diagonal is A's
    # super-diagonal moved down one level, its super-diagonal A's
    # sub-diagonal moved up one level).
    # with Explicit mesh axes, every operand takes rhs's sharding, its
    # levels on one device (a mesh axis of one device over them is no split)
    mesh, spec = _mesh_spec(rhs)
    if mesh is not None:
        cols = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec[:-1], None))
        lower, diag, upper, rhs = (
            x if _mesh_spec(x) == (mesh, spec[:-1] + (None,)) else jax.sharding.reshard(x, cols)
            for x in (lower, diag, upper, rhs))

    def matvec(x):
        # lower[..., 0] and upper[..., nz-1] are not used: whatever they hold
        # (NaN, say) never reaches a derivative
        return diag * x + _shift_down(_shift_up(lower) * x) + _shift_up(_shift_down(upper) * x)

    def solve(_, b):
        return _call(lower, diag, upper, b, threads)

    def transpose_solve(_, b):
        return _call(_shift_down(upper), diag, _shift_up(lower), b, threads)

    return jax.lax.custom_linear_solve(matvec, rhs, solve, transpose_solve)


def tdma(lower, diag, upper, rhs, *, threads=None):
    """Solves every column's tridiagonal system (rows lower[k] x[k-1] +
    diag[k] x[k] + upper[k] x[k+1] = rhs[k]; lower[..., 0] and upper[..., -1]
    are not used); returns x, of rhs's shape and dtype.

    threads: OpenMP threads of the CPU solve (None: OMP_NUM_THREADS); under
    jax.jit a static argument (jax.jit(f, static_argnames="threads")).

    The Thomas algorithm, without pivoting: see minimodel.tdma.solve. A zero
    pivot gives inf or NaN in its column, not an error.

    float64 needs JAX's 64-bit mode (jax.config.update("jax_enable_x64",
    True)); without it JAX makes float64 arrays float32 before the call, and
    the solve is in float32. The call is an XLA FFI custom call, which
    jax.export does not serialise (no compatibility guarantee for it)."""
    args = []
    for name, a in (("lower", lower), ("diag", diag), ("upper", upper), ("rhs", rhs)):
        # (jax.Array covers the tracers of jit, vmap and grad; a look-alike
        # with a shape and a dtype, e.g. a jax.ShapeDtypeStruct, is not data)
        if not isinstance(a, (jax.Array, np.ndarray, np.generic)):
            raise TypeError(f"{name} must be an array (jax or numpy), not {type(a).__name__}")
        if isinstance(a.dtype, np.dtype) and a.dtype.kind not in "biufc":  # object, str, ...
            raise TypeError(f"{name} has dtype {a.dtype}: float32 or float64 are supported")
        if isinstance(a.dtype, np.dtype) and not a.dtype.isnative:
            raise TypeError(f"{name} has dtype {a.dtype.str}, not in this machine's byte order, "
                            f"which JAX needs: pass {name}.astype({name}.dtype.newbyteorder('='))")
        args.append(jnp.asarray(a))
    dtype = args[3].dtype
    if dtype not in (jnp.dtype(jnp.float32), jnp.dtype(jnp.float64)):
        raise TypeError(f"rhs has dtype {dtype}: float32 or float64 are supported")
    for name, a in zip(("lower", "diag", "upper"), args[:3]):
        if a.dtype != dtype:
            raise TypeError(f"{name} has dtype {a.dtype}, rhs {dtype}: all must have one dtype")
        if a.shape != args[3].shape:
            raise ValueError(f"{name} has shape {a.shape}, rhs {args[3].shape}: all must be equal")
    on = []  # (name, mesh) of the operands on Explicit mesh axes
    for name, a in zip(("lower", "diag", "upper", "rhs"), args):
        mesh, spec = _mesh_spec(a)
        if mesh is not None:
            on.append((name, mesh))
        if mesh is not None and _parts(mesh, spec[-1]) > 1:
            fix = ", ".join(repr(x) for x in spec[:-1] + (None,))
            raise ValueError(
                f"{name} is sharded over its levels (its last axis, over mesh axes "
                f"{spec[-1]!r}): a column's levels must be on one device; shard only the "
                f"leading axes: jax.sharding.reshard({name}, jax.P({fix}))")
    # one mesh for every operand on Explicit axes (each takes rhs's sharding
    # in _tdma: from another mesh JAX failed inside, IndivisibleError)
    for name, mesh in on[1:]:
        if mesh != on[0][1]:
            raise ValueError(
                f"{on[0][0]} and {name} are on different meshes ({on[0][1]} and {mesh}): put "
                "every operand on one mesh (jax.device_put with one mesh's NamedSharding)")
    if args[3].ndim < 1 or args[3].shape[-1] < 1:
        raise ValueError(f"rhs has shape {args[3].shape}: (..., nz) with nz >= 1 is needed")
    if args[3].shape[-1] > 2**31 - 1:
        raise ValueError("nz is more than the solvers take (2^31 - 1)")
    if threads is None:
        threads = 0
    elif isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        hint = ""
        if isinstance(threads, jax.core.Tracer):  # traced: under jit, vmap, grad
            hint = ("; under jax.jit pass it as a static argument "
                    "(jax.jit(f, static_argnames='threads'))")
        elif isinstance(threads, (jax.Array, np.ndarray)):
            hint = "; pass a Python int (int(threads))"
        raise TypeError(f"threads must be an int or None, not {type(threads).__name__}{hint}")
    elif not 1 <= threads <= _MAX_THREADS:
        raise ValueError(f"threads must be within 1..{_MAX_THREADS}, not {threads}")
    return _tdma(*args, int(threads))
