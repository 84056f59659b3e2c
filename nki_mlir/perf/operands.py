"""The memref operands of one ``nisa`` instruction as the cost model sees them (:class:`Tile`):
shape, dtype, element bytes, memory space and strides from the memref type, and the
operand label of a timeline slice (``dst=128x512xf32@psum``)."""
from __future__ import annotations

import math

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from .. import dtypes
from ..dialects.common import space_of
from ..dialects.effects import accesses, element_bytes

_SHORT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "float8_e4m3": "f8e4m3",
          "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "int8": "i8", "int16": "i16",
          "int32": "i32", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "bool_": "i1",
          "float8_e8m0fnu": "f8e8m0", "float8_e5m2_x4": "f8e5m2x4",
          "float8_e4m3fn_x4": "f8e4m3fnx4", "float4_e2m1fn_x4": "f4e2m1x4"}


class Tile:
    """One memref operand: role, shape, dtype name, element bytes, space, strides."""

    __slots__ = ("role", "value", "shape", "dtype", "itemsize", "space", "strides", "is_write")

    def __init__(self, role: str, value: SSAValue, is_write: bool):
        t = value.type
        assert isinstance(t, MemRefType)
        self.role, self.value, self.is_write = role, value, is_write
        self.shape = tuple(max(int(d), 1) for d in t.get_shape())  # dynamic dims (-1) -> 1
        try:
            self.dtype = dtypes.name_of(dtypes.from_mlir(t.element_type))
        except KeyError:
            self.dtype = str(t.element_type)
        try:
            self.itemsize = int(element_bytes(t.element_type))
        except KeyError:  # an element type with no NKI dtype and no fixed bit width
            self.itemsize = 4
        self.space = space_of(t) or "?"
        strides = t.get_strides()  # None for a layout that is not strided
        self.strides = tuple(strides) if strides is not None else (None,) * len(self.shape)

    @property
    def on_chip(self) -> bool:
        return self.space in ("sbuf", "psum")

    @property
    def free(self) -> int:
        """Elements per partition (on chip; the product of dims 1..)."""
        return math.prod(self.shape[1:]) if len(self.shape) > 1 else 1

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.itemsize

    def run_elems(self) -> int:
        """Innermost contiguous run in elements: dims from the innermost outwards while each
        stride equals the elements inside it (on chip: free dims only, a run never crosses
        a partition)."""
        first = 1 if self.on_chip else 0
        run = 1
        for d in range(len(self.shape) - 1, first - 1, -1):
            if self.shape[d] == 1:
                continue
            if self.strides[d] != run:
                break
            run *= self.shape[d]
        return run

    def contiguous(self) -> bool:
        """Each partition's elements are one contiguous run."""
        return self.run_elems() >= self.free

    def innermost_stride_bytes(self) -> int:
        """Stride in bytes of the innermost free dim with more than one element (the element
        size when there is none; 0 when the stride is dynamic)."""
        for d in range(len(self.shape) - 1, 0, -1):
            if self.shape[d] > 1:
                s = self.strides[d]
                return 0 if s is None else abs(int(s)) * self.itemsize
        return self.itemsize

    def label(self, role: str | None = None) -> str:
        dims = "x".join(str(d) for d in self.shape)
        return f"{role or self.role}={dims}x{_SHORT.get(self.dtype, self.dtype)}@{self.space}"


def tiles_of(op: Operation) -> list[Tile]:
    return [Tile(a.role, a.value, a.is_write) for a in accesses(op)]  # type: ignore[arg-type]


def label_of(tiles: list[Tile]) -> str:
    count: dict[str, int] = {}
    for t in tiles:
        count[t.role] = count.get(t.role, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for t in tiles:
        if count[t.role] > 1:
            i = seen.get(t.role, 0)
            seen[t.role] = i + 1
            out.append(t.label(f"{t.role}[{i}]"))
        else:
            out.append(t.label())
    return " ".join(out)


def role_of(tiles: list[Tile], *roles: str) -> Tile | None:
    for r in roles:
        for t in tiles:
            if t.role == r:
                return t
    return None
