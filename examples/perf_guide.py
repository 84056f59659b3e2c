"""Small kernels of our own written to the examples of the NKI performance guide
(aws-neuron-sdk ``nki/deep-dives/nki_perf_guide.rst``), whose quoted figures are checks of
the cost model (``bench/published_report.py``):

- :func:`scalar_chain`: Opt #5a -- back-to-back ScalarE ``activation`` instructions
  (IDENTITY with a per-partition scale and bias, i.e. ``data * scale + bias``) that each read
  one element per partition and depend on the previous one (the naive Mamba scan); the guide
  measured an initiation interval of ~189 ns (264 ScalarE cycles on NeuronCore-v2);
- :func:`exp_three_ops` / :func:`exp_fused`: Opt #6 -- ``exp(data * scale + bias)`` on a
  [128, 512] tile as three instructions (``nl.multiply``, ``nl.add``, ``nl.exp``) or as one
  ``nisa.activation`` with scale and bias; the guide says the fused one is 3x faster;
- :func:`reduce_two_halves` / :func:`reduce_vectorized`: Opt #5b -- two matmuls writing
  64-partition PSUM tiles reduced by two ``tensor_reduce`` instructions, or writing the two
  halves of one 128-partition tile reduced by one; the guide says the second reduces 2x faster;
- :func:`matvec_short_stationary` / :func:`matvec_short_moving`: Opt #7 -- a [1, 128] x
  [128, 128] product repeated, with the short operand as the stationary or as the moving
  tensor; the guide says a matmul issues roughly every 128 or every 64 TensorE cycles.

    python examples/perf_guide.py     # checks each against NumPy
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def scalar_chain(a, b):
    """The naive scan ``h[:, t] = a[:, t] * h[:, t-1] + b[:, t]`` (``h[:, 0] = b[:, 0]``) as
    one ScalarE ``activation`` per column, each reading the previous column's result.

    Args:
        a, b: [128, T] fp32.

    Returns:
        h: [128, T] fp32 in ``shared_hbm``.
    """
    parts, steps = a.shape
    out = nl.ndarray((parts, steps), dtype=a.dtype, buffer=nl.shared_hbm)
    a_t = nl.ndarray((parts, steps), dtype=a.dtype, buffer=nl.sbuf)
    b_t = nl.ndarray((parts, steps), dtype=b.dtype, buffer=nl.sbuf)
    h = nl.ndarray((parts, steps), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_t, src=a)
    nisa.dma_copy(dst=b_t, src=b)
    nisa.activation(dst=h[:, 0:1], op=nl.copy, data=b_t[:, 0:1])
    for t in nl.static_range(1, steps):
        nisa.activation(dst=h[:, t:t + 1], op=nl.copy, data=a_t[:, t:t + 1],
                        scale=h[:, t - 1:t], bias=b_t[:, t:t + 1])
    nisa.dma_copy(dst=out, src=h)
    return out


def _load3(data, scale, bias):
    parts, free = data.shape
    d = nl.ndarray((parts, free), dtype=data.dtype, buffer=nl.sbuf)
    s = nl.ndarray((parts, 1), dtype=scale.dtype, buffer=nl.sbuf)
    b = nl.ndarray((parts, 1), dtype=bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=d, src=data)
    nisa.dma_copy(dst=s, src=scale)
    nisa.dma_copy(dst=b, src=bias)
    return d, s, b


@nki.jit
def exp_three_ops(data, scale, bias):
    """``exp(data * scale + bias)`` as three instructions (the guide's "impl 1").

    Args:
        data: [128, F] fp32.  scale, bias: [128, 1] fp32 (per partition).

    Returns:
        [128, F] fp32 in ``shared_hbm``.
    """
    d, s, b = _load3(data, scale, bias)
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    r = nl.exp(nl.add(nl.multiply(d, s), b))
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def exp_fused(data, scale, bias):
    """``exp(data * scale + bias)`` as one ScalarE ``activation`` (the guide's "impl 2").

    Args / returns as :func:`exp_three_ops`.
    """
    d, s, b = _load3(data, scale, bias)
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    r = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.activation(dst=r, op=nl.exp, data=d, bias=b, scale=s)
    nisa.dma_copy(dst=out, src=r)
    return out


def _mm_operands(x, w):
    k, m = x.shape
    xs = nl.ndarray((k, m), dtype=x.dtype, buffer=nl.sbuf)
    ws = nl.ndarray(w.shape, dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ws, src=w)
    return xs, ws


@nki.jit
def reduce_two_halves(x, w):
    """Row sums of ``x.T @ w`` for x [128, 128], w [128, N] bf16: two matmuls (64 output
    rows each) into two 64-partition PSUM tiles, each summed by its own ``tensor_reduce``
    (the guide's option 1).  Returns [128, 1] fp32."""
    xs, ws = _mm_operands(x, w)
    n = w.shape[1]
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    for h in nl.static_range(2):
        ps = nl.ndarray((64, n), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=xs[:, h * 64:(h + 1) * 64], moving=ws)
        r = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=r, op=nl.add, data=ps, axis=1, keepdims=True)
        nisa.dma_copy(dst=out[h * 64:(h + 1) * 64, :], src=r)
    return out


@nki.jit
def reduce_vectorized(x, w):
    """As :func:`reduce_two_halves`, but the two matmuls write partitions 0-63 and 64-127
    of one PSUM tile and one ``tensor_reduce`` sums all 128 (the guide's option 2)."""
    xs, ws = _mm_operands(x, w)
    n = w.shape[1]
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((128, n), dtype=nl.float32, buffer=nl.psum)
    for h in nl.static_range(2):
        nisa.nc_matmul(dst=ps[h * 64:(h + 1) * 64, :], stationary=xs[:, h * 64:(h + 1) * 64],
                       moving=ws)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r, op=nl.add, data=ps, axis=1, keepdims=True)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def matvec_short_stationary(v, w, REPS=64):
    """``REPS * (v.T @ w)`` for v [128, 1], w [128, 128] bf16: REPS back-to-back matmuls
    accumulating into one PSUM tile, the short ``v`` the stationary tensor (each matmul
    moves 128 columns).  Returns [1, 128] fp32."""
    vs, ws = _mm_operands(v, w)
    out = nl.ndarray((1, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((1, 128), dtype=nl.float32, buffer=nl.psum)
    for _ in nl.static_range(REPS):
        nisa.nc_matmul(dst=ps, stationary=vs, moving=ws)
    r = nl.ndarray((1, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def matvec_short_moving(v, w, REPS=64):
    """``REPS * (w.T @ v)`` (the same product, transposed), the short ``v`` the moving
    tensor (each matmul moves 1 column).  Returns [128, 1] fp32."""
    vs, ws = _mm_operands(v, w)
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
    for _ in nl.static_range(REPS):
        nisa.nc_matmul(dst=ps, stationary=ws, moving=vs)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


def _check() -> int:
    import ml_dtypes
    import numpy as np
    rng = np.random.default_rng(0)
    bf16 = ml_dtypes.bfloat16
    a = rng.uniform(0.5, 0.9, (128, 64)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    h = np.zeros_like(a, dtype=np.float64)
    h[:, 0] = b[:, 0]
    for t in range(1, a.shape[1]):
        h[:, t] = a[:, t] * h[:, t - 1] + b[:, t]
    d = rng.standard_normal((128, 512)).astype(np.float32)
    s = rng.uniform(0.1, 0.5, (128, 1)).astype(np.float32)
    bi = rng.uniform(-1, 1, (128, 1)).astype(np.float32)
    x = rng.standard_normal((128, 128)).astype(bf16)
    w = rng.standard_normal((128, 512)).astype(bf16)
    v = rng.standard_normal((128, 1)).astype(bf16)
    w2 = rng.standard_normal((128, 128)).astype(bf16)
    rows = (x.astype(np.float64).T @ w.astype(np.float64)).sum(axis=1, keepdims=True)
    mv = v.astype(np.float64).T @ w2.astype(np.float64)
    cases = [("scalar_chain", scalar_chain(a, b), h),
             ("exp_three_ops", exp_three_ops(d, s, bi), np.exp(d * s + bi)),
             ("exp_fused", exp_fused(d, s, bi), np.exp(d * s + bi)),
             ("reduce_two_halves", reduce_two_halves(x, w), rows),
             ("reduce_vectorized", reduce_vectorized(x, w), rows),
             ("matvec_short_stationary", matvec_short_stationary(v, w2, REPS=2), 2 * mv),
             ("matvec_short_moving", matvec_short_moving(v, w2, REPS=2), 2 * mv.T)]
    bad = 0
    for name, got, want in cases:
        err = float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want)))
        print(f"{name}: max |err| / max |ref| = {err:.2e}")
        bad += err > 1e-3
    return int(bad > 0)


if __name__ == "__main__":
    raise SystemExit(_check())
