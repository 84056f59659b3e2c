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
``__post_init__``.  Remove this override when the pinned xDSL builds as fast by itself.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import UNKNOWN_LOC
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.ir.core import SSAValues, Use

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


Operation.__init__ = operation_init  # type: ignore[method-assign]
