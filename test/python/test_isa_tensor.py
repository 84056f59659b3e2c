"""Tensor engine: nisa.nc_matmul (dtypes, accumulate, is_transpose, double_row, row tiling,
trn3 limits) and the trn3 MX instructions nisa.quantize_mx / nisa.nc_matmul_mx.

References are plain NumPy (float64 matmuls of the exactly representable inputs, ml_dtypes
casts, an independent MX quantizer written with log2/floor), never our own output.
Semantics: nki_spec.md sections 2.3, 3 and 5.4.
"""
import inspect

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError, NKIRuntimeError

F32, BF16, F16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
E4M3, E5M2, E4M3FN = (np.dtype(ml_dtypes.float8_e4m3), np.dtype(ml_dtypes.float8_e5m2),
                      np.dtype(ml_dtypes.float8_e4m3fn))
FILE = inspect.getsourcefile(lambda: 0)
RNG = np.random.default_rng(7)


def rand(shape, dt=F32, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32).astype(dt)


def ref_mm(a, b):
    """float64 stationary^T @ moving (the inputs are exact in float64)."""
    return a.astype(np.float64).T @ b.astype(np.float64)


# =============================================================================== kernels


@nki.jit
def mm(a, b, d, transpose, double, row_pos, row_size, col_size, accumulate, col_pos=0):
    """One nc_matmul into a PSUM tile shaped/typed like ``d``; returns the tile in d's dtype.

    Compile-time switches: ``transpose`` (is_transpose), ``double`` (perf_mode=double_row),
    ``row_size`` > 0 turns on tiling mode (tile_size=(row_size, col_size), tile_position=(row_pos, col_pos)),
    ``accumulate`` 0/1/2 = None/True/False.
    """
    out = nl.ndarray(d.shape, d.dtype, buffer=nl.shared_hbm)
    sa = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    sb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sa, src=a)
    nisa.dma_copy(dst=sb, src=b)
    ps = nl.ndarray(d.shape, d.dtype, buffer=nl.psum)
    pos = ()
    size = ()
    if row_size > 0:
        pos = (row_pos, col_pos)
        size = (row_size, col_size)
    perf = nisa.matmul_perf_mode.none
    if double:
        perf = nisa.matmul_perf_mode.double_row
    acc = None
    if accumulate == 1:
        nisa.memset(dst=ps, value=0.0)
        acc = True
    if accumulate == 2:
        acc = False
    nisa.nc_matmul(dst=ps, stationary=sa, moving=sb, is_transpose=transpose, tile_position=pos, tile_size=size, perf_mode=perf, accumulate=acc, is_moving_onezero=transpose)  # E:mm
    r = nl.ndarray(d.shape, d.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


def run_mm(a, b, d, target=None, transpose=False, double=False, row_pos=0, row_size=0,
           col_size=128, accumulate=0, col_pos=0):
    args = (a, b, d, transpose, double, row_pos, row_size, col_size, accumulate, col_pos)
    return nki.compile(mm, *args, target=target)(*args)


@nki.jit
def mm_over_k(a, b, accumulate):
    """out = a^T @ b with K = a.shape[0] split in 128-row tiles accumulated in one PSUM tile;
    ``accumulate`` 0/1/2 = None/True (after a memset 0)/False (keeps the last tile only).

    Overwriting one PSUM tile in every iteration is an output dependence, so mode 2 needs a
    ``sequential_range`` (in an ``affine_range`` it is ``err_unexpected_output_dependencies``)."""
    K, M = a.shape
    N = b.shape[1]
    out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
    if accumulate == 1:
        nisa.memset(dst=ps, value=0.0)
    loop = nl.sequential_range if accumulate == 2 else nl.affine_range
    for k in loop(K // 128):
        sa = nl.ndarray((128, M), a.dtype, buffer=nl.sbuf)
        sb = nl.ndarray((128, N), b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=sa, src=a[nl.ds(k * 128, 128), :])
        nisa.dma_copy(dst=sb, src=b[nl.ds(k * 128, 128), :])
        if accumulate == 0:
            nisa.nc_matmul(dst=ps, stationary=sa, moving=sb)
        if accumulate == 1:
            nisa.nc_matmul(dst=ps, stationary=sa, moving=sb, accumulate=True)
        if accumulate == 2:
            nisa.nc_matmul(dst=ps, stationary=sa, moving=sb, accumulate=False)
    r = nl.ndarray((M, N), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def quantize(x, q, c):
    """quantize_mx of x into tiles typed/shaped like q (data) and c (scales); returns both."""
    q_out = nl.ndarray(q.shape, q.dtype, buffer=nl.shared_hbm)
    c_out = nl.ndarray(c.shape, c.dtype, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    sq = nl.ndarray(q.shape, q.dtype, buffer=nl.sbuf)
    sc = nl.ndarray(c.shape, c.dtype, buffer=nl.sbuf)
    nisa.quantize_mx(dst=sq, src=sx, dst_scale=sc)  # E:quantize
    nisa.dma_copy(dst=q_out, src=sq)
    nisa.dma_copy(dst=c_out, src=sc)
    return q_out, c_out


@nki.jit
def quantize_matmul(x, y, qx, qy, cx, cy, d):
    """quantize_mx x and y (into tiles like qx/cx and qy/cy), then nc_matmul_mx into a PSUM
    tile like d (fp32 or bf16); returns the product as float32."""
    out = nl.ndarray(d.shape, nl.float32, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    sy = nl.ndarray(y.shape, y.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    nisa.dma_copy(dst=sy, src=y)
    tqx = nl.ndarray(qx.shape, qx.dtype, buffer=nl.sbuf)
    tqy = nl.ndarray(qy.shape, qy.dtype, buffer=nl.sbuf)
    tcx = nl.ndarray(cx.shape, cx.dtype, buffer=nl.sbuf)
    tcy = nl.ndarray(cy.shape, cy.dtype, buffer=nl.sbuf)
    nisa.quantize_mx(dst=tqx, src=sx, dst_scale=tcx)
    nisa.quantize_mx(dst=tqy, src=sy, dst_scale=tcy)
    ps = nl.ndarray(d.shape, d.dtype, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=ps, stationary=tqx, moving=tqy, stationary_scale=tcx, moving_scale=tcy)
    r = nl.ndarray(d.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def matmul_mx(s, m, cs, cm, d, row_pos, row_size, accumulate):
    """nc_matmul_mx of packed HBM inputs s/m with scale tiles cs/cm into a PSUM tile like d;
    ``accumulate`` 0/1 = None / True twice (the product is added onto itself)."""
    out = nl.ndarray(d.shape, nl.float32, buffer=nl.shared_hbm)
    ts = nl.ndarray(s.shape, s.dtype, buffer=nl.sbuf)
    tm = nl.ndarray(m.shape, m.dtype, buffer=nl.sbuf)
    tcs = nl.ndarray(cs.shape, cs.dtype, buffer=nl.sbuf)
    tcm = nl.ndarray(cm.shape, cm.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ts, src=s)
    nisa.dma_copy(dst=tm, src=m)
    nisa.dma_copy(dst=tcs, src=cs)
    nisa.dma_copy(dst=tcm, src=cm)
    ps = nl.ndarray(d.shape, d.dtype, buffer=nl.psum)
    pos = None
    size = None
    if row_size > 0:
        pos = (row_pos, 0)
        size = (row_size, 128)
    if accumulate == 0:
        nisa.nc_matmul_mx(dst=ps, stationary=ts, moving=tm, stationary_scale=tcs, moving_scale=tcm, tile_position=pos, tile_size=size)  # E:mx
    if accumulate == 1:
        nisa.nc_matmul_mx(dst=ps, stationary=ts, moving=tm, stationary_scale=tcs, moving_scale=tcm)
        nisa.nc_matmul_mx(dst=ps, stationary=ts, moving=tm, stationary_scale=tcs, moving_scale=tcm, accumulate=True)
    r = nl.ndarray(d.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


def run3(kernel, *args):
    return nki.compile(kernel, *args, target="trn3")(*args)


# ========================================================================= nc_matmul numerics

SHAPES = [(1, 1, 1), (1, 128, 512), (128, 128, 512), (128, 1, 1), (128, 128, 1), (7, 3, 5), (64, 96, 200)]


@pytest.mark.parametrize("dt", [F32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("K,M,N", SHAPES)
def test_matmul_shapes(dt, K, M, N):
    a, b = rand((K, M), dt), rand((K, N), dt)
    out = run_mm(a, b, np.zeros((M, N), F32))
    np.testing.assert_allclose(out, ref_mm(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sdt,mdt,target", [
    (E4M3, E4M3, None), (E5M2, E4M3, None), (E4M3, BF16, None), (F16, BF16, None), (F16, F16, "trn1"),
    (E4M3FN, E4M3FN, "trn3"), (E4M3FN, E5M2, "trn3"), (BF16, E4M3FN, "trn3")])
def test_matmul_input_dtypes(sdt, mdt, target):
    a, b = rand((128, 64), sdt), rand((128, 128), mdt)
    out = run_mm(a, b, np.zeros((64, 128), F32), target=target)
    np.testing.assert_allclose(out, ref_mm(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("N,dst", [(4096, F32), (8192, BF16), (300, BF16)])
def test_trn3_moving_maxima_and_bf16_psum(N, dst):
    a, b = rand((128, 128), BF16), rand((128, N), BF16)
    out = run_mm(a, b, np.zeros((128, N), dst), target="trn3")
    ref = ref_mm(a, b)
    if dst == BF16:  # fp32 accumulation rounded once to bf16 (half an ulp, 2^-9 relative)
        assert out.dtype == BF16
        np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2 ** -8, atol=1e-5)
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


def test_bf16_psum_accumulate_rounds_back_after_each_add():
    """trn3 bf16 PSUM with accumulate=True onto memset 0: upcast, add in fp32, round to bf16."""
    a, b = rand((128, 8), BF16), rand((128, 16), BF16)
    out = run_mm(a, b, np.zeros((8, 16), BF16), target="trn3", accumulate=1)
    assert out.dtype == BF16
    np.testing.assert_allclose(out.astype(np.float64), ref_mm(a, b), rtol=2 ** -8, atol=1e-5)


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["none", "true", "false"])
def test_accumulate_modes_over_k(mode):
    a, b = rand((384, 32), BF16), rand((384, 64), BF16)
    out = mm_over_k(a, b, mode)
    ref = ref_mm(a[256:], b[256:]) if mode == 2 else ref_mm(a, b)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


# ------------------------------------------------------------------------- is_transpose


SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 1.5, -3.25, 1e-30, 6e4], np.float32)


@pytest.mark.parametrize("dt,K,M", [(F32, 128, 128), (BF16, 1, 1), (BF16, 128, 64), (F16, 5, 128)])
def test_transpose_is_bit_exact(dt, K, M):
    a = rand((K, M), dt)
    flat = a.reshape(-1)
    flat[:min(flat.size, SPECIALS.size)] = SPECIALS[:flat.size].astype(dt)
    ident = np.eye(K, dtype=dt)
    out = run_mm(a, ident, np.zeros((M, K), dt), transpose=True)
    np.testing.assert_array_equal(out.view(np.uint8), np.ascontiguousarray(a.T).view(np.uint8))


@pytest.mark.parametrize("dt", [E4M3, E5M2])
def test_fp8_transpose_16bit_output_has_a_zero_high_byte(dt):
    a = rand((32, 16), dt)
    ident = np.eye(32, dtype=dt)
    codes = np.ascontiguousarray(a.T).view(np.uint8)
    raw = run_mm(a, ident, np.zeros((16, 32), np.uint16), transpose=True)
    np.testing.assert_array_equal(raw, codes.astype(np.uint16))
    same = run_mm(a, ident, np.zeros((16, 32), dt), transpose=True)
    np.testing.assert_array_equal(same.view(np.uint8), codes)


def test_transpose_needs_an_identity_moving():
    a = rand((16, 8), BF16)
    with pytest.raises(NKIRuntimeError, match="'moving' must hold the \\[16, 16\\] identity"):
        run_mm(a, 2 * np.eye(16, dtype=BF16), np.zeros((8, 16), BF16), transpose=True)


# ----------------------------------------------------------------------- double_row, tiling


@pytest.mark.parametrize("sdt,mdt,M,N", [(E4M3, E4M3, 128, 512), (E5M2, E4M3, 1, 3), (E4M3, E5M2, 17, 1)])
def test_double_row_contracts_over_partitions_times_two(sdt, mdt, M, N):
    a, b = rand((128, 2, M), sdt), rand((128, 2, N), mdt)
    out = run_mm(a, b, np.zeros((M, N), F32), double=True)
    ref = np.einsum("kjm,kjn->mn", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("K,row_pos,row_size,target", [
    (64, 64, 64, None), (64, 0, 64, "trn1"), (32, 96, 32, None), (20, 32, 32, None), (128, 0, 128, None)])
def test_row_tiling(K, row_pos, row_size, target):
    a, b = rand((K, 48), BF16), rand((K, 40), BF16)
    out = run_mm(a, b, np.zeros((48, 40), F32), target=target, row_pos=row_pos, row_size=row_size)
    np.testing.assert_allclose(out, ref_mm(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,col_pos,col_size,row_size,target", [
    (32, 96, 32, 128, None), (32, 32, 32, 32, None), (64, 64, 64, 64, "trn1"), (1, 0, 32, 128, None)])
def test_column_tiling(M, col_pos, col_size, row_size, target):
    """Column tiling (nki-library's router_topk uses tile_size=(128, 32)) only picks PE
    columns: the values are the plain matmul's."""
    K = min(row_size, 32)
    a, b = rand((K, M), BF16), rand((K, 40), BF16)
    out = run_mm(a, b, np.zeros((M, 40), F32), target=target, row_size=row_size,
                 col_size=col_size, col_pos=col_pos)
    np.testing.assert_allclose(out, ref_mm(a, b), rtol=1e-5, atol=1e-5)


# ============================================================================= MX (trn3)


def np_quantize_mx(x, emax):
    """Independent MX reference: codes [P/8, F/4] and fp8 values [P, F] (float64)."""
    P, F = x.shape
    g = np.abs(x.astype(np.float64)).reshape(P // 8, 8, F // 4, 4).max(axis=(1, 3))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(g))
    code = np.where(g == 0, 0, np.clip(e + 127 - (emax - 1), 0, 254)).astype(np.uint8)
    scale = np.repeat(np.repeat(2.0 ** (code.astype(np.float64) - 127), 8, 0), 4, 1)
    return code, x.astype(np.float64) / scale, scale


def hw_scale_rows(P):
    return [32 * (g // 4) + g % 4 for g in range(P // 8)]


@pytest.mark.parametrize("x4,vdt,emax", [(nl.float8_e4m3fn_x4, E4M3FN, 8), (nl.float8_e5m2_x4, E5M2, 15)],
                         ids=["e4m3fn", "e5m2"])
@pytest.mark.parametrize("P,F,sdt", [(32, 4, np.uint8), (128, 64, nl.float8_e8m0fnu), (64, 512, np.uint8)])
def test_quantize_mx_matches_numpy(x4, vdt, emax, P, F, sdt):
    x = rand((P, F), BF16, -100, 100)
    x[:8, :4] = 0  # an all-zero group -> 2^-127 (code 0)
    x[8:16, :4] = x[8:16, :4] * 1e-3
    sp = 4 if P == 32 else P
    q, c = run3(quantize, x, np.zeros((P, F // 4), x4), np.zeros((sp, F // 4), sdt))
    code, vals, _ = np_quantize_mx(x, emax)
    assert code[0, 0] == 0
    np.testing.assert_array_equal(c.view(np.uint8)[hw_scale_rows(P)], code)
    want = vals.astype(np.float32).astype(vdt).view(np.uint8).reshape(P, F)
    np.testing.assert_array_equal(q.view(np.uint8).reshape(P, F), want)


@pytest.mark.parametrize("K,M,N,dst", [(32, 2, 1, F32), (128, 128, 512, F32), (64, 16, 40, BF16),
                                       (128, 128, 4096, F32)])
def test_quantize_then_matmul_mx_round_trip(K, M, N, dst):
    x, y = rand((K, 4 * M), BF16), rand((K, 4 * N), F16)
    sp = 4 if K == 32 else K
    out = run3(quantize_matmul, x, y, np.zeros((K, M), nl.float8_e4m3fn_x4), np.zeros((K, N), nl.float8_e5m2_x4),
               np.zeros((sp, M), np.uint8), np.zeros((sp, N), nl.float8_e8m0fnu), np.zeros((M, N), dst))
    _, vx, sx = np_quantize_mx(x, 8)
    _, vy, sy = np_quantize_mx(y, 15)
    dx = vx.astype(np.float32).astype(E4M3FN).astype(np.float64) * sx  # dequantized [K, 4M]
    dy = vy.astype(np.float32).astype(E5M2).astype(np.float64) * sy
    ref = np.einsum("kmi,kni->mn", dx.reshape(K, M, 4), dy.reshape(K, N, 4))
    if dst == BF16:
        np.testing.assert_allclose(out, ref.astype(np.float32).astype(BF16).astype(np.float32), rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
    # and the quantization error stays within the fp8 precision of the inputs
    exact = np.einsum("kmi,kni->mn", x.astype(np.float64).reshape(K, M, 4), y.astype(np.float64).reshape(K, N, 4))
    assert np.abs(out - exact).max() <= 0.25 * np.abs(exact).max() + 0.5


def packed(codes, x4):
    """uint8 codes [P, F, 4] -> a packed x4 array [P, F]."""
    return np.ascontiguousarray(codes.astype(np.uint8)).view(x4).reshape(codes.shape[:2])


@pytest.mark.parametrize("row_pos,row_size,accumulate", [(0, 0, 0), (64, 64, 0), (0, 0, 1)])
def test_matmul_mx_fp4_and_fp8_inputs(row_pos, row_size, accumulate):
    K, M, N = 64, 6, 10
    s_codes = RNG.integers(0, 16, (K, M, 4))  # e2m1 codes
    m_codes = RNG.integers(0, 256, (K, N, 4))
    m_codes[(m_codes & 0x7F) == 0x7F] = 0x3C  # no e4m3fn NaN
    cs = RNG.integers(120, 135, (K, M)).astype(np.uint8)  # hardware layout, rows 0-3 and 32-35
    cm = RNG.integers(120, 135, (K, N)).astype(np.uint8)
    args = (packed(s_codes, nl.float4_e2m1fn_x4), packed(m_codes, nl.float8_e4m3fn_x4),
            cs, cm.view(nl.float8_e8m0fnu), np.zeros((M, N), F32), row_pos, row_size, accumulate)
    out = run3(matmul_mx, *args)
    sv = s_codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    mv = m_codes.astype(np.uint8).view(E4M3FN).astype(np.float64)
    rows = hw_scale_rows(K)
    fs = np.repeat(2.0 ** (cs[rows].astype(np.float64) - 127), 8, 0)[:, :, None]
    fm = np.repeat(2.0 ** (cm[rows].astype(np.float64) - 127), 8, 0)[:, :, None]
    ref = np.einsum("kmi,kni->mn", sv * fs, mv * fm) * (2 if accumulate else 1)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


# ======================================================================= negative tests


def _line(tag):
    for i, line in enumerate(open(FILE).read().splitlines(), 1):
        if f"# E:{tag}" in line:
            return i
    raise AssertionError(tag)


def _fails(fn, fragment, tag):
    with pytest.raises(NKIError) as info:
        fn()
    err = info.value
    assert fragment in str(err), str(err)
    assert err.loc is not None and err.loc.line == _line(tag), (err.loc, _line(tag))
    assert "Traceback" not in str(err)


Z = np.zeros


MM_ERRORS = [
    # (a, b, d, options, message fragment)
    (Z((128, 64), np.int8), Z((128, 8), BF16), Z((64, 8), F32), {},
     "'stationary' dtype int8 is not a TensorE input type"),
    (Z((128, 64), F32), Z((128, 8), BF16), Z((64, 8), F32), {}, "fp32/tf32 inputs must pair with fp32/tf32"),
    (Z((128, 64), E4M3FN), Z((128, 8), BF16), Z((64, 8), F32), {}, "float8_e4m3fn (OCP fp8) is a TensorE input on trn3 only"),
    (Z((128, 64), E4M3FN), Z((128, 8), E4M3), Z((64, 8), F32), {"target": "trn3"}, "cannot be mixed"),
    (Z((128, 64), BF16), Z((128, 8), BF16), Z((64, 8), BF16), {}, "PSUM dst must be float32 on trn2, got bfloat16"),
    (Z((128, 64), BF16), Z((128, 8), BF16), Z((64, 8), F16), {"target": "trn3"}, "must be float32 or bfloat16 on trn3"),
    (Z((128, 64), BF16), Z((128, 1024), BF16), Z((64, 1024), F32), {}, "moving free size 1024 exceeds the limit of 512"),
    (Z((128, 64), BF16), Z((128, 4097), BF16), Z((64, 4097), F32), {"target": "trn3"}, "moving free size 4097 exceeds the limit of 4096"),
    (Z((128, 64), BF16), Z((128, 8193), BF16), Z((64, 8193), BF16), {"target": "trn3"}, "moving free size 8193 exceeds the limit of 8192"),
    (Z((128, 129), BF16), Z((128, 8), BF16), Z((128, 8), F32), {}, "stationary free size 129 exceeds the limit of 128"),
    (Z((64, 64), BF16), Z((128, 8), BF16), Z((64, 8), F32), {}, "contraction (partition) sizes differ"),
    (Z((64, 64), BF16), Z((64, 8), BF16), Z((64, 9), F32), {}, "dst must be [64, 8]"),
    # is_transpose
    (Z((64, 32), BF16), Z((64, 64), BF16), Z((32, 64), BF16), {"transpose": True, "target": "trn1"},
     "is_transpose=True (bit-exact TensorE transpose) needs trn2"),
    (Z((64, 32), BF16), Z((64, 64), BF16), Z((32, 64), F32), {"transpose": True}, "dst dtype must be the stationary dtype bfloat16"),
    (Z((64, 32), E4M3), Z((64, 64), E4M3), Z((32, 64), F32), {"transpose": True}, "or uint16/int16"),
    (Z((64, 32), BF16), Z((64, 8), BF16), Z((32, 64), BF16), {"transpose": True}, "'moving' must be the [64, 64] identity"),
    # double_row
    (Z((128, 2, 8), E4M3), Z((128, 2, 8), E4M3), Z((8, 8), F32), {"double": True, "target": "trn1"},
     "perf_mode=double_row needs trn2"),
    (Z((128, 2, 8), BF16), Z((128, 2, 8), BF16), Z((8, 8), F32), {"double": True}, "double_row needs fp8 inputs"),
    (Z((128, 3, 8), E4M3), Z((128, 2, 8), E4M3), Z((8, 8), F32), {"double": True}, "must be [K, 2, F]"),
    (Z((128, 2, 8), E4M3), Z((128, 2, 8), E4M3), Z((8, 8), E4M3), {"double": True, "transpose": True},
     "cannot be combined with is_transpose"),
    # tiling
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_pos": 48, "row_size": 32},
     "tile_position row 48 is not a valid start for a 32-row tile (allowed: 0, 32, 64, 96"),
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_pos": 0, "row_size": 32, "target": "trn1"},
     "a row tile size of 32 needs trn2"),
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_size": 16}, "row size 16 is not supported"),
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_size": 64, "col_size": 48},
     "tile_size column size 48 is not supported"),
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_size": 64, "col_size": 32, "target": "trn1"},
     "a column tile size of 32 needs trn2"),
    (Z((32, 8), BF16), Z((32, 8), BF16), Z((8, 8), F32), {"row_size": 64, "col_size": 32, "col_pos": 16},
     "tile_position column 16 is not a valid start for a 32-column tile (allowed: 0, 32, 64, 96"),
    (Z((32, 40), BF16), Z((32, 8), BF16), Z((40, 8), F32), {"row_size": 64, "col_size": 32},
     "stationary free size 40 exceeds the column tile size 32"),
    (Z((32, 2, 8), E4M3), Z((32, 2, 8), E4M3), Z((8, 8), F32), {"double": True, "row_size": 64, "col_size": 64},
     "perf_mode=double_row cannot be combined with column tiling"),
    (Z((128, 8), BF16), Z((128, 8), BF16), Z((8, 8), F32), {"row_size": 64}, "contraction (partition) size 128 exceeds the row tile size 64"),
]


@pytest.mark.parametrize("a,b,d,opts,fragment", MM_ERRORS, ids=[c[4][:40] for c in MM_ERRORS])
def test_nc_matmul_errors(a, b, d, opts, fragment):
    _fails(lambda: run_mm(a, b, d, **opts), fragment, "mm")


@nki.jit
def half_tiling(a):
    s = nl.ndarray((32, 8), nl.bfloat16, buffer=nl.sbuf)
    p = nl.ndarray((8, 8), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=s, moving=s, tile_position=(0, 0))  # E:half
    return a


@nki.jit
def bad_perf_mode(a):
    s = nl.ndarray((32, 8), nl.bfloat16, buffer=nl.sbuf)
    p = nl.ndarray((8, 8), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=s, moving=s, perf_mode=7)  # E:perf (no member has value 7)
    return a


@nki.jit
def loop_tile_position(a):
    s = nl.ndarray((32, 8), nl.bfloat16, buffer=nl.sbuf)
    p = nl.ndarray((8, 8), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        nisa.nc_matmul(dst=p, stationary=s, moving=s, tile_position=(i * 32, 0), tile_size=(32, 128))  # E:loop
    return a


@pytest.mark.parametrize("kernel,fragment,tag", [
    (half_tiling, "tile_position and tile_size must be set together", "half"),
    (bad_perf_mode, "perf_mode must be a nisa.matmul_perf_mode member", "perf"),
])
def test_nc_matmul_argument_errors(kernel, fragment, tag):
    _fails(lambda: kernel(np.zeros((4, 4), np.float32)), fragment, tag)


def test_tile_position_from_a_loop_index_unrolls_the_loop(monkeypatch):
    """tile_position needs compile-time ints: a loop index there unrolls the loop (Python's
    semantics: one instruction per iteration); forced rolled, it is an error saying why."""
    from nki_mlir.frontend.trace_build import last_loop_report
    nki.compile(loop_tile_position, np.zeros((4, 4), np.float32), use_cache=False)
    (what, why), = last_loop_report().values()
    assert what == "unrolled" and "nisa.nc_matmul" in why and "compile-time integers" in why
    monkeypatch.setenv("NKI_MLIR_LOOPS", "roll")
    _fails(lambda: nki.compile(loop_tile_position, np.zeros((4, 4), np.float32), use_cache=False),
           "tile_position entries must be compile-time integers", "loop")


X4_E4 = nl.float8_e4m3fn_x4

QUANT_ERRORS = [
    # (x, q, c, target, fragment)
    (Z((32, 8), BF16), Z((32, 2), X4_E4), Z((4, 2), np.uint8), "trn2", "quantize_mx (MXFP8 quantization) needs trn3"),
    (Z((32, 8), F32), Z((32, 2), X4_E4), Z((4, 2), np.uint8), "trn3", "'src' dtype float32 is not supported"),
    (Z((48, 8), BF16), Z((48, 2), X4_E4), Z((48, 2), np.uint8), "trn3", "'src' has 48 partitions"),
    (Z((32, 6), BF16), Z((32, 1), X4_E4), Z((4, 1), np.uint8), "trn3", "'src' has 6 elements per partition"),
    (Z((32, 8), BF16), Z((32, 2), nl.float4_e2m1fn_x4), Z((4, 2), np.uint8), "trn3",
     "'dst' dtype float4_e2m1fn_x4 is not supported"),
    (Z((32, 8), BF16), Z((32, 4), X4_E4), Z((4, 2), np.uint8), "trn3", "'dst' must be [32, 2]"),
    (Z((32, 8), BF16), Z((32, 2), X4_E4), Z((4, 2), np.float32), "trn3", "'dst_scale' dtype float32 is not an MX scale type"),
    (Z((64, 8), BF16), Z((64, 2), X4_E4), Z((8, 2), np.uint8), "trn3", "'dst_scale' must be [64, 2]"),
]


@pytest.mark.parametrize("x,q,c,target,fragment", QUANT_ERRORS, ids=[c[4][:40] for c in QUANT_ERRORS])
def test_quantize_mx_errors(x, q, c, target, fragment):
    _fails(lambda: nki.compile(quantize, x, q, c, target=target), fragment, "quantize")


def mx_args(K=64, M=6, N=10, s=X4_E4, m=X4_E4, cs=np.uint8, cm=np.uint8, d=F32, sp=None, row_pos=0, row_size=0):
    sp = sp if sp is not None else (4 if K == 32 else K)
    return (Z((K, M), s), Z((K, N), m), Z((sp, M), cs), Z((sp, N), cm), Z((M, N), d), row_pos, row_size, 0)


MX_ERRORS = [
    (mx_args(), "trn2", "nc_matmul_mx (MXFP8/MXFP4 matmul) needs trn3"),
    (mx_args(s=BF16), "trn3", "'stationary' dtype bfloat16 is not a packed MX type"),
    (mx_args(K=48), "trn3", "'stationary' has 48 partitions; MX data needs a multiple of 32"),
    (mx_args(M=5), "trn3", "stationary free size 5 must be even"),
    (mx_args(N=4097), "trn3", "moving free size 4097 exceeds the limit of 4096"),
    (mx_args(d=F16), "trn3", "PSUM dst must be float32 or bfloat16"),
    (mx_args(cs=F32), "trn3", "'stationary_scale' dtype float32 is not an MX scale type"),
    (mx_args(sp=8), "trn3", "'stationary_scale' must be [64, 6]"),
    (mx_args(row_pos=32, row_size=64), "trn3", "tile_position row 32 is not a valid start for a 64-row tile"),
]


@pytest.mark.parametrize("args,target,fragment", MX_ERRORS, ids=[c[2][:40] for c in MX_ERRORS])
def test_nc_matmul_mx_errors(args, target, fragment):
    _fails(lambda: nki.compile(matmul_mx, *args, target=target), fragment, "mx")
