"""Attributes and type helpers shared by the ``nki`` and ``nisa`` dialects.

Buffers are builtin ``memref`` types whose memory space is AWS's attribute
``#nisa.mem<hbm|private_hbm|shared_hbm|sbuf|psum>`` (as in AWS's ``nisa`` dialect of aws-neuron/nkipy),
e.g. ``memref<128x512xbf16, #nisa.mem<sbuf>>``.  Dim 0 of an SBUF/PSUM buffer is the
partition dimension; the rest are free dimensions laid out row-major in each partition.
An engine register (``nisa.register_alloc``) is ``memref<1xi32, #nisa.mem<reg>>``:
one 32-bit word, never placed by ``nisa-allocate`` (see ``dialects/isa_control.py``).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import ClassVar


import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..targets import PARTITIONS, TARGETS  # noqa: F401  (TARGETS: names of #nisa.target)

MEM_SPACES = ("hbm", "private_hbm", "shared_hbm", "sbuf", "psum", "reg")
ON_CHIP = ("sbuf", "psum")
HBM_SPACES = ("hbm", "private_hbm", "shared_hbm")

#: partitions of SBUF and PSUM (``nl.tile_size.pmax``)
PMAX = PARTITIONS


class _WordAttr(ParametrizedAttribute):
    """An attribute holding one word from a fixed vocabulary, printed ``#nisa.<name><word>``."""

    WORDS: ClassVar[tuple[str, ...]] = ()
    KIND: ClassVar[str] = ""

    def __init__(self, word: str | StringAttr):
        super().__init__(StringAttr(word) if isinstance(word, str) else word)

    @property
    def word(self) -> str:
        return self.parameters[0].data  # type: ignore[attr-defined]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            word = parser.parse_identifier(cls.KIND)
            if word not in cls.WORDS:
                parser.raise_error(f"unknown {cls.KIND} '{word}', expected one of "
                                   + ", ".join(cls.WORDS), pos, parser.pos)
        return (StringAttr(word),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.word}>")

    def verify(self) -> None:
        if self.word not in self.WORDS:
            raise VerifyException(f"unknown {self.KIND} '{self.word}'")


@irdl_attr_definition
class MemSpaceAttr(_WordAttr):
    """``#nisa.mem<sbuf>``: the memory a buffer lives in."""

    name = "nisa.mem"
    WORDS: ClassVar[tuple[str, ...]] = MEM_SPACES
    KIND: ClassVar[str] = "memory space"
    space: StringAttr = param_def()


@irdl_attr_definition
class TargetAttr(_WordAttr):
    """``#nisa.target<trn2>``: the NeuronCore generation a module is compiled for."""

    name = "nisa.target"
    WORDS: ClassVar[tuple[str, ...]] = TARGETS
    KIND: ClassVar[str] = "target"
    target: StringAttr = param_def()


# --------------------------------------------------------------------------- types


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides (in elements) of a dense buffer of ``shape``."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def memref(shape: Sequence[int], dtype: np.dtype, space: str,
           strides: Sequence[int] | None = None, offset: int | None = 0) -> MemRefType:
    """A buffer type.  ``strides``/``offset`` give a strided layout (``offset=None``: dynamic).

    Types are immutable, so equal requests share one object (memo table: building an xDSL
    type costs far more than the lookup)."""
    return _memref(tuple(shape), dtypes.as_dtype(dtype), space,
                   None if strides is None else tuple(strides), offset)


@functools.lru_cache(maxsize=1 << 16)
def _memref(shape: tuple[int, ...], dtype: np.dtype, space: str,
            strides: tuple[int, ...] | None, offset: int | None) -> MemRefType:
    layout: Attribute = NoneAttr()
    if strides is not None:
        if all(type(n) is int for n in strides) and (offset is None or type(offset) is int):
            layout = _strided(_int_array_attr(strides), offset)
        else:
            layout = StridedLayoutAttr(list(strides), offset)
    # MemRefType(element, shape, layout, space) without its __init__'s isa() check of the
    # shape (which builds a type constraint per call); the parameters are verified the same
    return _new_memref(_int_array_attr(shape), dtypes.to_mlir(dtype), layout, _space_attr(space))


#: (id(shape), id(element type), layout class, id(space)) -> those objects (kept alive, so
#: the ids stay theirs): parameter combinations ``MemRefType.new`` has verified
_MEMREF_OK: dict[tuple, tuple] = {}


def _new_memref(shape: ArrayAttr, element: Attribute, layout: Attribute, space: Attribute) -> MemRefType:
    """``MemRefType.new([shape, element, layout, space])``.  Its verifier checks each
    parameter on its own (shape: an array of ``IntAttr``; element, space: any attribute;
    layout: by its class alone), so its verdict depends only on the shape and element and
    space objects (immutable) and the layout's class; a combination verified once is built
    again without the check (the views of one buffer differ only in their layout's offset)."""
    key = (id(shape), id(element), layout.__class__, id(space))
    if key in _MEMREF_OK:
        attr = MemRefType.__new__(MemRefType)
        object.__setattr__(attr, "shape", shape)
        object.__setattr__(attr, "element_type", element)
        object.__setattr__(attr, "layout", layout)
        object.__setattr__(attr, "memory_space", space)
        return attr
    attr = MemRefType.new([shape, element, layout, space])
    if len(_MEMREF_OK) >= 1 << 12:
        _MEMREF_OK.clear()
    _MEMREF_OK[key] = (shape, element, space)
    return attr


def _strided(strides: ArrayAttr, offset: int | None) -> StridedLayoutAttr:
    """``StridedLayoutAttr(strides, offset)`` for int strides and an int / dynamic offset,
    without re-running the parameter checks it passes (``IntAttr`` array, ``IntAttr`` or
    ``NoneAttr`` offset): the same attribute."""
    off: Attribute = NoneAttr() if offset is None else _int_attr(offset)
    attr = StridedLayoutAttr.__new__(StridedLayoutAttr)
    object.__setattr__(attr, "strides", strides)
    object.__setattr__(attr, "offset", off)
    return attr


def _int_attr(v: int) -> IntAttr:
    """``IntAttr(v)`` for an int ``v`` (its only check), built directly."""
    attr = IntAttr.__new__(IntAttr)
    object.__setattr__(attr, "data", v)
    return attr


@functools.lru_cache(maxsize=1 << 12)
def _int_array_attr(values: tuple[int, ...]) -> ArrayAttr:
    """``ArrayAttr`` of ``IntAttr`` (a shape or strides), one shared object per tuple: the
    views of one buffer repeat them with only the offset changing."""
    return ArrayAttr([IntAttr(n) for n in values])


@functools.lru_cache(maxsize=64)
def _space_attr(space: str) -> MemSpaceAttr:
    return MemSpaceAttr(space)


@functools.lru_cache(maxsize=1 << 16)
def i64_attr(v: int) -> IntegerAttr:
    """``IntegerAttr(v, i64)``, one shared object per value (memo table).  A value in
    ``[0, 2**63)`` (ids, offsets, sizes) is built without re-running the checks it passes
    (no normalization, in range): the same attribute, at a fraction of the cost."""
    if type(v) is int and 0 <= v < 1 << 63:
        attr = IntegerAttr.__new__(IntegerAttr)
        object.__setattr__(attr, "value", _int_attr(v))
        object.__setattr__(attr, "type", i64)
        return attr
    return IntegerAttr(v, i64)


@functools.lru_cache(maxsize=1 << 12)
def str_attr(s: str) -> StringAttr:
    """``StringAttr(s)``, one shared object per string (memo table)."""
    return StringAttr(s)


@functools.lru_cache(maxsize=2)
def bool_attr(b: bool) -> BoolAttr:
    """``BoolAttr.from_bool(b)`` (``true`` / ``false`` as i1), built once each."""
    return BoolAttr.from_bool(bool(b))


def _type_of(t: Attribute | SSAValue) -> Attribute:
    """The type of an SSA value, else ``t`` (exact-class tests first: ``isinstance`` against
    xDSL's abstract base classes is slow, and these readers run for every operand)."""
    cls = t.__class__
    if cls is OpResult or cls is BlockArgument:
        return t.type
    if cls is not MemRefType and isinstance(t, SSAValue):
        return t.type
    return t  # type: ignore[return-value]


def _is_memref(t: Attribute) -> bool:
    return t.__class__ is MemRefType or isinstance(t, MemRefType)


def space_of(t: Attribute | SSAValue) -> str | None:
    """The memory space name of a buffer type or value, or None for a non-buffer."""
    t = _type_of(t)
    if _is_memref(t):
        ms = t.memory_space  # type: ignore[attr-defined]
        if ms.__class__ is MemSpaceAttr or isinstance(ms, MemSpaceAttr):
            return ms.space.data
    return None


def shape_of(t: Attribute | SSAValue) -> tuple[int, ...]:
    t = _type_of(t)
    assert _is_memref(t)
    return tuple(t.get_shape())  # type: ignore[attr-defined]


def dtype_of(t: Attribute | SSAValue) -> np.dtype:
    t = _type_of(t)
    assert _is_memref(t)
    return dtypes.from_mlir(t.element_type)  # type: ignore[attr-defined]


def is_buffer(v: Attribute | SSAValue | None) -> bool:
    return v is not None and space_of(v) is not None


def free_size(t: Attribute | SSAValue) -> int:
    """Elements per partition of an on-chip buffer (product of the free dims)."""
    shape = shape_of(t)
    return math.prod(shape[1:]) if len(shape) > 1 else 1


def describe(v: SSAValue) -> str:
    """``[128, 512] float32 in sbuf`` -- for diagnostics."""
    return f"{list(shape_of(v))} {dtypes.name_of(dtype_of(v))} in {space_of(v)}"


# ------------------------------------------------------------------ property readers


def prop_str(op: Operation, name: str, default: str | None = None) -> str | None:
    """The string value of ``op``'s property ``name`` (an enum / op token), else ``default``."""
    a = op.properties.get(name)
    return a.data if isinstance(a, StringAttr) else default


def prop_int(op: Operation, name: str, default: int | None = None) -> int | None:
    """The integer value of ``op``'s property ``name``, else ``default``."""
    a = op.properties.get(name)
    return int(a.value.data) if isinstance(a, IntegerAttr) else default


def prop_flag(op: Operation, name: str) -> bool:
    """Whether ``op``'s boolean property ``name`` is present and true."""
    return bool(prop_int(op, name, 0))
