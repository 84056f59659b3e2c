"""The ``scf.if`` guards of a masked instruction whose region depends on loop indices.

Each version (a distinct non-empty region of the mask over the loop iterations, see
frontend/beta1/mask_regions.py) runs under a condition on the loop indices built from
``arith.cmpi`` / ``andi`` / ``ori`` (frontend/beta1/masks.py emits the versions).
"""
from __future__ import annotations

from typing import Callable

from xdsl.dialects import arith, scf
from xdsl.ir import Block, Region, SSAValue

from .mask_regions import symbols, value
from ..values import Index


def emit_chain(cg, versions, i: int, last_is_rest: bool, cons, combos, emit) -> None:
    """``if c_i {version i} else {chain i+1}``; the last version needs no condition when
    every point maps to a non-empty region (``last_is_rest``)."""
    if i >= len(versions):
        return
    region, vcombos = versions[i]
    if i == len(versions) - 1 and last_is_rest:
        emit(region)
        return
    cond = _condition(cg, cons, combos, vcombos)
    b = cg.b
    then_block = Block()
    else_block = Block() if i + 1 < len(versions) else None
    if_op = scf.IfOp(cond, [], Region([then_block]),
                     Region([else_block]) if else_block is not None else Region())
    b.emit(if_op, verify=False)
    with b.at(then_block):
        emit(region)
        b.emit(scf.YieldOp(), verify=False)
    if else_block is not None:
        with b.at(else_block):
            emit_chain(cg, versions, i + 1, last_is_rest, cons, combos, emit)
            b.emit(scf.YieldOp(), verify=False)
    if_op.verify_()


def _condition(cg, cons, combos, vcombos) -> SSAValue:
    """An ``i1`` that is true exactly at the loop-index points whose combination of
    per-constraint solutions is one of ``vcombos``.

    Constraint ``j`` is tested on its key: the loop index itself when its bound depends on
    one loop index (``t < 2``), else the value of its constant part ``v_j``.  Its solution
    (its region alone) is a function of the key, so "the solution is S" is a union of runs
    of the sorted reachable keys; each run is ``key >= first`` / ``key < next reachable key``.
    """
    b = cg.b
    syms = symbols(cons)
    keyed: list[tuple[Callable[[dict], int], Callable[[], SSAValue], dict[int, tuple]]] = []
    for j, con in enumerate(cons):
        if isinstance(con.v, Index) and len(con.v.terms) == 1:
            sym = con.v.terms[0][0]
            key, ssa = (lambda env, s=sym: env[s]), (lambda s=sym: s)
        else:
            cache: list[SSAValue] = []

            def ssa(v=con.v, cache=cache):
                if not cache:
                    cache.append(b.materialize(v))
                return cache[0]
            key = (lambda env, v=con.v: value(v, env))
        vals: dict[int, tuple] = {}
        for combo, points in combos.items():
            for p in points:
                vals[key(dict(zip(syms, p)))] = combo[j]
        keyed.append((key, ssa, vals))
    cmps: dict[tuple, SSAValue] = {}
    ors: list[SSAValue] = []
    for combo in vcombos:
        ands: list[SSAValue] = []
        for j, (_, ssa, vals) in enumerate(keyed):
            if len(set(vals.values())) > 1:  # else: the same solution everywhere
                ands += _runs_cond(cg, ssa, vals, combo[j], cmps)
        if not ands:
            from xdsl.dialects.builtin import IntegerAttr, i1
            return b.emit(arith.ConstantOp(IntegerAttr(1, i1)), verify=False).results[0]
        ors.append(_reduce(cg, arith.AndIOp, ands))
    return _reduce(cg, arith.OrIOp, ors)


def _runs_cond(cg, ssa, vals: dict[int, tuple], want, cmps) -> list[SSAValue]:
    """The key lies in one of the runs of sorted reachable keys whose solution is ``want``."""
    order = sorted(vals)
    runs: list[tuple[int, int | None]] = []   # (first key, next reachable key after the run)
    start = None
    for k in order:
        if vals[k] == want:
            if start is None:
                start = k
        elif start is not None:
            runs.append((start, k))
            start = None
    if start is not None:
        runs.append((start, None))
    terms: list[SSAValue] = []
    for first, nxt in runs:
        parts = []
        if first > order[0]:
            parts.append(_cmp(cg, ssa(), "sge", first, cmps))
        if nxt is not None:
            parts.append(_cmp(cg, ssa(), "slt", nxt, cmps))
        if parts:
            terms.append(_reduce(cg, arith.AndIOp, parts))
    return [_reduce(cg, arith.OrIOp, terms)] if terms else []


def _cmp(cg, v: SSAValue, pred: str, k: int, cmps: dict) -> SSAValue:
    key = (v, pred, k)
    if key not in cmps:
        b = cg.b
        cmps[key] = b.emit(arith.CmpiOp(v, b.const_index(k), pred), verify=False).results[0]
    return cmps[key]


def _reduce(cg, cls, vals: list[SSAValue]) -> SSAValue:
    acc = vals[0]
    for v in vals[1:]:
        acc = cg.b.emit(cls(acc, v), verify=False).results[0]
    return acc


__all__ = ["emit_chain"]
