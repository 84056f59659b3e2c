"""Exact loop-carried overlap of two affine boxes, decided as integer-set emptiness (isl).

The interval + GCD test of :func:`.dependence.boxes_may_overlap` looks at one dimension and
one difference of offsets at a time, so it cannot see that a bijective index map such as
``out[i2 * n1 + i1]`` (``0 <= i1 < n1``) never repeats an element.  :func:`carried_overlap`
asks the exact question instead: is the integer set

    { (k_a, k_b, m_a, m_b) : iteration vectors k_a, k_b of the enclosing loops in their
      bounds, the same at the loops outside ``level``, k_a < k_b at ``level``, free at the
      loops inside it; 0 <= m_a < size_a, 0 <= m_b < size_b per dimension;
      offset_a(k_a) + stride_a * m_a == offset_b(k_b) + stride_b * m_b in every dimension }

empty?  Every ``scf.for`` induction variable is ``lb + step * k`` with ``0 <= k < trips``.
Emptiness of such a Presburger set is decided exactly by isl (``islpy``).

Conservative answers (``True``: may overlap) whenever the question is not affine or not
bounded: a box that is the whole buffer or whose rank differs, an induction variable of a
loop without constant bounds, or islpy missing.  A dimension whose offset or size is unknown
adds no constraint (any index).  Answers are cached by the text of the set.
"""
from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache

from xdsl.ir import Operation

from .affine import Affine, loop_bounds, loop_of_iv

try:                                    # pragma: no cover - exercised when islpy is present
    import islpy as _isl
except ImportError:                     # pragma: no cover
    _isl = None

#: give up (answer "may overlap") above this many set dimensions: isl stays fast below it
MAX_VARS = 48


def available() -> bool:
    """Whether the exact test can run (islpy importable)."""
    return _isl is not None


@lru_cache(maxsize=4096)
def _is_empty(text: str) -> bool:
    return _isl.BasicSet(text).is_empty()


class _SetText:
    """Builds the text of one isl basic set: named variables and affine constraints."""

    def __init__(self):
        self.names: dict[Hashable, str] = {}
        self.cons: list[str] = []

    def var(self, key: Hashable, lo: int | None = None, hi: int | None = None) -> str:
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"v{len(self.names)}"
            if lo is not None:
                self.cons.append(f"{name} >= {lo}")
            if hi is not None:
                self.cons.append(f"{name} <= {hi}")
        return name

    def text(self) -> str:
        return "{ [" + ", ".join(self.names.values()) + "] : " + " and ".join(self.cons or ["true"]) + " }"


def _linear(terms: dict[str, int], const: int) -> str:
    parts = [f"{c}*{v}" for v, c in terms.items() if c != 0]
    return " + ".join(parts + [str(const)])


def carried_overlap(a, b, common: list[Operation], level: int) -> bool:
    """Whether box ``a`` in some iteration ``t`` and box ``b`` in a LATER iteration of
    ``common[level]`` (the same iteration of ``common[:level]``, any iteration of every
    other loop) may share an element; exact for affine offsets with constant loop bounds.

    Args:
        a, b: :class:`.dependence.Box` es of one base buffer (element units).
        common: the loops around both accesses, outermost first.
        level: index into ``common`` of the loop whose iterations differ.
    Returns:
        False only when the set in the module docstring is provably empty.
    """
    if _isl is None or a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return True
    bounds = loop_bounds(common[level])
    if bounds is None:
        return True
    shared = {id(l) for l in common[:level]}
    pivot = common[level]
    s = _SetText()

    def trips_of(loop) -> int | None:
        lbub = loop_bounds(loop)
        if lbub is None:
            return None
        lb, ub, step = lbub
        return max(0, -(-(ub - lb) // step))

    n_pivot = trips_of(pivot)
    if n_pivot < 2:
        return False
    ka = s.var(("a", id(pivot)), 0, n_pivot - 1)
    kb = s.var(("b", id(pivot)), 0, n_pivot - 1)
    s.cons.append(f"{ka} < {kb}")

    def side_expr(expr: Affine, side: str) -> tuple[dict[str, int], int] | None:
        terms: dict[str, int] = {}
        const = expr.const
        for iv, c in expr.terms:
            loop = loop_of_iv(iv)
            lbub = loop_bounds(loop) if loop is not None else None
            if lbub is None:
                return None
            lb, _, step = lbub
            n = trips_of(loop)
            key = ("s", id(loop)) if id(loop) in shared else (side, id(loop))
            name = s.var(key, 0, max(n - 1, 0))
            terms[name] = terms.get(name, 0) + c * step
            const += c * lb
        return terms, const

    for i, (da, db) in enumerate(zip(a.dims, b.dims)):
        if not (da.known and db.known):
            continue
        ea, eb = side_expr(da.offset, "a"), side_expr(db.offset, "b")
        if ea is None or eb is None:
            continue                     # unknown bounds: this dimension can be anything
        ma = s.var(("ma", i), 0, da.size - 1)
        mb = s.var(("mb", i), 0, db.size - 1)
        ta, ca = ea
        tb, cb = eb
        ta = {**ta, ma: ta.get(ma, 0) + da.stride}
        tb = {**tb, mb: tb.get(mb, 0) + db.stride}
        s.cons.append(f"{_linear(ta, ca)} = {_linear(tb, cb)}")
        if len(s.names) > MAX_VARS:
            return True
    return not _is_empty(s.text())


def carried_overlap_either(a, b, common: list[Operation], level: int) -> bool:
    """:func:`carried_overlap` in both directions (``a`` earlier or ``b`` earlier)."""
    return carried_overlap(a, b, common, level) or carried_overlap(b, a, common, level)
