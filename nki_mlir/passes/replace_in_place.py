"""Replacing an op by one new op of the same result types without moving every use.

``rewriter.replace(op, [new], new.results)`` (xDSL 0.74) points every use of ``op``'s
results at ``new``'s: each use rewrites its user's operand tuple, one user at a time.
``lower-nki-to-nisa`` replaces every ``nki.ndarray`` of a kernel that way, and an unrolled
kernel's tiles have many users each (views, instructions), so that is most of the pass.

:func:`replace_one` gives ``new`` the result objects of ``op`` instead (``op`` gets ``new``'s
fresh ones, which nothing uses), so no user changes.  What the module holds afterwards is
what upstream's replacement leaves: the same ops in the same places, every user reading
``new``'s results, those results of the same types with ``op``'s name hints, and each
result's use list in upstream's order (upstream moves the uses one by one to the front of
the new list, reversing it; so is the list here).  ``op`` is erased by the rewriter as
upstream erases it.  Anything else (several new ops, other types, a result already used or
named, a rewriter naming new results) goes through ``rewriter.replace``.
"""
from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.builder import _current_builder as _IMPLICIT      # (the implicit builder in force)


def reverse_uses(value: SSAValue) -> None:
    """Reverse ``value``'s use list in place (the order upstream's ``replace_all_uses_with``
    leaves on the value the uses move to)."""
    use, last = value.first_use, None
    while use is not None:
        nxt = use._next_use
        use._next_use, use._prev_use = use._prev_use, nxt
        last, use = use, nxt
    value.first_use = last


def replace_one(rewriter: PatternRewriter, op: Operation, new: Operation) -> None:
    """``rewriter.replace(op, [new], list(new.results))``, for a ``new`` op not yet inserted."""
    replace_ops(rewriter, op, [new])


def replace_ops(rewriter: PatternRewriter, op: Operation, new_ops: list[Operation]) -> None:
    """``rewriter.replace(op, new_ops, list(new_ops[-1].results))``, for ops not yet
    inserted (the results move to the last one)."""
    if not new_ops:
        rewriter.replace(op, new_ops, [])
        return
    new = new_ops[-1]
    old_results, new_results = op.results, new.results
    block = op.parent
    if rewriter.name_hint is not None or block is None or _IMPLICIT.builder is not None or \
            len(old_results) != len(new_results) or any(
            a.type is not b.type or b.first_use is not None or b.name_hint is not None
            for a, b in zip(old_results, new_results)):
        rewriter.replace(op, new_ops, list(new_results))   # (and upstream's errors)
        return
    rewriter.has_done_action = True
    for n in new_ops:                       # rewriter.insert(new_ops, InsertPoint.before(op))
        block.insert_op_before(n, op)
    for n in new_ops:
        rewriter.handle_operation_insertion(n)
    rewriter.handle_operation_replacement(op, new_results)
    for a, b in zip(old_results, new_results):
        a.op, b.op = new, op
        if a.first_use is not None:
            users = [u.operation for u in a.uses] if rewriter.operation_modification_handler else ()
            reverse_uses(a)
            for user in users:
                rewriter.handle_operation_modification(user)
    new.results, op.results = old_results, new_results
    if len(old_results) == 1 and (hint := old_results[0].name_hint) is not None:
        for n in new_ops:                   # upstream names the other new results alike
            for r in n.results:
                if not r.name_hint:
                    r.name_hint = hint
    rewriter.erase(op)


__all__ = ["replace_one", "replace_ops", "reverse_uses"]
