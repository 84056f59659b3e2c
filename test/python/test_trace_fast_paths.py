"""The tracer's fast paths (issue 17) give what the general paths give.

- :func:`nki_mlir.frontend.builder.view_op` builds the ``memref.subview`` /
  ``memref.reinterpret_cast`` that xDSL's constructors build (operands, result type,
  properties in order, printed form);
- :func:`nki_mlir.frontend.ods_calls.binder` binds a call as ``inspect.Signature.bind`` +
  ``apply_defaults`` does (the same dict, in parameter order), or says it does not bind;
- :func:`nki_mlir.frontend.loops.nki_loop` on a plain ``range``: bounds too large are still a
  located error, and the loop report still says why each loop was unrolled;
- :func:`nki_mlir.frontend.kernel_checks.written_operands` gives the write accesses' values;
- :func:`nki_mlir.frontend.frames.frame_loc`'s memo keeps equal code objects of two files apart;
- :func:`nki_mlir.frontend.view_layout._extents` sums an access pattern's extents as the
  bounds check did with four sums;
- :meth:`nki_mlir.frontend.builder.IRBuilder.emit` links an op into its block as
  ``Block.add_op`` does.

(The traced IR of nki-library kernels is unchanged byte for byte: checked by hash against
the previous frontend, see the issue 17 report.)
"""
from __future__ import annotations

import inspect
import io
import itertools
import os

import numpy as np
import pytest
from xdsl.dialects import memref as memref_d
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType
from xdsl.ir import Block
from xdsl.printer import Printer

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.dialects.common import memref
from nki_mlir.errors import NKITypeError
from nki_mlir.frontend import arg_specs, build_module, trace_build
from nki_mlir.frontend.builder import view_op
from nki_mlir.frontend.ods_calls import binder
from nki_mlir.frontend.builtins import HANDLERS


def _printed(op) -> str:
    buf = io.StringIO()
    Printer(stream=buf, print_generic_format=True).print_op(op)
    return buf.getvalue()


@pytest.mark.parametrize("cls", [memref_d.SubviewOp, memref_d.ReinterpretCastOp])
def test_view_op_is_the_constructors_op(cls):
    src_t = memref((128, 64, 8), np.float32, "sbuf")
    block = Block(arg_types=[src_t, IndexType(), IndexType()])
    src, i, j = block.args
    cases = [([], [0, 0, 0], [128, 64, 8], [1, 1, 1]),
             ([], [5, 7, 0], [2, 3, 4], [1, 2, 1]),
             ([i], [DYNAMIC_INDEX, 0, 3], [128, 1, 4], [1, 1, 2]),
             ([i, j], [DYNAMIC_INDEX, DYNAMIC_INDEX, 0], [1, 1, 8], [1, 1, 1]),
             ([j], [DYNAMIC_INDEX], [4, 16], [64, 1])]
    for dyn, offsets, sizes, strides in cases:
        rtype = memref(tuple(sizes), np.float32, "sbuf", strides=tuple(strides), offset=None)
        want = cls(src, dyn, [], [], offsets, list(sizes), list(strides), rtype)
        got = view_op(cls, src, dyn, offsets, tuple(sizes), tuple(strides), rtype)
        assert type(got) is cls
        assert tuple(got.operands) == tuple(want.operands)
        assert [r.type for r in got.results] == [r.type for r in want.results]
        assert list(got.properties.items()) == list(want.properties.items())
        assert list(got.attributes.items()) == list(want.attributes.items())
        assert _printed(got) == _printed(want)
        got.properties["static_sizes"] = want.properties["static_strides"]  # its own dict
        again = view_op(cls, src, dyn, offsets, tuple(sizes), tuple(strides), rtype)
        assert list(again.properties.items()) == list(want.properties.items())
        for op in (got, want, again):
            op.drop_all_references()


def _reference(sig: inspect.Signature, args: tuple, kwargs: dict):
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return list(bound.arguments.items())


def test_binder_binds_as_inspect_does():
    P = inspect.Parameter
    kind = P.POSITIONAL_OR_KEYWORD
    sig = inspect.Signature([P("cg", kind), P("dst", kind), P("data", kind), P("op", kind, default=None),
                             P("scale", kind, default=1.0), P("name", kind, default=None)])
    bind = binder(sig)
    values = {"dst": "D", "data": "X", "op": "add", "scale": 2.0, "name": "n", "cg": "C", "bogus": 0}
    calls = 0
    for npos in range(0, 7):
        pos = tuple(f"p{k}" for k in range(npos))
        for r in range(0, 4):
            for names in itertools.combinations(values, r):
                kw = {n: values[n] for n in names}
                got = bind("CG", pos, kw)
                want = _reference(sig, ("CG", *pos), kw)
                assert (None if got is None else list(got.items())) == want, (pos, kw)
                calls += 1
    assert calls > 200


def test_binder_of_every_generated_isa_handler():
    """Every ``nisa.*`` handler made from a definition: all arguments by keyword, then the
    required ones by position, then one unknown keyword (which does not bind)."""
    seen = 0
    for api, handler in HANDLERS.items():
        if not api.startswith("nisa.") or getattr(handler, "__wrapped__", None) is not None:
            continue
        sig = getattr(handler, "__signature__", None)
        if sig is None or any(p.kind != p.POSITIONAL_OR_KEYWORD for p in sig.parameters.values()):
            continue
        bind = binder(sig)
        params = list(sig.parameters.values())[1:]
        every = {p.name: object() for p in params}
        required = tuple(object() for p in params if p.default is p.empty)
        for args, kw in (((), every), (required, {}), ((), {**every, "no_such_argument": 1}),
                         (tuple(every.values()) + (1,), {})):
            got = bind("CG", args, kw)
            assert (None if got is None else list(got.items())) == _reference(sig, ("CG", *args), kw)
        seen += 1
    assert seen >= 20


@nki.jit
def huge_range(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(0, 1 << 62, 1 << 61):
        nisa.dma_copy(dst=out, src=a)
    return out


@nki.jit
def plain_ranges(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(1):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0:128, :])
        for j in range(2):
            nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=t)
    for k in range(2):
        last = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=last, src=a[k * 128:(k + 1) * 128, :])
    nisa.dma_copy(dst=out[0:128, :], src=last)
    return out


def test_range_bounds_too_large_is_located():
    a = np.zeros((128, 8), np.float32)
    with pytest.raises(NKITypeError) as info:
        build_module(huge_range.fn, arg_specs(huge_range.fn, (a,), {}), "trn2")
    err = info.value
    assert "loop bounds 0, 4611686018427387904" in str(err) and "too large" in str(err)
    assert os.path.samefile(err.loc.file, __file__)
    assert "for i in range(0, 1 << 62, 1 << 61):" in open(__file__).read().splitlines()[err.loc.line - 1]


def test_plain_range_loop_report(monkeypatch):
    """Rolled, unrolled for one iteration, and unrolled by a retrace (the fast path's
    ``ctx.unroll`` answer) -- each with its reason."""
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    a = np.zeros((256, 8), np.float32)
    build_module(plain_ranges.fn, arg_specs(plain_ranges.fn, (a,), {}), "trn2")
    lines = open(__file__).read().splitlines()
    where = {text: f"{__file__}:{lines.index(text) + 1}:{len(text) - len(text.lstrip()) + 1}"
             for text in ("    for i in range(1):", "        for j in range(2):", "    for k in range(2):")}
    report = trace_build.last_loop_report()
    assert report[where["    for i in range(1):"]] == ("unrolled", "it runs one iteration")
    assert report[where["        for j in range(2):"]] == ("rolled", "sequential loop, 2 iterations in one body")
    what, why = report[where["    for k in range(2):"]]
    assert what == "unrolled" and "'last'" in why and "after the loop" in why, why


def test_written_operands_are_the_write_accesses():
    """``kernel_checks.written_operands`` (read through the write roles) gives what the write
    accesses of ``effects.accesses`` give, op by op, on traced ``nki`` modules."""
    from xdsl.irdl import IRDLOperation
    from nki_mlir.dialects.effects import accesses
    from nki_mlir.frontend.kernel_checks import written_operands
    import test_seeded_faults as sf
    checked = 0
    rng = np.random.default_rng(0)
    for _, kernel, make in sf.KERNELS:
        args = make(rng)
        module, _ = build_module(kernel.fn, arg_specs(kernel.fn, args, {}), "trn2")
        for op in module.walk():
            want = [a.value for a in accesses(op) if a.is_write] if isinstance(op, IRDLOperation) else []
            assert list(written_operands(op)) == want, op.name
            checked += bool(want)
    assert checked >= 20


def test_frame_loc_memo_keeps_files_apart():
    """``frames.frame_loc`` remembers the location of a (code, instruction): two equal code
    objects of two files (equal under ``==``: the file name is not compared) keep their own
    file, and a remembered answer is the computed one."""
    from nki_mlir.frontend import frames
    src = "import sys\n\ndef f():\n    return sys._getframe()\n"
    made = []
    for name in ("/nonexistent/a_kernel.py", "/nonexistent/b_kernel.py"):
        scope: dict = {}
        exec(compile(src, name, "exec"), scope)
        made.append(scope["f"])
    assert made[0].__code__ == made[1].__code__ and made[0].__code__ is not made[1].__code__
    first = [frames.frame_loc(f()) for f in made]
    again = [frames.frame_loc(f()) for f in made]
    assert [l.file for l in first] == ["/nonexistent/a_kernel.py", "/nonexistent/b_kernel.py"]
    assert again == first and first[0].line == first[1].line == 4 and first[0].col == 5


def test_as_index_of_a_constant():
    """``values.as_index`` of an int (Python or NumPy) is the symbol-free Index of its value;
    an Index is returned as is."""
    from nki_mlir.frontend.values import Index, as_index
    for c in (0, 1, -7, 1 << 40, np.int64(3), np.int32(-2)):
        got = as_index(c)
        assert type(got) is Index and got == Index((), int(c)) and type(got.const) is int
        assert as_index(c) == got and as_index(got) is got


def test_index_constants_shared():
    """Affine algebra on constant ``Index`` es gives the shared constant (``as_index``) with
    the same value; symbols, and constants that are not Python ints, take the general path."""
    from nki_mlir.frontend.values import Index, as_index
    a, b = as_index(12), as_index(5)
    assert a.add(b) is as_index(17) and a.sub(b) is as_index(7) and a.add(b) == Index((), 17)
    assert a.scale(3) is as_index(36) and a.scale(0) == Index((), 0)
    blk = Block(arg_types=[IndexType()])
    i = Index.of(blk.args[0])
    assert i.add(a) == Index(((blk.args[0], 1),), 12)
    assert i.sub(i) == Index((), 0) and i.scale(2).const == 0
    odd = Index((), np.int64(3))
    assert type(odd.add(a).const) is np.int64 and type(odd.scale(2).const) is np.int64


def test_access_pattern_extents():
    """``view_layout._extents`` (one pass) gives the sums ``_static_bounds`` is defined by."""
    from nki_mlir.frontend.view_layout import _extents
    rng = np.random.default_rng(0)
    for _ in range(500):
        nd = int(rng.integers(1, 5))
        shape = [int(n) for n in rng.integers(1, 9, nd)]
        strides = [int(s) for s in rng.integers(-40, 41, nd)]
        want = (sum(min(0, s * (n - 1)) for s, n in zip(strides, shape)),
                sum(max(0, s * (n - 1)) for s, n in zip(strides, shape)),
                sum(min(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:])),
                sum(max(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:])))
        assert _extents(shape, strides) == want


def test_emit_links_ops_without_the_ancestor_walk(monkeypatch):
    """``IRBuilder.emit`` appends an op without regions as ``Block.add_op`` does (same
    parent, prev / next links and last op) but without ``is_ancestor``'s walk up the block's
    ancestors, which only an op with regions could fail."""
    import sys

    from xdsl.ir import Operation

    from nki_mlir.frontend.builder import IRBuilder
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    walked = []         # the ops emit() attached through Block.add_op
    real, emit = Operation.is_ancestor, IRBuilder.emit.__code__

    def is_ancestor(self, other):
        f = sys._getframe(1)
        for _ in range(4):      # _attach_op < (insert_op_after <) add_op < emit
            if f is None or f.f_code is emit:
                break
            f = f.f_back
        if f is not None and f.f_code is emit:
            walked.append(self)
        return real(self, other)
    monkeypatch.setattr(Operation, "is_ancestor", is_ancestor)
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(plain_ranges.fn, arg_specs(plain_ranges.fn, (a,), {}), "trn2")
    assert walked and all(op.regions for op in walked)     # (the rolled loop's op)
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                ops, prev = list(block.ops), None
                assert (block.first_op, block.last_op) == (ops[0], ops[-1])
                for o in ops:
                    assert o.parent is block and o.prev_op is prev
                    prev = o
                assert ops[-1].next_op is None
