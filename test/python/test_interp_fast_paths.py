"""The interpreter's fast paths give the results of the plain ones (issue 20): sentinel fills
skipped only where nothing can read them, float32 results written straight into dst, PSUM
accumulated in place."""
import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import numerics as nm
from nki_mlir.runtime.isa_memory import written_first


@nki.jit
def read_before_write(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=x)
    nisa.tensor_tensor(dst=t, data1=t, data2=u, op=nl.add)     # reads t before writing it
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def never_written(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def scale_shift(x, s):
    """y = (x * s[p]) - s[p] with s read through a view of the dst tile itself."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    sc = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sc, src=s)
    nisa.tensor_copy(dst=t[:, 0:1], src=sc)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=t[:, 0:1],
                       op1=nl.subtract, operand1=t[:, 0:1])
    nisa.dma_copy(dst=out, src=t)
    return out


def _plain(ck, *args):
    """One output of a program-order run without hazard checks (where the sentinels show)."""
    return ck.run(args, {}, mode="program-order", hazards=False)[0]


def _allocs(ck):
    from nki_mlir.compiler import parse_module
    from nki_mlir.dialects import nisa as nisa_d
    m = parse_module(ck.ir("nisa"))
    return {op.attributes["nkim.name"].data: op for op in m.walk() if isinstance(op, nisa_d.AllocOp)
            if "nkim.name" in op.attributes}


def test_sentinel_kept_where_a_tile_is_read_before_written():
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(read_before_write, x, use_cache=False)
    allocs = _allocs(ck)
    assert not written_first(allocs["t"]) and written_first(allocs["u"])
    assert np.isnan(_plain(ck, x)).all()
    assert np.isnan(_plain(nki.compile(never_written, x, use_cache=False), x)).all()


def test_f32_dst_computed_in_place_reads_scalar_operands_first():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 64)).astype(np.float32)
    s = rng.standard_normal((128, 1)).astype(np.float32)
    y = _plain(nki.compile(scale_shift, x, s, use_cache=False), x, s)
    xs = x.copy()
    xs[:, :1] = s
    want = xs * s - s          # both operands are the column before the instruction
    np.testing.assert_array_equal(y, want)


def test_exp_in_place_is_float32_exp_and_float32_row_sum():
    """ScalarE computes on float32 inputs in float32 (nki.isa.activation: inputs are cast to
    float32 and the math is float32): the in-place fast path gives NumPy's float32 exp of
    the float32 ``x * scale``, and the accumulated row sums are float32 sums of those values
    (not float64 sums rounded once)."""

    @nki.jit
    def exp_sum(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        tot = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        e = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, bias=None, scale=0.5, reduce_op=nl.add,
                        reduce_res=r, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nisa.dma_copy(dst=out, src=e)
        nisa.dma_copy(dst=tot, src=r)
        return out, tot

    x = np.random.default_rng(1).standard_normal((128, 512)).astype(np.float32)
    e, tot = nki.compile(exp_sum, x, use_cache=False).run((x,), {}, mode="program-order", hazards=False)
    want = np.exp(x * np.float32(0.5))
    assert want.dtype == np.float32
    np.testing.assert_array_equal(e, want)
    np.testing.assert_array_equal(tot[:, 0], np.add.reduce(want, axis=1))
    # float32 exp is within 2 ULP of the exact value rounded once
    exact = np.exp((x * np.float32(0.5)).astype(np.float64)).astype(np.float32)
    ulps = np.abs(e.view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
    assert ulps.max() <= 2


@pytest.mark.parametrize("fn", sorted(nm.ACTIVATION_F64))
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("scaled", [True, False])
def test_float64_activations_in_place_are_the_plain_functions_bit_for_bit(fn, bias, scaled):
    """The float64 in-place path of a float32 dst (range check or not; the input read from
    the source tile, or scaled into dst first) gives the bits of ``nm.ACTIVATION[fn]`` on
    the float32 ``x * scale (+ bias)``."""
    P, F = 128, 64
    rng = np.random.default_rng(7)
    x = rng.uniform(0.1, 1.0, (P, F)).astype(np.float32)      # in every documented range
    sc = rng.uniform(0.5, 1.0, (P, 1)).astype(np.float32)
    b = rng.uniform(0.0, 0.5, (P, 1)).astype(np.float32)

    @nki.jit
    def act(x, sc, b):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        s = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=sc)
        c = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=c, src=b)
        y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=y, op=getattr(nl, fn), data=t, scale=s if scaled else 1.0,
                        bias=c if bias else None)
        nisa.dma_copy(dst=out, src=y)
        return out

    (y,) = nki.compile(act, x, sc, b, use_cache=False).run((x, sc, b), {}, mode="program-order",
                                                        hazards=False)
    z = x * sc if scaled else x
    z = z + b if bias else z
    np.testing.assert_array_equal(y.view(np.uint32), nm.ACTIVATION[fn](z).view(np.uint32))


@nki.jit
def row_sums(x):
    """tensor_reduce add and an activation's add-accumulation over wide SBUF rows."""
    p, f = x.shape
    out = nl.ndarray((p, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    r = nl.ndarray((p, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r[:, 0:1], op=nl.add, data=t, axis=1, keepdims=True)
    sq = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.copy, data=t, reduce_op=nl.add, reduce_res=r[:, 1:2],
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.dma_copy(dst=out, src=r)
    return out


def test_row_sums_do_not_depend_on_the_run_buffer_size():
    """Program.run sets NumPy's ufunc buffer size (RUN_BUFSIZE) for strided elementwise
    speed; the row sums are bit-identical to NumPy's on contiguous data at the default size."""
    import ml_dtypes
    rng = np.random.default_rng(3)
    for f in (100, 512, 1000, 1024, 3000, 8192, 20000):
        for dt in (np.float32, ml_dtypes.bfloat16):
            x = (rng.standard_normal((128, f)) * 100).astype(np.float32).astype(dt)
            got = _plain(nki.compile(row_sums, x, use_cache=False), x)
            x32 = x.astype(np.float32)
            np.testing.assert_array_equal(got[:, 0], np.add.reduce(x32, axis=-1))
            # the activation's accumulator: float32 sums too (ScalarE accumulates fp32)
            np.testing.assert_array_equal(got[:, 1], np.add.reduce(x32, axis=-1))


@nki.jit
def psum_reuse(a_t, b, x):
    """Per iteration: a PSUM tile first written by a transpose (a non-matmul write: its
    matmul-written flags cleared), then a fresh tile accumulated by two auto matmuls, both
    placed over the bytes the previous iteration left marked."""
    out = nl.ndarray((2, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    tr = nl.ndarray((2, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        xs = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=xs, src=x)
        t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=t, data=xs)
        ts = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=ts, src=t)
        nisa.dma_copy(dst=tr[i], src=ts)
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(2):
            lhs = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            rhs = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=lhs, src=a_t[nl.ds(k * 128, 128), :])
            nisa.dma_copy(dst=rhs, src=b[nl.ds(k * 128, 128), :])
            nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
        res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[i], src=res)
    return out, tr


def test_psum_tiles_reused_across_iterations_start_clean():
    """Skipped fills / flag clears and the remembered flags state (issue 20) keep the
    semantics: every iteration's accumulation starts from its first matmul, in program
    order and on the engine queues, run after run."""
    rng = np.random.default_rng(4)
    a_t, b = (rng.standard_normal((256, 128)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((128, 128)).astype(np.float32)
    ck = nki.compile(psum_reuse, a_t, b, x, use_cache=False)
    want = a_t[:128].T @ b[:128] + a_t[128:].T @ b[128:]
    for mode, hz in (("program-order", False), ("queues", True), ("program-order", False)):
        out, tr = ck.run((a_t, b, x), {}, mode=mode, hazards=hz)
        for i in range(2):
            np.testing.assert_allclose(out[i], want, rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(tr[i], x.T)


def _two_tiles(at_a, at_c):
    """c = x (DMA), then tile a placed at ``at_a`` is allocated, c is DMA'd out, then a is
    written whole and DMA'd out: with c over a's bytes the read of c sees a's sentinels."""
    from nki_mlir.runtime.interpreter import decode
    from test_interpreter import Kernel
    k = Kernel()
    x = k.arg("x", (4, 16))
    oc, oa = k.out("oc", (4, 16)), k.out("oa", (4, 16))
    c = k.alloc("c", (4, 16), at=at_c)
    k.dma(c, x)
    a = k.alloc("a", (4, 16), at=at_a)
    k.dma(oc, c)
    k.dma(a, x)
    k.dma(oa, a)
    m = k.module()
    return m, decode(m)


def test_sentinel_fill_skipped_across_instructions_on_other_blocks_only():
    from nki_mlir.runtime import blocks
    x = np.arange(64, dtype=np.float32).reshape(4, 16)
    for at_c, apart in (((0, 4096), True), ((0, 32), False)):
        m, prog = _two_tiles((0, 0), at_c)
        fop = next(op for op in m.walk() if op.name == "func.func")
        a = next(op for op in m.walk() if op.name == "nisa.alloc" and op.result.name_hint == "a")
        assert written_first(a) is None        # without the blocks: an instruction between
        assert (written_first(a, blocks.plan(fop)) == "nisa.dma_copy") is apart
        oc, oa = prog.run([x], mode="program-order", hazards=False)
        np.testing.assert_array_equal(oa, x)
        if apart:
            np.testing.assert_array_equal(oc, x)
        else:       # c's first 32 bytes per row (8 floats) are a's last ones: a's sentinels
            assert np.isnan(oc[:, :8]).all() and (oc[:, 8:] == x[:, 8:]).all()


@pytest.mark.parametrize("layout", ["contiguous", "row-strided", "transposed", "0-d", "small"])
def test_bf16_to_f32_shift_is_the_ml_dtypes_cast(layout):
    """``numerics.to_f32`` converts large bfloat16 arrays by shifting their bits into float32:
    for every one of the 65536 bfloat16 bit patterns (NaN payloads, -0, subnormals, inf) the
    same bits as ``ml_dtypes``' cast, and the same layout as ``np.asarray`` (order K)."""
    every = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    a = {"contiguous": every.reshape(128, 512),
         "row-strided": np.concatenate([every, every]).reshape(128, 1024)[:, 256:768],
         "transposed": every.reshape(256, 256).T,
         "0-d": every[12345:12346].reshape(()),
         "small": every[:100].reshape(10, 10)}[layout]
    got, want = nm.to_f32(a), np.asarray(a, dtype=np.float32)
    assert got.dtype == want.dtype and got.shape == want.shape and got.strides == want.strides
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    if layout in ("contiguous", "row-strided", "transposed"):
        assert a.size >= nm.BF16_SHIFT_MIN        # (the shift path was taken)


@nki.jit
def matmul_writes_arg(a_t, b):
    """tiled_matmul's loops (two output tiles reading each moving tile of b) that also write
    the moving tile back into b after each product: b changes while the kernel runs."""
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(2):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        lhs = nl.ndarray((128, 128), dtype=a_t.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a_t[:, nl.ds(m * 128, 128)])
        nisa.dma_copy(dst=rhs, src=b)
        nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
        twice = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=twice, data1=rhs, data2=rhs, op=nl.add)
        nisa.dma_copy(dst=b, src=twice)
        res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[nl.ds(m * 128, 128), :], src=res)
    return out


def _bf16_operands(rng, k=128, m=256, n=512):
    a_t = rng.standard_normal((k, m)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(ml_dtypes.bfloat16)
    return a_t, b


def test_matmul_converts_each_argument_tile_once_per_run(monkeypatch):
    """A bf16 moving tile forwarded from a read-only kernel argument is converted to float32
    once per run, not once per output tile (isa_matmul._converted), with the same bits."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    from kernels import tiled_matmul
    from nki_mlir.runtime import isa_matmul
    a_t, b = _bf16_operands(np.random.default_rng(3), k=256, m=256, n=512)
    prog = nki.compile(tiled_matmul, a_t, b, use_cache=False).program
    calls = []
    real = nm.to_f32
    monkeypatch.setattr(nm, "to_f32", lambda a: calls.append(a.shape) or real(a))
    got = prog.run([a_t, b], hazards=False)[0]       # program order (forwarding)
    n_cached = calls.count((128, 512))
    monkeypatch.setattr(isa_matmul, "CONVERTED_BYTES", 0)      # keep nothing
    calls.clear()
    plain = prog.run([a_t, b], hazards=False)[0]
    assert np.array_equal(got.view(np.uint32), plain.view(np.uint32))
    want = a_t.astype(np.float32).T @ b.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # 2 K-tiles x 2 M-tiles products read 2 distinct moving tiles: 2 conversions, not 4
    assert n_cached == 2 and calls.count((128, 512)) == 4


@pytest.mark.parametrize("hazards", [False, True])
def test_matmul_operand_copies_not_kept_when_the_kernel_writes_an_argument(hazards):
    """A kernel that writes an argument keeps no operand copies (nor forwards its DMAs): the
    second product reads b doubled, not a stale copy of the first b."""
    a_t, b = _bf16_operands(np.random.default_rng(4))
    b0 = b.copy()
    prog = nki.compile(matmul_writes_arg, a_t, b, use_cache=False).program
    out = prog.run([a_t, b], hazards=hazards)[0]
    f = np.float32
    want0 = a_t[:, :128].astype(f).T @ b0.astype(f)
    want1 = a_t[:, 128:].astype(f).T @ (b0.astype(f) * 2).astype(ml_dtypes.bfloat16).astype(f)
    np.testing.assert_allclose(out[:128], want0, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[128:], want1, rtol=1e-5, atol=1e-4)
