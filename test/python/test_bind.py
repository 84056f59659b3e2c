"""Transpose binding (nki_mlir/runtime/bind.py): an nc_transpose whose result only copies read
is the transposed view of its source in program order; results are those of the writing
queue mode bit for bit, and a transpose whose source is written before the last read, or whose
result a non-copy reads, writes its tile."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import bind


@nki.jit
def copied(x):
    """x[:, 0:128]^T and x[:, 128:256]^T (a strided source) copied out of PSUM, then
    x^T @ x-block products on the copies."""
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    e = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t, scale=0.5)
    for j in nl.affine_range(2):
        tp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=tp, data=e[:, nl.ds(j * 128, 128)])
        ts = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=ts, src=tp)
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=ts, moving=t[:, nl.ds(j * 128, 128)])
        o = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=acc)
        nisa.dma_copy(dst=out[:, nl.ds(j * 128, 128)], src=o)
    return out


@nki.jit
def clobbered(x):
    """The transpose's source is overwritten before its result is copied out."""
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    e = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=e, data=t, op0=nl.add, operand0=1.0)
    tp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=e)
    nisa.memset(dst=e[:, 0:64], value=3.0)
    ts = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=ts, src=tp)
    nisa.dma_copy(dst=out, src=ts)
    return out


@nki.jit
def reduced(x):
    """The transpose's result is summed (a reduction: its order depends on the layout)."""
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    e = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=e, data=t, op0=nl.multiply, operand0=3.0)
    tp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=e)
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=tp, axis=1, keepdims=True)
    nisa.dma_copy(dst=out, src=s)
    return out


def _decisions(kernel, *args):
    got = []
    orig = bind._bindable

    def spy(dec, op):
        got.append(orig(dec, op))
        return got[-1]
    bind._bindable = spy
    try:
        ck = nki.compile(kernel, *args, use_cache=False)
        ck.program                    # decoded here
    finally:
        bind._bindable = orig
    return ck, got


def _same_as_queues(ck, *args):
    po = ck.run(tuple(a.copy() for a in args), {}, mode="program-order", hazards=False)
    qu = ck.run(tuple(a.copy() for a in args), {}, mode="queues", hazards=False)
    for a, b in zip(po, qu):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
    return po


def test_transposes_read_by_copies_are_bound_with_the_written_bits():
    x = np.random.default_rng(5).standard_normal((128, 256)).astype(np.float32)
    ck, got = _decisions(copied, x)
    assert got == [True]
    (out,) = _same_as_queues(ck, x)
    e = np.exp(x * np.float32(0.5))
    ref = np.concatenate([e[:, :128] @ x[:, :128], e[:, 128:] @ x[:, 128:]], axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("kernel", [clobbered, reduced])
def test_no_binding_when_a_reader_could_tell(kernel):
    x = np.random.default_rng(6).standard_normal((128, 128)).astype(np.float32)
    ck, got = _decisions(kernel, x)
    assert got == [False]
    (out,) = _same_as_queues(ck, x)
    if kernel is clobbered:
        np.testing.assert_array_equal(out, (x + np.float32(1)).T)   # e as transposed
    else:
        np.testing.assert_allclose(out[:, 0], (x * np.float32(3)).sum(axis=0), rtol=1e-4,
                                   atol=1e-4)


def test_copy_into_transposes_strided_rows_exactly():
    rng = np.random.default_rng(7)
    e = rng.standard_normal((64, 96)).astype(np.float32)
    src = e[:, 16:80].T                       # a transposed view of strided rows
    dst = np.empty((64, 64), np.float32)

    class State:
        scratch: dict = {}
    bind.copy_into([State()], dst, src)
    np.testing.assert_array_equal(dst, np.ascontiguousarray(src))


@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.uint8])
@pytest.mark.parametrize("rows, cols, width", [(128, 128, 128), (128, 128, 512), (64, 96, 96),
                                               (8, 128, 128), (128, 8, 8), (2, 3, 3)])
def test_copy_into_transposes_every_layout_bit_for_bit(dtype, rows, cols, width):
    """Contiguous tiles (copied through the padded scratch above 32 KiB), strided ones
    (always), small ones (directly): dst is the transpose bit for bit (random bits: NaN
    payloads, -0.0 in float32), into a strided destination too, with the scratch reused."""
    rng = np.random.default_rng(rows * cols + width)
    udt = np.dtype(f"u{np.dtype(dtype).itemsize}")
    bits = rng.integers(0, np.iinfo(udt).max, (rows, width), dtype=udt, endpoint=True)
    src = bits.view(dtype)[:, :cols].T
    want = np.ascontiguousarray(src).view(udt)

    class State:
        scratch: dict = {}
    env = [State()]
    for dst in (np.empty((cols, rows), dtype), np.zeros((cols, rows + 5), dtype)[:, 2:2 + rows]):
        for _ in range(2):
            dst[...] = 0
            bind.copy_into(env, dst, src)
            np.testing.assert_array_equal(dst.view(udt), want)
