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
    y = K.add(x, x)
    assert type(y) is np.ndarray and y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(x, 1)                       # the inputs are left as they were


def test_jax_arrays_round_trip():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is optional (pip install jax)")
    a = jnp.ones((128, 64), jnp.float32)
    y = K.add(a, a)
    assert type(y).__module__.startswith("jax")
    np.testing.assert_array_equal(np.asarray(y), 2 * np.ones((128, 64), np.float32))


def test_torch_shape_and_dtype_kept_bf16():
    a = torch.randn(128, 48, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    y = K.add(a, a)
    assert isinstance(y, torch.Tensor)
    assert y.shape == a.shape and y.dtype == torch.bfloat16 and y.device.type == "cpu"
    torch.testing.assert_close(y, a + a)


@pytest.fixture(scope="module")
def add_op():
    from nki_mlir.framework_ops import torch_custom_op
    return torch_custom_op(K.add, "nki_mlir_test::add")


def test_torch_custom_op_call(add_op):
    a, b = _pair()
    y = add_op(a, b)
    assert isinstance(y, torch.Tensor) and y.shape == a.shape and y.dtype == a.dtype
    torch.testing.assert_close(y, a + b)
    torch.testing.assert_close(torch.ops.nki_mlir_test.add(a, b), a + b)


def test_torch_custom_op_fake_and_compile(add_op):
    """The fake implementation gives the output's shape/dtype, so torch.compile traces the
    op (aot_eager: no C++ toolchain needed) and the compiled function runs it."""
    a, b = _pair(torch.bfloat16)
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fa, fb = mode.from_tensor(a), mode.from_tensor(b)
        fy = add_op(fa, fb)
        assert fy.shape == a.shape and fy.dtype == torch.bfloat16
    f = torch.compile(lambda x, y: add_op(x, y) * 2, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(f(a, b), (a + b) * 2)


def test_jax_under_jit():
    jax = pytest.importorskip("jax", reason="JAX is optional (pip install jax)")
    jnp = jax.numpy
    a = jnp.arange(128 * 64, dtype=jnp.float32).reshape(128, 64)
    y = jax.jit(lambda x: K.add(x, x) + 1)(a)
    assert type(y).__module__.startswith("jax") and y.shape == a.shape and y.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(y), 2 * np.asarray(a) + 1)


def test_jax_bf16_round_trip():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is optional (pip install jax)")
    a = jnp.ones((128, 64), jnp.bfloat16)
    y = K.add(a, a)
    assert type(y).__module__.startswith("jax") and y.dtype == jnp.bfloat16 and y.shape == a.shape
    np.testing.assert_array_equal(np.asarray(y, np.float32), 2 * np.ones((128, 64), np.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_kernel_writes_a_strided_torch_input(dtype):
    import output_coverage_kernels as OC
    from nki_cpu_simulator import nki as cs
    big = torch.arange(128 * 128, dtype=torch.float32).reshape(128, 128).to(dtype)
    a = big[:, ::2]                      # not contiguous: runs as a copy, written back
    want = a.clone()
    want[0:64] = want[64:128]
    cs.cpu_simulate(OC.in_place)[1](a=a)
    assert torch.equal(a, want) and torch.equal(big[:, ::2], want)
    assert torch.equal(big[:, 1::2], torch.arange(128 * 128).reshape(128, 128)[:, 1::2].to(dtype))
