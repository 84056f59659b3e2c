"""nisa data-movement instructions (dma_transpose, dma_compute, nc_n_gather, local_gather,
nc_stream_shuffle, and the hwdge / engine / priority rules of dma_copy) against NumPy
references written from the NKI API pages (nki_spec.md section 5.4)."""
import inspect

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIRuntimeError, NKITypeError, NKIVerifyError

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
RNG = np.random.default_rng(1234)


def _data(shape, dtype):
    return (RNG.standard_normal(shape) * 4).astype(np.float32).astype(dtype)


def _line_of(kernel, marker: str) -> int:
    """The file line number of the first line of ``kernel`` containing ``marker``."""
    lines, start = inspect.getsourcelines(kernel.fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(marker)


def _raises(cls, kernel, marker, fragments, *args, **kw):
    """Run ``kernel`` expecting ``cls`` whose message has ``fragments`` and whose location is
    the kernel line holding ``marker``."""
    with pytest.raises(cls) as info:
        if kw:
            nki.compile(kernel, *args, **kw)(*args)
        else:
            kernel(*args)
    err = info.value
    for f in fragments:
        assert f in str(err), str(err)
    assert err.loc is not None and err.loc.line == _line_of(kernel, marker), (err.loc, str(err))
    return err


# ===================================================================== dma_transpose


@nki.jit
def k_dma_transpose(a, via_sbuf, dge):
    perm = ((1, 0), (2, 1, 0), (3, 1, 2, 0))[len(a.shape) - 2]
    shape = tuple(a.shape[i] for i in perm)
    out = nl.ndarray(shape, a.dtype, buffer=nl.shared_hbm)
    src = a
    if via_sbuf:
        src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=src, src=a)
    t = nl.ndarray(shape, a.dtype, buffer=nl.sbuf)
    if dge:
        nisa.dma_transpose(dst=t, src=src, axes=perm, dge_mode=nisa.dge_mode.hwdge)  # MARK-T
    else:
        nisa.dma_transpose(dst=t, src=src)  # MARK-T0
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("dtype", [BF16, np.float16, np.int16, np.float32, np.int8])
@pytest.mark.parametrize("shape,via_sbuf", [
    ((1, 1), False), ((1, 128), False), ((128, 1), True), ((128, 128), True), ((64, 96), False),
    ((2, 3, 128), False), ((4, 5, 1), True), ((2, 3, 4, 16), False), ((1, 2, 2, 128), True),
])
def test_dma_transpose(dtype, shape, via_sbuf):
    a = _data(shape, dtype)
    perm = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(shape)]
    ref = np.empty(tuple(shape[i] for i in perm), dtype)
    for idx in np.ndindex(*shape):  # dst[idx permuted] = src[idx]
        ref[tuple(idx[i] for i in perm)] = a[idx]
    y = k_dma_transpose(a, via_sbuf, False)
    assert y.dtype == dtype and y.shape == ref.shape
    bits = np.dtype(f"uint{8 * np.dtype(dtype).itemsize}")  # bit-exact, any dtype (default dge_mode)
    assert np.array_equal(y.view(bits), ref.view(bits))


@pytest.mark.parametrize("shape", [(16, 128), (16, 1), (2, 8, 64), (16, 3, 1, 128)])
def test_dma_transpose_hwdge(shape):
    a = _data(shape, BF16)
    y = nki.compile(k_dma_transpose, a, False, True, target="trn2")(a, False, True)
    assert np.array_equal(y, np.transpose(a, {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(shape)]))


@nki.jit
def k_dma_transpose_bad_shape(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=a)  # MARK
    return a


@nki.jit
def k_dma_transpose_bad_axes(a):
    t = nl.ndarray((a.shape[1], a.shape[0]), a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=a, axes=(0, 1))  # MARK
    return a


@nki.jit
def k_dma_transpose_psum(a):
    t = nl.ndarray((a.shape[1], a.shape[0]), a.dtype, buffer=nl.psum)
    nisa.dma_transpose(dst=t, src=a)  # MARK
    return a


@nki.jit
def k_dma_transpose_cast(a):
    t = nl.ndarray((a.shape[1], a.shape[0]), nl.float16, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=a)  # MARK
    return a


@nki.jit
def k_dma_transpose_rank5(a):
    t = nl.ndarray((a.shape[4], a.shape[1], a.shape[2], a.shape[3], a.shape[0]), a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=a)  # MARK
    return a


def test_dma_transpose_errors():
    x = _data((4, 8), BF16)
    _raises(NKIVerifyError, k_dma_transpose_bad_shape, "MARK",
            ["nisa.dma_transpose: 'dst' must have the permuted shape [8, 4]"], x)
    _raises(NKIVerifyError, k_dma_transpose_bad_axes, "MARK",
            ["nisa.dma_transpose: axes=(0, 1) is not supported", "(1, 0)"], x)
    _raises(NKIVerifyError, k_dma_transpose_psum, "MARK",
            ["nisa.dma_transpose: operand 'dst' is a tensor in psum", "only accepts sbuf"], x)
    _raises(NKIVerifyError, k_dma_transpose_cast, "MARK",
            ["nisa.dma_transpose: 'dst' dtype float16 differs from 'src' dtype bfloat16"], x)
    _raises(NKIVerifyError, k_dma_transpose_rank5, "MARK",
            ["nisa.dma_transpose: 'src' has rank 5", "ranks 2, 3 and 4"], _data((1, 2, 2, 2, 2), BF16))
    # with dge_mode=hwdge fp32 (and every non-2-byte dtype) is rejected
    _raises(NKIVerifyError, k_dma_transpose, "MARK-T",
            ["nisa.dma_transpose: with dge_mode=hwdge 'src' must have a 2-byte dtype", "float32"],
            _data((16, 8), np.float32), False, True, target="trn2")
    _raises(NKIVerifyError, k_dma_transpose, "MARK-T",
            ["with dge_mode=hwdge 'src' must have a 2-byte dtype", "int8"], _data((16, 8), np.int8),
            False, True, target="trn2")
    # hwdge constraints: trn2+, 2-D src.shape[0] == 16, 3-D (p0 * shape[-2]) % 16, last dim <= 128
    a = _data((16, 128), BF16)
    _raises(NKIVerifyError, k_dma_transpose, "MARK-T", ["dge_mode=hwdge needs trn2", "target is trn1"],
            a, False, True, target="trn1")
    a = _data((8, 128), BF16)
    _raises(NKIVerifyError, k_dma_transpose, "MARK-T", ["a 2-D 'src' needs src.shape[0] == 16, got 8"],
            a, False, True, target="trn2")
    a = _data((2, 3, 64), BF16)
    _raises(NKIVerifyError, k_dma_transpose, "MARK-T", ["a multiple of 16, got [2, 3, 64]"],
            a, False, True, target="trn2")


# ======================================================================= dma_compute


@nki.jit
def k_dma_compute(xs, n, out_dtype, scales, via_sbuf):
    out = nl.ndarray(xs.shape[1:], out_dtype, buffer=nl.shared_hbm)
    srcs = [xs[i] for i in range(n)]
    if via_sbuf:
        srcs = [nl.ndarray(xs.shape[1:], xs.dtype, buffer=nl.sbuf) for i in range(n)]
        for i in range(n):
            nisa.dma_copy(dst=srcs[i], src=xs[i])
    acc = nl.ndarray(xs.shape[1:], out_dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=acc, srcs=srcs, reduce_op=nl.add, scales=scales)  # MARK
    nisa.dma_copy(dst=out, src=acc)
    return out


@pytest.mark.parametrize("dtype", [np.float32, BF16])
@pytest.mark.parametrize("n,shape,via_sbuf", [
    (1, (1, 1), False), (2, (128, 512), True), (3, (7, 1), False), (16, (128, 4), True),
    (5, (2, 3, 4), False),
])
def test_dma_compute(dtype, n, shape, via_sbuf):
    xs = _data((n, *shape), dtype)
    acc = np.zeros(shape, np.float32)
    for i in range(n):  # fp32 accumulation in source order
        acc = (acc + xs[i].astype(np.float32)).astype(np.float32)
    y = k_dma_compute(xs, n, np.dtype(dtype), None, via_sbuf)
    assert y.dtype == dtype
    assert np.array_equal(y, acc.astype(dtype))


def test_dma_compute_scales_and_cast():
    xs = _data((3, 128, 64), BF16)
    ref = xs.astype(np.float32).sum(axis=0, dtype=np.float32)
    y = k_dma_compute(xs, 3, F32, (1.0, 1.0, 1.0), False)
    assert y.dtype == np.float32 and np.allclose(y, ref, rtol=0, atol=1e-5)
    y16 = k_dma_compute(xs, 3, BF16, None, False)  # fp32 sum, then one rounding to bf16
    assert np.array_equal(y16, ref.astype(BF16))


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.dtype(ml_dtypes.float8_e4m3fn)])
def test_dma_compute_special_values_and_no_per_run_temporaries(dtype):
    """NaN, infinities and signed zeros sum as an fp32 accumulator from +0 does (two -0
    sources give +0); a warm run allocates nothing but its output (the accumulator and the
    converted sources are the machine state's scratch: 2 x 4 MiB float32 here)."""
    import tracemalloc
    xs = _data((2, 128, 8192), dtype)
    specials = [np.nan, -0.0, -0.0, 3.0] + ([np.inf, -np.inf] if dtype != np.dtype(ml_dtypes.float8_e4m3fn) else [])
    xs[0, 0, :len(specials)] = np.array(specials, np.float32).astype(dtype)
    xs[1, 0, :len(specials)] = np.array([1.0, -0.0, 2.0, np.nan, 1.0, 2.0][:len(specials)],
                                        np.float32).astype(dtype)
    acc = np.zeros(xs.shape[1:], np.float32) + xs[0].astype(np.float32) + xs[1].astype(np.float32)
    want = acc.astype(dtype)
    y = k_dma_compute(xs, 2, np.dtype(dtype), None, False)
    assert np.array_equal(y.view(np.uint8), want.view(np.uint8))
    tracemalloc.start()
    try:
        y = k_dma_compute(xs, 2, np.dtype(dtype), None, False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < y.nbytes + (2 << 20), peak


@nki.jit
def k_dma_compute_op(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=t, srcs=[a, a], reduce_op=nl.multiply)  # MARK
    return a


@nki.jit
def k_dma_compute_count(a, b):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=t, srcs=[a, b], reduce_op=nl.add)  # MARK
    return a


@nki.jit
def k_dma_compute_psum(a):
    p = nl.ndarray(a.shape, a.dtype, buffer=nl.psum)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=t, srcs=[a, p], reduce_op=nl.add)  # MARK
    return a


def test_dma_compute_errors():
    x = _data((17, 4, 4), np.float32)
    _raises(NKIVerifyError, k_dma_compute, "MARK", ["nisa.dma_compute: 'srcs' has 17 tensors", "1 to 16"],
            x, 17, F32, None, False)
    _raises(NKIVerifyError, k_dma_compute, "MARK",
            ["nisa.dma_compute: scales must all be 1.0", "[1.0, 2.0]"],
            x[:2], 2, F32, (1.0, 2.0), False)
    _raises(NKIVerifyError, k_dma_compute, "MARK", ["nisa.dma_compute: scales has 1 entries but there are 2"],
            x[:2], 2, F32, (1.0,), False)
    a = x[0]
    _raises(NKIVerifyError, k_dma_compute_op, "MARK",
            ["nisa.dma_compute: reduce_op=multiply is not supported", "add"], a)
    _raises(NKIVerifyError, k_dma_compute_count, "MARK",
            ["nisa.dma_compute: 'srcs[1]' has 8 elements but 'dst' has 16"], a, x[0, :2].copy())
    _raises(NKIVerifyError, k_dma_compute_psum, "MARK",
            ["nisa.dma_compute: operand 'srcs[1]' is a tensor in psum", "DMA cannot access PSUM"], a)


# ======================================================================= nc_n_gather


@nki.jit
def k_nc_n_gather(data, idx):
    out = nl.ndarray(idx.shape, data.dtype, buffer=nl.shared_hbm)
    d = nl.ndarray(data.shape, data.dtype, buffer=nl.sbuf)
    i = nl.ndarray(idx.shape, idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=d, src=data)
    nisa.dma_copy(dst=i, src=idx)
    g = nl.ndarray(idx.shape, data.dtype, buffer=nl.sbuf)
    nisa.nc_n_gather(dst=g, data=d, indices=i)  # MARK
    nisa.dma_copy(dst=out, src=g)
    return out


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32])
@pytest.mark.parametrize("dshape,ishape", [
    ((1, 1), (1, 1)), ((128, 512), (128, 700)), ((5, 4, 8), (5, 3)), ((128, 33), (128, 1)),
    ((16, 2, 3, 4), (16, 2, 5)),
])
def test_nc_n_gather(dtype, dshape, ishape):
    data = _data(dshape, dtype)
    f = int(np.prod(dshape[1:]))
    idx = RNG.integers(0, f, size=ishape).astype(np.uint32)
    ref = np.empty(ishape, dtype)
    for p in range(ishape[0]):
        flat = data[p].reshape(-1)
        for j in np.ndindex(*ishape[1:]):
            ref[(p, *j)] = flat[idx[(p, *j)]]
    y = k_nc_n_gather(data, idx)
    assert y.dtype == dtype and np.array_equal(y, ref)


def test_nc_n_gather_runtime_out_of_range():
    data = _data((4, 10), np.float32)
    idx = np.zeros((4, 3), np.uint32)
    idx[2, 1] = 10
    err = _raises(NKIRuntimeError, k_nc_n_gather, "MARK",
                  ["nisa.nc_n_gather", "'indices' value 10 at partition 2, position 1 is out of range [0, 10)"],
                  data, idx)
    assert "nisa.nc_n_gather(dst=g, data=d, indices=i)" in str(err)


@nki.jit
def k_nc_n_gather_bad(data, idx, out_dtype, in_psum):
    d = nl.ndarray(data.shape, data.dtype, buffer=nl.sbuf)
    i = nl.ndarray(idx.shape, idx.dtype, buffer=nl.sbuf)
    g = nl.ndarray(idx.shape, out_dtype, buffer=nl.psum if in_psum else nl.sbuf)
    nisa.nc_n_gather(dst=g, data=d, indices=i)  # MARK
    return data


def test_nc_n_gather_errors():
    data = _data((4, 10), np.float32)
    _raises(NKIVerifyError, k_nc_n_gather_bad, "MARK", ["nisa.nc_n_gather: 'indices' must be uint32, got int32"],
            data, np.zeros((4, 3), np.int32), F32, False)
    _raises(NKIVerifyError, k_nc_n_gather_bad, "MARK",
            ["nisa.nc_n_gather: 'dst' dtype bfloat16 differs from 'data' dtype float32"],
            data, np.zeros((4, 3), np.uint32), BF16, False)
    _raises(NKIVerifyError, k_nc_n_gather_bad, "MARK",
            ["nisa.nc_n_gather: operand 'dst' is a tensor in psum", "only accepts sbuf"],
            data, np.zeros((4, 3), np.uint32), F32, True)


# ====================================================================== local_gather


def _local_gather_ref(src, index, elems, valid):
    """NumPy reference from the NKI local_gather page: per 16-partition core, indices are read
    partition dim first; each partition gathers ``elems`` contiguous elements at each index."""
    P = src.shape[0]
    flat_src = src.reshape(P, -1)
    flat_idx = index.reshape(P, -1)
    out = np.empty((P, valid * elems), src.dtype)
    for core in range(P // 16):
        rows = slice(16 * core, 16 * core + 16)
        ids = flat_idx[rows].flatten(order="F")[:valid]
        for p in range(16 * core, 16 * core + 16):
            for k, i in enumerate(ids):
                out[p, k * elems:(k + 1) * elems] = flat_src[p, int(i):int(i) + elems]
    return out


@nki.jit
def k_local_gather(src, index, elems, valid):
    n = index.shape[1] * 16 if valid == None else valid  # noqa: E711
    out = nl.ndarray((src.shape[0], n * elems), src.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(src.shape, src.dtype, buffer=nl.sbuf)
    i = nl.ndarray(index.shape, index.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=src)
    nisa.dma_copy(dst=i, src=index)
    g = nl.ndarray((src.shape[0], n * elems), src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=s, index=i, num_elem_per_idx=elems, num_valid_indices=valid)  # MARK
    nisa.dma_copy(dst=out, src=g)
    return out


@pytest.mark.parametrize("dtype", [np.float32, BF16])
@pytest.mark.parametrize("P,F,n_idx,elems,valid", [
    (16, 64, 1, 1, None), (16, 64, 4, 4, 50), (128, 2048, 4, 4, None), (32, 256, 2, 32, 7),
    (16, 4096, 256, 1, None),   # the maximum: 4096 indices per GpSimd core
    (128, 40, 1, 8, 1),
])
def test_local_gather(dtype, P, F, n_idx, elems, valid):
    src = _data((P, F), dtype)
    index = RNG.integers(0, F - elems + 1, size=(P, n_idx)).astype(np.uint16)
    nv = 16 * n_idx if valid is None else valid
    y = k_local_gather(src, index, elems, valid)
    assert y.dtype == dtype and np.array_equal(y, _local_gather_ref(src, index, elems, nv))


def test_local_gather_aws_example_shapes():
    """The NKI doc example: src (128, 512, 4), index (128, 4) of row ids * 4, 64 valid, 4 per index."""
    src = _data((128, 512, 4), np.float32)
    rows = np.tile(RNG.integers(0, 512, size=(16, 4)), (8, 1))
    index = (rows * 4).astype(np.uint16)
    y = k_local_gather(src, index, 4, 64)
    ref = np.empty((128, 64, 4), np.float32)
    for core in range(8):
        r = slice(16 * core, 16 * core + 16)
        ref[r] = np.take(src[r], rows[r].flatten(order="F")[:64], axis=1)
    assert np.array_equal(y.reshape(128, 64, 4), ref)


def test_local_gather_runtime_out_of_range():
    src = _data((16, 8), np.float32)
    index = np.zeros((16, 1), np.uint16)
    index[3, 0] = 6
    _raises(NKIRuntimeError, k_local_gather, "MARK",
            ["nisa.local_gather: 'index' value 6", "num_elem_per_idx=4 reads past the 8 elements"],
            src, index, 4, None)


@nki.jit
def k_local_gather_bad(src, index, dst_free, elems):
    s = nl.ndarray(src.shape, src.dtype, buffer=nl.sbuf)
    i = nl.ndarray(index.shape, index.dtype, buffer=nl.sbuf)
    g = nl.ndarray((src.shape[0], dst_free), src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=s, index=i, num_elem_per_idx=elems)  # MARK
    return src


def test_local_gather_errors():
    src = _data((16, 64), np.float32)
    _raises(NKIVerifyError, k_local_gather_bad, "MARK",
            ["nisa.local_gather: num_elem_per_idx=3 is not supported", "1, 2, 4, 8, 16, 32"],
            src, np.zeros((16, 1), np.uint16), 48, 3)
    _raises(NKIVerifyError, k_local_gather_bad, "MARK",
            ["nisa.local_gather: 'src_buffer' has 24 partitions", "multiple of 16"],
            _data((24, 64), np.float32), np.zeros((24, 1), np.uint16), 16, 1)
    _raises(NKIVerifyError, k_local_gather_bad, "MARK", ["nisa.local_gather: 'index' must be uint16, got uint32"],
            src, np.zeros((16, 1), np.uint32), 16, 1)
    _raises(NKIVerifyError, k_local_gather_bad, "MARK",
            ["nisa.local_gather: 'index' gives 4112 indices per GpSimd core, more than the limit of 4096"],
            src, np.zeros((16, 257), np.uint16), 4112, 1)
    _raises(NKIVerifyError, k_local_gather_bad, "MARK",
            ["nisa.local_gather: 'dst' must hold num_valid_indices * num_elem_per_idx = 16 * 2 = 32"],
            src, np.zeros((16, 1), np.uint16), 16, 2)


# ================================================================== nc_stream_shuffle


@nki.jit
def k_shuffle(src, init, mask, in_place):
    out = nl.ndarray(init.shape, init.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(src.shape, src.dtype, buffer=nl.sbuf)
    d = nl.ndarray(init.shape, init.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=src)
    nisa.dma_copy(dst=d, src=init)
    if in_place:
        nisa.nc_stream_shuffle(dst=d, src=d, shuffle_mask=mask)
    else:
        nisa.nc_stream_shuffle(dst=d, src=s, shuffle_mask=mask)  # MARK
    nisa.dma_copy(dst=out, src=d)
    return out


def _shuffle_ref(src, init, mask):
    out = init.copy()
    pd, ps = init.shape[0], src.shape[0]
    for q in range(-(-max(pd, ps) // 32)):
        for i, m in enumerate(mask):
            if m != 255 and q * 32 + i < pd:
                out[q * 32 + i] = src[q * 32 + m]
    return out


def _mask(rng, keep):
    m = rng.permutation(32)
    m[rng.choice(32, size=keep, replace=False)] = 255
    return tuple(int(v) for v in m)


@pytest.mark.parametrize("dtype", [np.float32, BF16])
@pytest.mark.parametrize("P,free,keep", [(32, (1,), 0), (128, (512,), 5), (64, (3, 4), 31), (96, (7,), 10)])
def test_nc_stream_shuffle(dtype, P, free, keep):
    src, init = _data((P, *free), dtype), _data((P, *free), dtype)
    mask = _mask(RNG, keep)
    y = k_shuffle(src, init, mask, False)
    assert np.array_equal(y, _shuffle_ref(src, init, mask))
    y2 = k_shuffle(src, init, mask, True)  # in place: dst is src
    assert np.array_equal(y2, _shuffle_ref(init, init, mask))


def test_nc_stream_shuffle_one_partition_and_broadcast():
    src, init = _data((1, 8), np.float32), _data((1, 8), np.float32)
    mask = (0,) + (255,) * 31
    assert np.array_equal(k_shuffle(src, init, mask, False), src)
    # 32 dst partitions all reading src partition 0 (a partition broadcast)
    src, init = _data((32, 8), np.float32), _data((32, 8), np.float32)
    y = k_shuffle(src, init, (0,) * 32, False)
    assert np.array_equal(y, np.repeat(src[:1], 32, axis=0))


def test_nc_stream_shuffle_errors():
    a = _data((32, 4), np.float32)
    _raises(NKIVerifyError, k_shuffle, "MARK", ["nisa.nc_stream_shuffle: shuffle_mask has 31 entries", "exactly 32"],
            a, a, tuple(range(31)), False)
    _raises(NKIVerifyError, k_shuffle, "MARK", ["nisa.nc_stream_shuffle: shuffle_mask[3]=40 is out of range"],
            a, a, (0, 1, 2, 40) + tuple(range(4, 32)), False)
    _raises(NKIVerifyError, k_shuffle, "MARK",
            ["nisa.nc_stream_shuffle: 'dst' dtype bfloat16 differs from 'src' dtype float32"],
            a, a.astype(BF16), tuple(range(32)), False)
    _raises(NKIVerifyError, k_shuffle, "MARK",
            ["nisa.nc_stream_shuffle: shuffle_mask[1]=1 makes dst partition 1 read src partition 1",
             "'src' has 1 partitions"],
            a[:1], a, tuple(range(32)), False)
    _raises(NKIVerifyError, k_shuffle, "MARK", ["nisa.nc_stream_shuffle: per-partition element counts differ"],
            a, _data((32, 5), np.float32), tuple(range(32)), False)


# =========================================================== dma_copy: hwdge, engine, priority


@nki.jit
def k_dma_copy_modes(a, out_dtype, dge, eng, prio):
    out = nl.ndarray(a.shape, out_dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, out_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=dge, engine=eng, priority=prio)  # MARK
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("dtype", [np.float32, BF16])
@pytest.mark.parametrize("eng", [None, nisa.engine.sync, nisa.engine.scalar])
def test_dma_copy_hwdge(dtype, eng):
    a = _data((128, 64), dtype)
    dt = np.dtype(dtype)
    y = nki.compile(k_dma_copy_modes, a, dt, nisa.dge_mode.hwdge, eng, 1, target="trn2")(
        a, dt, nisa.dge_mode.hwdge, eng, 1)
    assert y.dtype == dtype and np.array_equal(y, a)


def test_dma_copy_priority_and_swdge_cast():
    a = _data((4, 8), np.float32)
    y = k_dma_copy_modes(a, BF16, nisa.dge_mode.swdge, None, 3)
    assert np.array_equal(y, a.astype(BF16))  # non-hwdge modes still convert through fp32


def test_dma_copy_hwdge_errors():
    a = _data((4, 8), np.float32)
    _raises(NKIVerifyError, k_dma_copy_modes, "MARK", ["nisa.dma_copy: dge_mode=hwdge needs trn2", "target is trn1"],
            a, F32, nisa.dge_mode.hwdge, None, None, target="trn1")
    _raises(NKIVerifyError, k_dma_copy_modes, "MARK",
            ["nisa.dma_copy: dge_mode=hwdge needs equal dtypes", "'dst' is bfloat16 and 'src' is float32"],
            a, BF16, nisa.dge_mode.hwdge, None, None)
    _raises(NKITypeError, k_dma_copy_modes, "MARK",
            ["nisa.dma_copy: engine=sync is only valid with dge_mode=hwdge"],
            a, F32, None, nisa.engine.sync, None)
    _raises(NKIVerifyError, k_dma_copy_modes, "MARK", ["nisa.dma_copy: engine=vector is not supported", "sync or scalar"],
            a, F32, nisa.dge_mode.hwdge, nisa.engine.vector, None)
    _raises(NKITypeError, k_dma_copy_modes, "MARK", ["nisa.dma_copy: priority must be a DMA QoS level 0..3, got 5"],
            a, F32, None, None, 5)


# ================================================================ IR text round trip


def test_movement_ops_survive_the_artifact_round_trip():
    """The compiled nisa text (re-parsed by the runtime) keeps every op, dma_compute's list too."""
    xs = _data((3, 4, 4), np.float32)
    ck = nki.compile(k_dma_compute, xs, 3, F32, None, True)
    text = ck.ir("nisa")
    assert "nisa.dma_compute(dst=memref<4x4xf32, #nisa.mem<sbuf>>" in text and "srcs=[" in text
    assert np.array_equal(ck(xs, 3, F32, None, True), xs.sum(axis=0, dtype=np.float32))


# ======================================================== argument kinds (frontend errors)


@nki.jit
def k_bad_args(a, which):
    t = nl.ndarray((a.shape[1], a.shape[0]), a.dtype, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    if which == 0:
        nisa.dma_compute(dst=u, srcs=a, reduce_op=nl.add)  # MARK-0
    if which == 1:
        nisa.nc_stream_shuffle(dst=u, src=u, shuffle_mask=3)  # MARK-1
    if which == 2:
        nisa.dma_transpose(dst=t, src=a, axes=(1.0, 0))  # MARK-2
    if which == 3:
        nisa.local_gather(dst=u, src_buffer=u, index=u, num_elem_per_idx=2.0)  # MARK-3
    if which == 4:
        nisa.dma_transpose(dst=t, src=a, priority=4)  # MARK-4
    if which == 5:
        nisa.dma_transpose(dst=t, src=a, dge_mode=nisa.dge_mode.swdge)  # MARK-5
    if which == 6:
        nisa.dma_compute(dst=u, srcs=[a], reduce_op=nl.add, scales=(1.0, "x"))  # MARK-6
    return a


def test_movement_argument_errors():
    a = _data((16, 32), BF16)
    _raises(NKITypeError, k_bad_args, "MARK-0", ["nisa.dma_compute: srcs must be a list of tensors"], a, 0)
    _raises(NKITypeError, k_bad_args, "MARK-1",
            ["nisa.nc_stream_shuffle: shuffle_mask must be a list of compile-time integers, got 3"], a, 1)
    _raises(NKITypeError, k_bad_args, "MARK-2", ["nisa.dma_transpose: axes[0] must be a compile-time integer"], a, 2)
    _raises(NKITypeError, k_bad_args, "MARK-3",
            ["nisa.local_gather: num_elem_per_idx must be a compile-time integer, got 2.0"], a, 3)
    _raises(NKIVerifyError, k_bad_args, "MARK-4", ["nisa.dma_transpose: priority=4 is out of range", "0..3"], a, 4)
    _raises(NKIVerifyError, k_bad_args, "MARK-5",
            ["nisa.dma_transpose: dge_mode=swdge is not supported for a direct transpose"], a, 5)
    _raises(NKITypeError, k_bad_args, "MARK-6", ["nisa.dma_compute: scales must be a list of compile-time numbers"],
            a, 6)
