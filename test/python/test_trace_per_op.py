"""The tracer's per-call fast paths (issue 17, session 9) give what the general paths give.

- :func:`nki_mlir.frontend.tracer.dispatch` passes tensor proxies and plain values to the
  handler without a call of ``unwrap`` each, and looks for loop keys only in arguments
  that can carry them (:func:`~nki_mlir.frontend.tracer._call_keys`).

(The traced IR of nki-library's attention_tkg is unchanged byte for byte: checked by hash
against the previous frontend, see the session report.)
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import arg_specs, build_module, tracer
from nki_mlir.frontend.proxies import LoopIndex, NkiTensor
from nki_mlir.frontend.values import Index


@nki.jit
def copies(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf, name="tile")
    for i in range(2):
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_dispatch_unwraps_plain_arguments_inline(monkeypatch):
    """Tensor proxies and plain values (a string, a dtype) reach the handler without ``unwrap``;
    the IR is the one the general path gives (same printed module with unwrap forced)."""
    a = np.zeros((256, 8), np.float32)
    seen = []
    real = tracer.unwrap

    def counting(x):
        seen.append(type(x))
        return real(x)
    monkeypatch.setattr(tracer, "unwrap", counting)
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    # at most one tensor proxy: the kernel's result (trace_build); none of the calls' arguments
    assert seen.count(NkiTensor) <= 1 and str not in seen, seen
    fast, inline = str(module), len(seen)

    # the general path: every argument but a tensor proxy through unwrap
    monkeypatch.setattr(tracer, "_UNWRAPS", _Everything())
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    assert str in seen and len(seen) > 2 * inline
    assert str(module) == fast


class _Everything(frozenset):
    def __contains__(self, item) -> bool:
        return True


def test_call_keys_are_the_keys_of_the_arguments():
    blk = Block(arg_types=[IndexType(), IndexType()])
    i = LoopIndex(Index.of(blk.args[0]), frozenset({"k:1"}))
    j = LoopIndex(Index.of(blk.args[1]), frozenset({"k:2"}))
    cases = [((), {}), ((1, "x", None), {"a": 2.0}), ((i,), {}), ((1,), {"s": slice(0, j)}),
             (([1, (i,)],), {"b": (j,)}), ((slice(i, 4),), {}), (({"d": i},), {})]
    for args, kwargs in cases:
        want = tracer._keys_of(args) | tracer._keys_of(tuple(kwargs.values()))
        assert tracer._call_keys(args, kwargs) == want, (args, kwargs)


@nki.jit
def writes(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    spare = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, :])
    for i in nl.affine_range(2):
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=spare[i * 128:(i + 1) * 128, :], src=t)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    nisa.dma_copy(dst=out[0:128, :], src=t)
    return out


def test_find_writes_looks_once_per_class_and_block(monkeypatch):
    """``kernel_checks.find_writes`` gives what the op-by-op reference gives (live and
    zero-trip-loop writes, first writer per base buffer), reads the written operands of
    only the ops whose class has write roles and asks once per block whether it is in a
    zero-trip loop (here: the loop body stands for one)."""
    from xdsl.irdl import IRDLOperation
    from nki_mlir.dialects.effects import base_buffer, has_write_roles
    from nki_mlir.frontend import kernel_checks as K
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(writes.fn, arg_specs(writes.fn, (a,), {}), "trn2")
    body = next(op for op in module.walk() if op.name == "func.func").body.blocks[0]
    loop_body = next(op for op in body.walk() if op.name == "scf.for").body.blocks[0]
    asked = []

    def dead(op):
        asked.append(op.parent)
        return op.parent is loop_body
    monkeypatch.setattr(K, "in_dead_loop", dead)
    live, dead_writes = {}, {}
    for op in body.walk():
        for v in K.written_operands(op):
            (dead_writes if dead(op) else live).setdefault(base_buffer(v), op)
    asked.clear()
    calls = []
    real = K.written
    monkeypatch.setattr(K, "written", lambda op: calls.append(op) or real(op))
    got = K.find_writes(body)
    assert [list(d.items()) for d in got] == [list(live.items()), list(dead_writes.items())]
    assert len(live) == 2 and len(dead_writes) == 3        # t, out; t, spare, out
    assert asked == [body, loop_body]
    writers = [op for op in body.walk() if isinstance(op, IRDLOperation) and has_write_roles(type(op))]
    assert calls == writers and len(writers) < sum(1 for _ in body.walk()) // 2


def test_tensor_and_index_init_store_the_fields():
    """``Tensor`` / ``Index`` are made by an ``__init__`` writing the instance dict (not the
    dataclass's ``object.__setattr__`` per field), with the dataclass's signature and the
    same state, equality and hash as a dataclass-made twin."""
    import dataclasses
    import inspect
    from nki_mlir.frontend.values import Tensor
    for cls, args, kw in ((Tensor, ("v", (2, 3), np.float32, "sbuf", (3, 1), 0, None), {"name": "x"}),
                          (Tensor, ("v", (4,), np.int8, "hbm", (1,), None, None),
                           {"is_base": False, "storage": (8,), "blocks": ((2, 1),)}),
                          (Index, (), {}), (Index, ((("s", 2),), 5), {})):
        code = cls.__init__.__code__
        assert "__dataclass_builtins_object__" not in code.co_names + code.co_freevars
        twin = dataclasses.dataclass(frozen=True)(type("Twin", (), {
            "__annotations__": dict(cls.__annotations__),
            **{f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}}))
        assert [(p.name, p.default) for p in inspect.signature(cls).parameters.values()] == \
            [(p.name, p.default) for p in inspect.signature(twin).parameters.values()]
        got, want = cls(*args, **kw), twin(*args, **kw)
        assert vars(got) == vars(want) and list(vars(got)) == list(vars(want))
        assert got == cls(*args, **kw) and hash(got) == hash(cls(*args, **kw))
        assert dataclasses.replace(got) == got


@nki.jit
def copies_of_views(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    y = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    for k in range(4):
        nisa.tensor_copy(dst=y[:, k * 16:(k + 1) * 16], src=x[:, k * 16:(k + 1) * 16])
    nisa.tensor_copy(dst=y[:, 0:32], src=x[:, 32:64])
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def copy_mismatch(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    y = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y[:, 0:16], src=x[:, 0:32])
    return out


def test_generic_instruction_checks_once_per_combination(monkeypatch):
    """``ods_ops.verify_definition`` runs its generic checks once per op class, target,
    layout-free operand types and properties that passed: tensor_copy views that differ
    only in their offsets share one run; another shape, or another target, runs them again.
    A failing op is never remembered: the same mistake twice gives the same error twice."""
    from nki_mlir.dialects import ods_ops, ods_verify_memo
    from nki_mlir.errors import NKIVerifyError
    import pytest
    runs = []
    real = ods_ops._generic_checks

    def counting(op, rec):
        runs.append(op.name)
        return real(op, rec)
    monkeypatch.setattr(ods_ops, "_generic_checks", counting)
    monkeypatch.setattr(ods_verify_memo, "PASSED", {})
    monkeypatch.setattr(ods_ops, "PASSED", ods_verify_memo.PASSED)
    a = np.zeros((128, 64), np.float32)
    for target, want in (("trn2", 2), ("trn2", 0), ("trn3", 2)):
        runs.clear()
        build_module(copies_of_views.fn, arg_specs(copies_of_views.fn, (a,), {}), target)
        assert runs.count("nki.tensor_copy") == want, (target, runs)
    messages = []
    for _ in range(2):
        with pytest.raises(NKIVerifyError) as info:
            build_module(copy_mismatch.fn, arg_specs(copy_mismatch.fn, (a,), {}), "trn2")
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "per-partition element counts differ" in messages[0]


def test_segment_sizes_shared():
    """``fast_build.segment_sizes``: one shared attribute per list of sizes, the one
    ``DenseArrayBase.from_list`` builds."""
    from xdsl.dialects.builtin import DenseArrayBase, i32
    from nki_mlir.dialects.fast_build import segment_sizes
    for sizes in ([1, 0, 1], [1, 1, 0, 0], []):
        got = segment_sizes(sizes)
        assert got == DenseArrayBase.from_list(i32, sizes) and segment_sizes(list(sizes)) is got


@nki.jit
def escaping_tile(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for k in range(2):
        last = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=last, src=a[k * 128:(k + 1) * 128, :])
    nisa.dma_copy(dst=out[0:128, :], src=last)
    return out


def test_unrolled_range_recorded_without_decide(monkeypatch):
    """``loops.nki_loop`` on a plain ``range`` already unrolled by a retrace records its
    decision in place (``ctx.decide`` inlined) and the loop report still says why."""
    from nki_mlir.frontend import trace_build
    from nki_mlir.frontend.context import TraceContext
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    decided = []
    real = TraceContext.decide
    monkeypatch.setattr(TraceContext, "decide",
                        lambda self, key, what, why: decided.append(why) or real(self, key, what, why))
    a = np.zeros((256, 8), np.float32)
    build_module(escaping_tile.fn, arg_specs(escaping_tile.fn, (a,), {}), "trn2")
    (what, why), = trace_build.last_loop_report().values()
    assert what == "unrolled" and "'last'" in why and "after the loop" in why, why
    assert why not in decided


def test_handler_steps_classify_each_parameter_once():
    """``ods_calls._steps``: each converted parameter of every instruction definition with
    the kind its handler used to find by an ``isinstance`` chain per call (tile, scalar,
    engine, else a property with the conversion of its property kind); API-only arguments
    are left out."""
    from nki_mlir.dialects.ods import (Engine, EnumProp, Flag, Int, IntList, IntPair, OpToken,
                                       Property, Scalar, Tile)
    from nki_mlir.dialects.ods_forms import ApiArg, FloatList
    from nki_mlir.frontend import ods_calls as C
    from nki_mlir.instructions.define import DEFINITIONS
    conversions = [(Flag, C._flag), (FloatList, C._float_list), (Int, C._int), (IntList, C._int_list),
                   (IntPair, C._int_pair), (OpToken, C._op_token), (EnumProp, C._enum)]
    seen = 0
    for rec in DEFINITIONS.values():
        steps = C._steps(rec)
        assert [p for p, *_ in steps] == [p for p in rec.params if not isinstance(p, ApiArg)]
        for p, kind, is_property, convert in steps:
            want = C._TILE if isinstance(p, Tile) else C._SCALAR if isinstance(p, Scalar) else \
                C._ENGINE if isinstance(p, Engine) else C._PROPERTY
            assert kind == want and is_property == isinstance(p, Property)
            if kind == C._PROPERTY:
                assert convert is next((f for k, f in conversions if isinstance(p, k)), C._no_conversion)
                seen += 1
    assert seen > 50


def test_per_call_paths_import_nothing():
    """Functions that run once per traced op (or per allocation / indirect DMA / verified
    operand) take their imports from module level: a function-level relative import costs
    a package lookup on every call."""
    import ast
    import inspect
    import textwrap
    from nki_mlir.dialects import rules
    from nki_mlir.frontend import lang_calls, naming, tensor_ap
    from nki_mlir.frontend.beta1 import block_dims
    from nki_mlir.instructions import movement
    hot = [lang_calls._shape, lang_calls._alloc_shape, block_dims.split_shape,
           tensor_ap.emit_indirect_dma, movement._dma_copy_call, rules.partition_start,
           tracer._name_from_source, naming.name_tensor]
    for fn in hot:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert not imports, f"{fn.__module__}.{fn.__name__} imports per call"


def test_builtin_call_reaches_the_tracer_directly(monkeypatch):
    """``Builtin.__call__`` reads the active trace and the tracer without calling
    ``context.active`` / ``context.tracer``; outside a kernel it is still the located API
    misuse error."""
    import pytest
    from nki_mlir.errors import NKIError
    from nki_mlir.frontend import builtins

    def no_call(*a):
        raise AssertionError("called")
    monkeypatch.setattr(builtins, "tracer", no_call)
    assert not hasattr(builtins, "active")
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    assert sum(op.name == "nki.dma_copy" for op in module.walk()) == 2    # one rolled loop body
    with pytest.raises(NKIError) as info:
        nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    assert info.value.code == "err_nki_api_outside_of_nki_kernel"


def test_emit_makes_one_location_attribute_per_source_position(monkeypatch):
    """``IRBuilder.emit`` builds the location attribute once per source position (a
    subscript's views and index arithmetic, the instruction using them, the next iteration
    of an unrolled loop), and every op carries the attribute of its own position."""
    from xdsl.dialects.builtin import FileLineColLoc
    from nki_mlir.diagnostics import make_loc
    from nki_mlir.frontend import builder
    made = []
    monkeypatch.setattr(builder, "make_loc", lambda loc: made.append(loc) or make_loc(loc))
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    located = [op for op in module.walk() if isinstance(op.location, FileLineColLoc)]
    assert len(located) >= 8 and len(made) < len(located)
    for op in located:
        assert any(op.location is make_loc(loc) for loc in made)


@nki.jit
def copy_bad_start(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    y = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_copy(dst=y[0:64, :], src=x[0:64, :])
    nisa.tensor_copy(dst=y[0:64, :], src=x[1:65, :])   # BAD_START
    return out


def test_types_only_verify_remembered_but_its_also_part(monkeypatch):
    """A definition ``verify`` marked ``types_only`` (tensor_copy's) runs once per passing
    combination; its ``also`` part (the start-partition rule, which follows the defining
    views) still runs for every op: a copy from a view starting at partition 1 is rejected
    with the start-partition message although a copy of the same types passed before it."""
    import pytest
    from nki_mlir.dialects import ods_ops, ods_verify_memo, rules
    from nki_mlir.errors import NKIVerifyError
    from nki_mlir.instructions.define import DEFINITIONS
    monkeypatch.setattr(ods_verify_memo, "PASSED", {})
    monkeypatch.setattr(ods_ops, "PASSED", ods_verify_memo.PASSED)
    rec = DEFINITIONS["tensor_copy"]
    assert ods_verify_memo.TYPES_ONLY[rec.verify] is not None
    verified = []
    real = rules.elementwise        # (the first rule tensor_copy's verify applies)
    monkeypatch.setattr(rules, "elementwise", lambda op, *a: verified.append(op.name) or real(op, *a))
    a = np.zeros((128, 64), np.float32)
    build_module(copies_of_views.fn, arg_specs(copies_of_views.fn, (a,), {}), "trn2")
    assert verified.count("nki.tensor_copy") == 2      # five copies of two combinations
    with pytest.raises(NKIVerifyError) as info:
        build_module(copy_bad_start.fn, arg_specs(copy_bad_start.fn, (a,), {}), "trn2")
    assert "covers partitions [1, 65)" in str(info.value) and "must start at partition" in str(info.value)
    assert "BAD_START" in open(__file__).read().splitlines()[info.value.loc.line - 1]
    assert verified.count("nki.tensor_copy") == 3      # the [64, 64] copy's combination, once


def indirect_dma_ops(cls, properties: dict) -> list:
    """Four ``cls`` (an indirect DMA op class) ops on block arguments: three whose checks
    pass (a table, a strided view of it, the table again), then one with a [16, 2] index."""
    from nki_mlir.dialects.common import memref
    table = memref((64, 32), np.float32, "hbm")
    table_view = memref((64, 32), np.float32, "hbm", strides=(64, 1), offset=32)
    rows = memref((16, 32), np.float32, "sbuf")
    index = memref((16, 1), np.int32, "sbuf")
    bad_index = memref((16, 2), np.int32, "sbuf")
    block = Block(arg_types=[rows, table, table_view, index, bad_index])
    dst, src, src_view, idx, bad = block.args
    return [cls.build(operands=[dst, s, i, None], properties=dict(properties))
            for s, i in ((src, idx), (src_view, idx), (src, idx), (src, bad))]


def test_indirect_dma_verdict_once_per_combination(monkeypatch):
    """``nki.dma_copy_indirect``'s own rules (``types_verdict``) run once per passing op
    class, layout-free operand types and properties; a broken op still gets its message."""
    import pytest
    from xdsl.utils.exceptions import VerifyException
    from nki_mlir.dialects import ods_verify_memo, rules
    from nki_mlir.dialects.views import NkiDmaCopyIndirectOp
    monkeypatch.setattr(ods_verify_memo, "PASSED", {})
    checked = []
    real = rules.enum
    monkeypatch.setattr(rules, "enum", lambda op, *a: checked.append(op.name) or real(op, *a))
    ops = indirect_dma_ops(NkiDmaCopyIndirectOp, {})
    for op in ops[:3]:
        op.verify_()
    assert checked == ["nki.dma_copy_indirect"]
    with pytest.raises(VerifyException, match=r"'src_index' must be \[P, 1\]"):
        ops[3].verify_()
    for op in ops:
        op.drop_all_references()


@nki.jit
def named_in_loop(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(3):
        tile = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=a[0:128, :])
        nisa.dma_copy(dst=out[0:128, :], src=tile)
    return out


def test_binding_name_read_once_per_line(monkeypatch):
    """The variable an allocation's line binds is read off the source once per trace and
    position; every allocation there is named after it (``tile``, ``tile_1``, ...)."""
    read = []
    real = tracer.binding_name
    monkeypatch.setattr(tracer, "binding_name", lambda loc: read.append(loc) or real(loc))
    a = np.zeros((128, 8), np.float32)
    module, _ = build_module(named_in_loop.fn, arg_specs(named_in_loop.fn, (a,), {}), "trn2")
    allocs = [op for op in module.walk() if op.name == "nki.ndarray"]
    assert len(allocs) == 4 and len(read) == 2          # out, then tile (three times)
    assert [op.results[0].name_hint for op in allocs][1:] == ["tile"] * 3


def test_unwrap_keeps_plain_slices_and_tuples_items():
    """``tracer.unwrap``: a slice of plain bounds is returned as it is; tuple and list items
    are unwrapped in place of a call each (tensor proxies to their tensors)."""
    s = slice(1, 8, 2)
    assert tracer.unwrap(s) is s
    assert tracer.unwrap((s, 3, None, [s, "x"])) == (s, 3, None, [s, "x"])
    assert tracer.unwrap(slice(None)) == slice(None)


def test_subscript_asks_for_index_expressions_only_for_unusual_keys(monkeypatch):
    """``indexing._index_plain`` calls the Beta 1 ``is_advanced`` test only when a key is
    not an int, slice, ``nl.ds``, loop index or ``...``."""
    from nki_mlir.frontend import indexing
    import nki_mlir.frontend.beta1.index  # noqa: F401  (registers the Beta 1 forms)
    asked = []
    real = indexing.BETA1_FORMS["is_advanced"]
    monkeypatch.setitem(indexing.BETA1_FORMS, "is_advanced", lambda keys: asked.append(keys) or real(keys))
    a = np.zeros((256, 8), np.float32)
    build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    assert asked == []


def test_emit_builds_the_op_build_makes(monkeypatch):
    """``args.emit`` builds an op class whose ``build`` is IRDLOperation's without the
    call of ``build`` (same op: the traced module prints the same with ``build``), and a
    class with its own ``build`` through it."""
    from nki_mlir.frontend import args as A
    a = np.zeros((128, 64), np.float32)
    fast = str(build_module(copies_of_views.fn, arg_specs(copies_of_views.fn, (a,), {}), "trn2")[0])
    assert any(direct for _, _, direct in A._PLANS.values())
    monkeypatch.setattr(A, "_PLANS", {})
    real = A._plan
    monkeypatch.setattr(A, "_plan", lambda cls: real(cls)[:2] + (False,))
    assert str(build_module(copies_of_views.fn, arg_specs(copies_of_views.fn, (a,), {}), "trn2")[0]) == fast
