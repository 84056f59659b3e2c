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
(outside the dataclass fields, so equality, hashing and printing are unchanged).

Named operands / results / regions / successors of IRDL ops (``op.dst``) are read through
descriptors that build an ``OpOperands`` view per read and, for ops with a segment-size
attribute, sum the segment sizes before the wanted one: the readers below index the op's
tuples directly, with the segment start offsets computed once per segment-size attribute
(and a single one before any variadic, ``op.result``, with a C tuple index, not
``SSAValues.__getitem__``).  Walks yield an op without regions directly instead of through one generator per op, and
a block's ops are iterated by a generator.
Results are identical; remove an override when the pinned xDSL is as fast by itself.
"""
from __future__ import annotations

import struct

from xdsl.dialects.builtin import (DYNAMIC_INDEX, BytesAttr, DenseArrayBase, IntegerType, MemRefType,
                                   i32, i64)
from xdsl.dialects.utils.dynamic_index_list import DynamicIndexList, print_dynamic_index_list
from xdsl.ir import Block, BlockOps, Operation
from xdsl.irdl import operations as irdl_ops
from xdsl.irdl.operations import (BeforeVariadicSingleAccessor, OptionalAttrAccessor,
                                  SingleAttrAccessor, VariadicAttrAccessor, VarIRConstruct)

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


#: (id(element type), values) -> (element type, attribute); the type is kept alive, so its
#: id stays unique (hashing the type itself walks its parameters on every call)
_INT_ARRAYS: dict[tuple, tuple] = {}


def _memo_from_list(data_type, data):
    """``DenseArrayBase.from_list``, one shared attribute per integer list (static
    offsets / sizes / strides of views repeat); float lists are built as before."""
    if isinstance(data_type, IntegerType) and all(type(v) is int for v in data):
        key = (id(data_type), tuple(data))
        hit = _INT_ARRAYS.get(key)
        if hit is not None and hit[0] is data_type:
            return hit[1]
        if len(_INT_ARRAYS) >= 1 << 14:
            _INT_ARRAYS.clear()
        attr = _trusted_int_array(data_type, key[1]) or _from_list(data_type, key[1])
        _INT_ARRAYS[key] = (data_type, attr)
        return attr
    return _from_list(data_type, data)


#: i32 / i64 -> (struct format, lowest, highest + 1 value kept as is by the normalization)
_INT_FORMATS = {id(i32): (i32, "<{}i", -(1 << 31), 1 << 31), id(i64): (i64, "<{}q", -(1 << 63), 1 << 63)}


def _trusted_int_array(data_type: IntegerType, values: tuple[int, ...]) -> DenseArrayBase | None:
    """``from_list``'s attribute for the builtin ``i32`` / ``i64`` and values in their signed
    range (which the normalization keeps as they are), without re-running the checks they
    pass (packed length divisible by the element size); None otherwise."""
    hit = _INT_FORMATS.get(id(data_type))
    if hit is None or hit[0] is not data_type:
        return None
    _, fmt, lo, hi = hit
    for v in values:
        if not lo <= v < hi:
            return None
    data = BytesAttr.__new__(BytesAttr)
    object.__setattr__(data, "data", struct.pack(fmt.format(len(values)), *values))
    attr = DenseArrayBase.__new__(DenseArrayBase)
    object.__setattr__(attr, "elt_type", data_type)
    object.__setattr__(attr, "data", data)
    return attr


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


# ------------------------------------------------------------------ named-construct readers

_OPERAND, _RESULT, _REGION = VarIRConstruct.OPERAND, VarIRConstruct.RESULT, VarIRConstruct.REGION


def _constructs(op, construct: VarIRConstruct):
    """``get_op_constructs``: the op's own tuple (upstream wraps operands and successors in
    a view per call, whose indexing reads the same tuple)."""
    if construct is _OPERAND:
        return op._operands                 # noqa: SLF001
    if construct is _RESULT:
        return op.results
    if construct is _REGION:
        return op.regions
    return op._successors                   # noqa: SLF001


def _starts(attr: DenseArrayBase) -> tuple[int, ...]:
    """Start offset of every segment of a segment-size attribute, then the total (once per
    attribute object)."""
    try:
        return attr.__dict__["_nkim_starts"]
    except KeyError:
        out, acc = [0], 0
        for v in attr.get_values():
            acc += v
            out.append(acc)
        starts = tuple(out)
        object.__setattr__(attr, "_nkim_starts", starts)
        return starts


def _segment_attr(self, op) -> DenseArrayBase:
    option = self.option
    return (op.properties if option.as_property else op.attributes)[option.attribute_name]


_item = tuple.__getitem__      # SSAValues (a tuple) indexes through a Python __getitem__


def _single_get(self, obj, objtype=None):
    return _item(_constructs(obj, self.construct), _starts(_segment_attr(self, obj))[self.idx])


def _variadic_get(self, obj, objtype=None):
    starts = _starts(_segment_attr(self, obj))
    return _constructs(obj, self.construct)[starts[self.idx]:starts[self.idx + 1]]


def _optional_get(self, obj, objtype=None):
    starts = _starts(_segment_attr(self, obj))
    i = self.idx
    if starts[i + 1] != starts[i]:
        return _item(_constructs(obj, self.construct), starts[i])
    return None


def _before_single_get(self, obj, objtype=None):
    return _item(_constructs(obj, self.construct), self.idx)


irdl_ops.get_op_constructs = _constructs
BeforeVariadicSingleAccessor.__get__ = _before_single_get   # type: ignore[method-assign]
SingleAttrAccessor.__get__ = _single_get            # type: ignore[method-assign]
VariadicAttrAccessor.__get__ = _variadic_get        # type: ignore[method-assign]
OptionalAttrAccessor.__get__ = _optional_get        # type: ignore[method-assign]


# ------------------------------------------------------------------------------- walks

_op_walk = Operation.walk


def _walk(self, *, reverse: bool = False, region_first: bool = False):
    """``Operation.walk``; an op without regions is its own walk (no generator)."""
    if not self.regions:
        return iter((self,))
    return _op_walk(self, reverse=reverse, region_first=region_first)


def _block_walk(self, *, reverse: bool = False, region_first: bool = False):
    """``Block.walk``, yielding an op without regions itself instead of walking it.  Like
    upstream's op iterator, the next op is read before an op is handed out."""
    if reverse:
        for op in reversed(self.ops):
            if op.regions:
                yield from op.walk(reverse=True, region_first=region_first)
            else:
                yield op
        return
    op = self._first_op                    # noqa: SLF001
    while op is not None:
        nxt = op._next_op                  # noqa: SLF001
        if op.regions:
            yield from op.walk(region_first=region_first)
        else:
            yield op
        op = nxt


def _block_ops_iter(self):
    """``iter(block.ops)`` as a generator: like upstream's op iterator, the next op is read
    when an op is handed out (one generator step per op instead of a ``__next__`` call)."""
    op = self.block._first_op              # noqa: SLF001
    while op is not None:
        nxt = op._next_op                  # noqa: SLF001
        yield op
        op = nxt


Operation.walk = _walk              # type: ignore[method-assign]
Block.walk = _block_walk            # type: ignore[method-assign]
BlockOps.__iter__ = _block_ops_iter     # type: ignore[method-assign]
