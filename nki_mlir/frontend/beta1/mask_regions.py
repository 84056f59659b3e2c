"""The grid region of a Beta 1 ``mask=`` predicate, as a union of disjoint boxes.

A mask (:class:`~.index_expr.Mask`) is a conjunction of comparisons ``expr <op> 0`` where
``expr`` is affine in the grid coordinates ``k_r`` (``0 <= k_r < size_r``, one per axis of
the instruction's tiles), loop indices and program ids (NKI Beta 1 docs, "NKI API Masking").
For fixed loop indices, the set of grid points where the predicate holds is a union of
boxes: this module computes it exactly (:func:`region`), so a masked instruction compiles to
one narrowed instruction per box (a staircase ``512 * i_p + i_f < n`` is the full rows
above a partial row; a triangle ``i_p - i_f >= 0`` is one box per row).

Pure: no IR is built here (frontend/beta1/masks.py does that).
"""
from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from ...errors import NKIError, NKITypeError
from .index_expr import Mask
from ..values import Index, Tensor, simplify

CODE = "err_unsupported_expression_in_mask"
#: most loop-index combinations enumerated to find the regions of one masked call
MAX_POINTS = 1 << 16
FNS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
       "eq": operator.eq, "ne": operator.ne}

Box = tuple[tuple[int, int], ...]   # per grid axis [lo, hi)
Region = tuple[Box, ...]            # disjoint non-empty boxes; () is the empty region


@dataclass(frozen=True)
class Constraint:
    """``sum_r coeffs[r] * k_r + v <op> 0`` (all coefficients 0: ``v <op> 0`` gates the
    whole instruction).  ``coeffs[r]`` is 0 on every axis of size 1."""

    coeffs: tuple[int, ...]
    v: Index | int
    op: str

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(r for r, c in enumerate(self.coeffs) if c)


def parse(cg, mnode, mask) -> tuple[tuple[int, ...], list[Constraint]]:
    """The grid sizes (per axis) and the constraints of a mask.

    Raises:
        NKITypeError: ``err_unsupported_expression_in_mask`` for a value that is not a
            mask (a tile) or comparisons on grids of different sizes along one axis.
    """
    if not isinstance(mask, Mask):
        what = "a tile" if isinstance(mask, Tensor) else f"{type(mask).__name__} {mask!r}"
        raise cg.fail(mnode, f"mask= must be a compile-time predicate: comparisons of nl.arange / "
                             f"nl.mgrid expressions (and loop indices) joined with '&', e.g. "
                             f"mask=(i_p < n); got {what} (for a data-dependent choice use "
                             f"nl.where)", NKITypeError, code=CODE)
    rank = max(e.rank for e, _ in mask.constraints)
    sizes = [1] * rank
    for e, _ in mask.constraints:
        s, _c = e._grid(rank)
        for r in range(rank):
            if s[r] > 1:
                if sizes[r] > 1 and sizes[r] != s[r]:
                    raise cg.fail(mnode, f"the comparisons of this mask use grids of different "
                                         f"sizes ({sizes[r]} and {s[r]}) on axis {r}",
                                  NKITypeError, code=CODE)
                sizes[r] = s[r]
    cons = []
    for e, op in mask.constraints:
        s, c = e._grid(rank)
        coeffs = tuple(int(c[r]) if s[r] > 1 else 0 for r in range(rank))
        cons.append(Constraint(coeffs, simplify(e.const), op))
    return tuple(sizes), cons


def _runs(ok: np.ndarray) -> list[tuple[int, int]]:
    """The maximal runs ``[lo, hi)`` of True in a boolean vector."""
    edges = np.diff(np.concatenate(([0], ok.astype(np.int8), [0])))
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def region(sizes: tuple[int, ...], cons: list[Constraint], vs: list[int]) -> Region:
    """The grid points satisfying every constraint (constant parts ``vs``) as disjoint boxes.

    The free axes are taken outermost first and the partition axis (0) last: an axis no
    remaining constraint couples to a later one contributes its runs of valid coordinates;
    otherwise consecutive coordinates whose sub-regions (over the later axes) are equal form
    one box.  With the partition axis innermost, the common staircase ``512 * i_p + i_f < n``
    gives boxes that all start at partition 0 (compute engines address a few start
    partitions only)."""
    live = []
    for con, v in zip(cons, vs):
        known = _everywhere(sizes, con, int(v))
        if known is False:
            return ()
        if known is None:
            live.append((con, v))
    rank = len(sizes)
    if not live:
        return full(sizes)
    order = list(range(1, rank)) + [0]
    last = [max(order.index(r) for r in con.axes) for con, _ in live]
    memo: dict[tuple, tuple] = {}

    def rec(pos: int, consts: tuple[int, ...]) -> tuple:
        if pos == rank:
            return ((),)
        key = (pos, tuple(c for c, lst in zip(consts, last) if lst >= pos))
        if key in memo:
            return memo[key]
        axis = order[pos]
        k = np.arange(sizes[axis], dtype=np.int64)
        ok = np.ones(sizes[axis], dtype=bool)
        coupled = []
        for j, (con, _) in enumerate(live):
            c = con.coeffs[axis]
            if last[j] == pos:
                ok &= FNS[con.op](c * k + consts[j], 0)
            elif c and last[j] > pos:
                coupled.append(j)
        out: list[tuple] = []
        if not coupled:
            sub = rec(pos + 1, consts)
            if sub:
                for lo, hi in _runs(ok):
                    out += [((lo, hi),) + b for b in sub]
        else:
            start, prev = 0, ()
            for kk in range(sizes[axis] + 1):
                if kk < sizes[axis] and ok[kk]:
                    shifted = list(consts)
                    for j in coupled:
                        shifted[j] += live[j][0].coeffs[axis] * kk
                    sub = rec(pos + 1, tuple(shifted))
                else:
                    sub = ()
                if kk == sizes[axis] or sub != prev:
                    out += [((start, kk),) + b for b in prev]
                    start, prev = kk, sub
        memo[key] = tuple(out)
        return memo[key]

    boxes = rec(0, tuple(int(v) for _, v in live))
    # position order (free axes..., partition) -> axis order
    return tuple(tuple(b[order.index(r)] for r in range(rank)) for b in boxes)


def _everywhere(sizes: tuple[int, ...], con: Constraint, v: int) -> bool | None:
    """True / False when ``con`` holds on every / no grid point, from the range of its
    affine value over the grid (the extremes are at corners); None when it depends on the
    point."""
    lo = v + sum(min(0, c * (n - 1)) for c, n in zip(con.coeffs, sizes))
    hi = v + sum(max(0, c * (n - 1)) for c, n in zip(con.coeffs, sizes))
    fn = FNS[con.op]
    if con.op in ("eq", "ne"):
        if lo == hi:
            return fn(lo, 0)
        return None if lo <= 0 <= hi else con.op == "ne"
    if fn(lo, 0) and fn(hi, 0):
        return True
    if not fn(lo, 0) and not fn(hi, 0):
        return False
    return None


def full(sizes: tuple[int, ...]) -> Region:
    return (tuple((0, s) for s in sizes),)


def symbols(cons: list[Constraint]) -> list[SSAValue]:
    """The loop indices / program ids the constraints' constant parts depend on."""
    syms: list[SSAValue] = []
    for con in cons:
        if isinstance(con.v, Index):
            for s, _ in con.v.terms:
                if s not in syms:
                    syms.append(s)
    return syms


def value(v: Index | int, env: dict[SSAValue, int]) -> int:
    if not isinstance(v, Index):
        return int(v)
    return v.const + sum(c * env[s] for s, c in v.terms)


def regions(cg, mnode, sizes, cons) -> tuple[dict[tuple, list[tuple]], dict[tuple, Region]]:
    """Enumerate the loop indices the mask depends on.

    Returns ``(combos, region_of)``: every combination of per-constraint solutions that
    occurs (a solution is the region of that constraint alone, so equal combinations have
    equal regions) -> the loop-index points giving it; and each combination's region.

    Raises:
        NKITypeError: a bound depends on a value whose range is not known at compile time.
        NKIError: more than :data:`MAX_POINTS` loop-index combinations.
    """
    syms = symbols(cons)
    ranges = []
    for s in syms:
        rng = cg.b.loop_ranges.get(s)
        if rng is None:
            raise cg.fail(mnode, f"this mask depends on '{getattr(s, 'name_hint', None) or 'a value'}', "
                                 f"whose range is not known at compile time; masks may use "
                                 f"nl.affine_range / nl.sequential_range loop indices, program ids "
                                 f"and constants", NKITypeError, code=CODE)
        ranges.append(range(*rng))
    total = int(np.prod([len(r) for r in ranges], dtype=np.int64)) if ranges else 1
    if total > MAX_POINTS:
        raise cg.fail(mnode, f"this mask depends on {total} loop-index combinations; at most "
                             f"{MAX_POINTS} are supported", NKIError, category="limit")
    memo: dict[tuple[int, int], Region] = {}
    combos: dict[tuple, list[tuple]] = {}
    values: dict[tuple, list[int]] = {}
    for point in itertools.product(*ranges):
        env = dict(zip(syms, point))
        vs = [value(con.v, env) for con in cons]
        combo = []
        for j, (con, v) in enumerate(zip(cons, vs)):
            if (j, v) not in memo:
                memo[(j, v)] = region(sizes, [con], [v])
            combo.append(memo[(j, v)])
        combos.setdefault(tuple(combo), []).append(point)
        values.setdefault(tuple(combo), vs)
    return combos, {c: region(sizes, cons, values[c]) for c in combos}


__all__ = ["Constraint", "Box", "Region", "parse", "region", "regions", "full", "symbols",
           "value", "CODE", "FNS", "MAX_POINTS"]
