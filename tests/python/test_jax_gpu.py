"""gpu.python.jax.tdma: minimodel.jax.tdma on a GPU (the package built with
CUDA, jax with its CUDA plugin): jit, vmap, grad and a donated right-hand
side, against the CPU's results. Run as a script (CTest): exit 77, which
CTest reports as skipped, where JAX has no GPU or the package has no CUDA
handler; under pytest alone the module is skipped there."""
import os
import sys

import jax
import pytest

jax.config.update("jax_enable_x64", True)


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def _why_not():
    if not _gpus():
        return "no GPU for JAX here (jax.devices('gpu') is empty)"
    import minimodel.jax

    if minimodel.jax.ffi_kind != 2:
        return "the minimodel package was built without CUDA"
    return None


if __name__ == "__main__":
    why = _why_not()
    if why:
        print(f"skipped: {why}")
        sys.exit(77)
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.abspath(__file__)]))
if _why_not():
    pytest.skip(_why_not(), allow_module_level=True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import minimodel.jax as mjax  # noqa: E402
from conftest import system  # noqa: E402

gpu = _gpus()[0]
cpu = jax.devices("cpu")[0]


def on(device, arrays):
    return [jax.device_put(jnp.asarray(a), device) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_gpu_equals_cpu(dtype):
    args = system((50, 40), 64, dtype, seed=1, depths=False, nan_unused=False)[:4]
    x_cpu = np.asarray(jax.jit(mjax.tdma)(*on(cpu, args)))
    x_gpu = jax.jit(mjax.tdma)(*on(gpu, args))
    assert x_gpu.devices() == {gpu}
    # the cuda backend computes reference's arithmetic
    np.testing.assert_allclose(np.asarray(x_gpu), x_cpu, rtol=0, atol=1e-12 if dtype == np.float64 else 1e-5)
    v = jax.jit(jax.vmap(mjax.tdma))(*on(gpu, args))
    np.testing.assert_array_equal(np.asarray(v), np.asarray(x_gpu))


def test_gpu_grad_and_donation():
    args = system((30, 7), 33, np.float64, seed=2, depths=False, nan_unused=False)[:4]

    def loss(lo, d, u, b):
        return jnp.sum(mjax.tdma(lo, d, u, b) ** 2)

    grad = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))
    g_cpu = grad(*on(cpu, args))
    g_gpu = grad(*on(gpu, args))
    for a, b in zip(g_gpu, g_cpu):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
    lo, d, u, b = on(gpu, args)
    ptr = b.unsafe_buffer_pointer()
    x = jax.jit(mjax.tdma, donate_argnums=3)(lo, d, u, b)
    assert x.unsafe_buffer_pointer() == ptr
