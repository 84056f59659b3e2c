"""Verifier memos of the nisa ops a compile's final ``module.verify()`` checks (issue 17):
``nisa.matmul``'s rules once per passing (types, properties, target, ``row_pos`` /
``col_pos`` values), ``nisa.dma_copy_indirect``'s once per passing (types, properties), the
IRDL checks once per passing (definition, types, properties) -- and a broken op still gets
its own message."""
from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from nki_mlir.dialects import fast_verify, make_context, matmul_rules, ods_ops, ods_verify_memo

TEXT = """
builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @k(%d: memref<8x8xf32, #nisa.mem<psum>>, %s: memref<32x8xbf16, #nisa.mem<sbuf>>) {
    %r = arith.constant 0 : index
    %c = arith.constant 0 : index
    nisa.matmul(dst=memref<8x8xf32, #nisa.mem<psum>> %d, stationary=memref<32x8xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8xbf16, #nisa.mem<sbuf>> %s, row_pos=index %r, col_pos=index %c, is_transpose=false, tile_size=[32, 128]) engine=tensor
    func.return
  }
}
"""


def _module():
    return Parser(make_context(), TEXT).parse_module()


def _fresh_memos(monkeypatch):
    monkeypatch.setattr(ods_verify_memo, "PASSED", {})
    monkeypatch.setattr(ods_ops, "PASSED", ods_verify_memo.PASSED)
    monkeypatch.setattr(fast_verify, "_OPS_OK", {})


def _matmul_with_row(module, row: int):
    """A clone of the module's matmul (the same property objects) whose ``row_pos`` is a
    new constant ``row``, inserted before the return."""
    mm = next(op for op in module.walk() if op.name == "nisa.matmul")
    block = mm.parent_block()
    c = arith.ConstantOp(IntegerAttr(row, IndexType()))
    block.insert_op_before(c, block.last_op)
    twin = mm.clone()
    twin.operands = [c.result if v is mm.row_pos else v for v in mm.operands]
    block.insert_op_before(twin, block.last_op)
    return twin


def test_matmul_rules_once_per_row_pos_value(monkeypatch):
    """The matmul rules (``types_and``) run once per passing combination and ``row_pos`` /
    ``col_pos`` value: a matmul differing only in a bad ``row_pos`` constant (16, not a
    start of a 32-row tile) is checked and rejected with the rule's message."""
    _fresh_memos(monkeypatch)
    runs = []
    real = matmul_rules.matmul
    monkeypatch.setattr(matmul_rules, "matmul", lambda op, *a, **k: runs.append(op) or real(op, *a, **k))
    module = _module()
    first = next(op for op in module.walk() if op.name == "nisa.matmul")
    same = _matmul_with_row(module, 0)
    other = _matmul_with_row(module, 32)
    first.verify_()
    same.verify_()
    assert len(runs) == 1                   # the same types, properties and constants
    other.verify_()
    assert len(runs) == 2                   # another row_pos value: checked
    bad = _matmul_with_row(module, 16)
    for _ in range(2):                      # a failure is never remembered
        with pytest.raises(VerifyException, match="tile_position row 16 is not a valid start"):
            bad.verify_()
    assert len(runs) == 4


def test_irdl_verdict_remembered_by_identity(monkeypatch):
    """The IRDL checks of an op without regions pass once per (definition, operand / result
    types, properties) by identity; a clone missing a required property, or with an unknown
    one, still gets upstream's message."""
    _fresh_memos(monkeypatch)
    module = _module()
    mm = next(op for op in module.walk() if op.name == "nisa.matmul")
    op_def = type(mm).get_irdl_definition()
    fast_verify.verify(op_def, mm)
    assert len(fast_verify._OPS_OK) == 1
    checked = []
    real = fast_verify._checks
    monkeypatch.setattr(fast_verify, "_checks", lambda d, p, o: checked.append(o) or real(d, p, o))
    fast_verify.verify(op_def, mm.clone())
    assert checked == []
    unknown = mm.clone()
    unknown.properties["nkim_unknown"] = StringAttr("x")
    with pytest.raises(VerifyException) as got:
        fast_verify.verify(op_def, unknown)
    with pytest.raises(VerifyException) as want:
        fast_verify._upstream_verify(op_def, unknown)
    assert str(got.value) == str(want.value) and "nkim_unknown" in str(got.value)
    assert len(fast_verify._OPS_OK) == 1


def test_nisa_indirect_dma_verdict_once_per_combination(monkeypatch):
    """``nisa.dma_copy_indirect``'s own rules (``types_verdict``) run once per passing op
    class, layout-free operand types and properties; a broken op still gets its message."""
    from nki_mlir.dialects import rules
    from nki_mlir.dialects.views import NisaDmaCopyIndirectOp
    from test_trace_per_op import indirect_dma_ops
    _fresh_memos(monkeypatch)
    checked = []
    real = rules.engine
    monkeypatch.setattr(rules, "engine", lambda op, *a: checked.append(op.name) or real(op, *a))
    ops = indirect_dma_ops(NisaDmaCopyIndirectOp, {"engine": StringAttr("dma")})
    for op in ops[:3]:
        op.verify_()
    assert checked == ["nisa.dma_copy_indirect"]
    for _ in range(2):
        with pytest.raises(VerifyException, match=r"'src_index' must be \[P, 1\]"):
            ops[3].verify_()
    for op in ops:
        op.drop_all_references()


def test_op_verify_outcomes_as_upstream():
    """``Operation.verify`` (fast_verify._op_verify: the successor / terminator checks left
    to upstream's method for the ops they concern) passes and fails as upstream's does, with
    the same message, on every op of the lit dialect tests (valid and invalid chunks) and on
    an op using an erased value."""
    from xdsl.ir import ErasedSSAValue

    from lit_modules import LIT as lit, lit_modules
    outcomes = []

    def outcome(fn, op):
        try:
            fn(op, False)
        except Exception as exc:  # noqa: BLE001 -- the outcome is what is compared
            return type(exc).__name__, str(exc)
        return "ok"

    paths = sorted((lit / "dialects").rglob("*.mlir")) + sorted((lit / "invalid").glob("*.mlir"))
    for path, module in lit_modules(paths):
        for op in module.walk():
            want = outcome(fast_verify._upstream_op_verify, op)
            assert outcome(fast_verify._op_verify, op) == want, (path.name, op.name)
            outcomes.append(want)
    assert outcomes.count("ok") > 100 and len(outcomes) - outcomes.count("ok") > 20
    module = _module()
    mm = next(op for op in module.walk() if op.name == "nisa.matmul")
    erased = ErasedSSAValue(mm.operands[0].type, mm.operands[0])
    broken = mm.clone()
    broken.operands = [erased, *mm.operands[1:]]
    mm.parent_block().insert_op_before(broken, mm)
    want = outcome(fast_verify._upstream_op_verify, broken)
    assert want[0] == "ValueError" and outcome(fast_verify._op_verify, broken) == want
