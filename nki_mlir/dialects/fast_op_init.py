"""A faster ``Operation.__init__`` for xDSL 0.74, same op state (issue 17).

Every op the compiler makes (``Op.create``, IRDL builders, clones) ends in
``Operation.__init__``, which goes through the ``operands`` / ``successors`` property
setters (each builds a tuple of uses through a generator and first unlinks the uses of the
operands it replaces, of which a new op has none), builds its results through a
generator and, when no location is given, imports the unknown location on every call.  A
traced nki-library kernel makes ~10^5 ops per program instance, so this shows in the
trace time.  :func:`operation_init` below sets the same attributes, in the same order, to
the same values: operand tuple (``SSAValues``), one ``Use`` per operand linked at the head
of its value's use list (operands in order, as the setter does), results, copies of the
property and attribute dicts, location (``UNKNOWN_LOC`` by default), successors through
upstream's setter when there are any, regions through ``add_region``, then
``__post_init__``.

``IRDLOperation.__post_init__`` then fills in the default value of every property and
attribute the op lacks, scanning its definition on every call; :func:`irdl_post_init` reads
the (name, default) pairs from a list made once per definition (same order, same values,
the same ``Operation.__post_init__`` after).  Remove these overrides when the pinned xDSL
builds as fast by itself.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import UNKNOWN_LOC
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.ir.core import SSAValues, Use
from xdsl.irdl.operations import IRDLOperation, OpDef, OptionalDef

_upstream = Operation.__init__
_EMPTY: tuple = ()


def operation_init(self: Operation, *, operands: Sequence[SSAValue] = (),
                   result_types: Sequence[Attribute] = (),
                   properties: Mapping[str, Attribute] = {},    # noqa: B006 (read only, as upstream)
                   attributes: Mapping[str, Attribute] = {},    # noqa: B006
                   location: Attribute | None = None, successors: Sequence[Block] = (),
                   regions: Sequence[Region] = ()) -> None:
    """``Operation.__init__`` (see the module docstring)."""
    ops = SSAValues(operands)
    if ops:
        uses = tuple([Use(self, i) for i in range(len(ops))])
        for value, use in zip(ops, uses):       # IRWithUses.add_use, inlined
            first = value.first_use
            use._next_use = first
            if first is not None:
                first._prev_use = use
            value.first_use = use
    else:
        uses = _EMPTY
    self._operands = ops
    self._operand_uses = uses
    self.results = SSAValues([OpResult(t, self, i) for i, t in enumerate(result_types)])
    self.properties = dict(properties)
    self.attributes = dict(attributes)
    self.location = UNKNOWN_LOC if location is None else location
    if successors:
        self.successors = list(successors)
    else:
        self._successors = _EMPTY
        self._successor_uses = _EMPTY
    self.regions = ()
    for region in regions:
        self.add_region(region)
    self.__post_init__()


#: id(op definition) -> (definition, its (name, default) properties, its attributes)
_DEFAULTS: dict[int, tuple[OpDef, tuple, tuple]] = {}


def _defaults(op_def: OpDef) -> tuple[OpDef, tuple, tuple]:
    hit = _DEFAULTS.get(id(op_def))
    if hit is None or hit[0] is not op_def:
        def pairs(defs):
            return tuple((name, d.default_value) for name, d in defs.items()
                         if not isinstance(d, OptionalDef) and d.default_value is not None)
        hit = _DEFAULTS[id(op_def)] = (op_def, pairs(op_def.properties), pairs(op_def.attributes))
    return hit


def irdl_post_init(self: IRDLOperation) -> None:
    """``IRDLOperation.__post_init__`` (see the module docstring)."""
    _, props, attrs = _defaults(self.get_irdl_definition())
    if props:
        own = self.properties
        for name, value in props:
            if name not in own:
                own[name] = value
    if attrs:
        own = self.attributes
        for name, value in attrs:
            if name not in own:
                own[name] = value
    Operation.__post_init__(self)


Operation.__init__ = operation_init  # type: ignore[method-assign]
IRDLOperation.__post_init__ = irdl_post_init  # type: ignore[method-assign]
