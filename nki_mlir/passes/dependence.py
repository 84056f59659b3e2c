"""Memory dependence analysis over ``nisa`` instructions (docs/backend.md section C).

Regions.  Every memref operand of an instruction (:func:`.effects.accesses`) becomes an
:class:`Acc`: its base buffer plus, when the operand is the base itself or a chain of
``memref.subview`` (rank-reducing ones included) and ``memref.cast``, a :class:`Box` in the
base's index space -- per base dimension an offset (an :class:`~.affine.Affine` expression of
``scf.for`` induction variables, or unknown), a size and a stride (elements).  Every other
view (``memref.reinterpret_cast`` access patterns, ``view_dtype``, reshapes, indirect DMA
tables) is the whole buffer.

Edges ``src -> dst`` (``src`` runs first): RAW / WAR / WAW between two accesses that may
overlap, one of them a write.  Each edge is either loop-independent (``level is None``: the
same iteration of every common loop, ``src`` before ``dst`` in program order) or loop-carried
at ``level`` (index of a common loop, outermost first) with ``distance`` >= 1 iterations
(the smallest distance at which the accesses may overlap; a smaller distance than the true
one is always safe).  ``reason`` says why:

- ``data``: the same base buffer.  A buffer allocated inside a loop body ``L`` is a fresh
  tensor per iteration of ``L``: no data dependence is carried at ``L`` or at loops around
  ``L``.  A buffer defined outside a loop gets a carried edge at that loop only when the boxes
  of two different iterations may overlap (interval + GCD test per dimension on the affine
  offsets; ``out[i*128:(i+1)*128]`` written in iteration ``i`` never overlaps another
  iteration);
- ``copies``: physical reuse of a loop-local buffer: iteration ``t + k`` of ``L`` reuses the
  bytes of iteration ``t`` (``k = nkim.copies``, default 1), so every pair of overlapping
  accesses of different iterations gets a resource edge carried at ``L``'s level with
  distance ``k`` (in both directions);
- ``alias``: two different base buffers whose placed regions overlap
  (:func:`.effects.may_alias`, bytes reused between tensors with disjoint live ranges):
  conservatively a loop-independent edge in program order and a distance-1 edge back at
  every common loop.

Distinct kernel arguments never alias each other.

:func:`.output_deps.check_output_dependencies` raises ``err_unexpected_output_dependencies`` (NKI error catalogue (nki.errors)) for an ``affine_range`` loop two of whose iterations may write the same
location of a tensor defined outside the loop: the interval + GCD test above proposes, the
exact integer-set test of :mod:`.exact_overlap` (isl) confirms, so a bijective index map
(``out[i2 * n1 + i1]``) is never reported while any real overlap still is (implemented in
:mod:`.output_deps`).  The edges of :func:`.dependence_graph.analyze` keep the cheaper conservative test
(possibly more edges, never fewer).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, OpResult, SSAValue

from ..diagnostics import loc_of
from .affine import (Affine, affine_of, const_int, iv_bounds, loop_of_iv, may_equal_mod,
                     trip_count, value_range)
from ..dialects.effects import accesses, base_buffer, enclosing_loops, int_attr, is_instruction

#: how far the carried-distance scan looks before settling for a (safe) lower bound
MAX_SCAN = 16


# ----------------------------------------------------------------------------- regions


@dataclass(frozen=True)
class Dim:
    """Indices ``offset + stride * m`` for ``0 <= m < size`` of one base dimension."""

    offset: Affine | None       # None: unknown
    size: int | None            # None: unknown
    stride: int

    @property
    def known(self) -> bool:
        return self.offset is not None and self.size is not None and self.stride > 0


@dataclass(frozen=True)
class Box:
    """The part of ``base`` an operand covers; ``dims is None`` means the whole buffer."""

    base: SSAValue
    dims: tuple[Dim, ...] | None

    @property
    def exact(self) -> bool:
        return self.dims is not None and all(d.known for d in self.dims)


def _shape(value: SSAValue) -> tuple[int | None, ...]:
    """The shape of a buffer value (None: dynamic), ``()`` for a non-buffer; computed once
    per type object (types are immutable and shared)."""
    t = value.type
    hit = _SHAPES.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    shape = tuple(None if n == DYNAMIC_INDEX or n < 0 else n for n in t.get_shape()) \
        if isinstance(t, MemRefType) else ()
    if len(_SHAPES) >= 1 << 16:
        _SHAPES.clear()
    _SHAPES[id(t)] = (t, shape)          # the type is kept alive: its id stays unique
    return shape


_SHAPES: dict[int, tuple] = {}


def _view(value: SSAValue, depth: int = 0):
    """``(base, dims per base dim | None, view dim -> base dim)`` of a view chain."""
    if isinstance(value, OpResult) and depth < 64:
        op = value.op
        if op.name == "memref.cast":
            return _view(op.operands[0], depth + 1)
        if op.name == "memref.subview":
            base, dims, vmap = _view(op.source, depth + 1)
            if dims is None:
                return base, None, None
            return _subview(op, base, dims, vmap)
        if base_buffer(value) is not value:        # any other view: the whole buffer
            return base_buffer(value), None, None
    return value, [Dim(Affine(0), n, 1) for n in _shape(value)], list(range(len(_shape(value))))


def _dynamic(static: list[int], dynamic, conv):
    it = iter(dynamic)
    return [conv(next(it)) if s == DYNAMIC_INDEX else s for s in static]


def _subview(op, base, dims, vmap):
    offs = _dynamic(op.static_offsets.get_values(), op.offsets, affine_of)
    offs = [Affine(o) if isinstance(o, int) else o for o in offs]
    sizes = _dynamic(op.static_sizes.get_values(), op.sizes, const_int)
    strides = _dynamic(op.static_strides.get_values(), op.strides, const_int)
    if len(offs) != len(vmap) or any(s is None or s <= 0 for s in strides):
        return base, None, None
    dims = list(dims)
    for k, j in enumerate(vmap):
        d = dims[j]
        off = None if d.offset is None or offs[k] is None else d.offset + offs[k].scale(d.stride)
        dims[j] = Dim(off, sizes[k], d.stride * strides[k])
    # rank reduction: drop unit dims greedily while the source has more dims than the result
    res_rank = len(_shape(op.result))
    kept, surplus = [], len(vmap) - res_rank
    for k, j in enumerate(vmap):
        if surplus > 0 and sizes[k] == 1:
            surplus -= 1
            continue
        kept.append(j)
    return base, dims, kept


def box_of(value: SSAValue) -> Box:
    """The :class:`Box` an operand covers in its base buffer."""
    base, dims, _ = _view(value)
    return Box(base, None if dims is None else tuple(dims))


@dataclass(frozen=True)
class Acc:
    """One memory access of an instruction."""

    role: str
    box: Box
    is_write: bool
    #: ``box.base``, kept as a plain attribute (read millions of times by the scoreboards)
    base: SSAValue = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", self.box.base)


@dataclass(eq=False)
class Node:
    """An instruction with its pre-order number, enclosing loops and accesses."""

    op: Operation
    index: int                      # pre-order number among the function's instructions
    loops: list[Operation]          # enclosing loops, OUTERMOST first
    accs: list[Acc]

    @property
    def name(self) -> str:
        return self.op.name.split(".", 1)[-1]


def node_accesses(op: Operation, cache: dict | None = None) -> list[Acc]:
    """The :class:`Acc` of every memref operand of ``op``; ``cache`` (op -> list, valid
    while operands do not change) computes them once per op."""
    if cache is not None:
        hit = cache.get(op)
        if hit is None:
            hit = cache[op] = node_accesses(op)
        return hit
    return [Acc(a.role, box_of(a.value), a.is_write) for a in accesses(op)]


# ------------------------------------------------------------------------ overlap test


def _bound(key: Hashable, extra: dict) -> tuple[int | None, int | None]:
    if key in extra:
        return extra[key]
    iv = key[1] if isinstance(key, tuple) else key
    loop = loop_of_iv(iv)
    return iv_bounds(loop) if loop is not None else (None, None)


def boxes_may_overlap(a: Box, b: Box, ra, rb, extra: dict | None = None) -> bool:
    """Whether boxes ``a`` and ``b`` of one base may share an element, their induction
    variables renamed by ``ra`` / ``rb`` (``iv -> Affine``); ``extra`` bounds more keys."""
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return True
    extra = extra or {}
    for da, db in zip(a.dims, b.dims):
        if not (da.known and db.known):
            continue
        ea, eb = da.stride * (da.size - 1), db.stride * (db.size - 1)
        if not da.offset.terms and not db.offset.terms:    # constant offsets: the same test
            dc = db.offset.const - da.offset.const
            if dc > ea or dc < -eb:
                return False
            if da.stride == db.stride and da.size > 1 and db.size > 1 and da.stride > 1 \
                    and dc % da.stride != 0:
                return False
            continue
        delta = db.offset.rename(rb) - da.offset.rename(ra)
        lo, hi = value_range(delta, lambda k: _bound(k, extra))
        # a covers [oa, oa + ea], b covers [ob, ob + eb]: they meet iff ob - oa in [-eb, ea]
        if (lo is not None and lo > ea) or (hi is not None and hi < -eb):
            return False
        if da.stride == db.stride and da.size > 1 and db.size > 1 and not may_equal_mod(delta, da.stride):
            return False
    return True


def _iv(loop: Operation) -> SSAValue | None:
    return loop.body.block.args[0] if loop.name == "scf.for" else None


def _renamers(common: list[Operation], level: int | None, distance):
    """Renamings for two instances: same iteration of ``common[:level]`` (all common loops
    when ``level`` is None), the later one ``distance`` iterations on at ``level``, every
    other loop independent.  ``distance`` is an int or a variable key."""
    shared = {_iv(l) for l in (common if level is None else common[:level])} - {None}
    pivot = _iv(common[level]) if level is not None else None
    step = 1
    if pivot is not None:
        st = const_int(common[level].step)
        step = st if st is not None else None

    def ra(iv):
        return Affine.of(0, {iv if iv in shared else ("a", iv): 1})

    def rb(iv):
        if iv in shared:
            return Affine.of(0, {iv: 1})
        if iv is pivot and step is not None:
            shift = Affine(distance * step) if isinstance(distance, int) else Affine.of(0, {distance: step})
            return Affine.of(0, {("a", iv): 1}) + shift
        return Affine.of(0, {("b", iv): 1})
    return ra, rb


def same_iteration_overlap(a: Box, b: Box, common: list[Operation]) -> bool:
    ra, rb = _renamers(common, None, 0) if common else _NO_LOOPS
    return boxes_may_overlap(a, b, ra, rb)


_NO_LOOPS = _renamers([], None, 0)     # the renamings of two instances outside any loop


def any_iteration_overlap(a: Box, b: Box) -> bool:
    """Overlap for two unrelated instances (every induction variable independent)."""
    return boxes_may_overlap(a, b, lambda iv: Affine.of(0, {("a", iv): 1}),
                             lambda iv: Affine.of(0, {("b", iv): 1}))


def carried_distance(a: Box, b: Box, common: list[Operation], level: int) -> int | None:
    """Smallest ``d >= 1`` such that ``a`` in iteration ``t`` and ``b`` in iteration ``t + d``
    of ``common[level]`` (same iteration of the loops outside it) may overlap; None: never."""
    loop = common[level]
    trips = trip_count(loop)
    dmax = None if trips is None else trips - 1
    if dmax is not None and dmax < 1:
        return None
    key = ("d", loop)
    ra, rb = _renamers(common, level, key)
    if not boxes_may_overlap(a, b, ra, rb, {key: (1, dmax)}):
        return None
    limit = MAX_SCAN if dmax is None else min(dmax, MAX_SCAN)
    for d in range(1, limit + 1):
        ra, rb = _renamers(common, level, d)
        if boxes_may_overlap(a, b, ra, rb):
            return d
    return None if dmax is not None and limit >= dmax else limit + 1


# ------------------------------------------------------------------------------- edges


@dataclass(frozen=True, eq=False)
class Edge:
    """``src`` must complete before ``dst`` starts (see the module docstring)."""

    src: Node
    dst: Node
    kind: str                       # RAW | WAR | WAW
    role: str                       # the operand role of ``dst``'s access
    level: int | None               # None: loop-independent
    distance: int | None
    reason: str = "data"            # data | copies | alias

    @property
    def loop(self) -> Operation | None:
        return None if self.level is None else self.dst.loops[self.level]


def _kind(first: Acc, second: Acc) -> str:
    if first.is_write and second.is_write:
        return "WAW"
    return "RAW" if first.is_write else "WAR"


def _common(x: Node, y: Node) -> list[Operation]:
    out = []
    for a, b in zip(x.loops, y.loops):
        if a is not b:
            break
        out.append(a)
    return out


def local_loop(base: SSAValue) -> Operation | None:
    """The innermost loop whose body allocates ``base`` (None: defined outside every loop)."""
    if isinstance(base, OpResult):
        loops = enclosing_loops(base.op)
        return loops[0] if loops else None
    return None


def copies_of(base: SSAValue) -> int:
    if isinstance(base, OpResult):
        return max(1, int_attr(base.op, "nkim.copies") or 1)
    return 1


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def into(self) -> dict[Node, list[Edge]]:
        out: dict[Node, list[Edge]] = defaultdict(list)
        for e in self.edges:
            out[e.dst].append(e)
        return out


def collect_nodes(func: FuncOp, cache: dict | None = None, keep=None) -> list[Node]:
    """The instructions of ``func`` in pre-order (``cache``: see :func:`node_accesses`);
    ``keep(loops)``: only those whose enclosing loops (outermost first) it accepts, still
    numbered among all of them (their accesses, the costly part, are not computed)."""
    nodes, index = [], 0
    for op in func.walk():
        if is_instruction(op):
            loops = list(reversed(enclosing_loops(op)))
            if keep is None or keep(loops):
                nodes.append(Node(op, index, loops, node_accesses(op, cache)))
            index += 1
    return nodes


def occurs(common: list[Operation], level: int, distance: int, across_outer: bool,
           trips: dict | None = None) -> bool:
    """Whether two instances ``distance`` iterations apart at ``common[level]`` can both run:
    the distance is below the loop's static trip count (``across_outer``: below the number of
    iterations it runs over the whole function, i.e. the serial distance of rotating copies).
    Unknown trip counts count as possible.  ``trips``: a memo ``loop -> trip count`` valid
    while the IR does not change (one :func:`.dependence_graph.analyze` call)."""
    total = 1
    for loop in (common[:level + 1] if across_outer else common[level:level + 1]):
        if trips is not None and loop in trips:
            n = trips[loop]
        else:
            n = trip_count(loop) if loop.name == "scf.for" else None
            if trips is not None:
                trips[loop] = n
        if n is None:
            return True
        total *= n
    return distance < total


def _pair(x: Node, ax: Acc, y: Node, ay: Acc, same: bool, add_edge, trips: dict | None = None) -> None:
    """Edges between access ``ax`` of ``x`` and ``ay`` of ``y`` (``x`` not after ``y``).
    A carried edge whose distance the loop never reaches is not an edge (:func:`occurs`;
    ``trips``: its memo of trip counts)."""
    common = _common(x, y)

    def add(src, dst, kind, role, level, distance, reason):
        if level is None or occurs(common, level, distance, reason == "copies", trips):
            add_edge(src, dst, kind, role, level, distance, reason)

    if not same:
        if x is not y:
            add(x, y, _kind(ax, ay), ay.role, None, None, "alias")
        for lvl in range(len(common)):
            add(y, x, _kind(ay, ax), ax.role, lvl, 1, "alias")
        return
    local = local_loop(ax.base)
    local_level = common.index(local) if local is not None and local in common else None
    if x is not y and same_iteration_overlap(ax.box, ay.box, common):
        add(x, y, _kind(ax, ay), ay.role, None, None, "data")
    for lvl in range(len(common)):
        if local_level is not None and lvl <= local_level:
            continue
        d = carried_distance(ax.box, ay.box, common, lvl)
        if d is not None:
            add(x, y, _kind(ax, ay), ay.role, lvl, d, "data")
        d = carried_distance(ay.box, ax.box, common, lvl)
        if d is not None and not (x is y and ax is ay):
            add(y, x, _kind(ay, ax), ax.role, lvl, d, "data")
    if local_level is not None and any_iteration_overlap(ax.box, ay.box):
        k = copies_of(ax.base)
        add(x, y, _kind(ax, ay), ay.role, local_level, k, "copies")
        if not (x is y and ax is ay):
            add(y, x, _kind(ay, ax), ax.role, local_level, k, "copies")


# ---------------------------------------------------------------------------- printing


def where(op: Operation) -> str:
    loc = loc_of(op)
    return f"{Path(loc.file).name}:{loc.line}" if loc is not None else "?"


def describe(edge: Edge) -> str:
    """``%7 dma_copy (k.py:28) -> %9 matmul (k.py:30)  RAW lhs  [same iteration]``."""
    s, d = edge.src, edge.dst
    if edge.level is None:
        when = "same iteration"
    else:
        when = f"carried at loop {where(edge.loop)} distance {edge.distance}"
    extra = "" if edge.reason == "data" else f"  ({edge.reason})"
    return (f"%{s.index} {s.name} ({where(s.op)}) -> %{d.index} {d.name} ({where(d.op)})  "
            f"{edge.kind} {edge.role}  [{when}]{extra}")
