"""Beta 2 kernels of our own for the allocation tests (test_alloc_lifetimes.py); kept in a
file because the frontend reads kernel source.

Sizes are chosen against trn2's 212984 usable SBUF bytes per partition: ``T`` = a
[128, 16384] float32 tile = 65536 bytes per partition, so three such tiles fit and four
do not."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

F = 16384           # free size of a T-byte float32 tile


@nki.jit
def output_made_early(x):
    """out = (2x + x) * 3.  ``res`` is created first but written last: live from its alloc
    it would need 4 tiles at once; live from its first use, 3."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    res = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="res")
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="xs")
    nisa.dma_copy(dst=xs, src=x)
    t1 = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="t1")
    nisa.tensor_scalar(dst=t1, data=xs, op0=nl.multiply, operand0=2.0)
    t2 = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="t2")
    nisa.tensor_tensor(dst=t2, data1=t1, data2=xs, op=nl.add)
    nisa.tensor_scalar(dst=res, data=t2, op0=nl.multiply, operand0=3.0)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def half_tiles(x, y):
    """Two 64-partition tiles live with two full tiles: 4 tiles at partition 0, 3 when the
    half tiles sit side by side (partitions 0..63 and 64..127).
    out = [x_lo + y_lo - x_hi * y_hi ; x_hi], out2 = y."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray(y.shape, y.dtype, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="xs")
    ys = nl.ndarray(y.shape, y.dtype, buffer=nl.sbuf, name="ys")
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ys, src=y)
    a = nl.ndarray((64, F), x.dtype, buffer=nl.sbuf, name="a")
    nisa.tensor_tensor(dst=a, data1=xs[0:64, :], data2=ys[0:64, :], op=nl.add)
    b = nl.ndarray((64, F), x.dtype, buffer=nl.sbuf, name="b")
    nisa.tensor_tensor(dst=b, data1=xs[64:128, :], data2=ys[64:128, :], op=nl.multiply)
    nisa.tensor_tensor(dst=xs[0:64, :], data1=a, data2=b, op=nl.subtract)
    nisa.dma_copy(dst=out, src=xs)
    nisa.dma_copy(dst=out2, src=ys)
    return out


@nki.jit
def dying_input(x, y, w):
    """out = 2x + y + w.  ``u = 2 * xs`` is xs's last use: written into xs's bytes, 3 tiles
    are live at once instead of 4."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="xs")
    ys = nl.ndarray(y.shape, y.dtype, buffer=nl.sbuf, name="ys")
    ws = nl.ndarray(w.shape, w.dtype, buffer=nl.sbuf, name="ws")
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ys, src=y)
    nisa.dma_copy(dst=ws, src=w)
    u = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name="u")
    nisa.tensor_scalar(dst=u, data=xs, op0=nl.multiply, operand0=2.0)
    nisa.tensor_tensor(dst=u, data1=u, data2=ys, op=nl.add)
    nisa.tensor_tensor(dst=u, data1=u, data2=ws, op=nl.add)
    nisa.dma_copy(dst=out, src=u)
    return out


def _ring(n, size_bytes, base):
    """n [128, 512] float32 tiles at ``base + (i % 2) * size_bytes``: a 2-slot ring made up
    front, the way a modular allocator hands out explicit addresses."""
    return [nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf,
                       address=(0, base + (i % 2) * size_bytes)) for i in range(n)]


@nki.jit
def ring_of_tiles(x):
    """out[:, i] = x[:, i] + 1 per 512-column block; tile i and tile i+2 share an address
    and are used one after the other."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    tiles = _ring(4, 2048, 4096)
    for i in range(4):
        nisa.dma_copy(dst=tiles[i], src=x[:, i * 512:(i + 1) * 512])
        nisa.tensor_scalar(dst=tiles[i], data=tiles[i], op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=tiles[i])
    return out


@nki.jit
def ring_of_tiles_reused_late(x):
    """As ring_of_tiles, but tile 0 is read again after tile 2 was filled: the two share
    an address while both are live, which is an error."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    tiles = _ring(4, 2048, 4096)
    for i in range(4):
        nisa.dma_copy(dst=tiles[i], src=x[:, i * 512:(i + 1) * 512])
    for i in range(4):
        nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=tiles[i])
    return out
