"""passes/dead_ops.py: the dead-op check of nki-legalize and lower-nki-to-nisa answers what
xDSL's ``is_trivially_dead`` answers, for every op, and stops at the first effect that keeps
an op (a loop nest's instructions are not asked once per enclosing loop)."""
from __future__ import annotations

import numpy as np
from xdsl.context import Context
from xdsl.transforms import dead_code_elimination as upstream_dce

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.dialects.instruction import OperandEffects
from nki_mlir.frontend import arg_specs, build_module
from nki_mlir.passes import dead_ops
from nki_mlir.passes.legalize import NkiLegalize
from nki_mlir.passes.lower_nki_to_nisa import LowerNkiToNisa


@nki.jit
def nest(x):
    """x [2, 256, 8]: a two-deep loop nest of copies into tiles allocated before it, then
    sugar ops (one result never read)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 8), x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(x.shape[0]):
        for j in nl.affine_range(x.shape[1] // 128):
            nisa.dma_copy(dst=t, src=x[i, j * 128:(j + 1) * 128, :])
            nisa.tensor_copy(dst=t, src=t)
            nisa.dma_copy(dst=out[i, j * 128:(j + 1) * 128, :], src=t)
    u = nl.exp(nl.load(x[0, 0:128, :]))
    nl.zeros((128, 8), nl.float32, buffer=nl.sbuf)     # never read
    v = nl.ndarray((128, 8), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=v, src=u)
    nl.store(out[1, 0:128, :], value=v)
    return out


def _module():
    x = np.zeros((2, 256, 8), np.float32)
    module, _ = build_module(nest.fn, arg_specs(nest.fn, (x,), {}), "trn2")
    return module


def test_same_answer_as_upstream_for_every_op():
    module = _module()
    for stage in (None, NkiLegalize(), LowerNkiToNisa()):
        if stage is not None:
            stage.apply(Context(), module)
        answers = [(op.name, dead_ops.is_trivially_dead(op), upstream_dce.is_trivially_dead(op))
                   for op in module.walk()]
        assert all(ours == theirs for _, ours, theirs in answers), \
            [a for a in answers if a[1] != a[2]]


def upstream_walk(root, patterns, erase_dead=True):
    """What :func:`nki_mlir.passes.rewrite_walk.rewrite_walk` stands for: xDSL's walker with
    upstream's greedy applier (its own dead-op check) or the single pattern."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
    pattern = GreedyRewritePatternApplier(list(patterns)) if erase_dead else patterns[0]
    return PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(root)


def lowered_both_ways(make_module, monkeypatch):
    """``(ours, theirs)``: two modules of ``make_module()`` after nki-legalize and
    lower-nki-to-nisa, the second with upstream's walker and applier (:func:`upstream_walk`)."""
    import nki_mlir.passes.legalize as lg
    import nki_mlir.passes.lower_nki_to_nisa as lw
    ours, theirs = make_module(), make_module()
    for p in (NkiLegalize(), LowerNkiToNisa()):
        p.apply(Context(), ours)
    monkeypatch.setattr(lg, "rewrite_walk", upstream_walk)
    monkeypatch.setattr(lw, "rewrite_walk", upstream_walk)
    for p in (NkiLegalize(), LowerNkiToNisa()):
        p.apply(Context(), theirs)
    return ours, theirs


def test_passes_erase_the_ops_upstream_erases(monkeypatch):
    """The passes with upstream's walker and applier (dce_enabled) print the same module."""
    from nki_mlir.driver.pipeline import print_module
    ours, theirs = lowered_both_ways(_module, monkeypatch)
    assert print_module(ours) == print_module(theirs)


def test_loop_nest_instructions_asked_about_once(monkeypatch):
    """Upstream asks each instruction of a depth-2 nest 3 times (itself and once per loop);
    here a loop's check stops at its first writing op."""
    module = _module()
    NkiLegalize().apply(Context(), module)
    calls = []
    real = OperandEffects.get_effects.__func__
    monkeypatch.setattr(OperandEffects, "get_effects",
                        classmethod(lambda cls, op: calls.append(op) or real(cls, op)))
    instrs = [op for op in module.walk() if op.has_trait(OperandEffects)]
    loops = [op for op in module.walk() if op.name == "scf.for"]
    nested = [op for op in instrs if op.parent_op() in loops]
    assert len(loops) == 2 and len(nested) == 3
    upstream = [upstream_dce.is_trivially_dead(op) for op in module.walk()]
    asked_upstream, calls[:] = len(calls), []
    ours = [dead_ops.is_trivially_dead(op) for op in module.walk()]
    assert ours == upstream
    assert asked_upstream == len(instrs) + 2 * len(nested)     # depth 2: asked 3 times
    assert len(calls) <= len(instrs) + len(loops)
