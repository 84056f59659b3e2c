"""The exact region of a buffer that a kernel's instructions write, as an integer set (isl).

For a base buffer ``B`` of shape ``[n_0, ..., n_{r-1}]`` (a kernel parameter or an
``nki.ndarray`` result; identity row-major layout), :func:`written_region` returns the set

    { [i_0, ..., i_{r-1}] : 0 <= i_j < n_j, and some instruction writes B[i_0, ..., i_{r-1}]
      in some iteration of its enclosing loops under its enclosing scf.if guards }

as an ``islpy.Set``.  Every written operand (the roles of ``instruction.WRITE_ROLES``,
:func:`.effects.accesses`) is a view of ``B`` whose elements sit at the linear offsets

    offset(ivs) + sum_k stride_k * m_k,   0 <= m_k < size_k

from the start of ``B`` (:func:`linear_view`; a plain ``memref.subview`` / ``memref.cast``
chain is taken per dimension instead, as the :class:`.dependence.Box` of
:func:`.dependence.box_of`, which isl handles without a linear equation): ``memref.subview``
(rank-reducing ones included), ``memref.reinterpret_cast`` (``permute``, ``reshape``, ``ap``, ...: offset and
strides count elements from the start of the storage) and ``memref.cast`` chains, with
``offset`` affine in the ``scf.for`` induction variables (:func:`.affine.affine_of`).  An
induction variable of a loop with constant bounds is ``lb + step * k`` with
``0 <= k < trips`` (a loop that runs 0 times writes nothing); of any other loop it is
unconstrained.  An ``scf.if`` guard (the versions of a masked instruction, frontend/beta1/masks.py)
adds its condition in the then-region and its negation in the else-region when the condition
is a combination (``arith.andi`` / ``ori`` / ``xori`` with ``true``) of signed
``arith.cmpi`` of affine expressions; any other condition adds nothing.

The result over-approximates what can be written, never under-approximates it: an operand
this module cannot follow (``view_dtype``, an offset that is not affine, e.g. a register or
``scf.while`` value) counts as writing the whole buffer, and so does an indirect DMA
(``nki.dma_copy_indirect``: the rows it writes are data), so an element outside the set is
never written by any run of the kernel.

``None`` when the question cannot be asked: islpy missing, or more than :data:`MAX_WRITES`
writing instructions (the set would take too long to build).
"""
from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from .affine import Affine, affine_of, const_int, loop_bounds, loop_of_iv, trip_count
from .dependence import box_of
from ..dialects.effects import accesses, base_buffer
from .exact_overlap import _isl, available

#: give up (no answer) above this many writing instructions of one buffer (about 1 ms each)
MAX_WRITES = 2048

#: ``arith.cmpi`` predicates (MLIR's enum order) that compare signed integers / indices,
#: with their isl operator and the operator of their negation
_CMP = {0: ("=", "!="), 1: ("!=", "="), 2: ("<", ">="), 3: ("<=", ">"), 4: (">", "<="),
        5: (">=", "<")}


class LinearView:
    """A view of ``base``: elements ``offset + sum(strides[k] * m_k)``, ``0 <= m_k < sizes[k]``
    (element units from the start of ``base``; ``offset`` affine in induction variables)."""

    __slots__ = ("base", "offset", "sizes", "strides")

    def __init__(self, base: SSAValue, offset: Affine, sizes: tuple[int, ...],
                 strides: tuple[int, ...]):
        self.base, self.offset, self.sizes, self.strides = base, offset, sizes, strides


def _layout(t) -> tuple[tuple[int, ...], tuple[int, ...], int | None] | None:
    """``(shape, strides, static offset | None)`` of a memref type with static shape and strides."""
    if not isinstance(t, MemRefType):
        return None
    shape = tuple(t.get_shape())
    strides = t.get_strides()
    if strides is None or any(s is None for s in strides) or any(n < 0 for n in shape):
        return None
    return shape, tuple(strides), t.get_offset()


def is_row_major(value: SSAValue) -> bool:
    """A memref with static shape and the identity (row-major, offset 0) layout."""
    t = value.type
    return isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr) and \
        all(n >= 0 for n in t.get_shape())


def linear_view(value: SSAValue, depth: int = 0) -> LinearView | None:
    """``value`` as a :class:`LinearView` of its base buffer, or None (a view this module does
    not follow, a non-affine offset, or a base without the row-major layout)."""
    lay = _layout(value.type)
    if lay is None or depth > 64:
        return None
    shape, strides, _ = lay
    if not (isinstance(value, OpResult) and value.op.name in
            ("memref.subview", "memref.reinterpret_cast", "memref.cast")):
        if base_buffer(value) is not value or not is_row_major(value):
            return None                     # another view kind (view_dtype, reshapes, ...)
        return LinearView(value, Affine(0), shape, strides)
    op = value.op
    src = linear_view(op.operands[0], depth + 1)
    if src is None:
        return None
    if op.name == "memref.cast":
        return LinearView(src.base, src.offset, shape, strides)
    if op.name == "memref.reinterpret_cast":
        static = op.static_offsets.get_values()
        if len(static) != 1:
            return None
        off = affine_of(op.offsets[0]) if len(op.offsets) == 1 else Affine(static[0])
        return None if off is None else LinearView(src.base, off, shape, strides)
    # memref.subview: the result's first element is the source's element at the offsets
    static = op.static_offsets.get_values()
    dyn = iter(op.offsets)
    off = src.offset
    if len(static) != len(src.strides):
        return None
    for o, stride in zip(static, src.strides):
        a = Affine(o) if o >= 0 else affine_of(next(dyn))   # DYNAMIC_INDEX is negative
        if a is None:
            return None
        off = off + a.scale(stride)
    return LinearView(src.base, off, shape, strides)


def writes_of(block_ops: Iterable[Operation]) -> dict[SSAValue, list[tuple[Operation, SSAValue]]]:
    """base buffer -> ``[(op, written operand)]`` in program order."""
    out: dict[SSAValue, list[tuple[Operation, SSAValue]]] = {}
    for op in block_ops:
        if isinstance(op, IRDLOperation):
            for a in accesses(op):
                if a.is_write:
                    out.setdefault(a.base, []).append((op, a.value))
    return out


Lin = dict    # an affine form {variable name: coefficient, 1: constant}


class _Builder:
    """The integer set of one write, built with the isl API (parsing set text is ~20x
    slower): index variables first, then loop and view variables, all set dimensions; the
    non-index ones are projected out at the end.  Constraints are affine forms
    (:data:`Lin`); a guard is a tree of ``("and" | "or", [...])`` and ``("cmp", Lin, op)``."""

    def __init__(self, shape: tuple[int, ...]):
        self.names: dict = {}
        self.bounds: list[tuple[str, int, int]] = []
        self.eqs: list[Lin] = []
        self.guards: list = []
        self.index = [self.var(("i", j), 0, n - 1) for j, n in enumerate(shape)]

    def var(self, key, lo: int | None = None, hi: int | None = None) -> str:
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"v{len(self.names)}"
            if lo is not None:
                self.bounds.append((name, lo, hi))
        return name

    def iv(self, iv: SSAValue) -> tuple[str, int, int] | None:
        """``(var, coeff, const)`` with ``iv = coeff * var + const``."""
        loop = loop_of_iv(iv)
        if loop is None:
            return None
        b = loop_bounds(loop)
        if b is None:                       # unknown bounds: any value
            return self.var(("iv", id(loop))), 1, 0
        lb, _, step = b
        n = trip_count(loop)
        return self.var(("k", id(loop)), 0, max(n - 1, 0)), step, lb

    def expr(self, a: Affine) -> Lin | None:
        out: Lin = {1: a.const}
        for v, c in a.terms:
            t = self.iv(v)
            if t is None:
                return None
            name, coeff, k0 = t
            out[name] = out.get(name, 0) + c * coeff
            out[1] += c * k0
        return out

    def cond(self, value: SSAValue, positive: bool, depth: int = 0):
        """An over-approximation of ``value`` (``positive``) or of its negation as a guard
        tree; None = true, False = false."""
        if not isinstance(value, OpResult) or depth > 32:
            return None
        op = value.op
        if op.name == "arith.constant":
            attr = op.properties.get("value") or op.attributes.get("value")
            if isinstance(attr, IntegerAttr):
                return None if bool(attr.value.data) == positive else False
            return None
        if op.name == "arith.cmpi":
            pred = op.properties.get("predicate") or op.attributes.get("predicate")
            ops = _CMP.get(pred.value.data) if isinstance(pred, IntegerAttr) else None
            lhs, rhs = affine_of(op.operands[0]), affine_of(op.operands[1])
            if ops is None or lhs is None or rhs is None:
                return None
            e = self.expr(lhs - rhs)
            return None if e is None else ("cmp", e, ops[0 if positive else 1])
        if op.name in ("arith.andi", "arith.ori"):
            a, b = (self.cond(x, positive, depth + 1) for x in op.operands)
            if (op.name == "arith.andi") == positive:   # a and b: keep what is known
                if a is False or b is False:
                    return False
                known = [c for c in (a, b) if c is not None]
                return ("and", known) if known else None
            if a is None or b is None:
                return None
            return ("or", [c for c in (a, b) if c is not False]) if (a, b) != (False, False) else False
        if op.name == "arith.xori":
            for x, y in (op.operands, reversed(op.operands)):
                c = const_int(y)
                if c is not None and c & 1:
                    return self.cond(x, not positive, depth + 1)
        return None

    def context(self, op: Operation) -> bool:
        """Loop variables and guards of ``op``'s enclosing ops; False when it never runs."""
        child, node = op, op.parent_op()
        while node is not None and node.name != "func.func":
            if node.name == "scf.for":
                n = trip_count(node)
                if n == 0:
                    return False
                if n is not None:
                    self.iv(node.body.block.args[0])
            elif node.name == "scf.if":
                then = child.parent_region() is node.regions[0]
                c = self.cond(node.operands[0], then)
                if c is False:
                    return False
                if c is not None:
                    self.guards.append(c)
            child, node = node, node.parent_op()
        return True

    def place_box(self, box) -> bool:
        """Constrain the index variables to an exact :class:`.dependence.Box` (one offset,
        size and stride per base dimension); False when it is empty."""
        for j, d in enumerate(box.dims):
            if d.size == 0:
                return False
            off = self.expr(d.offset)
            assert off is not None, "checked by the caller"
            m = self.var(("m", j), 0, d.size - 1)
            self.eqs.append(_sub({self.index[j]: 1}, {**off, m: off.get(m, 0) + d.stride}))
        return True

    def place(self, base_shape: tuple[int, ...], view: LinearView) -> bool:
        """Constrain the index variables to the elements of ``view`` (its linear offsets in
        the row-major base); False when it is empty."""
        if any(n == 0 for n in view.sizes):
            return False
        rhs = self.expr(view.offset)
        assert rhs is not None, "checked by the caller"
        for k, (n, st) in enumerate(zip(view.sizes, view.strides)):
            m = self.var(("m", k), 0, n - 1)
            rhs[m] = rhs.get(m, 0) + st
        lhs: Lin = {}
        row = 1
        for j in reversed(range(len(base_shape))):
            lhs[self.index[j]] = row
            row *= base_shape[j]
        self.eqs.append(_sub(lhs, rhs))
        return True

    def set(self):
        space = _isl.Space.create_from_names(_isl.DEFAULT_CONTEXT, set=list(self.names.values()))
        bs = _isl.BasicSet.universe(space)
        for name, lo, hi in self.bounds:
            bs = bs.add_constraint(_isl.Constraint.ineq_from_names(space, {name: 1, 1: -lo}))
            bs = bs.add_constraint(_isl.Constraint.ineq_from_names(space, {name: -1, 1: hi}))
        for e in self.eqs:
            bs = bs.add_constraint(_isl.Constraint.eq_from_names(space, _clean(e)))
        s = bs.to_set()
        for g in self.guards:
            s = s.intersect(_guard_set(space, g))
        rank = len(self.index)
        return s.project_out(_isl.dim_type.set, rank, len(self.names) - rank)


def _sub(a: Lin, b: Lin) -> Lin:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) - c
    return out


def _clean(e: Lin) -> Lin:
    return {k: c for k, c in e.items() if c != 0}


def _guard_set(space, g):
    """The set of a guard tree (see :class:`_Builder`)."""
    kind = g[0]
    if kind in ("and", "or"):
        parts = [_guard_set(space, x) for x in g[1]]
        out = parts[0]
        for p in parts[1:]:
            out = out.intersect(p) if kind == "and" else out.union(p)
        return out
    _, e, op = g
    uni = _isl.BasicSet.universe(space)

    def ineq(form: Lin):               # form >= 0
        return uni.add_constraint(_isl.Constraint.ineq_from_names(space, _clean(form))).to_set()

    neg = {k: -c for k, c in e.items()}
    if op == "=":
        return uni.add_constraint(_isl.Constraint.eq_from_names(space, _clean(e))).to_set()
    if op == "!=":
        return ineq({**e, 1: e.get(1, 0) - 1}).union(ineq({**neg, 1: neg.get(1, 0) - 1}))
    if op == "<":
        return ineq({**neg, 1: neg.get(1, 0) - 1})
    if op == "<=":
        return ineq(neg)
    if op == ">":
        return ineq({**e, 1: e.get(1, 0) - 1})
    return ineq(e)                           # >=


def full_region(shape: tuple[int, ...]):
    """The box of every element of a buffer of ``shape``."""
    return _Builder(shape).set()


def written_region(base: SSAValue, writes: list[tuple[Operation, SSAValue]]):
    """The set of the module docstring for ``base`` (an ``islpy.Set`` in its index space), or
    None (islpy missing, too many writes, or ``base`` is not a row-major buffer)."""
    if not available() or len(writes) > MAX_WRITES or not is_row_major(base):
        return None
    shape = tuple(base.type.get_shape())
    full = full_region(shape)
    done = full.empty(full.get_space())
    for n, (op, value) in enumerate(writes):
        if "indirect" in op.name:
            return full                     # data-dependent rows: all of it
        b = _Builder(shape)
        box = box_of(value)
        if box.base is base and box.exact and len(box.dims) == len(shape):
            if any(b.expr(d.offset) is None for d in box.dims):
                return full                 # an offset that is not affine: any element
            if not (b.context(op) and b.place_box(box)):
                continue                    # never runs, or an empty view
        else:
            view = linear_view(value)
            if view is None or view.base is not base or b.expr(view.offset) is None:
                return full                 # a view not followed: all of it
            if not (b.context(op) and b.place(shape, view)):
                continue
        done = done.union(b.set())
        if n % 16 == 15:
            done = done.coalesce()
            if done.is_equal(full):
                return full
    return done.intersect(full).coalesce()
