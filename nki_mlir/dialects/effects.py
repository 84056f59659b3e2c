"""What memory an instruction touches: operand roles, base buffers and placed regions.

The memory-effect semantics of the ``nki`` / ``nisa`` ops, read by the passes
(``nisa-allocate``: which buffers an op uses; ``nisa-schedule``: which instructions
conflict), the interpreter's engine queues, the cost model and the frontend's kernel checks.  Conventions of the ``nisa`` dialect (``nki_mlir/dialects/nisa.py``):

- an instruction WRITES the memref operands in the roles its ``OperandEffects`` trait names
  (ops defined in ``nki_mlir/instructions``), else in the roles of ``instruction.WRITE_ROLES``
  (``dst``, ``reduce_res``, ...), and READS every other memref operand; scalar operands (f32 SSA values) are not memory;
- a tensor operand is a ``nisa.alloc`` result, a function argument, or a view of one
  (``memref.subview`` chains and the other memref view ops, ``memref.reinterpret_cast``
  included, and ``nki/nisa.view_dtype``, all with the viewed buffer as operand 0);
  :func:`base_buffer` follows the chain back to that buffer.  An indirect DMA
  (``nisa.dma_copy_indirect``) reads its index tiles and writes ``dst``, conservatively the
  whole base buffer.

After ``nisa-allocate`` an on-chip alloc carries ``nkim.partition`` and ``nkim.offset``
(bytes per partition); :func:`region_of` turns that into the rectangle
(partitions x bytes) it occupies, so that two different allocs that share memory
(disjoint live ranges, reused placement) are still seen to overlap.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects.builtin import FixedBitwidthType, IntegerAttr, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from .common import ON_CHIP, free_size, shape_of, space_of
from .instruction import write_roles
from .nisa import AllocOp, NisaInstruction
from .. import dtypes


#: ops whose result is a view of their first operand (same memory, other shape/offset)
VIEW_OPS = frozenset(("memref.subview", "memref.cast", "memref.reinterpret_cast",
                      "memref.collapse_shape", "memref.expand_shape", "memref.transpose",
                      "memref.reshape", "nki.view_dtype", "nisa.view_dtype"))

#: ops whose regions execute repeatedly (their bodies are loop bodies)
LOOP_OPS = ("scf.for", "scf.while", "scf.parallel", "scf.forall", "affine.for")

#: discardable attributes written by nisa-allocate on an on-chip ``nisa.alloc``
ATTR_PARTITION = "nkim.partition"
ATTR_OFFSET = "nkim.offset"
ATTR_BANK = "nkim.bank"
ATTR_COPIES = "nkim.copies"
ATTR_COPY_STRIDE = "nkim.copy_stride"


@dataclass(frozen=True)
class Access:
    """One memref operand of an instruction.

    Attributes:
        role: the operand role keyword (``dst``, ``src``, ``stationary``, ...).
        value: the operand as written (possibly a view).
        base: the buffer it is a view of (an alloc result or a function argument).
        is_write: True for the roles the op writes (:func:`~.instruction.write_roles`).
    """

    role: str
    value: SSAValue
    base: SSAValue
    is_write: bool


@dataclass(frozen=True)
class Region:
    """The rectangle a placed on-chip buffer occupies: partitions x bytes per partition."""

    space: str
    partition: int      # first partition
    partitions: int     # number of partitions
    offset: int         # bytes from the start of each partition
    size: int           # bytes per partition

    def overlaps(self, other: Region) -> bool:
        return (self.space == other.space
                and self.partition < other.partition + other.partitions
                and other.partition < self.partition + self.partitions
                and self.offset < other.offset + other.size
                and other.offset < self.offset + self.size)


def is_view(op: Operation | None) -> bool:
    return op is not None and op.name in VIEW_OPS


def base_buffer(value: SSAValue) -> SSAValue:
    """The alloc result or block argument that ``value`` is a (chain of) view(s) of."""
    while (value.__class__ is OpResult or (value.__class__ is not BlockArgument
                                           and isinstance(value, OpResult))) \
            and value.op.name in VIEW_OPS:
        value = value.op.operands[0]
    return value


def alloc_of(value: SSAValue) -> AllocOp | None:
    """The ``nisa.alloc`` that defines ``value``'s base buffer, or None (function argument)."""
    base = base_buffer(value)
    if isinstance(base, OpResult) and isinstance(base.op, AllocOp):
        return base.op
    return None


def bytes_per_partition(t: MemRefType | SSAValue) -> int:
    """Bytes one partition of an on-chip buffer holds: free size x element size."""
    value_type = t.type if isinstance(t, SSAValue) else t
    assert isinstance(value_type, MemRefType)
    return free_size(value_type) * element_bytes(value_type.element_type)


def element_bytes(element_type) -> int:
    """Bytes of one element (NKI dtypes first; other fixed-width MLIR types by bit width)."""
    try:
        return dtypes.from_mlir(element_type).itemsize
    except KeyError:
        if isinstance(element_type, FixedBitwidthType):
            return element_type.size
        raise


def accesses(op: IRDLOperation) -> Iterator[Access]:
    """The memref operands of a ``nisa`` instruction, with their role and direction."""
    for (role, write), value in zip(_roles(type(op)), _operands_by_def(op)):
        for v in (value if isinstance(value, tuple) else (value,)):  # variadic: every value
            if v is None:
                continue
            t = v.type
            if t.__class__ is not MemRefType and not isinstance(t, MemRefType):
                continue
            yield Access(role, v, base_buffer(v), write)


def written(op: IRDLOperation) -> list[SSAValue]:
    """The memref operands ``op`` writes: the ``value`` of every write access of
    :func:`accesses`, in the same order, read through the write roles' accessors only."""
    out = []
    for role in _write_names(type(op)):
        value = getattr(op, role)
        for v in (value if isinstance(value, tuple) else (value,)):
            if v is None:
                continue
            t = v.type
            if t.__class__ is MemRefType or isinstance(t, MemRefType):
                out.append(v)
    return out


def has_write_roles(cls: type) -> bool:
    """Whether ops of class ``cls`` have a write role (else :func:`written` is empty)."""
    return bool(_write_names(cls))


_WRITE_NAMES: dict[type, tuple[str, ...]] = {}


def _write_names(cls: type) -> tuple[str, ...]:
    """The write roles of ``cls`` in operand-definition order (:func:`_roles`)."""
    hit = _WRITE_NAMES.get(cls)
    if hit is None:
        hit = _WRITE_NAMES[cls] = tuple(role for role, write in _roles(cls) if write)
    return hit


_ROLES: dict[type, tuple[tuple[str, bool], ...]] = {}


def _roles(cls: type) -> tuple[tuple[str, bool], ...]:
    """``(role, is a write role)`` of every operand definition of ``cls``."""
    hit = _ROLES.get(cls)
    if hit is None:
        writes = write_roles(cls)
        hit = _ROLES[cls] = tuple((role, role in writes)
                                  for role, _ in cls.get_irdl_definition().operands)
    return hit


def _operands_by_def(op: IRDLOperation) -> list[SSAValue | None]:
    """One entry per operand definition (None for an absent optional operand): what the
    named accessors give, with an op's segment sizes read once instead of per accessor."""
    segmented = _segment_accessors(type(op))
    if segmented is None:
        return [getattr(op, name) for name, _ in op.get_irdl_definition().operands]
    option, accessors = segmented
    sizes = option.container(op)[option.attribute_name].get_values()
    operands = op.operands
    return [a.index(sizes, operands) for a in accessors]


_SEGMENTED: dict[type, tuple | None] = {}


def _segment_accessors(cls: type) -> tuple | None:
    """``(option, accessors)`` when every operand accessor of ``cls`` reads one segment-size
    attribute (``AttrSizedOperandSegments``), else None."""
    if cls not in _SEGMENTED:
        from xdsl.irdl.operations import BaseAttrAccessor
        names = [name for name, _ in cls.get_irdl_definition().operands]
        accessors = [next((k.__dict__[n] for k in cls.__mro__ if n in k.__dict__), None)
                     for n in names]
        ok = names and all(isinstance(a, BaseAttrAccessor) for a in accessors) and \
            len({id(a.option) for a in accessors}) == 1
        _SEGMENTED[cls] = (accessors[0].option, accessors) if ok else None
    return _SEGMENTED[cls]


def is_instruction(op: Operation) -> bool:
    return isinstance(op, NisaInstruction)


def int_attr(op: Operation, name: str) -> int | None:
    a = op.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else None


def region_of(base: SSAValue) -> Region | None:
    """The placed region of an on-chip alloc (after nisa-allocate), else None.  A
    multi-buffered alloc (``nkim.copies = k``) covers all its copies: ``(k-1) * copy_stride``
    more bytes."""
    if not (isinstance(base, OpResult) and isinstance(base.op, AllocOp)):
        return None
    space = space_of(base)
    part, off = int_attr(base.op, ATTR_PARTITION), int_attr(base.op, ATTR_OFFSET)
    if space not in ON_CHIP or part is None or off is None:
        return None
    size = bytes_per_partition(base)
    copies, stride = int_attr(base.op, ATTR_COPIES), int_attr(base.op, ATTR_COPY_STRIDE)
    if copies is not None and copies > 1:      # multi-buffered: the whole footprint
        size += (copies - 1) * (stride if stride is not None else size)
    return Region(space, part, shape_of(base)[0], off, size)


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    """Whether two base buffers can share bytes: the same buffer, or overlapping placements."""
    if a is b:
        return True
    ra, rb = region_of(a), region_of(b)
    return ra is not None and rb is not None and ra.overlaps(rb)


def enclosing_loops(op: Operation) -> list[Operation]:
    """The loop ops around ``op``, innermost first (stops at the enclosing function)."""
    loops = []
    node = op.parent_op()
    while node is not None and node.name != "func.func":
        if node.name in LOOP_OPS:
            loops.append(node)
        node = node.parent_op()
    return loops


class RegionCache:
    """:func:`region_of` computed once per base buffer (valid while placements do not
    change, e.g. for one run of ``nisa-schedule``)."""

    def __init__(self):
        self._regions: dict[SSAValue, Region | None] = {}

    def region(self, base: SSAValue) -> Region | None:
        try:
            return self._regions[base]
        except KeyError:
            r = self._regions[base] = region_of(base)
            return r

    def may_alias(self, a: SSAValue, b: SSAValue) -> bool:
        """:func:`may_alias` with cached regions."""
        if a is b:
            return True
        ra, rb = self.region(a), self.region(b)
        return ra is not None and rb is not None and ra.overlaps(rb)
