"""Conditions on loop indices that hold the same way in every iteration (no unrolling).

``if start >= 0:`` or ``min(128, n - i * 128)`` on the index of a rolled loop needs the
index as a Python value, which unrolls the loop (:class:`~.proxies.LoopCondition`).  When
the condition has the same truth value for every value the indices take -- the affine
expression's range over the loops' static ranges lies on one side -- Python would take the
same branch in every iteration, so that value is the answer and the loop stays rolled
(nki-library's ``kernel_assert(start >= 0, ...)`` range checks on a loop index).
"""
from __future__ import annotations

from typing import Any

from .context import active
from .values import Index, as_index


def index_bounds(x: Index | int, ranges: dict) -> tuple[int, int] | None:
    """``(min, max)`` of ``x`` over the static ranges of its loop indices (``ranges``:
    induction variable -> ``(start, stop, step)``), or None when a symbol has none."""
    x = as_index(x)
    lo = hi = x.const
    for sym, coeff in x.terms:
        r = ranges.get(sym)
        if r is None:
            return None
        n = len(range(*r))
        if n == 0:
            return None
        a, b = coeff * r[0], coeff * (r[0] + r[2] * (n - 1))
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi


def _truth(op: str, lo: int, hi: int) -> bool | None:
    """``v <op> 0`` for every ``v`` in ``[lo, hi]`` (True), for none (False), else None."""
    always, never = {
        "lt": (hi < 0, lo >= 0), "le": (hi <= 0, lo > 0),
        "gt": (lo > 0, hi <= 0), "ge": (lo >= 0, hi < 0),
        "eq": (lo == hi == 0, lo > 0 or hi < 0), "ne": (lo > 0 or hi < 0, lo == hi == 0),
    }[op]
    return True if always else False if never else None


def uniform_truth(mask: Any) -> bool | None:
    """The truth value a loop-index condition (a conjunction of ``expr <op> 0``) has in
    every iteration of the loops it depends on, or None when it may differ."""
    ctx = active()
    if ctx is None:
        return None
    ranges = ctx.b.loop_ranges
    result: bool | None = True
    for expr, op in mask.constraints:
        if expr.sizes:                  # a Beta 1 grid (nl.arange): not a single value
            return None
        bounds = index_bounds(expr.const, ranges)
        t = None if bounds is None else _truth(op, *bounds)
        if t is False:
            return False
        if t is None:
            result = None
    return result
