"""The per-target constants table (nki_mlir/perf/targets.py) and the static per-instruction
cost model (nki_mlir/perf/costs.py).

Every expected value is computed by hand below from the documented constants of
``../shared/perf.md`` Part A (trn2: TensorE 2.4 GHz, VectorE 0.96 GHz, ScalarE / GpSimdE
1.2 GHz, MIN_II 64, GPSIMD_START 150, DMA 23 B/ns per engine, HBM 362 B/ns per core; trn1:
2.8 / 1.12 / 1.4 GHz, 17 B/ns; trn3: VectorE 1.2 GHz, 33 B/ns), written out as arithmetic,
not read back from the module under test.  The kernels are compiled with the real pipeline
(or, for layouts a kernel cannot easily produce, written as ``nisa`` IR by hand).
"""
import dataclasses

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.compiler import parse_module
from nki_mlir.dialects.nisa import NISA
from nki_mlir.errors import NKIError
from nki_mlir.perf import costs
from nki_mlir.perf.costs import DmaShape, dma_engine_bytes, dma_engine_shares, instruction_cost
from nki_mlir.perf.targets import SOURCES, TARGETS, TargetModel, constants_table, target_model

BF16 = ml_dtypes.bfloat16
F32 = np.float32
FP8 = ml_dtypes.float8_e4m3
TRN1, TRN2, TRN3 = TARGETS["trn1"], TARGETS["trn2"], TARGETS["trn3"]


def approx(x):
    return pytest.approx(x, rel=1e-9, abs=1e-9)


# ================================================================================ kernels


@nki.jit
def k_matmul(a, b, double):
    """dst[M, N] = a^T @ b with a: [K, M] (stationary), b: [K, N] (moving)."""
    out = nl.ndarray((a.shape[-1], b.shape[-1]), nl.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    sb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sa, src=a)
    nisa.dma_copy(dst=sb, src=b)
    ps = nl.ndarray((a.shape[-1], b.shape[-1]), nl.float32, buffer=nl.psum)
    perf = nisa.matmul_perf_mode.none
    if double:
        perf = nisa.matmul_perf_mode.double_row
    nisa.nc_matmul(dst=ps, stationary=sa, moving=sb, perf_mode=perf)
    r = nl.ndarray(ps.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def k_transpose(x):
    """TensorE transpose of x: [P, F] (SBUF) into PSUM [F, P]."""
    out = nl.ndarray((x.shape[1], x.shape[0]), nl.float32, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    pt = nl.ndarray((x.shape[1], x.shape[0]), nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=pt, data=sx)
    r = nl.ndarray(pt.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=pt)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def k_elementwise(x, y):
    """One of each elementwise instruction on [128, F] tiles of x's dtype."""
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    sy = nl.ndarray(y.shape, y.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    nisa.dma_copy(dst=sy, src=y)
    cp = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=cp, src=sx)
    ts = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=ts, data=cp, op0=nl.multiply, operand0=2.0)
    tt = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tt, data1=ts, data2=sy, op=nl.add)
    ps = nl.ndarray(x.shape, nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=ps, src=tt)
    tp = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tp, data1=ps, data2=sy, op=nl.multiply)
    ex = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=ex, op=nl.exp, data=tp)
    er = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    tot = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=er, op=nl.exp, data=ex, reduce_op=nl.add, reduce_res=tot,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    rc = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=rc, data=er)
    io = nl.ndarray(x.shape, nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=io, pattern=[[1, x.shape[1]]], offset=0)
    ms = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ms, value=0.0, engine=nisa.engine.gpsimd)
    res = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=res, data1=rc, data2=ms, op=nl.subtract)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def k_bn(x):
    """bn_stats over 512-element chunks of x: [128, F] fp32, then one bn_aggr."""
    out = nl.ndarray((x.shape[0], 2), nl.float32, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    chunks = x.shape[1] // 512
    stats = nl.ndarray((x.shape[0], chunks * 6), nl.float32, buffer=nl.sbuf)
    for c in range(chunks):
        nisa.bn_stats(dst=stats[:, c * 6:(c + 1) * 6], data=sx[:, c * 512:(c + 1) * 512])
    mv = nl.ndarray((x.shape[0], 2), nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=mv, data=stats)
    nisa.dma_copy(dst=out, src=mv)
    return out


@nki.jit
def k_load(x):
    """HBM -> SBUF copy of x and back."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    sx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sx, src=x)
    nisa.dma_copy(dst=out, src=sx)
    return out


def compile_ops(kernel, *args, target=None):
    """The nisa ops of the compiled kernel (final IR, parsed back)."""
    ck = nki.compile(kernel, *args, target=target)
    return [op for op in parse_module(ck.ir("nisa")).walk() if op.name.startswith("nisa.")]


def space(op, role):
    from nki_mlir.dialects.effects import accesses
    return next(a for a in accesses(op) if a.role == role).value.type.memory_space.space.data


def find(ops, name, alu=None, **spaces):
    """The one op named ``name`` (with ALU ``op`` property ``alu`` if given) whose operand
    roles are in the given memory spaces."""
    hits = [op for op in ops if op.name == name
            and (alu is None or op.properties["op"].data == alu)
            and all(space(op, r) == s for r, s in spaces.items())]
    assert len(hits) == 1, (name, spaces, len(hits))
    return hits[0]


def hand_ir(body: str, args: str = "", target: str = "trn2"):
    """Parse one function of hand-written nisa IR; returns its nisa ops."""
    text = (f"builtin.module attributes {{nisa.target = #nisa.target<{target}>}} {{\n"
            f"  func.func @k({args}) {{\n{body}\n    func.return\n  }}\n}}\n")
    return [op for op in parse_module(text).walk() if op.name.startswith("nisa.")]


# ======================================================================= targets.py


def test_every_field_has_a_source_for_every_target():
    names = [f.name for f in dataclasses.fields(TargetModel)]
    assert set(TARGETS) == {"trn1", "trn2", "trn3"}
    for t in TARGETS:
        missing = [n for n in names if not SOURCES[t].get(n, "").strip()]
        assert missing == [], (t, missing)
        rows = constants_table(t)
        assert [r[0] for r in rows] == names
        assert all(len(r) == 4 and r[3] == SOURCES[t][r[0]] for r in rows)


def test_documented_constants():
    assert (TRN1.tensor_ghz, TRN1.vector_ghz, TRN1.scalar_ghz, TRN1.gpsimd_ghz) == (2.8, 1.12, 1.4, 1.4)
    assert (TRN2.tensor_ghz, TRN2.vector_ghz, TRN2.scalar_ghz, TRN2.gpsimd_ghz) == (2.4, 0.96, 1.2, 1.2)
    assert (TRN3.tensor_ghz, TRN3.vector_ghz, TRN3.scalar_ghz, TRN3.gpsimd_ghz) == (2.4, 1.2, 1.2, 1.2)
    assert [TARGETS[t].dma_bytes_per_ns for t in ("trn1", "trn2", "trn3")] == [17, 23, 33]
    assert [TARGETS[t].hbm_bytes_per_ns for t in ("trn1", "trn2", "trn3")] == [410, 362, 610]
    # trn2 BF16 peak: 2 * 128 * 128 * 2.4 GHz = 78643.2 FLOP/ns = 78.6 TFLOPS (ARCH3: 79)
    assert TRN2.peak_matmul_flops_per_ns("bf16") == approx(2 * 128 * 128 * 2.4)
    assert TRN1.peak_matmul_flops_per_ns("bf16") == approx(2 * 128 * 128 * 2.8)  # 91.75 TFLOPS
    assert TRN2.peak_matmul_flops_per_ns("fp32") == approx(2 * 128 * 128 * 2.4 / 4)
    assert TRN2.peak_matmul_flops_per_ns("fp8") == approx(2 * 128 * 128 * 2.4 * 2)  # 158 TFLOPS
    assert TRN1.peak_matmul_flops_per_ns("fp8") == approx(2 * 128 * 128 * 2.8)      # no fp8 speedup
    assert TRN3.peak_matmul_flops_per_ns("mx") == approx(2 * 128 * 128 * 2.4 * 4)   # 315 TFLOPS
    assert TRN2.clock_ghz("vector") == 0.96 and TRN1.clock_ghz("scalar") == 1.4
    with pytest.raises(ValueError):
        TRN2.clock_ghz("dma")


def test_target_names_and_aliases():
    assert target_model("trn2") is TRN2
    assert target_model("inf2") is TRN1 and target_model("gen2") is TRN1
    assert target_model("gen3") is TRN2 and target_model("gen4") is TRN3
    for bad in ("trn4", "TRN2", "", None):
        with pytest.raises(NKIError) as e:
            target_model(bad)
        assert e.value.category == "bad option"
    with pytest.raises(NKIError):
        constants_table("h100")


# ====================================================================== TensorE


@pytest.mark.parametrize("dtype,n,cycles", [
    (BF16, 512, 512),        # max(512, 64) x 1
    (BF16, 32, 64),          # max(32, 64) x 1: latency-bound below 64
    (F32, 512, 4 * 512),     # fp32 is 1/4 rate: 4 x max(512, 64)
    (F32, 32, 4 * 64),       # 4 x max(32, 64)
])
def test_matmul(dtype, n, cycles):
    a, b = np.zeros((128, 128), dtype), np.zeros((128, n), dtype)
    op = find(compile_ops(k_matmul, a, b, False), "nisa.matmul")
    c = instruction_cost(op, TRN2)
    assert c.engine == "tensor"
    assert c.cycles == approx(cycles)
    assert c.ns == approx(cycles / 2.4)
    assert c.flops == approx(2 * 128 * 128 * n)          # 2 * K * M * N
    peak = 2 * 128 * 128 * 2.4 / (4 if dtype == F32 else 1)
    assert c.peak_flops_per_ns == approx(peak)
    assert c.moving_free == n
    assert c.dma is None
    dt = "f32" if dtype == F32 else "bf16"
    assert c.label == (f"dst=128x{n}xf32@psum stationary=128x128x{dt}@sbuf "
                       f"moving=128x{n}x{dt}@sbuf")


def test_matmul_trn1_clock():
    a, b = np.zeros((128, 128), BF16), np.zeros((128, 512), BF16)
    op = find(compile_ops(k_matmul, a, b, False, target="trn1"), "nisa.matmul")
    c = instruction_cost(op, TRN1)
    assert c.cycles == approx(512) and c.ns == approx(512 / 2.8)


def test_matmul_double_row_fp8():
    # moving [K=128, 2, N=512] fp8: two rows per pass -> 1024 free elements x 0.5 = 512 cycles,
    # contraction over 2K = 256 partitions' worth of values
    a, b = np.zeros((128, 2, 128), FP8), np.zeros((128, 2, 512), FP8)
    op = find(compile_ops(k_matmul, a, b, True), "nisa.matmul")
    c = instruction_cost(op, TRN2)
    assert c.cycles == approx(max(1024 * 0.5, 64))
    assert c.flops == approx(2 * 256 * 128 * 512)
    assert c.peak_flops_per_ns == approx(2 * 128 * 128 * 2.4 * 2)
    assert c.moving_free == 512


@pytest.mark.parametrize("p,f,cycles", [
    (128, 64, 128),   # max(P=128, min(64, 64))
    (32, 128, 64),    # max(P=32, min(64, 128))
    (16, 32, 32),     # max(P=16, min(64, 32))
])
def test_nc_transpose(p, f, cycles):
    op = find(compile_ops(k_transpose, np.zeros((p, f), F32)), "nisa.nc_transpose")
    c = instruction_cost(op, TRN2)
    assert (c.engine, c.cycles, c.ns, c.flops) == ("tensor", approx(cycles), approx(cycles / 2.4), 0)


# ============================================================ Vector / Scalar / GpSimd


@pytest.fixture(scope="module")
def f32_ops():
    x = np.zeros((128, 512), F32)
    return compile_ops(k_elementwise, x, x)


@pytest.fixture(scope="module")
def bf16_ops():
    x = np.zeros((128, 512), BF16)
    return compile_ops(k_elementwise, x, x)


def test_activation_with_and_without_reduce(f32_ops):
    plain = [op for op in f32_ops if op.name == "nisa.activation" and op.reduce_res is None]
    reduce = [op for op in f32_ops if op.name == "nisa.activation" and op.reduce_res is not None]
    assert len(plain) == 1 and len(reduce) == 1
    c = instruction_cost(plain[0], TRN2)
    assert (c.engine, c.cycles, c.ns) == ("scalar", approx(512), approx(512 / 1.2))  # max(64, 512)
    c = instruction_cost(reduce[0], TRN2)
    assert (c.engine, c.cycles, c.ns) == ("scalar", approx(512 + 64), approx(576 / 1.2))  # + MIN_II
    assert "reduce_res=128x1xf32@sbuf" in c.label


def test_tensor_copy_fp32_and_bf16_perf_mode(f32_ops, bf16_ops):
    c = instruction_cost(find(f32_ops, "nisa.tensor_copy", src="sbuf", dst="sbuf"), TRN2)
    assert (c.engine, c.cycles, c.ns) == ("vector", approx(512), approx(512 / 0.96))
    # bf16 contiguous SBUF->SBUF on trn2: perf mode 4x -> max(64, 512 / 4) = 128
    c = instruction_cost(find(bf16_ops, "nisa.tensor_copy", src="sbuf", dst="sbuf"), TRN2)
    assert (c.cycles, c.ns) == (approx(128), approx(128 / 0.96))
    # bf16 into PSUM is not SBUF->SBUF: the 2x "other bf16" mode -> 512 / 2
    c = instruction_cost(find(bf16_ops, "nisa.tensor_copy", dst="psum"), TRN2)
    assert c.cycles == approx(256)
    # PSUM -> SBUF fp32 (the matmul eviction): max(64, 512)
    a, b = np.zeros((128, 128), BF16), np.zeros((128, 512), BF16)
    c = instruction_cost(find(compile_ops(k_matmul, a, b, False), "nisa.tensor_copy",
                              src="psum"), TRN2)
    assert c.cycles == approx(512)


def test_tensor_copy_trn1_has_no_perf_mode():
    x = np.zeros((128, 512), BF16)
    op = find(compile_ops(k_elementwise, x, x, target="trn1"), "nisa.tensor_copy",
              src="sbuf", dst="sbuf")
    c = instruction_cost(op, TRN1)
    assert (c.cycles, c.ns) == (approx(512), approx(512 / 1.12))


def test_tensor_scalar(f32_ops, bf16_ops):
    c = instruction_cost(find(f32_ops, "nisa.tensor_scalar_arith"), TRN2)
    assert (c.engine, c.cycles, c.ns) == ("vector", approx(512), approx(512 / 0.96))
    c = instruction_cost(find(bf16_ops, "nisa.tensor_scalar_arith"), TRN2)
    assert c.cycles == approx(512 / 4)  # perf mode 4x (bf16 contiguous SBUF->SBUF)


def test_tensor_tensor_sbuf_and_psum(f32_ops, bf16_ops):
    # two SBUF inputs: max(64, 2N) = 1024 (fp32); bf16 in SBUF on trn2: 2N / 2 = 512
    c = instruction_cost(find(f32_ops, "nisa.tensor_tensor_arith", "add", lhs="sbuf",
                              rhs="sbuf"), TRN2)
    assert (c.engine, c.cycles, c.ns) == ("vector", approx(2 * 512), approx(1024 / 0.96))
    c = instruction_cost(find(bf16_ops, "nisa.tensor_tensor_arith", "add", lhs="sbuf",
                              rhs="sbuf"), TRN2)
    assert c.cycles == approx(2 * 512 / 2)
    # the same bf16 add on trn1 (no perf mode): 2N
    assert instruction_cost(find(bf16_ops, "nisa.tensor_tensor_arith", "add"), TRN1).cycles \
        == approx(2 * 512)
    # one input in PSUM: max(64, N) = 512
    c = instruction_cost(find(f32_ops, "nisa.tensor_tensor_arith", lhs="psum"), TRN2)
    assert (c.cycles, c.ns) == (approx(512), approx(512 / 0.96))
    assert "lhs=128x512xf32@psum" in c.label


def test_reciprocal(f32_ops):
    c = instruction_cost(find(f32_ops, "nisa.reciprocal"), TRN2)
    assert (c.engine, c.cycles, c.ns) == ("vector", approx(8 * 512), approx(4096 / 0.96))


def test_iota_and_memset_on_gpsimd(f32_ops):
    for name in ("nisa.iota", "nisa.memset"):
        c = instruction_cost(find(f32_ops, name), TRN2)
        assert (c.engine, c.cycles, c.ns) == ("gpsimd", approx(150 + 512), approx(662 / 1.2))


def test_bn_stats_and_bn_aggr():
    ops = compile_ops(k_bn, np.zeros((128, 2048), F32))
    stats = [op for op in ops if op.name == "nisa.bn_stats"]
    assert len(stats) == 1  # one rolled loop body for the 4 chunks
    assert stats[0].parent_op().name == "scf.for"
    for op in stats:
        c = instruction_cost(op, TRN2)
        assert (c.engine, c.cycles, c.ns) == ("vector", approx(512), approx(512 / 0.96))
    # bn_aggr over 4 x 6 = 24 values per partition: max(64, 13 * 24 / 3) = 104
    c = instruction_cost(find(ops, "nisa.bn_aggr"), TRN2)
    assert (c.cycles, c.ns) == (approx(13 * 24 / 3), approx(104 / 0.96))
    # a single chunk (6 values): max(64, 26) = 64
    c = instruction_cost(find(compile_ops(k_bn, np.zeros((128, 512), F32)), "nisa.bn_aggr"), TRN2)
    assert c.cycles == approx(64)


def test_partition_count_does_not_change_cost():
    small, full = np.zeros((4, 512), F32), np.zeros((128, 512), F32)
    a = instruction_cost(find(compile_ops(k_elementwise, small, small), "nisa.reciprocal"), TRN2)
    b = instruction_cost(find(compile_ops(k_elementwise, full, full), "nisa.reciprocal"), TRN2)
    assert a.cycles == b.cycles == approx(4096)


def test_trn3_scalar_bf16_rate():
    x = np.zeros((128, 512), BF16)
    op = [op for op in compile_ops(k_elementwise, x, x, target="trn3")
          if op.name == "nisa.activation" and op.reduce_res is None][0]
    # the activation reads an fp32 tile: 128 elem/cycle on trn3 -> max(64, 512)
    assert instruction_cost(op, TRN3).cycles == approx(512)
    ops = hand_ir("""
    %t = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x512xbf16, #nisa.mem<sbuf>>
    %u = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 1024 : i64} : memref<128x512xbf16, #nisa.mem<sbuf>>
    %b = arith.constant 0.0 : f32
    %s = arith.constant 1.0 : f32
    nisa.activation(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %u, src=memref<128x512xbf16, #nisa.mem<sbuf>> %t, bias=f32 %b, scale=f32 %s, op=exp) engine=scalar""",
                  target="trn3")
    c = instruction_cost(find(ops, "nisa.activation"), TRN3)
    assert (c.cycles, c.ns) == (approx(512 / 2), approx(256 / 1.2))  # 256 elem/cycle bf16


def test_strided_sbuf_read_costs_twice():
    # src = every 8th fp32 of a [128, 2048] tile: innermost stride 32 B > 16 B -> x2
    def body(step):
        return f"""
    %t = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 0 : i64}} : memref<128x2048xf32, #nisa.mem<sbuf>>
    %u = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 8192 : i64}} : memref<128x256xf32, #nisa.mem<sbuf>>
    %v = memref.subview %t[0, 0] [128, 256] [1, {step}] : memref<128x2048xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[2048, {step}]>, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x256xf32, #nisa.mem<sbuf>> %u, src=memref<128x256xf32, strided<[2048, {step}]>, #nisa.mem<sbuf>> %v) engine=vector"""
    c = instruction_cost(find(hand_ir(body(8)), "nisa.tensor_copy"), TRN2)
    assert c.cycles == approx(max(64, 2 * 256))
    c = instruction_cost(find(hand_ir(body(4)), "nisa.tensor_copy"), TRN2)  # 16 B: no penalty
    assert c.cycles == approx(256)


# ========================================================================== DMA


def test_dma_copy_128x512_bf16():
    ops = compile_ops(k_load, np.zeros((128, 512), BF16))
    load = find(ops, "nisa.dma_copy", dst="sbuf")
    c = instruction_cost(load, TRN2)
    assert (c.engine, c.cycles, c.ns, c.flops) == ("dma", 0, 0, 0)
    assert c.dma == DmaShape(total_bytes=128 * 512 * 2, hbm_bytes=128 * 512 * 2, rows=128,
                             row_bytes=1024, run_bytes=1024, start_partition=0,
                             transpose=False, sbuf_to_sbuf=False)
    assert c.label == "dst=128x512xbf16@sbuf src=128x512xbf16@shared_hbm"
    shares = dma_engine_shares(TRN2, c.dma)
    # 8 partitions x 1024 B = 8192 B on each of the 16 engines, at 23 B/ns x eff(1024) x HBM scale
    eff = 1024 / (1024 + 1024)  # eff(b) = b / (b + knee), knee 1024 B
    scale = 362 / (16 * 23)
    assert [e for e, _ in shares] == list(range(16))
    assert all(ns == approx(8192 / (23 * eff * scale)) for _, ns in shares)
    store = find(ops, "nisa.dma_copy", src="sbuf")
    assert instruction_cost(store, TRN2).dma.hbm_bytes == 128 * 512 * 2


def test_dma_copy_4x4096_bf16_lands_on_one_engine():
    c = instruction_cost(find(compile_ops(k_load, np.zeros((4, 4096), BF16)), "nisa.dma_copy",
                              dst="sbuf"), TRN2)
    assert (c.dma.rows, c.dma.row_bytes, c.dma.run_bytes) == (4, 8192, 8192)
    assert dma_engine_bytes(TRN2, c.dma) == [(0, 32768)]
    [(engine, ns)] = dma_engine_shares(TRN2, c.dma)
    # documented anchor (DMAOV Example 1): 32 KiB on one trn2 engine in 1416 ns
    assert engine == 0
    assert ns == approx(32768 / (23 * (8192 / (8192 + 1024)) * (362 / (16 * 23))))  # 1630 ns


def test_dma_copy_128x128_bf16_spreads_over_16_engines():
    c = instruction_cost(find(compile_ops(k_load, np.zeros((128, 128), BF16)), "nisa.dma_copy",
                              dst="sbuf"), TRN2)
    assert dma_engine_bytes(TRN2, c.dma) == [(e, 2048) for e in range(16)]


def test_dma_engine_mapping_follows_start_partition():
    shape = DmaShape(total_bytes=32 * 100, hbm_bytes=0, rows=32, row_bytes=100, run_bytes=100,
                     start_partition=36, transpose=False, sbuf_to_sbuf=True)
    # partitions 36..67 -> engines 4 (36-39), 5, 6, 7 (8 each), 8 (64-67)
    assert dma_engine_bytes(TRN2, shape) == [(4, 400), (5, 800), (6, 800), (7, 800), (8, 400)]
    # 300 rows wrap around: 2 full rounds of 128 rows (16 per engine) + 44 rows
    wrap = dataclasses.replace(shape, total_bytes=300, rows=300, row_bytes=1, start_partition=0)
    counts = dict(dma_engine_bytes(TRN2, wrap))
    assert sum(counts.values()) == approx(300)
    assert counts[0] == approx(24) and counts[5] == approx(20) and counts[6] == approx(16)
    # an SBUF->SBUF transpose: no HBM scale, 50% efficiency
    tr = dataclasses.replace(shape, start_partition=0, rows=8, total_bytes=8 * 4096,
                             row_bytes=4096, run_bytes=4096, transpose=True)
    [(_, ns)] = dma_engine_shares(TRN2, tr)
    assert ns == approx(8 * 4096 / (23 * (4096 / (4096 + 1024)) * 0.5))


def test_dma_start_partition_from_subview():
    ops = hand_ir("""
    %t = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x256xbf16, #nisa.mem<sbuf>>
    %v = memref.subview %t[32, 0] [32, 256] [1, 1] : memref<128x256xbf16, #nisa.mem<sbuf>> to memref<32x256xbf16, strided<[256, 1], offset: 8192>, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<32x256xbf16, strided<[256, 1], offset: 8192>, #nisa.mem<sbuf>> %v, src=memref<32x256xbf16, #nisa.mem<hbm>> %a) engine=dma""",
                  args="%a: memref<32x256xbf16, #nisa.mem<hbm>>")
    c = instruction_cost(find(ops, "nisa.dma_copy"), TRN2)
    assert (c.dma.start_partition, c.dma.rows, c.dma.row_bytes) == (32, 32, 512)
    assert dma_engine_bytes(TRN2, c.dma) == [(4, 4096), (5, 4096), (6, 4096), (7, 4096)]


def test_dma_run_is_the_innermost_contiguous_run():
    # a [128, 64] column block of a [128, 1024] HBM tensor: 128-byte runs
    ops = hand_ir("""
    %t = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x64xbf16, #nisa.mem<sbuf>>
    %v = memref.subview %a[0, 64] [128, 64] [1, 1] : memref<128x1024xbf16, #nisa.mem<hbm>> to memref<128x64xbf16, strided<[1024, 1], offset: 64>, #nisa.mem<hbm>>
    nisa.dma_copy(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %t, src=memref<128x64xbf16, strided<[1024, 1], offset: 64>, #nisa.mem<hbm>> %v) engine=dma""",
                  args="%a: memref<128x1024xbf16, #nisa.mem<hbm>>")
    c = instruction_cost(find(ops, "nisa.dma_copy"), TRN2)
    assert (c.dma.row_bytes, c.dma.run_bytes) == (128, 128)


# ================================================================== coverage, no-raise


def test_every_nisa_instruction_has_a_cost_rule():
    special = {"nisa.matmul", "nisa.nc_matmul_mx", "nisa.nc_transpose", "nisa.tensor_tensor_arith",
               "nisa.scalar_tensor_tensor", "nisa.select_reduce", "nisa.tensor_copy_predicated",
               "nisa.tensor_reduce_arith", "nisa.reciprocal", "nisa.exponential",
               "nisa.core_barrier"}
    defined = {op.name for op in NISA.operations if hasattr(op, "DEFINITION")}  # their cost row
    known = set(costs._SIMPLE) | special | costs.NO_COST_OPS | costs.DMA_OPS | defined
    names = {op.name for op in NISA.operations}
    assert names - known == set()


def test_non_instructions_cost_nothing_and_unusual_ir_does_not_raise(f32_ops, monkeypatch):
    alloc = next(op for op in f32_ops if op.name == "nisa.alloc")
    c = instruction_cost(alloc, TRN2)
    assert (c.engine, c.cycles, c.ns, c.dma) == ("none", 0, 0, None)
    # without a schedule (no nkim.queue) the engine comes from the op's engine= property
    ops = hand_ir("""
    %t = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x512xf32, #nisa.mem<sbuf>>
    %u = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 2048 : i64} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, #nisa.mem<sbuf>> %t) engine=gpsimd""")
    c = instruction_cost(find(ops, "nisa.tensor_copy"), TRN2)
    assert (c.engine, c.cycles) == ("gpsimd", approx(150 + 512))

    # an op the model cannot analyse still gets a conservative cost on its engine
    def boom(*args, **kwargs):
        raise RuntimeError("unanalysable")
    monkeypatch.setattr(costs, "_compute_cycles", boom)
    c = instruction_cost(find(ops, "nisa.tensor_copy"), TRN2)
    assert (c.engine, c.cycles) == ("gpsimd", approx(150 + 512))
    monkeypatch.setattr(costs, "dma_shape", boom)
    load = find(compile_ops(k_load, np.zeros((128, 512), BF16)), "nisa.dma_copy", dst="sbuf")
    c = instruction_cost(load, TRN2)
    assert c.engine == "dma" and c.dma is not None and dma_engine_shares(TRN2, c.dma)


@pytest.mark.parametrize("runtime_loop", [True, False])
def test_copy_with_a_runtime_offset_costs_min_ii_dynamic(runtime_loop):
    bound = "%ub = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync : index" \
        if runtime_loop else "%ub = arith.constant 8 : index"
    ops = hand_ir(f"""
    %r = nisa.register_alloc() engine=sync : memref<1xi32, #nisa.mem<reg>>
    %t = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 0 : i64}} : memref<128x512xf32, #nisa.mem<sbuf>>
    %u = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 2048 : i64}} : memref<128x64xf32, #nisa.mem<sbuf>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    {bound}
    scf.for %i = %c0 to %ub step %c1 {{
      %off = arith.muli %i, %c64 : index
      %v = memref.subview %t[0, %off] [128, 64] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x64xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>>
      nisa.tensor_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %u, src=memref<128x64xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>> %v) engine=vector
    }}""")
    c = instruction_cost(find(ops, "nisa.tensor_copy"), TRN2)
    # a register-derived offset: MIN_II_DYNAMIC ~600 cycles; a static loop: max(64, 64)
    assert c.cycles == approx(600 if runtime_loop else 64)
    reg = instruction_cost(find(ops, "nisa.register_alloc"), TRN2)
    assert (reg.engine, reg.cycles) == ("none", 0)
