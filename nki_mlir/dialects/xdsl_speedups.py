"""Memoized reads of immutable xDSL 0.74 attributes (compile time, issue 16).

xDSL attributes are frozen once built, but some of their readers rebuild their answer on
every call: ``DenseArrayBase.get_values`` unpacks its bytes with :mod:`struct` (and every
named-operand access of an op with ``AttrSizedOperandSegments``, e.g. ``op.dst``, reads the
segment sizes that way), and ``MemRefType.get_shape`` rebuilds its tuple of ints.  The
``DenseArrayBase.from_list`` of an integer list returns one shared attribute per list (views
repeat their static sizes and strides).  The printer of ``memref.subview``'s index lists checks its attribute with ``isa(x,
DenseArrayBase[IntegerType])``, which builds a type constraint per call: the same check is
made with ``isinstance``.  Each
reader below computes its answer once per attribute object and keeps it on the object
(outside the dataclass fields, so equality, hashing and printing are unchanged).  Results
are identical; remove an override when the pinned xDSL caches by itself.
"""
from __future__ import annotations

import functools

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, IntegerType, MemRefType
from xdsl.dialects.utils.dynamic_index_list import DynamicIndexList, print_dynamic_index_list

_get_values = DenseArrayBase.get_values
_get_shape = MemRefType.get_shape


def _cached_get_values(self: DenseArrayBase):
    try:
        return self.__dict__["_nkim_values"]
    except KeyError:
        values = _get_values(self)
        object.__setattr__(self, "_nkim_values", values)
        return values


def _cached_get_shape(self: MemRefType) -> tuple[int, ...]:
    try:
        return self.__dict__["_nkim_shape"]
    except KeyError:
        shape = _get_shape(self)
        object.__setattr__(self, "_nkim_shape", shape)
        return shape


_from_list = DenseArrayBase.from_list


@functools.lru_cache(maxsize=1 << 14)
def _int_array(data_type: IntegerType, data: tuple[int, ...]) -> DenseArrayBase:
    return _from_list(data_type, data)


def _memo_from_list(data_type, data):
    """``DenseArrayBase.from_list``, one shared attribute per integer list (static
    offsets / sizes / strides of views repeat); float lists are built as before."""
    if isinstance(data_type, IntegerType) and all(type(v) is int for v in data):
        return _int_array(data_type, tuple(data))
    return _from_list(data_type, data)


DenseArrayBase.from_list = staticmethod(_memo_from_list)  # type: ignore[method-assign]
DenseArrayBase.get_values = _cached_get_values  # type: ignore[method-assign]
MemRefType.get_shape = _cached_get_shape  # type: ignore[method-assign]


def _integer_array(attr) -> DenseArrayBase:
    assert isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, IntegerType)
    return attr


def _print_dynamic_index_list(self: DynamicIndexList, printer, state, op) -> None:
    state.print_whitespace(printer)
    dynamic = self.dynamic_position.get(op)
    static = _integer_array(self.static_position.get(op))
    print_dynamic_index_list(printer, DYNAMIC_INDEX, dynamic, static.get_values())


def _index_list_present(self: DynamicIndexList, op) -> bool:
    dynamic_empty = not self.dynamic_position.get(op)
    static_empty = not _integer_array(self.static_position.get(op)).data.data
    return not (dynamic_empty and static_empty)


DynamicIndexList.print = _print_dynamic_index_list  # type: ignore[method-assign]
DynamicIndexList.is_present = _index_list_present  # type: ignore[method-assign]
