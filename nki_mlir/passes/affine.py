"""Affine index expressions over loop induction variables, for the dependence test.

An :class:`Affine` is ``const + sum(coeff * var)`` with integer coefficients.  Variables are
hashable keys: :func:`affine_of` uses the induction variables (``SSAValue``) of enclosing
``scf.for`` loops; the dependence test renames them (``(side, iv)`` tuples) to talk about two
different iterations.  :func:`affine_of` understands ``arith.constant`` (integer / index),
``arith.addi``, ``arith.subi``, ``arith.muli`` by a constant and ``arith.index_cast(ui)``;
anything else (a runtime register value, a division, a ``scf.while`` argument) is unknown
(``None``) and the dependence test then assumes the index can take any value.

Value ranges (:func:`value_range`) use interval arithmetic with ``None`` for an unbounded
side; the bounds of an ``scf.for`` induction variable come from constant ``lb``/``ub``/``step``
(:func:`iv_bounds`).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from math import gcd

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

Bound = tuple[int | None, int | None]   # (lo, hi), None = unbounded


@dataclass(frozen=True)
class Affine:
    """``const + sum(coeff * var for var, coeff in terms)``; zero coefficients are dropped."""

    const: int = 0
    terms: tuple[tuple[Hashable, int], ...] = field(default=())

    @staticmethod
    def of(const: int = 0, terms: dict | None = None) -> Affine:
        items = tuple((v, c) for v, c in (terms or {}).items() if c != 0)
        return Affine(const, items)

    def as_dict(self) -> dict:
        return dict(self.terms)

    def __add__(self, other: Affine) -> Affine:
        if not self.terms and not other.terms:
            return Affine(self.const + other.const)
        d = self.as_dict()
        for v, c in other.terms:
            d[v] = d.get(v, 0) + c
        return Affine.of(self.const + other.const, d)

    def scale(self, k: int) -> Affine:
        if not self.terms:
            return Affine(self.const * k)
        return Affine.of(self.const * k, {v: c * k for v, c in self.terms})

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scale(-1)

    def rename(self, f: Callable[[Hashable], Affine]) -> Affine:
        """Substitute every variable ``v`` by the affine expression ``f(v)``."""
        out = Affine(self.const)
        for v, c in self.terms:
            out = out + f(v).scale(c)
        return out

    @property
    def is_const(self) -> bool:
        return not self.terms


def const_int(value: SSAValue) -> int | None:
    """The integer value of an ``arith.constant``, else None."""
    if isinstance(value, OpResult) and value.op.name == "arith.constant":
        attr = value.op.properties.get("value")
        if attr is None:
            attr = value.op.attributes.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def loop_of_iv(value: SSAValue) -> Operation | None:
    """The ``scf.for`` whose induction variable ``value`` is, else None."""
    if isinstance(value, BlockArgument) and value.index == 0:
        block: Block = value.block
        op = block.parent_op()
        if op is not None and op.name == "scf.for":
            return op
    return None


def affine_of(value: SSAValue, depth: int = 0) -> Affine | None:
    """``value`` as an affine expression of ``scf.for`` induction variables, or None."""
    c = const_int(value)
    if c is not None:
        return Affine(c)
    if loop_of_iv(value) is not None:
        return Affine.of(0, {value: 1})
    if not isinstance(value, OpResult) or depth > 64:
        return None
    op = value.op
    if op.name in ("arith.index_cast", "arith.index_castui"):
        return affine_of(op.operands[0], depth + 1)
    if op.name in ("arith.addi", "arith.subi", "arith.muli"):
        a, b = (affine_of(x, depth + 1) for x in op.operands)
        if a is None or b is None:
            return None
        if op.name == "arith.addi":
            return a + b
        if op.name == "arith.subi":
            return a - b
        if a.is_const:
            return b.scale(a.const)
        if b.is_const:
            return a.scale(b.const)
    return None


def loop_bounds(loop: Operation) -> tuple[int, int, int] | None:
    """Constant ``(lb, ub, step)`` of an ``scf.for``, else None."""
    if loop.name != "scf.for":
        return None
    vals = [const_int(v) for v in (loop.lb, loop.ub, loop.step)]
    if any(v is None for v in vals) or vals[2] <= 0:
        return None
    return vals[0], vals[1], vals[2]


def trip_count(loop: Operation) -> int | None:
    """Static number of iterations of an ``scf.for`` (None when unknown)."""
    b = loop_bounds(loop)
    if b is None:
        return None
    lb, ub, step = b
    return max(0, -(-(ub - lb) // step))


def iv_bounds(loop: Operation) -> Bound:
    """``(first, last)`` value of the induction variable (None sides when unknown)."""
    b = loop_bounds(loop)
    if b is None:
        return (None, None)
    lb, ub, step = b
    n = max(0, -(-(ub - lb) // step))
    return (lb, lb + step * (n - 1)) if n else (lb, lb)


def value_range(expr: Affine, bounds: Callable[[Hashable], Bound]) -> Bound:
    """Interval of ``expr`` when each variable ``v`` ranges over ``bounds(v)``."""
    lo: int | None = expr.const
    hi: int | None = expr.const
    for v, c in expr.terms:
        vlo, vhi = bounds(v)
        if c < 0:
            vlo, vhi = (None if vhi is None else -vhi), (None if vlo is None else -vlo)
            c = -c
        lo = None if lo is None or vlo is None else lo + c * vlo
        hi = None if hi is None or vhi is None else hi + c * vhi
    return lo, hi


def may_equal_mod(expr: Affine, modulus: int) -> bool:
    """False when ``expr`` can never be a multiple of ``modulus`` (the GCD test)."""
    if modulus <= 1:
        return True
    g = modulus
    for _, c in expr.terms:
        g = gcd(g, abs(c))
    return expr.const % g == 0
