"""passes/rewrite_walk.py: one walk applying the patterns of nki-legalize and
lower-nki-to-nisa, calling a pattern only on the op classes it can match, with the result
(and the errors) of xDSL's ``PatternRewriteWalker(greedy(...), apply_recursively=False)``."""
from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.dialects import nki as nki_d
from nki_mlir.dialects.instruction import OperandEffects
from nki_mlir.driver.pipeline import print_module
from nki_mlir.frontend import arg_specs, build_module
from nki_mlir.passes import dead_ops, rewrite_walk as rw
from nki_mlir.passes.legalize import NkiLegalize
from nki_mlir.passes.lower_nki_to_nisa import LowerNkiToNisa

from test_dead_ops import lowered_both_ways, upstream_walk


@nki.jit
def mixed(a):
    """Sugar ops, an assignment folded into its producer, a dead value, a loop."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for t in range(a.shape[0] // 128):
        x = nl.load(a[t * 128:(t + 1) * 128, :])
        res = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        if t % 2 == 0:
            res[...] = nl.multiply(x, 2.0)
        else:
            res[...] = nl.exp(x)
        nl.zeros((128, 8), nl.float32, buffer=nl.sbuf)          # never read
        nl.store(out[t * 128:(t + 1) * 128, :], value=res)
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def _module():
    a = np.zeros((512, 8), np.float32)
    module, _ = build_module(mixed.fn, arg_specs(mixed.fn, (a,), {}), "trn2")
    return module


def test_same_module_as_upstreams_walker(monkeypatch):
    ours, theirs = lowered_both_ways(_module, monkeypatch)
    text = print_module(ours)
    assert "nki.assign" not in text and not any(o.name.startswith("nki.") for o in ours.walk())
    assert text == print_module(theirs)


class Counting(RewritePattern):
    """Records the ops it is called on; acts on none."""

    def __init__(self):
        self.seen: list[Operation] = []

    @rw.op_type_pattern
    def match_and_rewrite(self, op: nki_d.NdarrayOp | nki_d.LoadOp, rewriter: PatternRewriter) -> None:
        self.seen.append(op)


class ByName(Counting):
    def applies_to(self, cls) -> bool:
        return cls.name == "nki.store"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.seen.append(op)


def test_patterns_called_only_on_the_op_classes_they_match():
    module = _module()
    typed, named = Counting(), ByName()
    rw.rewrite_walk(module, [typed, named], erase_dead=False)
    ops = list(module.body.walk())
    assert typed.match_and_rewrite.op_types == (nki_d.NdarrayOp, nki_d.LoadOp)
    assert rw.STATS["ops"] == len(ops)
    assert rw.STATS["pattern_calls"] == len(typed.seen) + len(named.seen)
    assert {o.name for o in typed.seen} == {"nki.ndarray", "nki.load"}
    assert [o.name for o in named.seen] == ["nki.store"] * 4
    assert len(typed.seen) == sum(isinstance(o, (nki_d.NdarrayOp, nki_d.LoadOp)) for o in ops)
    assert rw.STATS["pattern_calls"] < len(ops) // 2


class Erases(RewritePattern):
    """Erases the next op whenever it is a dead ``nki.zeros``: the walk must skip it."""

    def __init__(self):
        self.seen: list[Operation] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.seen.append(op)
        nxt = op.next_op
        if nxt is not None and nxt.name == "nki.zeros" and not nxt.results[0].uses:
            rewriter.erase(nxt)


def test_ops_erased_ahead_are_skipped_as_upstream_skips_them():
    ours, theirs = _module(), _module()
    a, b = Erases(), Erases()
    rw.rewrite_walk(ours, [a], erase_dead=False)
    upstream_walk(theirs, [b], erase_dead=False)
    assert [o.name for o in a.seen] == [o.name for o in b.seen]
    assert "nki.zeros" not in print_module(ours)
    assert print_module(ours) == print_module(theirs)


class Raises(RewritePattern):
    @rw.op_type_pattern
    def match_and_rewrite(self, op: nki_d.StoreOp, rewriter: PatternRewriter) -> None:
        raise ValueError("no stores here")


def test_a_pattern_error_is_upstreams_error():
    errors = []
    for walk in (rw.rewrite_walk, upstream_walk):
        with pytest.raises(ValueError, match="no stores here") as info:
            walk(_module(), [Raises()])
        errors.append(info.value.__notes__)
    assert errors[0] == errors[1]
    assert "Error while applying pattern: no stores here" in errors[0][0]


def test_instructions_dead_check_builds_no_effect_set(monkeypatch):
    """An instruction writing memory is kept without building its effect set."""
    module = _module()
    NkiLegalize().apply(Context(), module)
    calls = []
    real = OperandEffects.get_effects.__func__
    monkeypatch.setattr(OperandEffects, "get_effects",
                        classmethod(lambda cls, op: calls.append(op) or real(cls, op)))
    instrs = [op for op in module.walk() if op.has_trait(OperandEffects)]
    assert instrs and not any(dead_ops.is_trivially_dead(op) for op in instrs)
    assert calls == []
