"""torch and JAX tensors in and out of kernels (nki_mlir.interop): every entry point takes
them, returns tensors of the same library, keeps bf16 bit for bit, and a kernel writing an
input writes the caller's tensor."""
import numpy as np
import pytest

import kernels_for_tests as K
import nki_mlir as nki
from nki_mlir import interop

torch = pytest.importorskip("torch", reason="torch is in the test extra (pip install -e '.[test]')")


def _pair(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return torch.randn(128, 64, generator=g).to(dtype), torch.randn(128, 64, generator=g).to(dtype)


@pytest.mark.parametrize("call", ["jit", "simulate", "compiled"])
def test_torch_in_torch_out(call):
    a, b = _pair()
    if call == "jit":
        y = K.add(a, b)
    elif call == "simulate":
        y = nki.simulate(K.add)(a, b)
    else:
        y = nki.compile(K.add, a, b)(a, b)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    torch.testing.assert_close(y, a + b)


def test_bfloat16_bits_survive():
    a, b = _pair(torch.bfloat16)
    y = K.add(a, b)
    assert y.dtype == torch.bfloat16
    want = (a.float().numpy() + b.float().numpy())
    got = y.float().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
    x = interop.to_numpy(a)
    assert str(x.dtype) == "bfloat16" and np.shares_memory(x, interop.to_numpy(a))   # a view, no copy
    assert torch.equal(interop.from_numpy(x, "torch"), a)          # bit for bit both ways


def test_cpu_simulate_of_the_nki_library_harness_takes_torch():
    from nki_cpu_simulator import nki as cs
    a, b = _pair()
    y = cs.cpu_simulate(K.add)[1](a=a, b=b)
    assert isinstance(y, torch.Tensor)
    torch.testing.assert_close(y, a + b)


def test_numpy_stays_numpy():
    x = np.ones((128, 64), np.float32)
    assert isinstance(K.add(x, x), np.ndarray)


def test_jax_arrays_round_trip():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is optional (pip install jax)")
    a = jnp.ones((128, 64), jnp.float32)
    y = K.add(a, a)
    assert type(y).__module__.startswith("jax")
    np.testing.assert_array_equal(np.asarray(y), 2 * np.ones((128, 64), np.float32))
