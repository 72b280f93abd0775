"""minimodel's batched tridiagonal column solver for NumPy and JAX.

minimodel.tdma.solve   NumPy arrays, any backend of the solvers' table
minimodel.jax.tdma     a JAX function (XLA FFI): jit, vmap, grad, donation

Both take the diagonals and right-hand sides as arrays of shape (..., nz),
levels last: the model's column-contiguous layout (level k of column c at
[c * nz + k]). minimodel.jax is imported on first use, so that NumPy users
need no JAX.
"""
__version__ = "0.1.0"

from . import tdma  # noqa: E402,F401


def __getattr__(name):
    if name == "jax":
        import importlib

        try:
            return importlib.import_module(".jax", __name__)
        except ImportError as e:
            # AttributeError, as a missing attribute must be (hasattr and
            # getattr with a default answer it), saying why
            raise AttributeError(f"module {__name__!r} has no attribute 'jax': {e} "
                                 "(minimodel.jax needs JAX: pip install jax)") from e
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
