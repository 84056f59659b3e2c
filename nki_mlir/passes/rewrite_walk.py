"""One walk applying rewrite patterns to every op, with each op class's patterns found once.

Our rewriting passes apply their patterns once to every op of the module, in program
pre-order, not again to the ops they create: what xDSL 0.74's
``PatternRewriteWalker(greedy(patterns), apply_recursively=False).rewrite_module(module)``
does (:func:`.dead_ops.greedy`: a trivially dead op is erased first, else the patterns are
tried in order until one acts).  Upstream pushes every op on a worklist and pops it again,
resets its rewriter (a new insertion point) for every op, and calls every pattern on every
op, each checking the op's class; on a module of 240k ops that is most of the pass.

:func:`rewrite_walk` does the same with less: it lists the ops once (the same pre-order
snapshot), skips the ones a rewrite removed (upstream drops them from its worklist), and
per op class keeps the patterns that can match it, so an op that no pattern can match costs
only the dead-op check.  A pattern says which ops it can match by
:func:`op_type_pattern` (upstream's ``op_type_rewrite_pattern``, recording the annotated
op types) or an ``applies_to(op_class) -> bool`` method; a pattern with neither is tried on
every op.  The filter only skips calls that could not act, so the rewrites, their order and
their errors (``op.emit_error("Error while applying pattern: ...")``) are upstream's.
"""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from .dead_ops import is_trivially_dead


def op_type_pattern(func):
    """``op_type_rewrite_pattern`` (the method acts only on ops of its annotated type), with
    those types kept as ``op_types`` for :func:`rewrite_walk`."""
    impl = op_type_rewrite_pattern(func)
    expected = list(inspect.signature(func, eval_str=True).parameters.values())[-2].annotation
    impl.op_types = get_args(expected) if get_origin(expected) in (Union, UnionType) else (expected,)
    return impl


def _applies(pattern: RewritePattern, cls: type) -> bool:
    types = getattr(pattern.match_and_rewrite, "op_types", None)
    if types is not None:
        return issubclass(cls, types)
    applies_to = getattr(pattern, "applies_to", None)
    if applies_to is not None and isinstance(getattr(cls, "name", None), str):
        return applies_to(cls)
    return True         # (an op class without a fixed name: unregistered ops)


#: ops the last :func:`rewrite_walk` visited and patterns it called (for tests)
STATS = {"ops": 0, "pattern_calls": 0}


def rewrite_walk(root: Operation, patterns: Sequence[RewritePattern], erase_dead: bool = True) -> bool:
    """Apply ``patterns`` once to every op nested in ``root`` (not ``root`` itself), in
    pre-order, as ``PatternRewriteWalker(greedy(patterns) if erase_dead else patterns[0],
    apply_recursively=False).rewrite_region(root.regions[0])`` does for a single-region
    ``root`` (a module); returns whether anything changed."""
    ops = list(root.walk())[1:]          # (pre-order, without root)
    removed: set[int] = set()

    def on_removal(op: Operation) -> None:
        if op.regions:
            removed.update(id(o) for o in op.walk())
        else:
            removed.add(id(op))

    rewriter: PatternRewriter | None = None
    by_class: dict[type, tuple[RewritePattern, ...]] = {}
    changed = False
    calls = visited = 0
    for op in ops:
        if id(op) in removed:
            continue
        visited += 1
        cls = type(op)
        todo = by_class.get(cls)
        if todo is None:
            todo = by_class[cls] = tuple(p for p in patterns if _applies(p, cls))
        if not todo and not erase_dead:
            continue
        if rewriter is None:
            rewriter = PatternRewriter(op)
            rewriter.operation_removal_handler.append(on_removal)
        rewriter.has_done_action = False
        try:
            if erase_dead and is_trivially_dead(op):
                rewriter.erase(op)
                changed = True
                continue
            if not todo:
                continue
            rewriter.current_operation = op
            rewriter.insertion_point = InsertPoint.before(op)
            rewriter._name_hint = None
            for p in todo:
                calls += 1
                p.match_and_rewrite(op, rewriter)
                if rewriter.has_done_action:
                    break
        except Exception as err:
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
        changed |= rewriter.has_done_action
    STATS["ops"], STATS["pattern_calls"] = visited, calls
    return changed


__all__ = ["rewrite_walk", "op_type_pattern", "STATS"]
