"""Tests of the NumPy ISA interpreter (nki_mlir.runtime.interpreter) on hand-written nisa IR.

Each test builds a small kernel with :class:`Kernel`, runs it and compares against a NumPy
reference.  bf16 results are compared bit-exactly against ``ref.astype(f32).astype(bf16)``
where the op is a single correctly rounded fp32 operation, which asserts the fp32-compute,
round-to-nearest-even-on-store rule.
"""
from __future__ import annotations

import math
import time

import ml_dtypes
import numpy as np
import pytest
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.dialects.common import memref
from nki_mlir.errors import NKIRuntimeError, NKITypeError
from nki_mlir.runtime import numerics as nm
from nki_mlir.runtime.interpreter import Program, decode
from nki_mlir.runtime.memory import SBUF_BYTES

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
U32 = np.dtype(np.uint32)
RNG = np.random.default_rng(1234)


def T(shape, dt=F32, space="sbuf") -> str:
    """The memref type text of a buffer."""
    return str(memref(list(shape), np.dtype(dt), space))


class Kernel:
    """A tiny builder of nisa IR text: HBM args, HBM outputs, allocs, instructions.

    Operand values are written ``"%name"``; any other keyword value is a property.
    """

    def __init__(self, target: str | None = "trn2"):
        self.target = target
        self.args: list[tuple[str, str]] = []
        self.types: dict[str, str] = {}
        self.lines: list[str] = []
        self.rets: list[str] = []
        self.n = 0

    def fresh(self, prefix="v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def arg(self, name, shape, dt=F32, space="shared_hbm") -> str:
        self.types[name] = T(shape, dt, space)
        self.args.append((name, self.types[name]))
        return "%" + name

    def out(self, name, shape, dt=F32) -> str:
        self.types[name] = T(shape, dt, "shared_hbm")
        self.lines.append(f"%{name} = nisa.alloc : {self.types[name]}")
        self.rets.append(name)
        return "%" + name

    def alloc(self, name, shape, dt=F32, space="sbuf", at=None) -> str:
        """``at=(partition, byte_offset)`` places the tile; ``None`` leaves it unplaced."""
        self.types[name] = T(shape, dt, space)
        attrs = ""
        if at is not None:
            attrs = f" {{nkim.partition = {at[0]} : i64, nkim.offset = {at[1]} : i64}}"
        self.lines.append(f"%{name} = nisa.alloc{attrs} : {self.types[name]}")
        return "%" + name

    def const(self, value, ty="f32") -> str:
        name = self.fresh("cst")
        self.types[name] = ty
        if ty == "f32":
            text = repr(float(value)) if math.isfinite(value) else f"0x{np.float32(value).view(np.uint32):08X}"
        else:
            text = str(int(value))
        self.lines.append(f"%{name} = arith.constant {text} : {ty}")
        return "%" + name

    def subview(self, src, offsets, sizes, strides=None, result_shape=None) -> str:
        """``offsets`` entries are ints or ``"%index_value"``; the result type is computed."""
        src_name = src.lstrip("%")
        src_type = self.types[src_name]
        parsed = Parser(make_context(), src_type).parse_type()
        shape = list(parsed.get_shape())
        strides = strides or [1] * len(sizes)
        full = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            full[i] = full[i + 1] * shape[i + 1]
        layout = [f * s for f, s in zip(full, strides)]
        res_shape = result_shape or sizes
        keep = []
        r = 0
        for s in sizes:
            if r < len(res_shape) and s == res_shape[r]:
                keep.append(True)
                r += 1
            else:
                keep.append(False)
        lay = [layout[i] for i in range(len(sizes)) if keep[i]]
        space = src_type.split("#nisa.mem<")[1].split(">")[0]
        elem = src_type.split("x")[-1].split(",")[0]
        name = self.fresh("sv")
        ty = (f"memref<{'x'.join(map(str, res_shape))}x{elem}, strided<[{', '.join(map(str, lay))}], "
              f"offset: ?>, #nisa.mem<{space}>>")
        self.types[name] = ty
        offs = ", ".join(str(o) for o in offsets)
        self.lines.append(f"%{name} = memref.subview {src}[{offs}] [{', '.join(map(str, sizes))}] "
                          f"[{', '.join(map(str, strides))}] : {src_type} to {ty}")
        return "%" + name

    def ins(self, opname, engine=None, **kw) -> None:
        parts = []
        for k, v in kw.items():
            if isinstance(v, str) and v.startswith("%"):
                parts.append(f"{k}={self.types[v[1:]]} {v}")
            else:
                parts.append(f"{k}={v}")
        eng = f" engine={engine}" if engine else ""
        self.lines.append(f"nisa.{opname}({', '.join(parts)}){eng}")

    def dma(self, dst, src) -> None:
        self.ins("dma_copy", engine="dma", dst=dst, src=src)

    def raw(self, line) -> None:
        self.lines.append(line)

    def text(self) -> str:
        args = ", ".join(f"%{n}: {t}" for n, t in self.args)
        rtypes = ", ".join(self.types[r] for r in self.rets)
        rets = ", ".join("%" + r for r in self.rets)
        attrs = f" attributes {{nisa.target = #nisa.target<{self.target}>}}" if self.target else ""
        body = "\n    ".join(self.lines)
        ret = f"func.return {rets} : {rtypes}" if self.rets else "func.return"
        return (f"module{attrs} {{\n  func.func @kernel({args}) -> ({rtypes}) {{\n    {body}\n"
                f"    {ret}\n  }}\n}}\n")

    def module(self, verify=True):
        m = Parser(make_context(), self.text()).parse_module()
        if verify:
            m.verify()
        return m

    def program(self, verify=True) -> Program:
        return decode(self.module(verify))

    def run(self, *args, verify=True):
        return self.program(verify).run(list(args))


def rand(shape, dt=F32, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32).astype(dt)


def unary_kernel(shape, src_dt, dst_dt, emit, at=None, dst_space="sbuf"):
    """x (HBM) -> tile s -> emit(k, dst, src) -> tile d -> out (HBM)."""
    k = Kernel()
    x = k.arg("x", shape, src_dt)
    o = k.out("out", shape, dst_dt)
    s = k.alloc("s", shape, src_dt, at=None if at is None else (0, 0))
    d = k.alloc("d", shape, dst_dt, at=None if at is None else (0, 65536))
    k.dma(s, x)
    emit(k, d, s)
    k.dma(o, d)
    return k


def binary_kernel(shape, dt_a, dt_b, dst_dt, emit, b_shape=None, placed=False, engine="vector"):
    b_shape = b_shape or shape
    k = Kernel()
    a, b = k.arg("a", shape, dt_a), k.arg("b", b_shape, dt_b)
    o = k.out("out", shape, dst_dt)
    ta = k.alloc("ta", shape, dt_a, at=(0, 0) if placed else None)
    tb = k.alloc("tb", b_shape, dt_b, at=(0, 32768) if placed else None)
    td = k.alloc("td", shape, dst_dt, at=(0, 65536) if placed else None)
    k.dma(ta, a)
    k.dma(tb, b)
    emit(k, td, ta, tb)
    k.dma(o, td)
    return k


# =========================================================================== structure


def tensor_add_kernel(rows=256, cols=1024, tile=(128, 512)):
    k = Kernel()
    a, b = k.arg("a", (rows, cols)), k.arg("b", (rows, cols))
    o = k.out("out", (rows, cols))
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw(f"%ni = arith.constant {-(-rows // tile[0])} : index")
    k.raw(f"%nj = arith.constant {cols // tile[1]} : index")
    k.raw("scf.for %i = %c0 to %ni step %c1 {")
    k.raw("scf.for %j = %c0 to %nj step %c1 {")
    ta = k.alloc("ta", tile, at=(0, 0))
    tb = k.alloc("tb", tile, at=(0, tile[1] * 4))
    k.raw(f"%cp = arith.constant {tile[0]} : index")
    k.raw(f"%cf = arith.constant {tile[1]} : index")
    k.raw("%r0 = arith.muli %i, %cp : index")
    k.raw("%f0 = arith.muli %j, %cf : index")
    av = k.subview(a, ["%r0", "%f0"], list(tile))
    bv = k.subview(b, ["%r0", "%f0"], list(tile))
    ov = k.subview(o, ["%r0", "%f0"], list(tile))
    k.dma(ta, av)
    k.dma(tb, bv)
    k.ins("tensor_tensor_arith", engine="vector", dst=ta, lhs=ta, rhs=tb, op="add")
    k.dma(ov, ta)
    k.raw("nisa.release %ta : " + k.types["ta"])
    k.raw('} {nki.range = "affine"}')
    k.raw('} {nki.range = "sequential"}')
    return k


def test_tiled_add_with_dynamic_subviews():
    k = tensor_add_kernel()
    prog = k.program()
    assert prog.target == "trn2"
    assert prog.instruction_count == 4
    assert prog.func_name == "kernel"
    assert prog.arg_names == ["a", "b"]
    a, b = rand((256, 1024)), rand((256, 1024))
    (out,) = prog.run([a, b])
    np.testing.assert_array_equal(out, a + b)
    # decoded once, runs many times with independent state
    (out2,) = prog.run([b, a])
    np.testing.assert_array_equal(out2, a + b)


def test_example_from_the_ir_contract_parses_and_runs():
    hbm = "memref<256x1024xf32, #nisa.mem<shared_hbm>>"
    view = "memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>"
    sb = "memref<128x512xf32, #nisa.mem<sbuf>>"
    text = f"""
module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @tensor_add_kernel(%a: {hbm}, %b: {hbm}) -> {hbm} attributes {{nki.output_names = ["out"]}} {{
    %out = nisa.alloc : {hbm}
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {{
      scf.for %j = %c0 to %c2 step %c1 {{
        %a_sb = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 0 : i64}} : {sb}
        %b_sb = nisa.alloc alignment=64 {{nkim.partition = 0 : i64, nkim.offset = 2048 : i64}} : {sb}
        %c128 = arith.constant 128 : index
        %r0 = arith.muli %i, %c128 : index
        %c512 = arith.constant 512 : index
        %f0 = arith.muli %j, %c512 : index
        %av = memref.subview %a[%r0, %f0] [128, 512] [1, 1] : {hbm} to {view}
        %bv = memref.subview %b[%r0, %f0] [128, 512] [1, 1] : {hbm} to {view}
        %ov = memref.subview %out[%r0, %f0] [128, 512] [1, 1] : {hbm} to {view}
        nisa.dma_copy(dst={sb} %a_sb, src={view} %av) engine=dma {{nkim.id = 0 : i64, nkim.queue = "dma", nkim.deps = []}}
        nisa.dma_copy(dst={sb} %b_sb, src={view} %bv) engine=dma {{nkim.id = 1 : i64, nkim.queue = "dma", nkim.deps = []}}
        nisa.tensor_tensor_arith(dst={sb} %b_sb, lhs={sb} %a_sb, rhs={sb} %b_sb, op=subtract) engine=vector {{nkim.id = 2 : i64, nkim.queue = "vector", nkim.deps = [0, 1]}}
        nisa.dma_copy(dst={view} %ov, src={sb} %b_sb) engine=dma {{nkim.id = 3 : i64, nkim.queue = "dma", nkim.deps = [2]}}
      }} {{nki.range = "affine"}}
    }} {{nki.range = "sequential"}}
    func.return %out : {hbm}
  }}
}}"""
    prog = decode(Parser(make_context(), text).parse_module())
    a, b = rand((256, 1024)), rand((256, 1024))
    np.testing.assert_array_equal(prog.run([a, b])[0], a - b)


def test_default_target_and_function_selection():
    k = Kernel(target=None)
    x = k.arg("x", (4, 4))
    o = k.out("out", (4, 4))
    k.dma(o, x)
    text = k.text().replace("}\n}\n", "}\n  func.func private @helper() {\n    func.return\n  }\n}\n")
    m = Parser(make_context(), text).parse_module()
    prog = decode(m)
    assert prog.target == "trn2" and prog.func_name == "kernel"
    assert decode(m, "helper").instruction_count == 0
    with pytest.raises(NKIRuntimeError, match="no func.func @nope"):
        decode(m, "nope")


def test_rank_reducing_and_strided_subviews():
    k = Kernel()
    x = k.arg("x", (3, 16, 8))
    o = k.out("out", (3, 16, 4))
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%c3 = arith.constant 3 : index")
    k.raw("scf.for %i = %c0 to %c3 step %c1 {")
    t = k.alloc("t", (16, 8))
    xv = k.subview(x, ["%i", 0, 0], [1, 16, 8], result_shape=[16, 8])
    k.dma(t, xv)
    odd = k.subview(t, [0, 1], [16, 4], strides=[1, 2])  # columns 1, 3, 5, 7
    ov = k.subview(o, ["%i", 0, 0], [1, 16, 4], result_shape=[16, 4])
    k.dma(ov, odd)
    k.raw("}")
    xs = rand((3, 16, 8))
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out, xs[:, :, 1::2])


def test_index_arithmetic_ops():
    """divsi/remsi truncate, floordivsi floors, min/max; results feed a subview offset."""
    k = Kernel()
    x = k.arg("x", (1, 64))
    o = k.out("out", (1, 8))
    exprs = [
        ("arith.divsi", -7, 2),       # -3
        ("arith.floordivsi", -7, 2),  # -4
        ("arith.remsi", -7, 2),       # -1
        ("arith.remui", 7, 4),        # 3
        ("arith.maxsi", 3, 9),        # 9
        ("arith.minsi", 3, 9),        # 3
        ("arith.subi", 5, 9),         # -4
        ("arith.divui", 9, 2),        # 4
    ]
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%base = arith.constant 20 : index")
    k.raw("scf.for %z = %c0 to %c1 step %c1 {")  # inside a loop: not folded at decode time
    k.raw("%zero = arith.muli %z, %c0 : index")
    for i, (name, a, b) in enumerate(exprs):
        k.raw(f"%a{i} = arith.constant {a} : index")
        k.raw(f"%b{i} = arith.constant {b} : index")
        k.raw(f"%aa{i} = arith.addi %a{i}, %zero : index")
        k.raw(f"%r{i} = {name} %aa{i}, %b{i} : index")
        k.raw(f"%off{i} = arith.addi %r{i}, %base : index")
        src = k.subview(x, [0, f"%off{i}"], [1, 1])
        dst = k.subview(o, [0, i], [1, 1])
        k.dma(dst, src)
    k.raw("}")
    xs = np.arange(64, dtype=np.float32)[None, :]
    (out,) = k.run(xs)
    expect = np.array([-3, -4, -1, 3, 9, 3, -4, 4]) + 20
    np.testing.assert_array_equal(out[0], expect.astype(np.float32))


# =========================================================================== memory model


def test_unwritten_sbuf_reads_sentinels(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")  # reads never-written SBUF on purpose (the sentinels)
    k = Kernel()
    o = k.out("out", (128, 4))
    oi = k.out("outi", (2, 3), I32)
    t = k.alloc("t", (128, 4), at=(0, 0))
    ti = k.alloc("ti", (2, 3), I32)
    k.dma(o, t)
    k.dma(oi, ti)
    out, outi = k.run()
    assert np.isnan(out).all()
    np.testing.assert_array_equal(outi, np.full((2, 3), 4, np.int32))


def test_hbm_output_never_written_is_nan():
    k = Kernel()
    o = k.out("out", (2, 2), BF16)
    k.out("other", (1, 1))
    del o
    out, other = k.run()
    assert out.dtype == BF16 and np.isnan(out.astype(np.float32)).all()


def test_alloc_in_a_loop_is_refilled_every_iteration(monkeypatch):
    """Iteration i writes column i of a placed tile; the earlier column is NaN again."""
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")  # reads never-written SBUF on purpose (the sentinels)
    k = Kernel()
    x = k.arg("x", (4, 2))
    o = k.out("out", (2, 4, 2))
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%c2 = arith.constant 2 : index")
    k.raw("scf.for %i = %c0 to %c2 step %c1 {")
    t = k.alloc("t", (4, 2), at=(0, 128))
    col_src = k.subview(x, [0, "%i"], [4, 1])
    col_dst = k.subview(t, [0, "%i"], [4, 1])
    k.dma(col_dst, col_src)
    ov = k.subview(o, ["%i", 0, 0], [1, 4, 2], result_shape=[4, 2])
    k.dma(ov, t)
    k.raw("}")
    xs = rand((4, 2))
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out[0, :, 0], xs[:, 0])
    assert np.isnan(out[0, :, 1]).all()
    assert np.isnan(out[1, :, 0]).all()  # refilled although the same bytes held x[:, 0]
    np.testing.assert_array_equal(out[1, :, 1], xs[:, 1])


def test_overlapping_placements_alias(monkeypatch):
    """Two placed allocs sharing bytes: a write through one is visible through the other."""
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")  # two live buffers share bytes on purpose
    k = Kernel()
    x = k.arg("x", (128, 8))
    o1 = k.out("o1", (128, 4))       # bytes 16..32 of each partition
    o2 = k.out("o2", (64, 8))        # partitions 64..128
    o3 = k.out("o3", (128, 2), BF16)  # the two halves of element 0 as bf16
    a = k.alloc("a", (128, 8), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 16))
    c = k.alloc("c", (64, 8), at=(64, 0))
    h = k.alloc("h", (128, 2), BF16, at=(0, 0))
    k.dma(a, x)
    k.dma(o1, b)
    k.dma(o2, c)
    k.dma(o3, h)
    xs = rand((128, 8))
    r1, r2, r3 = k.run(xs)
    np.testing.assert_array_equal(r1, xs[:, 4:8])
    np.testing.assert_array_equal(r2, xs[64:])
    # little endian: the high 16 bits of an f32 are its bf16 truncation
    np.testing.assert_array_equal(r3.view(np.uint16)[:, 1], (xs[:, 0].view(np.uint32) >> 16).astype(np.uint16))


def test_kernel_writes_to_an_argument_are_visible():
    k = Kernel()
    x = k.arg("x", (4, 8))
    t = k.alloc("t", (4, 8))
    k.dma(t, x)
    k.ins("tensor_scalar_arith", engine="vector", dst=t, src=t, operand0=k.const(2.0), op0="multiply")
    k.dma(x, t)
    xs = rand((4, 8))
    before = xs.copy()
    assert k.run(xs) == ()
    np.testing.assert_array_equal(xs, before * 2)
    # a read-only input is left alone (and does not fail)
    ro = before.copy()
    ro.setflags(write=False)
    k.run(ro)
    np.testing.assert_array_equal(ro, before)


@pytest.mark.parametrize("target,ok", [("trn1", False), ("trn2", True), ("trn3", True)])
def test_sbuf_capacity_per_target(target, ok):
    k = Kernel(target)
    x = k.arg("x", (128, 512))
    o = k.out("out", (128, 512))
    t = k.alloc("t", (128, 512), at=(0, SBUF_BYTES["trn1"] - 1024))
    k.dma(t, x)
    k.dma(o, t)
    prog = k.program()
    xs = rand((128, 512))
    if ok:
        np.testing.assert_array_equal(prog.run([xs])[0], xs)
    else:
        with pytest.raises(NKIRuntimeError, match=r"nisa.alloc: .*196608 bytes per partition on trn1"):
            prog.run([xs])


def test_placement_outside_partitions_is_a_runtime_error():
    k = Kernel()
    k.alloc("t", (64, 4), at=(96, 0))
    with pytest.raises(NKIRuntimeError, match=r"nisa.alloc: partitions \[96, 160\)"):
        k.run()


# =========================================================================== data movement


def test_dma_flat_order_reshape_and_conversion():
    k = Kernel()
    x = k.arg("x", (8, 12))
    o = k.out("out", (96,), BF16)
    t = k.alloc("t", (4, 3, 8))    # different shape, same element count
    tb = k.alloc("tb", (4, 24), BF16)
    k.dma(t, x)
    k.dma(tb, t)                   # f32 -> bf16 through fp32: round to nearest even
    k.dma(o, tb)
    xs = rand((8, 12))
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out.view(np.uint16), xs.reshape(-1).astype(BF16).view(np.uint16))


def test_dma_bf16_is_bit_exact():
    k = Kernel()
    x = k.arg("x", (2, 4), BF16)
    o = k.out("out", (2, 4), BF16)
    t = k.alloc("t", (2, 4), BF16)
    k.dma(t, x)
    k.dma(o, t)
    bits = np.array([[0x7FC1, 0xFF80, 0x0001, 0x8000], [0x3F80, 0x7F7F, 0xC2F7, 0x0000]], np.uint16)
    (out,) = k.run(bits.view(BF16))
    np.testing.assert_array_equal(out.view(np.uint16), bits)  # NaN payload preserved


@pytest.mark.parametrize("shape", [(1, 1), (1, 512), (128, 1), (128, 512), (16, 4, 8)])
@pytest.mark.parametrize("placed", [False, True])
def test_tensor_copy_casts_round_to_nearest_even(shape, placed):
    xs = rand(shape)
    k = unary_kernel(shape, F32, BF16, lambda k, d, s: k.ins("tensor_copy", engine="vector", dst=d, src=s),
                     at=True if placed else None)
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out.view(np.uint16), xs.astype(BF16).view(np.uint16))


def test_tensor_copy_rounding_tie_goes_to_even():
    # 1 + 2^-8 is exactly halfway between two bf16 values: RNE gives 1.0; 1 + 3*2^-8 -> 1 + 2^-6
    xs = np.array([[1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8)]], np.float32)
    k = unary_kernel((1, 3), F32, BF16, lambda k, d, s: k.ins("tensor_copy", engine="gpsimd", dst=d, src=s))
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out.astype(np.float32), [[1.0, 1 + 2 ** -6, -1.0]])


def test_tensor_copy_to_int_truncates_and_saturates():
    xs = np.array([[1.7, -1.7, 3e9, -3e9, np.nan, 0.5]], np.float32)
    k = unary_kernel((1, 6), F32, I32, lambda k, d, s: k.ins("tensor_copy", engine="vector", dst=d, src=s))
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out, [[1, -1, 2 ** 31 - 1, -2 ** 31, 0, 0]])


def test_tensor_copy_int32_exact_vs_scalar_engine_through_fp32():
    xs = np.array([[2 ** 24 + 1, -(2 ** 30) - 3]], np.int32)
    vec = unary_kernel((1, 2), I32, I32, lambda k, d, s: k.ins("tensor_copy", engine="vector", dst=d, src=s))
    np.testing.assert_array_equal(vec.run(xs)[0], xs)
    act = unary_kernel((1, 2), I32, I32, lambda k, d, s: k.ins("tensor_copy", engine="scalar", dst=d, src=s))
    np.testing.assert_array_equal(act.run(xs)[0], xs.astype(np.float32).astype(np.int64))
    # different dtypes: through fp32 (2^24+1 rounds; a negative value saturates to 0 in uint32)
    cast = unary_kernel((1, 2), I32, U32, lambda k, d, s: k.ins("tensor_copy", engine="gpsimd", dst=d, src=s))
    np.testing.assert_array_equal(cast.run(xs)[0], [[2 ** 24, 0]])


@pytest.mark.parametrize("dt,value,expect", [
    (F32, 0.1, np.float32(0.1)),
    (BF16, 0.1, np.float32(0.1).astype(BF16)),
    (I32, -7, -7),
    (np.dtype(np.uint8), 3, 3),
])
def test_memset(dt, value, expect):
    k = Kernel()
    o = k.out("out", (128, 3), dt)
    t = k.alloc("t", (128, 3), dt, at=(0, 0))
    v = k.const(value, "f32" if isinstance(value, float) else "i32")
    k.ins("memset", engine="vector", dst=t, value=v)
    k.dma(o, t)
    (out,) = k.run()
    assert out.dtype == dt
    np.testing.assert_array_equal(out, np.full((128, 3), expect, dt))


# =========================================================================== vector engine

FLOAT_OPS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
    "max": np.maximum,
    "min": np.minimum,
    "is_eq": lambda a, b: np.where(a == b, 1.0, 0.0),
    "is_ne": lambda a, b: np.where(a != b, 1.0, 0.0),
    "is_lt": lambda a, b: np.where(a < b, 1.0, 0.0),
    "is_le": lambda a, b: np.where(a <= b, 1.0, 0.0),
    "is_gt": lambda a, b: np.where(a > b, 1.0, 0.0),
    "is_ge": lambda a, b: np.where(a >= b, 1.0, 0.0),
    "logical_and": lambda a, b: np.where((a != 0) & (b != 0), 1.0, 0.0),
    "logical_or": lambda a, b: np.where((a != 0) | (b != 0), 1.0, 0.0),
    "logical_xor": lambda a, b: np.where((a != 0) ^ (b != 0), 1.0, 0.0),
    "pow": lambda a, b: np.abs(a) ** b,
    "abs_max": lambda a, b: np.maximum(np.abs(a), np.abs(b)),
    "abs_min": lambda a, b: np.minimum(np.abs(a), np.abs(b)),
    "bypass": lambda a, b: a,
}


def _operands(shape):
    a, b = rand(shape), rand(shape)
    # some equal values and zeros so comparisons and logical ops see every case
    a.reshape(-1)[::5] = b.reshape(-1)[::5]
    b.reshape(-1)[::7] = 0
    return a, b


@pytest.mark.parametrize("op", sorted(FLOAT_OPS))
@pytest.mark.parametrize("dst_dt", [F32, BF16], ids=["f32", "bf16"])
def test_tensor_tensor_ops(op, dst_dt):
    shape = (32, 24)
    a, b = _operands(shape)
    if op == "pow":
        a = np.abs(a)
    k = binary_kernel(shape, F32, F32, dst_dt, lambda k, d, x, y: k.ins(
        "tensor_tensor_arith", engine="gpsimd" if op == "pow" else "vector", dst=d, lhs=x, rhs=y, op=op))
    (out,) = k.run(a, b)
    with np.errstate(all="ignore"):
        ref = FLOAT_OPS[op](a, b).astype(np.float32)
    if op == "pow":  # libm pow may differ in the last ulp
        np.testing.assert_allclose(out.astype(np.float32), ref.astype(dst_dt).astype(np.float32),
                                   rtol=1e-6 if dst_dt == F32 else 8e-3)
    else:
        np.testing.assert_array_equal(out, ref.astype(dst_dt))


@pytest.mark.parametrize("shape", [(1, 1), (1, 300), (128, 1), (128, 512)])
@pytest.mark.parametrize("placed", [False, True])
def test_tensor_tensor_shapes_bf16_inputs(shape, placed):
    a, b = rand(shape, BF16), rand(shape, BF16)
    k = binary_kernel(shape, BF16, BF16, BF16, lambda k, d, x, y: k.ins(
        "tensor_tensor_arith", engine="vector", dst=d, lhs=x, rhs=y, op="multiply"), placed=placed)
    (out,) = k.run(a, b)
    ref = (a.astype(np.float32) * b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(out.view(np.uint16), ref.view(np.uint16))


def test_tensor_tensor_operands_of_different_shapes():
    a, b = rand((16, 2, 6)), rand((16, 12))
    k = binary_kernel((16, 2, 6), F32, F32, F32, lambda k, d, x, y: k.ins(
        "tensor_tensor_arith", engine="vector", dst=d, lhs=x, rhs=y, op="subtract"), b_shape=(16, 12))
    (out,) = k.run(a, b)
    np.testing.assert_array_equal(out, a - b.reshape(16, 2, 6))


def test_tensor_tensor_int32_exact_on_gpsimd():
    a = np.array([[2 ** 30 + 1, -5, 7, 2 ** 24 + 1]], np.int32)
    b = np.array([[2 ** 29 + 3, 2, -2, 1]], np.int32)
    for op, ref in (("add", a.astype(np.int64) + b), ("multiply", (a.astype(np.int64) * b).astype(np.int32)),
                    ("divide", np.array([[1, -2, -3, 2 ** 24 + 1]])), ("max", np.maximum(a, b))):
        k = binary_kernel((1, 4), I32, I32, I32, lambda k, d, x, y: k.ins(
            "tensor_tensor_arith", engine="gpsimd", dst=d, lhs=x, rhs=y, op=op))
        np.testing.assert_array_equal(k.run(a, b)[0], ref.astype(np.int32), err_msg=op)


def test_tensor_tensor_bitvec_ops():
    a = np.array([[-1, 0x0F0F, 12, -8]], np.int32)
    b = np.array([[0xFF, 0x00FF, 2, 1]], np.int32)
    cases = {
        "bitwise_and": a & b, "bitwise_or": a | b, "bitwise_xor": a ^ b,
        "left_shift": a << b,
        "right_shift": (a.view(np.uint32) >> b.astype(np.uint32)).view(np.int32),  # logical
    }
    for op, ref in cases.items():
        k = binary_kernel((1, 4), I32, I32, I32, lambda k, d, x, y: k.ins(
            "tensor_tensor_arith", engine="vector", dst=d, lhs=x, rhs=y, op=op))
        np.testing.assert_array_equal(k.run(a, b)[0], ref, err_msg=op)


def test_bitvec_on_floats_is_rejected():
    k = binary_kernel((1, 4), F32, F32, F32, lambda k, d, x, y: k.ins(
        "tensor_tensor_arith", engine="vector", dst=d, lhs=x, rhs=y, op="bitwise_and"))
    with pytest.raises(Exception, match="bitwise_and is a bitvec operator working on integer bits, but operand 'lhs' is float32"):
        k.program()  # a verifier error (nki_spec.md section 6 item 23)


def _tensor_scalar_kernel(shape, dst_dt, op0, v0, op1=None, v1=None, reverse=None, tile_operand1=False,
                          src_dt=F32):
    k = Kernel()
    x = k.arg("x", shape, src_dt)
    o = k.out("out", shape, dst_dt)
    s = k.alloc("s", shape, src_dt)
    d = k.alloc("d", shape, dst_dt)
    k.dma(s, x)
    kw = dict(dst=d, src=s, operand0=k.const(v0, "f32" if isinstance(v0, float) else "i32"), op0=op0)
    if op1 is not None:
        if tile_operand1:
            vec = k.arg("v", (shape[0], 1))
            tv = k.alloc("tv", (shape[0], 1))
            k.dma(tv, vec)
            kw.update(operand1=tv, op1=op1)
        else:
            kw.update(operand1=k.const(v1), op1=op1)
    if reverse:
        kw["reverse_operands"] = reverse
    k.ins("tensor_scalar_arith", engine="vector", **kw)
    k.dma(o, d)
    return k


@pytest.mark.parametrize("dst_dt", [F32, BF16], ids=["f32", "bf16"])
def test_tensor_scalar_two_stages_with_tile_operand(dst_dt):
    x, v = rand((64, 10)), rand((64, 1))
    k = _tensor_scalar_kernel((64, 10), dst_dt, "multiply", 1.5, "add", tile_operand1=True)
    (out,) = k.run(x, v)
    ref = ((x * np.float32(1.5)).astype(np.float32) + v).astype(np.float32)
    np.testing.assert_array_equal(out, ref.astype(dst_dt))


@pytest.mark.parametrize("reverse,ref", [
    (None, lambda x: (x - np.float32(3.0)) / np.float32(2.0)),
    ("first", lambda x: (np.float32(3.0) - x) / np.float32(2.0)),
    ("second", lambda x: np.float32(2.0) / (x - np.float32(3.0))),
    ("both", lambda x: np.float32(2.0) / (np.float32(3.0) - x)),
])
def test_tensor_scalar_reverse_operands(reverse, ref):
    x = rand((8, 16))
    k = _tensor_scalar_kernel((8, 16), F32, "subtract", 3.0, "divide", 2.0, reverse=reverse)
    np.testing.assert_array_equal(k.run(x)[0], ref(x).astype(np.float32))


@pytest.mark.parametrize("op,ref", [
    ("abs", np.abs),
    ("reciprocal", lambda x: np.float32(1) / x),
    ("rsqrt", lambda x: (1 / np.sqrt(np.abs(x).astype(np.float64))).astype(np.float32)),
])
def test_tensor_scalar_unary_ops_ignore_the_operand(op, ref):
    x = rand((4, 16), lo=0.1, hi=3.0) * (1 if op == "rsqrt" else np.float32(-1))
    k = _tensor_scalar_kernel((4, 16), F32, op, 0.0)
    np.testing.assert_allclose(k.run(x)[0], ref(x), rtol=1e-7)


def test_tensor_scalar_bitvec_int():
    x = np.array([[0x1234, -1, 255, 256]], np.int32)
    k = _tensor_scalar_kernel((1, 4), I32, "right_shift", 4, "bitwise_and", 0xFF, src_dt=I32)
    # op1's operand is an f32 constant here; bitvec ops take its integer value
    ref = ((x.view(np.uint32) >> 4) & 0xFF).astype(np.int32)
    np.testing.assert_array_equal(k.run(x)[0], ref)


def test_reciprocal():
    x = rand((128, 64), lo=0.5, hi=4.0)
    k = unary_kernel((128, 64), F32, BF16, lambda k, d, s: k.ins("reciprocal", engine="vector", dst=d, src=s))
    np.testing.assert_array_equal(k.run(x)[0], (np.float32(1) / x).astype(BF16))


@pytest.mark.parametrize("op,ref", [
    ("add", lambda x, ax: np.add.reduce(x.astype(np.float64), axis=ax)),
    ("max", lambda x, ax: np.max(x, axis=ax)),
    ("min", lambda x, ax: np.min(x, axis=ax)),
    ("multiply", lambda x, ax: np.prod(x.astype(np.float64), axis=ax)),
    ("abs_max", lambda x, ax: np.max(np.abs(x), axis=ax)),
])
@pytest.mark.parametrize("num_r_dim", [1, 2])
def test_tensor_reduce(op, ref, num_r_dim):
    x = rand((16, 4, 6), lo=0.5, hi=1.5) * np.where(RNG.random((16, 4, 6)) < 0.5, -1, 1).astype(np.float32)
    dst_shape = (16, 4) if num_r_dim == 1 else (16, 1)
    axes = (2,) if num_r_dim == 1 else (1, 2)
    k = Kernel()
    xa = k.arg("x", x.shape)
    o = k.out("out", dst_shape)
    s = k.alloc("s", x.shape)
    d = k.alloc("d", dst_shape)
    k.dma(s, xa)
    k.ins("tensor_reduce_arith", engine="vector", dst=d, src=s, op=op, negated="true", num_r_dim=num_r_dim)
    k.dma(o, d)
    (out,) = k.run(x)
    expect = -ref(x, axes).reshape(dst_shape)
    np.testing.assert_allclose(out, expect, rtol=2e-6, atol=1e-6)


def test_tensor_reduce_keepdims_and_bitwise_or():
    x = RNG.integers(0, 2 ** 16, size=(8, 2, 5)).astype(np.int32)
    k = Kernel()
    xa = k.arg("x", x.shape, I32)
    o = k.out("out", (8, 2, 1), I32)
    s = k.alloc("s", x.shape, I32)
    d = k.alloc("d", (8, 2, 1), I32)
    k.dma(s, xa)
    k.ins("tensor_reduce_arith", engine="vector", dst=d, src=s, op="bitwise_or", negated="false", num_r_dim=1)
    k.dma(o, d)
    np.testing.assert_array_equal(k.run(x)[0], np.bitwise_or.reduce(x, axis=2, keepdims=True))


# =========================================================================== scalar engine


def _f64_ref(name):
    erf = np.vectorize(math.erf)
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    sp = lambda x: np.log1p(np.exp(x))  # noqa: E731
    return {
        "copy": lambda x: x, "identity": lambda x: x, "exp": np.exp, "relu": lambda x: np.maximum(x, 0),
        "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
        "gelu_apprx_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
        "sigmoid": sig, "tanh": np.tanh, "square": lambda x: x * x, "sqrt": lambda x: np.sqrt(np.abs(x)),
        "rsqrt": lambda x: 1 / np.sqrt(np.abs(x)), "reciprocal": lambda x: 1 / x,
        "log": lambda x: np.log(np.abs(x)), "silu": lambda x: x * sig(x), "abs": np.abs, "sign": np.sign,
        "softplus": sp, "erf": erf, "sin": np.sin, "arctan": np.arctan,
        "mish": lambda x: x * np.tanh(sp(x)),
    }[name]


ACTS = ["copy", "identity", "exp", "relu", "gelu", "gelu_apprx_tanh", "sigmoid", "tanh", "square", "sqrt",
        "rsqrt", "reciprocal", "log", "silu", "abs", "sign", "softplus", "erf", "sin", "arctan", "mish"]


@pytest.mark.parametrize("fn", ACTS)
def test_activation_functions(fn):
    P, F = 128, 40
    x = rand((P, F), lo=-3, hi=3)
    if fn in ("sqrt", "rsqrt", "log"):
        x = np.abs(x) + np.float32(0.05)
    scale = rand((P, 1), lo=0.5, hi=1.0)
    k = Kernel()
    xa, sa = k.arg("x", (P, F)), k.arg("scale", (P, 1))
    o = k.out("out", (P, F))
    s, sc, d = k.alloc("s", (P, F)), k.alloc("sc", (P, 1)), k.alloc("d", (P, F))
    k.dma(s, xa)
    k.dma(sc, sa)
    k.ins("activation", engine="scalar", dst=d, src=s, bias=k.const(0.25), scale=sc, op=fn)
    k.dma(o, d)
    (out,) = k.run(x, scale)
    z = (x * scale + np.float32(0.25)).astype(np.float32)
    if fn in ("sqrt", "rsqrt", "log"):
        assert (z > 0).all()
    ref = _f64_ref(fn)(z.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("fn,ref", [
    ("copy", lambda z: z), ("relu", lambda z: np.maximum(z, 0)), ("square", lambda z: z * z),
    ("abs", np.abs),
])
def test_activation_bf16_dst_rounds_the_fp32_result(fn, ref):
    x = rand((32, 64), lo=-4, hi=4)
    k = unary_kernel((32, 64), F32, BF16, lambda k, d, s: k.ins(
        "activation", engine="scalar", dst=d, src=s, bias=k.const(0.0), scale=k.const(3.0), op=fn))
    (out,) = k.run(x)
    z = (x * np.float32(3.0)).astype(np.float32)
    np.testing.assert_array_equal(out.view(np.uint16), ref(z).astype(np.float32).astype(BF16).view(np.uint16))


def test_activation_reduce_accumulates_across_instructions():
    P, F = 64, 16
    x1, x2 = rand((P, F)), rand((P, F))
    k = Kernel()
    a1, a2 = k.arg("x1", (P, F)), k.arg("x2", (P, F))
    o_acc, o_fresh = k.out("acc", (P, 1)), k.out("fresh", (P, 1))
    o_reset = k.out("reset", (P, 1))
    t1, t2, d = k.alloc("t1", (P, F)), k.alloc("t2", (P, F)), k.alloc("d", (P, F), BF16)
    r1, r2, r3 = k.alloc("r1", (P, 1)), k.alloc("r2", (P, 1)), k.alloc("r3", (P, 1))
    k.dma(t1, a1)
    k.dma(t2, a2)
    zero, one = k.const(0.0), k.const(1.0)
    k.ins("activation", engine="scalar", dst=d, src=t1, bias=zero, scale=one, op="exp", reduce_op="add",
          reduce_cmd="reset_reduce")
    k.ins("activation", engine="scalar", dst=d, reduce_res=r1, src=t2, bias=zero, scale=one, op="exp",
          reduce_op="add", reduce_cmd="reduce")
    k.ins("activation", engine="scalar", dst=d, reduce_res=r2, src=t2, bias=zero, scale=one, op="exp",
          reduce_op="add")
    k.ins("activation", engine="scalar", dst=d, reduce_res=r3, src=t2, bias=zero, scale=one, op="exp",
          reduce_op="add", reduce_cmd="reset")
    k.dma(o_acc, r1)
    k.dma(o_fresh, r2)
    k.dma(o_reset, r3)
    prog = k.program()
    for _ in range(2):  # the accumulator state does not leak between runs
        acc, fresh, reset = prog.run([x1, x2])
        e1 = np.exp(x1.astype(np.float64)).sum(1, keepdims=True)
        e2 = np.exp(x2.astype(np.float64)).sum(1, keepdims=True)
        np.testing.assert_allclose(acc, e1 + e2, rtol=1e-6)
        np.testing.assert_allclose(fresh, e2, rtol=1e-6)
        np.testing.assert_array_equal(reset, np.zeros((P, 1), np.float32))


# =========================================================================== tensor engine


def _matmul_kernel(K, M, N, kt, in_dt=F32, placed=True, mode=None, pre=None):
    """out[M,N] = xT[K,M].T @ y[K,N], accumulated over K tiles of kt in one PSUM tile."""
    k = Kernel()
    xa, ya = k.arg("xT", (K, M), in_dt), k.arg("y", (K, N), in_dt)
    o = k.out("out", (M, N))
    ps = k.alloc("ps", (M, N), F32, space="psum", at=(0, 2048) if placed else None)
    if pre:
        pre(k, ps)
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw(f"%nk = arith.constant {K // kt} : index")
    k.raw(f"%ckt = arith.constant {kt} : index")
    k.raw("scf.for %kk = %c0 to %nk step %c1 {")
    k.raw("%k0 = arith.muli %kk, %ckt : index")
    sx = k.alloc("sx", (kt, M), in_dt, at=(0, 0) if placed else None)
    sy = k.alloc("sy", (kt, N), in_dt, at=(0, 4096) if placed else None)
    k.dma(sx, k.subview(xa, ["%k0", 0], [kt, M]))
    k.dma(sy, k.subview(ya, ["%k0", 0], [kt, N]))
    extra = {"psum_accumulate_flags": mode} if mode else {}
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false", **extra)
    k.raw("}")
    sb = k.alloc("sb", (M, N), F32, at=(0, 8192) if placed else None)
    k.ins("tensor_copy", engine="vector", dst=sb, src=ps)
    k.dma(o, sb)
    return k


@pytest.mark.parametrize("in_dt", [F32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("placed", [True, False])
def test_matmul_psum_auto_accumulates_over_k(in_dt, placed):
    K, M, N = 384, 96, 200
    x, y = rand((K, M), in_dt), rand((K, N), in_dt)
    (out,) = _matmul_kernel(K, M, N, 128, in_dt, placed=placed).run(x, y)
    ref = x.astype(np.float64).T @ y.astype(np.float64)
    assert not np.isnan(out).any()  # the first matmul overwrote the NaN-filled PSUM tile
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("mode", [None, "overwrite", "accumulate"])
def test_matmul_into_a_strided_psum_view_is_the_blas_product_bit_for_bit(mode):
    """A float32 product written straight into (a column block of) a PSUM tile, or added
    from a temporary, has the bits of NumPy's fresh ``x.T @ y`` (one BLAS call per K tile,
    summed in float32 in K-tile order), whatever the row stride of the destination."""
    K, M, N, kt = 256, 64, 48, 128
    g = np.random.default_rng(20)      # its own stream: the later tests' draws stay as they were
    x, y = (g.uniform(-2, 2, shape).astype(np.float32) for shape in ((K, M), (K, N)))
    k = Kernel()
    xa, ya = k.arg("xT", (K, M)), k.arg("y", (K, N))
    o = k.out("out", (M, N))
    wide = k.alloc("wide", (M, 2 * N), F32, space="psum", at=(0, 0))
    ps = k.subview(wide, [0, N], [M, N])
    if mode == "accumulate":
        k.ins("memset", engine="vector", dst=wide, value=k.const(0.0))
    for i in range(K // kt):
        sx, sy = k.alloc(f"sx{i}", (kt, M)), k.alloc(f"sy{i}", (kt, N))
        k.dma(sx, k.subview(xa, [i * kt, 0], [kt, M]))
        k.dma(sy, k.subview(ya, [i * kt, 0], [kt, N]))
        extra = {"psum_accumulate_flags": mode} if mode else {}
        k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false",
              **extra)
    sb = k.alloc("sb", (M, N))
    k.ins("tensor_copy", engine="vector", dst=sb, src=ps)
    k.dma(o, sb)
    (out,) = k.run(x, y)
    parts = [np.matmul(x[i * kt:(i + 1) * kt].T, y[i * kt:(i + 1) * kt]) for i in range(K // kt)]
    if mode == "overwrite":
        ref = parts[-1]
    else:
        ref = np.zeros((M, N), np.float32) if mode == "accumulate" else parts.pop(0)
        for p in parts:
            ref = np.add(ref, p)
    np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))


def test_matmul_overwrite_keeps_only_the_last_k_tile():
    K, M, N = 256, 8, 16
    x, y = rand((K, M)), rand((K, N))
    (out,) = _matmul_kernel(K, M, N, 128, mode="overwrite").run(x, y)
    np.testing.assert_allclose(out, x[128:].T.astype(np.float64) @ y[128:], rtol=1e-5, atol=1e-5)


def test_matmul_accumulate_adds_onto_a_memset_tile(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")  # an auto matmul after a memset on purpose (hazard kind 5)
    K, M, N = 256, 8, 16
    x, y = rand((K, M)), rand((K, N))

    def memset(k, ps):
        k.ins("memset", engine="vector", dst=ps, value=k.const(10.0))

    (acc,) = _matmul_kernel(K, M, N, 128, mode="accumulate", pre=memset).run(x, y)
    np.testing.assert_allclose(acc, 10 + x.T.astype(np.float64) @ y, rtol=1e-5, atol=1e-5)
    # with accumulate=None, a non-matmul write clears the matmul flags: the first matmul overwrites
    (auto,) = _matmul_kernel(K, M, N, 128, pre=memset).run(x, y)
    np.testing.assert_allclose(auto, x.T.astype(np.float64) @ y, rtol=1e-5, atol=1e-5)


def test_non_matmul_write_between_matmuls_restarts_accumulation(monkeypatch):
    """matmul(auto), then memset of the same PSUM tile, then matmul(auto): the last overwrites."""
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")  # an auto matmul after a memset on purpose (hazard kind 5)
    K, M, N = 32, 8, 16
    x, y = rand((K, M)), rand((K, N))
    k = Kernel()
    xa, ya = k.arg("xT", (K, M)), k.arg("y", (K, N))
    o1, o2 = k.out("first", (M, N)), k.out("second", (M, N))
    ps = k.alloc("ps", (M, N), space="psum", at=(0, 6144))
    sx, sy, sb = k.alloc("sx", (K, M)), k.alloc("sy", (K, N)), k.alloc("sb", (M, N))
    k.dma(sx, xa)
    k.dma(sy, ya)
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false")
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false")
    k.ins("tensor_copy", engine="vector", dst=sb, src=ps)
    k.dma(o1, sb)
    k.ins("memset", engine="vector", dst=ps, value=k.const(5.0))
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false")
    k.ins("tensor_copy", engine="vector", dst=sb, src=ps)
    k.dma(o2, sb)
    first, second = k.run(x, y)
    ref = x.T.astype(np.float64) @ y
    np.testing.assert_allclose(first, 2 * ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, ref, rtol=1e-5, atol=1e-5)


def test_psum_alloc_inside_loop_restarts_accumulation():
    """Two output tiles reuse the same PSUM bytes; the second must not add onto the first."""
    K, M, N = 256, 16, 32
    x, y = rand((K, M)), rand((K, 2 * N))
    k = Kernel()
    xa, ya = k.arg("xT", (K, M)), k.arg("y", (K, 2 * N))
    o = k.out("out", (M, 2 * N))
    for c, v in ((0, 0), (1, 1), (2, 2), (128, 128), (32, N)):
        k.raw(f"%i{c}_{v} = arith.constant {v} : index")
    k.raw("scf.for %j = %i0_0 to %i2_2 step %i1_1 {")
    ps = k.alloc("ps", (M, N), space="psum", at=(0, 0))
    k.raw("%n0 = arith.muli %j, %i32_32 : index")
    k.raw("scf.for %kk = %i0_0 to %i2_2 step %i1_1 {")
    k.raw("%k0 = arith.muli %kk, %i128_128 : index")
    sx, sy = k.alloc("sx", (128, M), at=(0, 0)), k.alloc("sy", (128, N), at=(0, 1024))
    k.dma(sx, k.subview(xa, ["%k0", 0], [128, M]))
    k.dma(sy, k.subview(ya, ["%k0", "%n0"], [128, N]))
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false")
    k.raw("}")
    sb = k.alloc("sb", (M, N), at=(0, 4096))
    k.ins("tensor_copy", engine="scalar", dst=sb, src=ps)
    k.dma(k.subview(o, [0, "%n0"], [M, N]), sb)
    k.raw("}")
    (out,) = k.run(x, y)
    # a float32 sum of K products is within (K + 1) * 2**-24 * sum(|x| |y|) of the exact one
    # (Higham, Accuracy and Stability of Numerical Algorithms, 3.1): a fixed atol fails on
    # outputs near 0 for some random draws; a second accumulation would be off by ~sum(x y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    bound = (K + 1) * 2.0 ** -24 * (np.abs(x64).T @ np.abs(y64))
    assert np.all(np.abs(out - x64.T @ y64) <= bound)


@pytest.mark.parametrize("engine,P,F", [("tensor", 64, 40), ("vector", 32, 16)])
def test_nc_transpose(engine, P, F):
    x = rand((P, F), BF16)
    k = Kernel()
    xa = k.arg("x", (P, F), BF16)
    o = k.out("out", (F, P), BF16)
    s = k.alloc("s", (P, F), BF16, at=(0, 0))
    t = k.alloc("t", (F, P), BF16, space="psum" if engine == "tensor" else "sbuf", at=(0, 0 if engine == "tensor" else 4096))
    d = k.alloc("d", (F, P), BF16)
    k.dma(s, xa)
    k.ins("nc_transpose", engine=engine, dst=t, data=s)
    k.ins("tensor_copy", engine="vector", dst=d, src=t)
    k.dma(o, d)
    (out,) = k.run(x)
    np.testing.assert_array_equal(out.view(np.uint16), x.T.view(np.uint16))


# =========================================================================== gpsimd


@pytest.mark.parametrize("dt", [I32, F32, BF16], ids=["i32", "f32", "bf16"])
def test_iota(dt):
    k = Kernel()
    o = k.out("out", (4, 2, 3), dt)
    t = k.alloc("t", (4, 2, 3), dt)
    k.ins("iota", engine="gpsimd", dst=t, pattern="[[10, 2], [1, 3]]", offset=5, channel_multiplier=100)
    k.dma(o, t)
    (out,) = k.run()
    p, i, j = np.meshgrid(np.arange(4), np.arange(2), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(out, (5 + 100 * p + 10 * i + j).astype(dt))


def test_affine_select_causal_mask():
    n = 8
    x = rand((n, n))
    k = Kernel()
    xa = k.arg("x", (n, n))
    o = k.out("out", (n, n))
    s, d = k.alloc("s", (n, n)), k.alloc("d", (n, n))
    k.dma(s, xa)
    k.ins("affine_select", engine="gpsimd", dst=d, on_true_tile=s, on_false_value=k.const(-1e4),
          pattern="[[-1, 8]]", offset=0, channel_multiplier=1, cmp_op="is_ge")
    k.dma(o, d)
    (out,) = k.run(x)
    np.testing.assert_array_equal(out, np.where(np.tril(np.ones((n, n), bool)), x, np.float32(-1e4)))


# =========================================================================== errors


def test_out_of_bounds_dynamic_subview_names_the_op():
    k = tensor_add_kernel(rows=256, cols=512, tile=(128, 512))
    text = k.text().replace("%ni = arith.constant 2 : index", "%ni = arith.constant 3 : index")
    prog = decode(Parser(make_context(), text).parse_module())
    a = rand((256, 512))
    with pytest.raises(NKIRuntimeError) as ei:
        prog.run([a, a])
    msg = str(ei.value)
    assert "memref.subview" in msg and "dim 0 has size 256" in msg and "[256, 384)" in msg


def test_out_of_bounds_static_subview():
    k = Kernel()
    x = k.arg("x", (4, 8))
    t = k.alloc("t", (4, 4))
    k.dma(t, k.subview(x, [0, 6], [4, 4]))
    prog = k.program(verify=False)
    with pytest.raises(NKIRuntimeError, match=r"memref.subview: out-of-bounds access of 'source' "
                       r"\(memref<4x8xf32.*\): dim 1 has size 8"):
        prog.run([rand((4, 8))])


def test_runtime_error_is_located_at_the_op():
    k = Kernel()
    x = k.arg("x", (4, 8))
    t = k.alloc("t", (4, 4))
    k.dma(t, k.subview(x, [0, 6], [4, 4]))
    text = k.text().replace("[4, 4] [1, 1] :", '[4, 4] [1, 1] :', 1)
    # attach a source location to the subview
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "memref.subview" in line:
            lines[i] = line + ' loc("kern.py":12:7)'
    prog = decode(Parser(make_context(), "\n".join(lines)).parse_module())
    with pytest.raises(NKIRuntimeError) as ei:
        prog.run([rand((4, 8))])
    assert ei.value.loc is not None and (ei.value.loc.file, ei.value.loc.line) == ("kern.py", 12)
    assert str(ei.value).startswith("kern.py:12:7: runtime error: memref.subview")


def test_unexpected_exceptions_are_wrapped(monkeypatch):
    def boom(a, b):
        raise ZeroDivisionError("kaboom")

    monkeypatch.setitem(nm.ALU, "add", boom)
    k = binary_kernel((2, 2), F32, F32, F32, lambda k, d, x, y: k.ins(
        "tensor_tensor_arith", engine="vector", dst=d, lhs=x, rhs=y, op="add"))
    with pytest.raises(NKIRuntimeError, match=r"nisa.tensor_tensor_arith: internal error .*kaboom") as ei:
        k.run(rand((2, 2)), rand((2, 2)))
    assert isinstance(ei.value.__cause__, ZeroDivisionError)


def test_unknown_op_is_rejected_at_decode():
    k = Kernel()
    k.raw("%x = arith.constant 1.0 : f32")
    k.raw("%y = arith.addf %x, %x : f32")
    with pytest.raises(NKIRuntimeError, match="arith.addf is not supported by the ISA interpreter"):
        k.program()


def test_loop_carried_values_are_rejected():
    k = Kernel()
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %c0) -> (index) {")
    k.raw("scf.yield %acc : index")
    k.raw("}")
    with pytest.raises(NKIRuntimeError, match="scf.for with iter_args"):
        k.program()


def test_argument_validation():
    prog = tensor_add_kernel(rows=128, cols=512).program()
    a = rand((128, 512))
    with pytest.raises(NKITypeError, match=r"takes 2 argument\(s\) \(a, b\), got 1"):
        prog.run([a])
    with pytest.raises(NKITypeError, match=r"argument #1 'b' must be a NumPy array of shape \[128, 512\] and "
                                           r"dtype float32, got dtype float64"):
        prog.run([a, a.astype(np.float64)])
    with pytest.raises(NKITypeError, match=r"argument #0 'a' .* got shape \[512, 128\]"):
        prog.run([a.T.copy(), a])
    with pytest.raises(NKITypeError, match=r"argument #0 'a' .* got list"):
        prog.run([a.tolist(), a])


def test_mixed_class_tensor_scalar_is_rejected():
    k = _tensor_scalar_kernel((1, 4), I32, "bitwise_and", 3, "add", 1.0, src_dt=I32)
    with pytest.raises(Exception, match="must be of the same class"):  # a verifier error
        k.program()


# =========================================================================== speed


def test_rolled_loop_of_a_tiny_instruction_runs_every_iteration():
    """2000 iterations of a tiny instruction all execute (the dispatch cost itself is a
    bench number, not a timed test: see issue 20's interpreter measurements)."""
    k = Kernel()
    x = k.arg("x", (1, 1))
    o = k.out("out", (1, 1))
    t = k.alloc("t", (1, 1), at=(0, 0))
    k.dma(t, x)
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%n = arith.constant 2000 : index")
    k.raw("scf.for %i = %c0 to %n step %c1 {")
    k.ins("tensor_scalar_arith", engine="vector", dst=t, src=t, operand0=k.const(1.0), op0="add")
    k.raw("}")
    k.dma(o, t)
    prog = k.program()
    (out,) = prog.run([np.zeros((1, 1), np.float32)])
    assert out[0, 0] == 2000
