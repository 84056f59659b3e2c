"""NKI Beta 1 index expressions: ``nl.arange`` / ``nl.mgrid`` grids and ``mask=`` predicates.

An :class:`IndexExpr` is an integer tensor known at compile time up to loop indices::

    const + sum_r coeffs[r] * k_r,    k_r in [0, sizes[r])  on axis r of a rank-``rank`` grid

``nl.arange(128)[:, None]`` is ``rank=2, sizes=(128, 1), coeffs=(1, 0), const=0``;
``t * 128 + i_p`` keeps the same grid with ``const = 128*t`` (an :class:`~.values.Index`).
Arithmetic follows NumPy broadcasting of the grids (axes aligned from the right), and
only affine forms are representable: ``+ -`` of expressions and ints / loop indices, ``*``
by an int.  A comparison of an expression gives a :class:`Mask` (a conjunction of affine
constraints ``expr <op> 0``); masks combine with ``&``.

Semantics: NKI language guide (nki/get-started/nki-language-guide) (Beta 1 advanced indexing, masks), the NKI Beta 1
programming-model page ("Tile indexing", "Masking").
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import ClassVar

from ..context import active, tracer
from ..proxies import with_operators
from ..values import Index, as_index, is_int, simplify

#: comparison operator -> its name in a :class:`Mask` constraint (``expr <op> 0``)
CMP_NAMES = {operator.lt: "lt", operator.le: "le", operator.gt: "gt", operator.ge: "ge",
             operator.eq: "eq", operator.ne: "ne"}


class IndexError_(ValueError):
    """A non-affine or ill-shaped index expression (the frontend reports it located)."""


@with_operators("_op", ("add", "sub", "mul", "floordiv", "mod", "truediv"), ("add", "sub", "mul"))
@with_operators("_cmp", ("lt", "le", "gt", "ge"))
@dataclass(frozen=True)
class IndexExpr:
    """An affine index grid (see the module docstring).

    Attributes:
        sizes: the grid shape; 1 on axes the expression does not vary along.
        coeffs: per axis, the step between neighbouring grid points (0 where size is 1).
        const: the value at grid point 0: an int or a loop-index :class:`~.values.Index`.
    """

    sizes: tuple[int, ...]
    coeffs: tuple[int, ...]
    const: "Index | int" = 0
    #: a tensor compares with it in a traced kernel (``proxies._comparable``)
    traced_operand: ClassVar[bool] = True

    @property
    def rank(self) -> int:
        return len(self.sizes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sizes

    @staticmethod
    def arange(start: int, stop: int, step: int = 1) -> "IndexExpr":
        n = max(0, -(-(stop - start) // step))
        if n <= 0:
            raise IndexError_(f"nl.arange({start}, {stop}) is empty")
        return IndexExpr((n,), (step if n > 1 else 0,), start)

    def axes(self) -> list[int]:
        """The grid axes the expression varies along."""
        return [r for r, (s, c) in enumerate(zip(self.sizes, self.coeffs)) if s > 1 and c != 0]

    def value_range(self) -> tuple["Index | int", "Index | int"]:
        """(min, max) over the grid, as const + offsets (ints when const is an int)."""
        lo = sum(min(0, c * (s - 1)) for s, c in zip(self.sizes, self.coeffs))
        hi = sum(max(0, c * (s - 1)) for s, c in zip(self.sizes, self.coeffs))
        return simplify(as_index(self.const).add(lo)), simplify(as_index(self.const).add(hi))

    # ---------------------------------------------------------------- shape ops
    def subscript(self, key) -> "IndexExpr":
        """``e[:, None]`` / ``e[None, :]``: insert size-1 axes (``None``), keep axes (``:``)."""
        keys = list(key) if isinstance(key, tuple) else [key]
        if Ellipsis in keys:
            at = keys.index(Ellipsis)
            fill = self.rank - sum(1 for k in keys if k is not None and k is not Ellipsis)
            keys = keys[:at] + [slice(None)] * fill + keys[at + 1:]
        sizes, coeffs, it = [], [], 0
        for k in keys:
            if k is None:
                sizes.append(1)
                coeffs.append(0)
            elif isinstance(k, slice) and k == slice(None):
                if it >= self.rank:
                    raise IndexError_("too many ':' for the rank of this index expression")
                sizes.append(self.sizes[it])
                coeffs.append(self.coeffs[it])
                it += 1
            else:
                raise IndexError_(f"an nl.arange expression can only be subscripted with ':' and "
                                  f"None (e.g. nl.arange(128)[:, None]), got {k!r}")
        if it != self.rank:
            raise IndexError_("every axis of the index expression needs a ':' in the subscript")
        return IndexExpr(tuple(sizes), tuple(coeffs), self.const)

    def _grid(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        pad = rank - self.rank
        return (1,) * pad + self.sizes, (0,) * pad + self.coeffs

    # ---------------------------------------------------------------- algebra
    def combine(self, other: "IndexExpr | Index | int", sign: int) -> "IndexExpr":
        if not isinstance(other, IndexExpr):
            return IndexExpr(self.sizes, self.coeffs, simplify(as_index(self.const)._merge(as_index(other), sign)))
        rank = max(self.rank, other.rank)
        (s1, c1), (s2, c2) = self._grid(rank), other._grid(rank)
        sizes, coeffs = [], []
        for a, ca, b, cb in zip(s1, c1, s2, c2):
            if a > 1 and b > 1 and a != b:
                raise IndexError_(f"index expressions of shapes {list(self.sizes)} and "
                                  f"{list(other.sizes)} cannot be broadcast together")
            sizes.append(max(a, b))
            coeffs.append(ca + sign * cb)
        const = simplify(as_index(self.const)._merge(as_index(other.const), sign))
        return IndexExpr(tuple(sizes), tuple(coeffs), const)

    def scale(self, k: int) -> "IndexExpr":
        return IndexExpr(self.sizes, tuple(c * k for c in self.coeffs), simplify(as_index(self.const).scale(k)))

    # ------------------------------------------ Python operators (a traced kernel)
    # through the tracer (frontend/beta1/trace.py: grid_operator, grid_compare, ...)
    def _op(self, op: str, other, reflected: bool = False):
        t = tracer()
        return t.grid_operator(op, other, self) if reflected else t.grid_operator(op, self, other)

    def _cmp(self, op: str, other):
        return tracer().grid_compare(op, self, other)

    def __neg__(self):
        return self._op("mul", -1)

    def __getitem__(self, key):
        return tracer().grid_subscript(self, key)

    def __eq__(self, other):  # type: ignore[override]
        if isinstance(other, IndexExpr):
            return (self.sizes, self.coeffs, self.const) == (other.sizes, other.coeffs, other.const)
        if _traced_number(other):
            return self._cmp("eq", other)
        return NotImplemented

    def __ne__(self, other):  # type: ignore[override]
        if isinstance(other, IndexExpr):
            return not self == other
        if _traced_number(other):
            return self._cmp("ne", other)
        return NotImplemented

    __hash__ = object.__hash__  # replaced by the dataclass's field hash below

    def __setitem__(self, key, value):
        from ...errors import NKITypeError
        from ..frames import user_loc
        raise NKITypeError("an nl.arange / nl.mgrid index expression cannot be assigned to; "
                           "materialise it as a tile with nisa.iota first", user_loc(),
                           code="err_cannot_assign_to_index")

    def __bool__(self) -> bool:
        tracer().grid_truth("an index expression")


def _traced_number(v) -> bool:
    """An int or loop index compared with an index expression inside a traced kernel."""
    if active() is None:
        return False
    from ..proxies import LoopIndex
    return (is_int(v) and not isinstance(v, bool)) or isinstance(v, (Index, LoopIndex))


IndexExpr.__hash__ = lambda self: hash((self.sizes, self.coeffs, self.const))  # type: ignore[method-assign]


@dataclass(frozen=True)
class MGrid:
    """The result of ``nl.mgrid[0:P, 0:F, ...]``: one :class:`IndexExpr` per axis, also
    reachable as ``.p`` (axis 0) and ``.x``, ``.y``, ``.z`` (axes 1, 2, 3)."""

    exprs: tuple[IndexExpr, ...]

    def __getattr__(self, name: str) -> IndexExpr:
        axis = {"p": 0, "x": 1, "y": 2, "z": 3}.get(name)
        if axis is None or axis >= len(self.exprs):
            raise AttributeError(f"an nl.mgrid of rank {len(self.exprs)} has no field '{name}'")
        return self.exprs[axis]

    def __getitem__(self, i: int) -> IndexExpr:
        return self.exprs[i]

    def __iter__(self):
        return iter(self.exprs)

    def __len__(self) -> int:
        return len(self.exprs)


def mgrid(key) -> MGrid:
    """``nl.mgrid[a:b, c:d]`` -> :class:`MGrid` (slices with compile-time int bounds)."""
    keys = list(key) if isinstance(key, tuple) else [key]
    rank = len(keys)
    exprs, ranges = [], []
    for r, k in enumerate(keys):
        if not isinstance(k, slice) or not all(v is None or is_int(v) for v in (k.start, k.stop, k.step)):
            raise IndexError_(f"nl.mgrid takes slices with compile-time int bounds (nl.mgrid[0:128, "
                              f"0:512]), got {k!r}")
        start, step = k.start or 0, k.step or 1
        if k.stop is None:
            raise IndexError_("nl.mgrid slices need a stop")
        ranges.append(IndexExpr.arange(int(start), int(k.stop), int(step)))
    # NumPy's mgrid is dense: every component has the whole grid's shape (coefficient 0
    # along the axes it does not vary on), so ``3 * g.y + g.z`` is [P, F, 3, 3], not [1, 1, 3, 3]
    full = tuple(a.sizes[0] for a in ranges)
    for r, a in enumerate(ranges):
        coeffs = [0] * rank
        coeffs[r] = a.coeffs[0]
        exprs.append(IndexExpr(full, tuple(coeffs), a.const))
    return MGrid(tuple(exprs))


@dataclass(frozen=True)
class Mask:
    """A Beta 1 ``mask=`` predicate: the conjunction of ``expr <op> 0`` over its constraints.

    Attributes:
        constraints: ``(expr, op)`` pairs, ``op`` one of ``lt le gt ge eq ne``.
    """

    constraints: tuple[tuple[IndexExpr, str], ...]

    def __and__(self, other: "Mask") -> "Mask":
        if not isinstance(other, Mask):  # a traced kernel: `mask & tile` and the like
            return tracer().grid_operator("and", self, other)
        return Mask(self.constraints + other.constraints)

    def __or__(self, other):
        return tracer().grid_operator("or", self, other)

    def __bool__(self) -> bool:
        tracer().grid_truth("a mask")


def compare(op, a, b) -> Mask:
    """``a <op> b`` where at least one side is an :class:`IndexExpr` -> a :class:`Mask`."""
    if not isinstance(a, IndexExpr):
        a, b, op = b, a, {operator.lt: operator.gt, operator.le: operator.ge, operator.gt: operator.lt,
                          operator.ge: operator.le, operator.eq: operator.eq,
                          operator.ne: operator.ne}[op]
    if not (isinstance(b, (IndexExpr, Index)) or is_int(b)):
        raise IndexError_(f"an index expression can only be compared with ints, loop indices or "
                          f"other index expressions, got {b!r}")
    return Mask(((a.combine(b, -1), CMP_NAMES[op]),))


def binop(op, a, b):
    """Affine arithmetic with at least one :class:`IndexExpr` operand."""
    if op is operator.add:
        return a.combine(b, 1) if isinstance(a, IndexExpr) else b.combine(a, 1)
    if op is operator.sub:
        return a.combine(b, -1) if isinstance(a, IndexExpr) else b.scale(-1).combine(a, 1)
    if op is operator.mul:
        if isinstance(a, IndexExpr) and is_int(b):
            return a.scale(int(b))
        if isinstance(b, IndexExpr) and is_int(a):
            return b.scale(int(a))
        raise IndexError_("an index expression can only be multiplied by a compile-time int "
                          "(index expressions must stay affine)")
    name = {operator.floordiv: "//", operator.mod: "%", operator.truediv: "/"}.get(op, getattr(op, "__name__", op))
    raise IndexError_(f"'{name}' on an nl.arange / nl.mgrid expression is not affine; index "
                      f"expressions allow +, - and * by an int")


__all__ = ["IndexExpr", "MGrid", "Mask", "mgrid", "compare", "binop", "IndexError_", "CMP_NAMES",
           "is_int"]
