"""Trivially dead ops, found with the answer xDSL's greedy applier computes, sooner.

xDSL 0.74's :class:`~xdsl.pattern_rewriter.GreedyRewritePatternApplier` (``dce_enabled``)
first asks :func:`xdsl.transforms.dead_code_elimination.is_trivially_dead` of every op it
visits: its results unused, not a terminator or symbol, and every memory effect a read or an
allocation of a value defined inside it.  Upstream builds the whole effect set first; for a
loop (``RecursiveMemoryEffect``) that is the union of every nested op's effects, so each op
of an n-deep loop nest is asked n + 1 times per walk, although the first write found settles
it.  :func:`is_trivially_dead` gives the same answer, stopping at the first effect that
keeps the op (or at an op with unknown effects), with each op class's traits looked up once;
an instruction (:class:`~nki_mlir.dialects.instruction.OperandEffects`) is asked only whether
it writes (:meth:`~nki_mlir.dialects.instruction.OperandEffects.writes_memory`), without
building its effect set.
:func:`greedy` is upstream's applier with this check as its first pattern (erase, as upstream
does, before any other pattern is tried); our passes apply the same per op in
:func:`.rewrite_walk.rewrite_walk`.
"""
from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, RewritePattern
from xdsl.traits import (IsTerminator, MemoryEffect, MemoryEffectKind, RecursiveMemoryEffect,
                         SymbolOpInterface)
from xdsl.transforms.dead_code_elimination import is_trivially_dead as _upstream

from ..dialects.instruction import OperandEffects

_READ, _ALLOC = MemoryEffectKind.READ, MemoryEffectKind.ALLOC
_HAS_TRAIT = Operation.has_trait.__func__           # type: ignore[attr-defined]
_TRAITS_OF = Operation.get_traits_of_type.__func__  # type: ignore[attr-defined]

#: op class -> its memory-effect traits, or None when the class answers trait queries
#: itself (unregistered ops): upstream's function decides those
_EFFECTS: dict[type, tuple | None] = {}
#: op class -> never trivially dead by kind (a terminator or a symbol)
_KEPT: dict[type, bool] = {}


def _effect_traits(cls: type) -> tuple | None:
    try:
        return _EFFECTS[cls]
    except KeyError:
        plain = cls.has_trait.__func__ is _HAS_TRAIT and cls.get_traits_of_type.__func__ is _TRAITS_OF
        traits = tuple(cls.get_traits_of_type(MemoryEffect)) if plain else None
        _EFFECTS[cls] = traits
        return traits


def _only_local_effects(root: Operation, op: Operation) -> bool | None:
    """Every effect of ``op`` a read, or an allocation of a value ``root`` encloses (None:
    ask upstream)."""
    traits = _effect_traits(type(op))
    if traits is None:
        return None
    if not traits:
        return False                    # unknown effects
    for t in traits:
        if type(t) is OperandEffects:       # an instruction: reads, or writes (then kept)
            if t.writes_memory(op):
                return False
            continue
        if type(t) is RecursiveMemoryEffect:    # the union of the nested ops' effects
            for region in op.regions:
                for block in region.blocks:
                    for child in block.ops:
                        ok = _only_local_effects(root, child)
                        if not ok:
                            return ok
            continue
        effects = t.get_effects(op)
        if effects is None:
            return False
        for e in effects:
            if e.kind == _READ or (e.kind == _ALLOC and isinstance(v := e.value, SSAValue)
                                   and root.is_ancestor(v.owner)):
                continue
            return False
    return True


def is_trivially_dead(op: Operation) -> bool:
    """What :func:`xdsl.transforms.dead_code_elimination.is_trivially_dead` answers."""
    for r in op.results:
        if r.first_use is not None:
            return False
    cls = type(op)
    kept = _KEPT.get(cls)
    if kept is None:
        if _effect_traits(cls) is None:
            return _upstream(op)
        kept = _KEPT[cls] = cls.has_trait(IsTerminator) or cls.has_trait(SymbolOpInterface)
    if kept:
        return False
    ok = _only_local_effects(op, op)
    return _upstream(op) if ok is None else ok


class EraseDeadOp(RewritePattern):
    """Erase a trivially dead op (what the greedy applier's ``dce_enabled`` does)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if is_trivially_dead(op):
            rewriter.erase(op)


def greedy(patterns: list[RewritePattern]) -> GreedyRewritePatternApplier:
    """``GreedyRewritePatternApplier(patterns)``, its dead-op check by :func:`is_trivially_dead`."""
    return GreedyRewritePatternApplier([EraseDeadOp(), *patterns], dce_enabled=False)


__all__ = ["is_trivially_dead", "greedy", "EraseDeadOp"]
