"""The planned IRDL verifier (dialects/fast_verify.py) gives upstream's verdict and message.

Every op of the lit dialect tests (valid and invalid chunks, and the dependence-pass
inputs), and broken copies of them (a property removed, an unknown property, operand
segment sizes off by one, a result type swapped, one operand fewer or more), is verified
by both; the outcome (passes, or the exception type and text) must be the same.
"""
from __future__ import annotations

import pytest
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, i32, i64
from xdsl.irdl import IRDLOperation

from nki_mlir.dialects import fast_verify, make_context

from lit_modules import LIT, lit_modules

FILES = sorted((LIT / "dialects").rglob("*.mlir")) + sorted((LIT / "invalid").glob("*.mlir")) \
    + sorted((LIT / "passes").glob("nisa-deps*.mlir"))        # allocs with a copy(...) operand


def _outcome(fn, op):
    try:
        fn(op.get_irdl_definition(), op)
    except Exception as exc:  # noqa: BLE001 -- the outcome is what is compared
        return type(exc).__name__, str(exc)
    return "ok"


def _ops():
    for _, module in lit_modules(FILES):
        yield from (op for op in module.walk() if isinstance(op, IRDLOperation))


def _broken(op):
    """Copies of ``op`` each breaking one rule the IRDL verifier checks."""
    if op.properties:
        name = next(iter(op.properties))
        c = op.clone()
        del c.properties[name]
        yield c
    c = op.clone()
    c.properties["nkim_unknown"] = StringAttr("x")
    yield c
    seg = op.properties.get("operandSegmentSizes")
    if isinstance(seg, DenseArrayBase):
        sizes = list(seg.get_values())
        for i in range(len(sizes)):
            c = op.clone()
            c.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes[:i] + [sizes[i] + 1] + sizes[i + 1:])
            yield c
        c = op.clone()
        c.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i64, sizes)
        yield c
    if op.results:
        c = op.clone()
        c.results[0]._type = i32          # a result of the wrong type
        yield c
    if op.operands:                       # one operand fewer / one more (same-size splits)
        c = op.clone()
        c.operands = list(op.operands)[:-1]
        yield c
        c = op.clone()
        c.operands = [*op.operands, op.operands[0]]
        yield c


def test_same_verdicts_as_upstream():
    ops = list(_ops())
    assert len(ops) > 200
    failing = compared = 0
    for op in ops:
        for o in [op, *_broken(op)]:
            want = _outcome(fast_verify._upstream_verify, o)
            assert _outcome(fast_verify.verify, o) == want, (o.name, want)
            failing += want != "ok"
            compared += 1
    assert failing > 100 and compared > failing     # both kinds were compared


@pytest.mark.parametrize("name", ["memref.subview", "nisa.activation", "nisa.alloc"])
def test_planned(name):
    """The ops the frontend and the passes emit most are verified from a plan."""
    from nki_mlir.dialects import nisa  # noqa: F401  (registers the op classes)
    ctx = make_context()
    op_def = ctx.get_op(name).get_irdl_definition()
    plan = fast_verify._plan(op_def)
    assert plan is not None
    assert all(pure for *_, pure in plan.props)       # their verdicts are remembered


def _view_ops():
    """memref.reinterpret_cast / subview ops, valid and each breaking one rule of their own
    verifier (a dynamic-position count, the result's rank or a size, a non-memref type)."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, f32
    from xdsl.dialects.memref import ReinterpretCastOp, SubviewOp
    from xdsl.ir import Block

    from nki_mlir.dialects.common import memref
    src = memref((128, 64), "float32", "sbuf")
    block = Block(arg_types=[src, IndexType()])
    s, i = block.args
    c = arith.ConstantOp(IntegerAttr(3, IndexType()))
    res = memref((4, 8), "float32", "sbuf", strides=(64, 1), offset=None)
    res0 = memref((4, 8), "float32", "sbuf", strides=(64, 1), offset=0)
    for cls in (ReinterpretCastOp, SubviewOp):
        yield cls(s, [i], [], [], [DYNAMIC_INDEX], [4, 8], [64, 1], res)
        yield cls(s, [], [], [], [0], [4, 8], [64, 1], res0)
        yield cls(s, [i, c.result], [], [], [DYNAMIC_INDEX], [4, 8], [64, 1], res)   # one too many
        yield cls(s, [], [], [], [DYNAMIC_INDEX], [4, 8], [64, 1], res)              # one too few
        yield cls(s, [], [i], [], [0], [4, 8], [64, 1], res0)                        # size marker
        yield cls(s, [], [], [i], [0], [4, 8], [64, 1], res0)                        # stride marker
        yield cls(s, [], [i], [], [0], [4, DYNAMIC_INDEX], [64, 1], res0)            # dynamic size
        yield cls(s, [], [], [], [0], [4, 8, 1], [64, 1, 1], res0)                   # rank
        yield cls(s, [], [], [], [0], [4, 9], [64, 1], res0)                         # a size
        yield cls(s, [], [], [], [0], [4, 8], [64, 1], f32)                          # not a memref
        yield cls(i, [], [], [], [0], [4, 8], [64, 1], res0)                         # source type


def test_view_ops_same_verdicts_as_upstream():
    outcomes = []
    for op in _view_ops():
        cls = type(op)
        upstream = (fast_verify._upstream_reinterpret if cls.name == "memref.reinterpret_cast"
                    else fast_verify._upstream_subview)
        got, want = _own(cls.verify_, op), _own(upstream, op)
        assert got == want, (op.name, got, want)
        outcomes.append(want)
    assert outcomes.count("ok") >= 4 and len(outcomes) - outcomes.count("ok") >= 12


def _own(fn, op):
    try:
        fn(op)
    except Exception as exc:  # noqa: BLE001 -- the outcome is what is compared
        return type(exc).__name__, str(exc)
    return "ok"


def test_view_ops_remembered_verdicts_stay_upstreams():
    """A view op whose key (class, operand / result types, properties, attributes, by
    identity) passed is not checked again; an op sharing all but one of them with a passed
    one (an extra dynamic operand, another result type) still gets upstream's verdict."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr
    from xdsl.dialects.memref import ReinterpretCastOp, SubviewOp
    from xdsl.ir import Block

    from nki_mlir.dialects.common import memref
    src = memref((128, 64), "float32", "sbuf")
    block = Block(arg_types=[src, IndexType()])
    s, i = block.args
    c = arith.ConstantOp(IntegerAttr(3, IndexType()))
    res = memref((4, 8), "float32", "sbuf", strides=(64, 1), offset=None)
    wide = memref((4, 9), "float32", "sbuf", strides=(64, 1), offset=None)
    failures = 0
    for cls in (ReinterpretCastOp, SubviewOp):
        upstream = (fast_verify._upstream_reinterpret if cls is ReinterpretCastOp
                    else fast_verify._upstream_subview)
        good = cls(s, [i], [], [], [DYNAMIC_INDEX], [4, 8], [64, 1], res)
        assert _own(cls.verify_, good) == "ok"
        assert fast_verify._view_key(good) in fast_verify._VIEWS_OK
        twin = cls.create(operands=[s, i], result_types=[res], properties=dict(good.properties))
        assert fast_verify._view_key(twin) == fast_verify._view_key(good)
        assert _own(cls.verify_, twin) == "ok"
        for bad in (cls.create(operands=[s, i, c.result], result_types=[res],
                               properties=dict(good.properties)),
                    cls.create(operands=[s, i], result_types=[wide],
                               properties=dict(good.properties))):
            want = _own(upstream, bad)
            assert _own(cls.verify_, bad) == want
            assert _own(cls.verify_, bad) == want      # a failure is never remembered
            failures += want != "ok"
    assert failures == 3        # the extra operand (both ops), the size (reinterpret_cast)


def test_verification_context_made_directly():
    """``VerificationContext()`` / ``InferenceContext`` subclasses get three fresh plain
    dicts (not shared between contexts), given tables are kept, and the dataclass's equality
    and repr are upstream's."""
    from xdsl.irdl.constraints import VerificationContext

    from nki_mlir.dialects import fast_verify
    assert VerificationContext.__init__ is fast_verify._context_init
    a, b = VerificationContext(), VerificationContext()
    for name in ("_variables", "_range_variables", "_int_variables"):
        assert type(getattr(a, name)) is dict and getattr(a, name) == {}
        assert getattr(a, name) is not getattr(b, name)
    a.set_attr_variable("T", i32)
    assert b.get_variable("T") is None and a.get_variable("T") is i32
    given = {"T": i32}
    c = VerificationContext(given)
    assert c._variables is given and c._int_variables == {}
    assert repr(b) == "VerificationContext(_variables={}, _range_variables={}, _int_variables={})"
    assert VerificationContext() == b and c != b
