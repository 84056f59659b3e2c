"""Compile-time shortcuts that must not change results (issue 16): the memo printer prints
what xDSL's printer prints, memo tables hand out equal attributes, and the module verifier
runs after every pass only with NKI_MLIR_VERIFY_EACH_PASS=1 (once at the end otherwise)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, i64
from xdsl.printer import Printer

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir import compiler
from nki_mlir.dialects.common import memref
from nki_mlir.dialects.memo_printer import MemoPrinter, _escaped
from nki_mlir.frontend import arg_specs, build_module


@nki.jit
def views(x):
    """Strided views, dynamic offsets in a rolled loop, scalars of several types."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.activation(dst=t[:, 0:2], op=nl.exp, data=t[:, 2:4])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-0.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    for j in range(2):
        u = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=x[j * 128:(j + 1) * 128, :])
        nisa.tensor_scalar(dst=u, data=u, op0=nl.add, operand0=float("inf") if j else 1e-30)
        nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=u)
    return out


def _plain(module, debuginfo: bool = True) -> str:
    buf = io.StringIO()
    Printer(stream=buf, print_debuginfo=debuginfo).print_op(module)
    return buf.getvalue() + "\n"


@nki.jit
def access_patterns(a):
    """a [4, 128, 64]: ``ap`` views (memref.reinterpret_cast) at static offsets, at a loop
    index (arith.muli / addi of index constants) and at a register value; float constants."""
    nb, p, f = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.ap([[f, p], [1, f]], offset=p * f))
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-0.5)
    nisa.dma_copy(dst=out.ap([[f, p], [1, f]], offset=0), src=t)
    for i in nl.dynamic_range(1, nb - 1):
        u = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=a.ap([[f, p], [1, f]], offset=3, scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0), src=u)
    for j in range(2):
        v = nl.ndarray((p, f // 2), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=v, src=a[j * 2 + 1, :, 1:f - 1].ap([[f, p], [2, f // 2]], offset=j))
        nisa.dma_copy(dst=out[j * 3, :, :].ap([[f, p], [2, f // 2]], offset=1), src=v)
    return out


def test_memo_printer_prints_what_xdsl_prints():
    for kernel, shape in ((views, (512, 8)), (two_ops, (128, 8)), (access_patterns, (4, 128, 64))):
        _check_printer(kernel, shape)


def test_memo_printer_builds_the_frequent_ops_at_once():
    """The ops printed as one string (view ops, constants, index arithmetic) are in the
    kernels whose text is compared above, and in their fast path: a printer whose fast
    paths all decline prints the same text."""
    from nki_mlir.dialects import memo_printer
    x = np.zeros((4, 128, 64), np.float32)
    module, _ = build_module(access_patterns.fn, arg_specs(access_patterns.fn, (x,), {}), "trn2")
    names = {op.name for op in module.walk()}
    assert {"memref.reinterpret_cast", "memref.subview", "arith.constant", "arith.addi",
            "arith.muli"} <= names, names
    made = {}
    for cls, fast in memo_printer._FAST.items():
        made[cls.name] = [t for op in module.walk() if type(op) is cls
                          and (t := fast(MemoPrinter(stream=io.StringIO()), op)) is not None]
    for name in ("memref.reinterpret_cast", "memref.subview", "arith.constant", "arith.addi", "arith.muli"):
        assert made[name], name
    text = compiler.print_module(module)
    assert text == _plain(module)


def _check_printer(kernel, shape):
    x = np.zeros(shape, np.float32)
    module, _ = build_module(kernel.fn, arg_specs(kernel.fn, (x,), {}), "trn2")
    assert compiler.print_module(module) == _plain(module)
    compiler.run_pipeline(module, "trn2")
    text = compiler.print_module(module)
    assert text == _plain(module)
    assert compiler.print_module(module, debuginfo=False) == _plain(module, debuginfo=False)
    assert compiler.print_module(compiler.parse_module(text)) == text


def test_escaped_string_literal():
    for s in (b"plain.py", b'q"uote', b"back\\slash", b"\x01\x7f\xc3\xa9"):
        buf = io.StringIO()
        Printer(stream=buf).print_bytes_literal(s)
        assert _escaped(s) == buf.getvalue()


def test_memo_tables_give_equal_attributes():
    a = memref((128, 4), np.float32, "sbuf", strides=(8, 2), offset=None)
    assert a is memref([128, 4], "float32", "sbuf", strides=[8, 2], offset=None)
    assert isinstance(a, MemRefType) and a.get_shape() == (128, 4) and a.get_shape() is a.get_shape()
    assert memref((128, 4), np.float32, "sbuf") != memref((128, 4), np.float32, "psum")
    d = DenseArrayBase.from_list(i64, [3, -1, 7])
    assert d.get_values() == (3, -1, 7) and d == DenseArrayBase.from_list(i64, [3, -1, 7])
    assert hash(d) == hash(DenseArrayBase.from_list(i64, [3, -1, 7]))


def test_directly_built_attributes_equal_checked_ones():
    """Attributes built without re-running their checks (i64_attr, strided layouts, i32/i64
    dense arrays) equal, hash and print like the ones upstream's constructors build."""
    from xdsl.dialects.builtin import IntegerAttr, StridedLayoutAttr, i32

    from nki_mlir.dialects import xdsl_speedups
    from nki_mlir.dialects.common import i64_attr
    pairs = [(i64_attr(v), IntegerAttr(v, i64)) for v in (0, 7, 2 ** 63 - 1, 2 ** 63, -3)]
    for strides, offset in (((4, 1), 0), ((4, 1), 512), ((8, 2), None)):
        t = memref((128, 4), np.float32, "sbuf", strides=strides, offset=offset)
        pairs.append((t.layout, StridedLayoutAttr(list(strides), offset)))
    for elt in (i32, i64):
        for values in ([], [0, 5], [-(2 ** 31), 2 ** 31 - 1]):
            pairs.append((DenseArrayBase.from_list(elt, values), xdsl_speedups._from_list(elt, values)))
    pairs.append((DenseArrayBase.from_list(i32, [2 ** 31]), xdsl_speedups._from_list(i32, [2 ** 31])))
    for fast, checked in pairs:
        assert fast == checked and hash(fast) == hash(checked) and str(fast) == str(checked)
        type(fast).new(fast.parameters)       # the parameters pass the checks


@pytest.mark.parametrize("each", ["0", "1"])
def test_verifier_runs_at_the_end_or_after_every_pass(monkeypatch, each):
    from xdsl.dialects.builtin import ModuleOp
    monkeypatch.setenv("NKI_MLIR_VERIFY_EACH_PASS", each)
    calls = []
    orig = ModuleOp.verify
    monkeypatch.setattr(ModuleOp, "verify", lambda self, *a, **k: (calls.append(1), orig(self, *a, **k))[1])
    x = np.zeros((256, 8), np.float32)
    nki.compile(views, x, use_cache=False)
    assert len(calls) == (5 if each == "1" else 1)


def test_decode_pauses_the_cyclic_gc(monkeypatch):
    """Decoding a compiled kernel runs with the cyclic GC paused, as the compile does (with
    it running, decoding an LNC2 attention kernel took 2x the CPU time), and resumes it."""
    import gc

    from nki_mlir.runtime import interpreter
    seen = []
    orig = interpreter.decode
    monkeypatch.setattr(interpreter, "decode", lambda *a, **k: (seen.append(gc.isenabled()), orig(*a, **k))[1])
    ck = nki.compile(views, np.zeros((256, 8), np.float32), use_cache=False)
    assert gc.isenabled()
    ck.program     # noqa: B018
    assert seen == [False] and gc.isenabled()
    out = ck(np.ones((256, 8), np.float32))
    assert out.shape == (256, 8)

@nki.jit
def two_ops(x):
    """tensor_scalar with and without its optional second operand."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=1.0)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=0.5)
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("kernel", [views, two_ops])
def test_named_construct_readers_index_like_upstream(kernel):
    """The direct readers of named operands / results / regions (dialects/xdsl_speedups)
    give what upstream's segment-size indexing gives, optional operands absent or present."""
    from xdsl.irdl.operations import (BaseAttrAccessor, OptionalAttrAccessor, VarIRConstruct,
                                      VariadicAttrAccessor)
    x = np.zeros((512, 8) if kernel is views else (128, 8), np.float32)
    module, _ = build_module(kernel.fn, arg_specs(kernel.fn, (x,), {}), "trn2")
    kinds = set()
    for stage in ("nki", "nisa"):
        if stage == "nisa":
            compiler.run_pipeline(module, "trn2")
        for op in module.walk():
            for klass in type(op).__mro__:
                for name, acc in vars(klass).items():
                    if not isinstance(acc, BaseAttrAccessor):
                        continue
                    sizes = acc.option.container(op)[acc.option.attribute_name].get_values()
                    every = {VarIRConstruct.OPERAND: tuple(op.operands),
                             VarIRConstruct.RESULT: tuple(op.results),
                             VarIRConstruct.REGION: tuple(op.regions)}[acc.construct]
                    want, got = acc.index(sizes, every), getattr(op, name)
                    if isinstance(acc, VariadicAttrAccessor):
                        assert tuple(got) == tuple(want), (op.name, name)
                    else:
                        assert got is want, (op.name, name)
                    kinds.add((type(acc).__name__, isinstance(acc, OptionalAttrAccessor) and got is None))
    assert ("SingleAttrAccessor", False) in kinds and ("OptionalAttrAccessor", True) in kinds
    if kernel is two_ops:
        assert ("OptionalAttrAccessor", False) in kinds


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("region_first", [False, True])
def test_walks_visit_what_upstream_visits(reverse, region_first):
    """The walks of dialects/xdsl_speedups (ops without regions yielded directly) give
    upstream's order on a module with nested regions (a rolled loop)."""
    from xdsl.ir import Operation

    def upstream(op):      # xDSL 0.74's Operation.walk / Region.walk / Block.walk, spelled out
        if not region_first:
            yield op
        for region in reversed(op.regions) if reverse else op.regions:
            for block in reversed(region.blocks) if reverse else region.blocks:
                for inner in reversed(list(block.ops)) if reverse else list(block.ops):
                    yield from upstream(inner)
        if region_first:
            yield op

    x = np.zeros((512, 8), np.float32)
    module, _ = build_module(views.fn, arg_specs(views.fn, (x,), {}), "trn2")
    assert any(op.regions for op in module.walk() if op.name == "scf.for")
    want = list(upstream(module))
    assert list(module.walk(reverse=reverse, region_first=region_first)) == want
    leaf = next(op for op in module.walk() if not op.regions)
    assert list(Operation.walk(leaf, reverse=reverse, region_first=region_first)) == [leaf]


def test_memref_types_verified_once_per_parameter_combination(monkeypatch):
    """``common.memref`` verifies a (shape, element type, layout class, space) combination
    once; the types built after it without the check equal the checked constructor's, and a
    new combination (here a non-IntAttr shape) is still checked and rejected."""
    from xdsl.dialects.builtin import ArrayAttr, IntAttr, MemRefType, StridedLayoutAttr, f32
    from xdsl.irdl.attributes import ParamAttrDef
    from xdsl.utils.exceptions import VerifyException

    from nki_mlir.dialects import common
    calls = []
    verify = ParamAttrDef.verify
    monkeypatch.setattr(ParamAttrDef, "verify",
                        lambda self, attr: calls.append(type(attr)) or verify(self, attr))
    common._MEMREF_OK.clear()
    shape = (128, 1000003)              # (a shape no other test uses)
    types = [memref(shape, np.float32, "sbuf", strides=(7, 1), offset=k) for k in (11, 12, 13)]
    assert calls.count(MemRefType) == 1
    for k, t in zip((11, 12, 13), types):
        want = MemRefType(f32, list(shape), StridedLayoutAttr([7, 1], k), common._space_attr("sbuf"))
        assert t == want and hash(t) == hash(want) and str(t) == str(want)
    bad = ArrayAttr([IntAttr(1), common._space_attr("sbuf")])
    with pytest.raises(VerifyException):
        common._new_memref(bad, f32, types[0].layout, common._space_attr("sbuf"))
    with pytest.raises(VerifyException):     # (a rejected combination is not remembered)
        common._new_memref(bad, f32, types[0].layout, common._space_attr("sbuf"))


def frontend_and_final_modules(cases):
    """For each ``(kernel, shape)`` of ``cases``: the frontend module of ``kernel`` on a zero
    float32 array of ``shape``, then the same module after the default pass pipeline."""
    for kernel, shape in cases:
        x = np.zeros(shape, np.float32)
        module, _ = build_module(kernel.fn, arg_specs(kernel.fn, (x,), {}), "trn2")
        yield module
        compiler.run_pipeline(module, "trn2")
        yield module
