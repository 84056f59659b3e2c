"""Our kernels for test_loop_offsets.py: iota / affine_select whose offset depends on a loop
index (kept rolled), a gather after an int key, and a mask on a gathered view."""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402
import nki_mlir as nki2  # noqa: E402
import nki_mlir.isa as nisa2  # noqa: E402
import nki_mlir.language as nl2  # noqa: E402


@nki.jit
def row_numbers(x):
    """out[r, f] = 3 * r + f + 7 (r the global row), from a Beta 1 iota per 128-row tile."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range(n // 128):
        ramp = nisa.iota(3 * (t * 128 + i_p) + i_f + 7, dtype=nl.int32)
        nl.store(out[t * 128 + i_p, i_f], value=ramp)
    return out


@nki.jit
def causal_tiles(x):
    """Row tile t of a [n, 128] tensor keeps x[r, c] where r >= c (r the global row), else
    -1 (a Beta 1 affine_select with a loop-dependent predicate)."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range(n // 128):
        a = nl.load(x[t * 128 + i_p, i_f])
        s = nisa.affine_select(t * 128 + i_p - i_f >= 0, a, -1.0)
        nl.store(out[t * 128 + i_p, i_f], value=s)
    return out


@nki2.jit
def ramp_beta2(x):
    """Beta 2 nisa.iota(offset=<loop index expression>): out[r, f] = r + 2 * f."""
    n, f = x.shape
    out = nl2.ndarray((n, f), dtype=nl2.int32, buffer=nl2.shared_hbm)
    for t in nl2.affine_range(n // 128):
        ramp = nl2.ndarray((128, f), dtype=nl2.int32, buffer=nl2.sbuf)
        nisa2.iota(dst=ramp, pattern=[[2, f]], offset=t * 128, channel_multiplier=1)
        nisa2.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=ramp)
    return out


@nki.jit
def gather_rows_of_batch(data, rows):
    """out[b, i, :] = data[b, rows[i], :] for the first k rows of each 128-row index tile
    (k = len(rows) % 128 on the last one): a gather after an int key, under a mask."""
    nb, s, c = data.shape
    k = rows.shape[0]
    out = nl.ndarray((nb, k, c), dtype=data.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(c)[None, :]
    i_1 = nl.arange(1)[None, :]
    for b in nl.affine_range(nb):
        for t in nl.affine_range((k + 127) // 128):
            pos = t * 128 + i_p
            idx = nl.load(rows[pos, i_1], mask=pos < k)
            src = data[b, idx, i_f]
            tile = nl.load(src, mask=pos < k)
            nl.store(out[b, pos, i_f], value=tile, mask=pos < k)
    return out


@nki.jit
def causal_blocks(x):
    """A [n, n] tensor in 128 x 128 blocks: x[r, c] where r >= c, -9984 elsewhere; the
    affine_select predicate depends on both loop indices (written into a wider SBUF row)."""
    n = x.shape[0]
    out = nl.ndarray((n, n), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    i_row = nl.arange(n)[None, :]
    for i in nl.affine_range(n // 128):
        row = nl.ndarray((nl.par_dim(128), n), dtype=x.dtype)
        for j in nl.affine_range(n // 128):
            a = nl.load(x[i * 128 + i_p, j * 128 + i_f])
            row[i_p, j * 128 + i_f] = nisa.affine_select(
                pred=(i * 128 + i_p >= j * 128 + i_f), on_true_tile=a, on_false_value=-9984.0,
                dtype=x.dtype)
        nl.store(out[i * 128 + i_p, i_row], value=row[i_p, i_row])
    return out
