"""The selective-scan (Mamba-v1 SSM) layer, our own kernels written to the three tilings of
the NKI "Fused Mamba" tutorial (aws-neuron-sdk ``nki/guides/tutorials/fused_mamba.rst``),
whose hardware latencies are checks of the cost model (``bench/published_report.py``).

Every kernel computes, for fp32 ``delta, u: [batch, channels, seq]``, ``A: [channels, state]``,
``B, C: [batch, state, seq]``::

    out[b, c, t] = sum_s C[b, s, t] * h[b, c, s, t],
    h[b, c, s, t] = exp(delta[b, c, t] * A[c, s]) * h[b, c, s, t-1]
                    + delta[b, c, t] * u[b, c, t] * B[b, s, t]      (h[..., -1] = 0)

with ``channels`` on the partitions (tiles of 128) and ``seq`` in the free dimension: per
(channel tile, state) one ScalarE ``activation`` (exp with a per-partition scale) gives
``exp(delta * A)``, two VectorE ``tensor_tensor`` multiplies give ``delta * u * B``, one
``tensor_tensor_scan`` the recurrence, one multiply by ``C`` and one add into the SBUF
accumulator.  As in the tutorial, the ``B`` and ``C`` rows are broadcast over the
partitions with ``nl.broadcast_to`` and each multiply covers the instruction's whole free
size (``seq`` in v1 / v2, ``SEQ_TILE`` in v3); nki-mlir does the partition broadcast on
TensorE (a matmul with a ones row, as the tutorial describes it) into PSUM, 512 fp32
columns (one PSUM bank) per matmul: the multiply reads a one-bank broadcast in PSUM, a wider
one after a ScalarE copy to SBUF (so v2's multiplies from seq 1024 read both inputs from
SBUF: ``2N`` cycles instead of ``N``).

- :func:`mamba_v1`: the tutorial's first kernel: state outer, channel tiles inner, every
  input tile loaded inside the inner loop (``delta`` and ``u`` once per state), one
  accumulator per channel tile stored after all states;
- :func:`mamba_v2`: the loop reordering: channel tiles outer, ``delta`` / ``u`` loaded once
  per channel tile and reused across the states, the accumulator stored per channel tile;
- :func:`mamba_v3`: v2 with the sequence tiled by ``SEQ_TILE`` (512) inside the state loop,
  the scan carried from one sequence tile to the next (``initial=`` the previous tile's last
  column).

As in the tutorial, each step loads the ``C`` row after the scan.  ``C_EARLY=True`` loads it
next to the ``B`` row instead (same tiling, same instructions; ``bench/published_report.py``
prints both).

    python examples/mamba.py        # checks small shapes against NumPy
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

P = 128


def _ssm_step(delta_t, u_t, a_col, b_row, width, dtype):
    """Steps 1-3 of one (channel tile, state) on ``[P, width]`` tiles: ``exp(delta * A)``
    and ``delta * u * B``, the two operands of the scan."""
    d_a = nl.ndarray((P, width), dtype=dtype, buffer=nl.sbuf)
    nisa.activation(dst=d_a, op=nl.exp, data=delta_t, scale=a_col)
    d_u = nl.ndarray((P, width), dtype=dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=d_u, data1=delta_t, data2=u_t, op=nl.multiply)
    d_bu = nl.ndarray((P, width), dtype=dtype, buffer=nl.sbuf)
    _times_row(d_bu, d_u, b_row, width)
    return d_a, d_bu


def _times_row(dst, data, row, width):
    """``dst = data * row`` with the ``[1, width]`` row broadcast over the partitions by
    ``nl.broadcast_to`` and one VectorE multiply over the whole ``width``, as the tutorial
    writes it.  nki-mlir lowers the broadcast to TensorE ones-matmuls into PSUM (512 fp32
    columns, one PSUM bank, each); a broadcast of one bank is read by the multiply in PSUM,
    a wider one is first copied to SBUF (docs/pipeline.md, ``nl.broadcast_to``)."""
    bc = nl.broadcast_to(row, (P, width))
    nisa.tensor_tensor(dst=dst, data1=data, data2=bc, op=nl.multiply)


def _finish(scan, c_row, acc, width, dtype):
    """Steps 5-6: ``acc += scan * C`` (``C`` broadcast over the partitions)."""
    s_c = nl.ndarray((P, width), dtype=dtype, buffer=nl.sbuf)
    _times_row(s_c, scan, c_row, width)
    nisa.tensor_tensor(dst=acc, data1=acc, data2=s_c, op=nl.add)


def _load(src, dtype, shape):
    t = nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


@nki.jit
def mamba_v1(delta, u, A, B, C, C_EARLY=False):
    """Selective scan, the tutorial's initial tiling (see the module docstring).

    Args:
        delta, u: [batch, channels, seq] fp32, channels a multiple of 128.
        A: [channels, state] fp32.  B, C: [batch, state, seq] fp32.
        C_EARLY: load the C row next to the B row (see the module docstring).

    Returns:
        [batch, channels, seq] fp32 in ``shared_hbm``.

    The accumulators of all channel tiles live at once (``channels / 128 * seq * 4`` bytes
    per partition).
    """
    batch, channels, seq = delta.shape
    state = A.shape[1]
    n_ct = channels // P
    dt = delta.dtype
    out = nl.ndarray((batch, channels, seq), dtype=dt, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        acc = nl.ndarray((P, n_ct, seq), dtype=dt, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        for s in nl.affine_range(state):
            for ct in nl.affine_range(n_ct):
                c0 = ct * P
                delta_t = _load(delta[b, c0:c0 + P, :], dt, (P, seq))
                a_col = _load(A[c0:c0 + P, s:s + 1], dt, (P, 1))
                u_t = _load(u[b, c0:c0 + P, :], dt, (P, seq))
                b_row = _load(B[b, s:s + 1, :], dt, (1, seq))
                c_row = _load(C[b, s:s + 1, :], dt, (1, seq)) if C_EARLY else None
                d_a, d_bu = _ssm_step(delta_t, u_t, a_col, b_row, seq, dt)
                scan = nl.ndarray((P, seq), dtype=dt, buffer=nl.sbuf)
                nisa.tensor_tensor_scan(dst=scan, data0=d_a, data1=d_bu, initial=0.0,
                                        op0=nl.multiply, op1=nl.add)
                if not C_EARLY:
                    c_row = _load(C[b, s:s + 1, :], dt, (1, seq))
                _finish(scan, c_row, acc[:, ct, :], seq, dt)
        for ct in nl.affine_range(n_ct):
            nisa.dma_copy(dst=out[b, ct * P:(ct + 1) * P, :], src=acc[:, ct, :])
    return out


@nki.jit
def mamba_v2(delta, u, A, B, C, C_EARLY=False):
    """Selective scan after the tutorial's loop reordering (see the module docstring).

    Args / returns as :func:`mamba_v1`.  Per channel tile: ``delta`` and ``u`` loaded once,
    one ``[128, seq]`` accumulator, stored after the state loop.
    """
    batch, channels, seq = delta.shape
    state = A.shape[1]
    dt = delta.dtype
    out = nl.ndarray((batch, channels, seq), dtype=dt, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // P):
            c0 = ct * P
            acc = nl.ndarray((P, seq), dtype=dt, buffer=nl.sbuf)
            nisa.memset(dst=acc, value=0.0)
            delta_t = _load(delta[b, c0:c0 + P, :], dt, (P, seq))
            u_t = _load(u[b, c0:c0 + P, :], dt, (P, seq))
            for s in nl.affine_range(state):
                a_col = _load(A[c0:c0 + P, s:s + 1], dt, (P, 1))
                b_row = _load(B[b, s:s + 1, :], dt, (1, seq))
                c_row = _load(C[b, s:s + 1, :], dt, (1, seq)) if C_EARLY else None
                d_a, d_bu = _ssm_step(delta_t, u_t, a_col, b_row, seq, dt)
                scan = nl.ndarray((P, seq), dtype=dt, buffer=nl.sbuf)
                nisa.tensor_tensor_scan(dst=scan, data0=d_a, data1=d_bu, initial=0.0,
                                        op0=nl.multiply, op1=nl.add)
                if not C_EARLY:
                    c_row = _load(C[b, s:s + 1, :], dt, (1, seq))
                _finish(scan, c_row, acc, seq, dt)
            nisa.dma_copy(dst=out[b, c0:c0 + P, :], src=acc)
    return out


@nki.jit
def mamba_v3(delta, u, A, B, C, SEQ_TILE=512, C_EARLY=False):
    """Selective scan with the tutorial's sequence tiling (see the module docstring).

    Args / returns as :func:`mamba_v1`; ``seq`` must be a multiple of ``SEQ_TILE``.  The
    sequence-tile loop is ``static_range`` (unrolled, as in the tutorial: the scan carry is
    loop-carried); the intermediates are ``[128, SEQ_TILE]``.
    """
    batch, channels, seq = delta.shape
    state = A.shape[1]
    dt = delta.dtype
    out = nl.ndarray((batch, channels, seq), dtype=dt, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // P):
            c0 = ct * P
            acc = nl.ndarray((P, seq), dtype=dt, buffer=nl.sbuf)
            nisa.memset(dst=acc, value=0.0)
            delta_t = _load(delta[b, c0:c0 + P, :], dt, (P, seq))
            u_t = _load(u[b, c0:c0 + P, :], dt, (P, seq))
            for s in nl.affine_range(state):
                a_col = _load(A[c0:c0 + P, s:s + 1], dt, (P, 1))
                carry = nl.ndarray((P, 1), dtype=dt, buffer=nl.sbuf)
                nisa.memset(dst=carry, value=0.0)
                for j in nl.static_range(seq // SEQ_TILE):
                    t0 = j * SEQ_TILE
                    cols = slice(t0, t0 + SEQ_TILE)
                    b_row = _load(B[b, s:s + 1, t0:t0 + SEQ_TILE], dt, (1, SEQ_TILE))
                    c_row = (_load(C[b, s:s + 1, t0:t0 + SEQ_TILE], dt, (1, SEQ_TILE))
                             if C_EARLY else None)
                    d_a, d_bu = _ssm_step(delta_t[:, cols], u_t[:, cols], a_col, b_row,
                                          SEQ_TILE, dt)
                    scan = nl.ndarray((P, SEQ_TILE), dtype=dt, buffer=nl.sbuf)
                    nisa.tensor_tensor_scan(dst=scan, data0=d_a, data1=d_bu, initial=carry,
                                            op0=nl.multiply, op1=nl.add)
                    nisa.tensor_copy(dst=carry, src=scan[:, SEQ_TILE - 1:SEQ_TILE])
                    if not C_EARLY:
                        c_row = _load(C[b, s:s + 1, t0:t0 + SEQ_TILE], dt, (1, SEQ_TILE))
                    _finish(scan, c_row, acc[:, cols], SEQ_TILE, dt)
            nisa.dma_copy(dst=out[b, c0:c0 + P, :], src=acc)
    return out


def reference(delta, u, A, B, C):
    """NumPy float64 selective scan (the formula of the module docstring)."""
    import numpy as np
    d, uu, a, bb, cc = (np.asarray(x, np.float64) for x in (delta, u, A, B, C))
    batch, channels, seq = d.shape
    out = np.zeros((batch, channels, seq))
    for s in range(a.shape[1]):
        da = np.exp(d * a[None, :, s, None])
        dbu = d * uu * bb[:, None, s, :]
        h = np.zeros((batch, channels))
        for t in range(seq):
            h = da[..., t] * h + dbu[..., t]
            out[..., t] += cc[:, None, s, t] * h
    return out


def inputs(batch: int, channels: int, seq: int, state: int, seed: int = 0) -> tuple:
    """Random float32 ``(delta, u, A, B, C)`` of the shapes the kernels take: ``delta`` and
    ``u`` ``[batch, channels, seq]`` (``delta`` in [0.01, 0.1)), ``A`` ``[channels, state]``
    (negative), ``B`` and ``C`` ``[batch, state, seq]``."""
    import numpy as np
    rng = np.random.default_rng(seed)
    delta = rng.uniform(0.01, 0.1, (batch, channels, seq)).astype(np.float32)
    u = rng.standard_normal((batch, channels, seq)).astype(np.float32)
    A = -rng.uniform(0.5, 2.0, (channels, state)).astype(np.float32)
    B = rng.standard_normal((batch, state, seq)).astype(np.float32)
    C = rng.standard_normal((batch, state, seq)).astype(np.float32)
    return delta, u, A, B, C


def _check() -> int:
    import numpy as np
    bad = 0
    batch, channels, seq, state = 1, 256, 1024, 4
    delta, u, A, B, C = inputs(batch, channels, seq, state)
    want = reference(delta, u, A, B, C)
    for kernel in (mamba_v1, mamba_v2, mamba_v3):
        got = np.asarray(kernel(delta, u, A, B, C), np.float64)
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        print(f"{kernel.__name__} [{batch}, {channels}, {seq}] state {state}: "
              f"max |err| / max |ref| = {err:.2e}")
        bad += err > 1e-4
    return int(bad > 0)


if __name__ == "__main__":
    raise SystemExit(_check())
