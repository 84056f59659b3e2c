"""Our own kernels for test_output_coverage.py: outputs written fully, partly, through views,
under loops, by indirect DMA and by a dynamic loop.  Lines marked ``# ALLOC_*`` are the
allocations the warnings point at."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def full_tiles(a):
    """out = a, [512, 64] in four 128-row tiles: every element written."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def misses_last_tile(a):
    """The loop bound is one tile short: the last 128 rows of out are never written."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)  # ALLOC_MISSES_LAST
    for i in nl.affine_range(a.shape[0] // 128 - 1):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def misses_columns(a):
    """[128, 512]: columns written in 128-wide tiles with a step of 2 tiles (every other tile)."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)  # ALLOC_MISSES_COLUMNS
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    for j in nl.sequential_range(0, a.shape[1] // 128, 2):
        nisa.dma_copy(dst=out[:, j * 128:(j + 1) * 128], src=t[:, j * 128:(j + 1) * 128])
    return out


@nki.jit
def two_outputs(a):
    """Output 0 fully written, output 1 ('half') only its first 64 columns."""
    full = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    half = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)  # ALLOC_HALF
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=full, src=t)
    nisa.dma_copy(dst=half[:, 0:64], src=t[:, 0:64])
    return full, half


@nki.jit
def through_ap(a):
    """[128, 64] written through an access pattern covering columns 0..31 of each row only."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)  # ALLOC_AP
    t = nl.ndarray((128, 32), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[:, 0:32])
    nisa.dma_copy(dst=out.ap([[64, 128], [1, 32]], offset=0), src=t)
    return out


@nki.jit
def reshaped_full(a):
    """out [128, 64] written as its reshape [64, 128] in two halves: every element written."""
    out = nl.ndarray((128, 64), a.dtype, buffer=nl.shared_hbm)
    flat = out.reshape((64, 128))
    t = nl.ndarray((64, 128), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=flat[:, 0:64], src=t[:, 0:64])
    nisa.dma_copy(dst=flat[:, 64:128], src=t[:, 64:128])
    return out


@nki.jit
def scatter_only(table, rows, idx):
    """out's rows are written only by a scatter (indirect DMA): which rows is data."""
    p, d = rows.shape
    out = nl.ndarray(table.shape, table.dtype, buffer=nl.shared_hbm)
    ix = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    r = nl.ndarray((p, d), rows.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=rows)
    nisa.dma_copy(dst=out.ap([[d, p], [1, d]], offset=0, vector_offset=ix, indirect_dim=0), src=r)
    return out


@nki.jit
def dynamic_tiles(a):
    """a [4, 128, 64]: blocks 0..2 copied in nl.dynamic_range(3), block i addressed with
    ap(scalar_offset=i); the bounds are constants, so the region is known: block 3 is
    never written."""
    nb, p, f = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)  # ALLOC_DYNAMIC
    for i in nl.dynamic_range(nb - 1):
        t = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0), src=t)
    return out


@nki.jit
def register_tiles(a, count):
    """The same copy with the trip count read at run time from ``count`` ([1, 1] int32) into a
    register: which blocks are written is not known at compile time."""
    nb, p, f = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        t = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0), src=t)
    return out


@nki.jit
def in_place(a):
    """A parameter updated in place (output as argument): its other rows keep their data."""
    t = nl.ndarray((64, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[64:128, :])
    nisa.dma_copy(dst=a[0:64, :], src=t)


@nki.jit
def per_program(a):
    """An LNC launch kernel[2]: program i writes rows [128 i, 128 i + 128) of out [256, F]."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out
