"""DMA forwarding (nki_mlir/runtime/forward.py): a tile DMA'd from a read-only input is read
from the input in program order; results are those of the copying queue mode bit for bit,
and the caller's arrays are never written through the binding."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import forward


@nki.jit
def reads(x, w):
    """Row sums, an elementwise op, a transpose and a matmul on forwarded tiles."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sums = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1, keepdims=True)
    e = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t, bias=s, scale=0.25)
    wt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=wt, moving=e)
    r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r, data1=p, data2=t, op=nl.add)      # t lives to the end
    nisa.dma_copy(dst=out, src=r)
    nisa.dma_copy(dst=sums, src=s)
    return out, sums


@nki.jit
def writes_arg(x, y):
    """Loads x, then writes y (maybe the same array) before reading the tile."""
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    z = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    nisa.dma_copy(dst=y, src=z)
    u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=u)
    return out


@nki.jit
def writes_tile(x):
    """Loads x, then writes one column of the tile."""
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.memset(dst=t[:, 0:1], value=7.0)
    nisa.dma_copy(dst=out, src=t)
    return out


BOUND: list = []       # per forwarding DMA execution: whether it bound the tile to the source


def _decisions(kernel, *args):
    got = []
    orig, orig_fw = forward.forwardable, forward.forwarding

    def spy(dec, op):
        got.append(orig(dec, op))
        return got[-1]

    def spy_fw(copy, d, s, shape, itemsize, **kw):
        run = orig_fw(copy, d, s, shape, itemsize, **kw)

        def counted(env):
            run(env)
            BOUND.append(env[d] is env[s])
        return counted
    forward.forwardable, forward.forwarding = spy, spy_fw
    try:
        ck = nki.compile(kernel, *args, use_cache=False)
        ck.program                    # decoded here
    finally:
        forward.forwardable, forward.forwarding = orig, orig_fw
    return ck, got


def _both(ck, *args):
    po = ck.run(tuple(a.copy() for a in args), {}, mode="program-order", hazards=False)
    qu = ck.run(tuple(a.copy() for a in args), {}, mode="queues", hazards=False)
    return po, qu


@pytest.mark.parametrize("layout", ["contiguous", "wide rows", "transposed"])
def test_forwarded_reads_give_the_copied_tiles_bits(layout):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    w = rng.standard_normal((128, 128)).astype(np.float32)
    if layout == "wide rows":
        x = np.ascontiguousarray(np.concatenate([x, x], axis=1))[:, :512]
    elif layout == "transposed":      # free stride != 4: copied, not forwarded
        x = np.asfortranarray(x)
    ck, got = _decisions(reads, x, w)
    assert got[0] is True             # t alone in its block (strides checked when run)
    x0 = x.copy()
    BOUND.clear()      # Program.run takes the array as it is (the driver may copy it)
    direct = ck.program.run([x, w], mode="program-order", hazards=False)
    assert BOUND[0] is (layout != "transposed")
    po, qu = _both(ck, x, w)
    for a, b, c in zip(po, qu, direct):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
        np.testing.assert_array_equal(a.view(np.uint32), c.view(np.uint32))
    out, _ = ck.run((x, w), {}, mode="program-order", hazards=False)
    np.testing.assert_array_equal(out.view(np.uint32), po[0].view(np.uint32))
    np.testing.assert_array_equal(x, x0)


def test_no_forwarding_when_an_argument_is_written():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck, got = _decisions(writes_arg, x, x.copy())
    assert got[0] is False
    same = x.copy()
    (out,) = ck.run((same, same), {}, mode="program-order", hazards=False)
    np.testing.assert_array_equal(out, x + 1)       # the tile holds x as loaded
    assert (same == 0).all()


def test_no_forwarding_when_the_tile_is_written():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    x0 = x.copy()
    ck, got = _decisions(writes_tile, x)
    assert got[0] is False
    (out,) = ck.run((x,), {}, mode="program-order", hazards=False)
    ref = x0.copy()
    ref[:, 0] = 7.0
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(x, x0)
