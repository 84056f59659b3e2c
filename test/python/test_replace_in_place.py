"""passes/replace_in_place.py: lower-nki-to-nisa's 1:1 replacement leaves the module that
``rewriter.replace`` leaves (ops, names, and every value's use list in the same order),
without rewriting the operand tuple of every user."""
from __future__ import annotations

from xdsl.context import Context
from xdsl.ir import OpResult

import nki_mlir.passes.lower_nki_to_nisa as lw
from nki_mlir.driver.pipeline import print_module
from nki_mlir.passes import replace_in_place
from nki_mlir.passes.legalize import NkiLegalize

import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import arg_specs, build_module


@nki.jit
def fan_out(a):
    """One tile read by several instructions and views, and written through a view."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 8), a.dtype, buffer=nl.sbuf)
    u = nl.ndarray((128, 8), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, :])
    nisa.tensor_copy(dst=u, src=t)
    nisa.tensor_copy(dst=u[:, 0:4], src=t[:, 4:8])
    nisa.tensor_tensor(dst=u, data1=t, data2=u, op=nl.add)
    nisa.dma_copy(dst=out[0:128, :], src=u)
    nisa.dma_copy(dst=out[128:256, :], src=t)
    return out


def _module():
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(fan_out.fn, arg_specs(fan_out.fn, (a,), {}), "trn2")
    return module


def _upstream_replace_one(rewriter, op, new):
    rewriter.replace(op, [new], list(new.results))


def _use_lists(module) -> list:
    """Every value's uses, in use-list order, as (user position, operand index)."""
    ops = list(module.walk())
    pos = {id(o): i for i, o in enumerate(ops)}
    values = [v for o in ops for v in (*o.results, *(a for r in o.regions for b in r.blocks
                                                     for a in b.args))]
    return [[(pos[id(u.operation)], u.index) for u in v.uses] for v in values]


def _lowered(monkeypatch=None):
    module = _module()
    NkiLegalize().apply(Context(), module)
    lw.LowerNkiToNisa().apply(Context(), module)
    return module


def test_same_module_and_use_order_as_rewriter_replace(monkeypatch):
    ours = _lowered()
    monkeypatch.setattr(lw, "replace_one", _upstream_replace_one)
    monkeypatch.setattr(lw, "replace_ops", lambda r, op, new: r.replace(op, new, list(new[-1].results)))
    theirs = _lowered()
    assert print_module(ours) == print_module(theirs)
    lists = _use_lists(ours)
    assert sum(len(u) > 2 for u in lists) >= 2      # values with several uses, in order
    assert lists == _use_lists(theirs)


def test_results_move_without_touching_users(monkeypatch):
    """No user's operand is set: the allocs' results are the ndarrays' result objects."""
    module = _module()
    NkiLegalize().apply(Context(), module)
    before = {id(o.results[0]): o.results[0].name_hint for o in module.walk() if o.name == "nki.ndarray"}
    sets = []
    from xdsl.ir.core import OpOperands
    real = OpOperands.__setitem__
    monkeypatch.setattr(OpOperands, "__setitem__", lambda s, i, v: sets.append(i) or real(s, i, v))
    lw.LowerNkiToNisa().apply(Context(), module)
    allocs = [o for o in module.walk() if o.name == "nisa.alloc"]
    assert len(allocs) == len(before) == 3      # out, t, u
    for a in allocs:
        r = a.results[0]
        assert isinstance(r, OpResult) and r.op is a and r.index == 0
        assert id(r) in before and r.name_hint == before[id(r)]
    assert sets == []


def test_other_replacements_go_through_the_rewriter(monkeypatch):
    """A result already named, or a rewriter naming new results: upstream's replace."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i32
    from xdsl.ir import Block
    from xdsl.pattern_rewriter import PatternRewriter
    calls = []
    monkeypatch.setattr(PatternRewriter, "replace",
                        lambda self, op, new, res=None, safe_erase=True: calls.append(op))
    block = Block()
    c = arith.ConstantOp(IntegerAttr(1, i32))
    block.add_op(c)
    new = arith.ConstantOp(IntegerAttr(2, i32))
    new.result.name_hint = "two"
    replace_in_place.replace_one(PatternRewriter(c), c, new)
    assert calls == [c]


def _adds():
    """``%s = x + y`` used twice, in a block of its own (a fresh copy per call)."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import i32
    from xdsl.ir import Block
    block = Block(arg_types=[i32, i32])
    x, y = block.args
    s = arith.AddiOp(x, y)
    s.result.name_hint = "s"
    block.add_ops([s, arith.MuliOp(s.result, x), arith.MuliOp(y, s.result)])
    return block, s


def test_several_new_ops_name_hints_and_uses_as_upstream():
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i32
    from xdsl.pattern_rewriter import PatternRewriter
    texts, orders = [], []
    for fast in (True, False):
        block, s = _adds()
        c = arith.ConstantOp(IntegerAttr(1, i32))
        new = arith.AddiOp(s.lhs, c.result)
        rewriter = PatternRewriter(s)
        if fast:
            replace_in_place.replace_ops(rewriter, s, [c, new])
        else:
            rewriter.replace(s, [c, new], list(new.results))
        ops = list(block.ops)
        texts.append([str(o) for o in ops])
        orders.append([[(ops.index(u.operation), u.index) for u in v.uses]
                       for o in ops for v in o.results])
        assert rewriter.has_done_action
        assert c.result.name_hint == "s" and new.result.name_hint == "s"
    assert texts[0] == texts[1] and orders[0] == orders[1]
