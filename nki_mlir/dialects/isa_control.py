"""Engine registers and runtime control: register_alloc, register_move, register_load,
register_store, register_read and the ``no_reorder`` region.

IR representation of a register (``nki.isa.VirtualRegister``, NKI architecture guide (nki/guides/architecture)): an SSA value of type ``memref<1xi32, #nisa.mem<reg>>`` -- one 32-bit word in the
``reg`` memory space, defined by ``register_alloc``.  Being a memref, a register is seen by
``dialects/effects.py`` like any buffer: ``register_move`` / ``register_load`` WRITE it
(role ``dst``), ``register_read`` / ``register_store`` / ``register_move`` READ it (role
``src``), so ``nisa-schedule`` orders register accesses against each other and against the
tensor operands of ``register_load`` / ``register_store``.  ``nisa-allocate`` places only
SBUF/PSUM, so registers are never placed.  A register holds a 32-bit pattern: loads from an
int8/16/32, uint8/16/32 or float32 tensor keep the value's bits (sign/zero-extended for
narrower ints), stores write them back the same way.

Ops (each an ``nki`` op and its ``nisa`` twin, lowered 1:1 with ``engine=sync``; which
engine sequencer really runs them is not documented, ``sync`` is our choice)::

    %r = nisa.register_alloc(init=5) engine=sync : memref<1xi32, #nisa.mem<reg>>
    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %r, src=i32 %c7) engine=sync
    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<sbuf>> %t) engine=sync
    nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync
    %n = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync : index

``register_read`` is ours (not an NKI API): it turns the register's value, read when the op
executes, into an ``index`` for ``scf.for`` bounds, ``scf.while`` conditions and dynamic
offsets.  ``register_move`` / ``register_store`` also accept an ``index`` or integer ``src``
(an immediate, or the read-only induction value of a runtime loop).

``with nl.no_reorder():`` becomes the markers ``nisa.no_reorder_begin`` ...
``nisa.no_reorder_end`` around its ops in the same block (structural, used at both the
``nki`` and the ``nisa`` level like ``scf.for``; a marker pair, not a region, so tensors
defined inside stay visible after it).  ``nisa-schedule`` chains the instructions between
them so they keep program order; runtime loops are not allowed between them.

Semantics: NKI architecture guide (nki/guides/architecture) ("Registers and control").
"""
from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import HBM_SPACES, dtype_of, memref, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp

#: the memory space of engine registers
REG_SPACE = "reg"
#: dtypes a register can be loaded from / stored to (nki.isa API reference (nki/api/nki/isa): "Registers hold
#: u8/u16/u32/i8/i16/i32/fp32 values")
REGISTER_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32", "float32")
#: memories a register_load / register_store tensor may live in
REGISTER_TENSOR_SPACES = ("sbuf",) + HBM_SPACES
#: the engine queue the register instructions run on after lowering
REGISTER_ENGINE = "sync"
#: engine registers per engine sequencer (NKI architecture guide (nki/guides/architecture))
REGISTERS_PER_ENGINE = 64


def register_type() -> MemRefType:
    """``memref<1xi32, #nisa.mem<reg>>``: the type of a register."""
    return memref((1,), dtypes.int32, REG_SPACE)


def is_register(v: SSAValue | Attribute | None) -> bool:
    return v is not None and space_of(v) == REG_SPACE


def _is_int_scalar(v: SSAValue) -> bool:
    return isinstance(v.type, (IndexType, IntegerType))


def _check_register(op, role: str, v: SSAValue) -> None:
    if not is_register(v):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a register "
                              f"(memref<1xi32, #nisa.mem<reg>>), got {v.type}")
    if shape_of(v) != (1,) or dtype_of(v) != dtypes.int32:
        raise VerifyException(f"{rules.api(op)}: '{role}' must be memref<1xi32, #nisa.mem<reg>>, "
                              f"got {v.type}")


def _check_value(op, role: str, v: SSAValue) -> None:
    """A register, or an integer / index value (an immediate or a loop's induction value)."""
    if is_register(v):
        _check_register(op, role, v)
    elif not _is_int_scalar(v):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a register or an integer, "
                              f"got {v.type}")


def _check_one_element_tensor(op, role: str, v: SSAValue) -> None:
    if not isinstance(v.type, MemRefType) or space_of(v) not in REGISTER_TENSOR_SPACES:
        where = space_of(v) if isinstance(v.type, MemRefType) else v.type
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a 1-element SBUF or HBM tensor, "
                              f"got one in {where}")
    shape = shape_of(v)
    n = 1
    for d in shape:
        n *= d
    if n != 1:
        raise VerifyException(f"{rules.api(op)}: '{role}' must hold exactly 1 element (a register "
                              f"is one 32-bit value), got shape {list(shape)}")
    try:
        name = dtypes.name_of(dtype_of(v))
    except KeyError:
        name = str(v.type.element_type)  # type: ignore[union-attr]
    if name not in REGISTER_DTYPES:
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {name}; registers hold "
                              f"{', '.join(REGISTER_DTYPES)} values")


def _check_engine(op) -> None:
    rules.engine(op, (REGISTER_ENGINE,))


# ------------------------------------------------------------------------------ mixins


class _RegisterAlloc(KeywordOp):
    """``nisa.register_alloc(x=None)``: a new 32-bit register, set to ``init`` if given."""

    init = opt_prop_def(IntegerAttr)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        _check_register(self, "result", self.result)
        if self.init is not None:
            v = self.init.value.data
            if not -(2 ** 31) <= v < 2 ** 32:
                raise VerifyException(f"{rules.api(self)}: initial value {v} does not fit in a "
                                      f"32-bit register")
        _check_engine(self)


class _RegisterMove(KeywordOp):
    """``nisa.register_move(dst, src)``: ``dst = src`` (``src`` a register or an integer)."""

    dst = operand_def(MemRefType)
    src = operand_def()

    def verify_(self) -> None:
        _check_register(self, "dst", self.dst)
        _check_value(self, "src", self.src)
        _check_engine(self)


class _RegisterLoad(KeywordOp):
    """``nisa.register_load(dst, src)``: load the one element of an SBUF/HBM tensor."""

    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)

    def verify_(self) -> None:
        _check_register(self, "dst", self.dst)
        _check_one_element_tensor(self, "src", self.src)
        _check_engine(self)


class _RegisterStore(KeywordOp):
    """``nisa.register_store(dst, src)``: store a register into a 1-element tensor."""

    dst = operand_def(MemRefType)
    src = operand_def()

    def verify_(self) -> None:
        _check_one_element_tensor(self, "dst", self.dst)
        _check_value(self, "src", self.src)
        _check_engine(self)


class _RegisterRead(KeywordOp):
    """Ours: the value of register ``src`` (signed 32-bit) as an ``index``, read when the op runs."""

    src = operand_def(MemRefType)
    result = result_def(IndexType)

    def verify_(self) -> None:
        _check_register(self, "src", self.src)
        _check_engine(self)


# ------------------------------------------------------------------------------- ops


@irdl_op_definition
class RegisterAllocOp(_RegisterAlloc, NkiInstruction):
    name = "nki.register_alloc"


@irdl_op_definition
class NisaRegisterAllocOp(_RegisterAlloc, NisaInstruction):
    name = "nisa.register_alloc"


@irdl_op_definition
class RegisterMoveOp(_RegisterMove, NkiInstruction):
    name = "nki.register_move"


@irdl_op_definition
class NisaRegisterMoveOp(_RegisterMove, NisaInstruction):
    name = "nisa.register_move"


@irdl_op_definition
class RegisterLoadOp(_RegisterLoad, NkiInstruction):
    name = "nki.register_load"


@irdl_op_definition
class NisaRegisterLoadOp(_RegisterLoad, NisaInstruction):
    name = "nisa.register_load"


@irdl_op_definition
class RegisterStoreOp(_RegisterStore, NkiInstruction):
    name = "nki.register_store"


@irdl_op_definition
class NisaRegisterStoreOp(_RegisterStore, NisaInstruction):
    name = "nisa.register_store"


@irdl_op_definition
class RegisterReadOp(_RegisterRead, NkiInstruction):
    name = "nki.register_read"


@irdl_op_definition
class NisaRegisterReadOp(_RegisterRead, NisaInstruction):
    name = "nisa.register_read"


@irdl_op_definition
class NoReorderBeginOp(IRDLOperation):
    """``nisa.no_reorder_begin``: the ops up to the matching ``nisa.no_reorder_end`` of the
    same block (nested regions included) keep program order (``with nl.no_reorder():``).

    A marker, not a region: tensors made inside stay visible after it (a region would scope
    its SSA values).  Structural, used at both levels, executes nothing.
    """

    name = "nisa.no_reorder_begin"
    assembly_format = "attr-dict"

    def verify_(self) -> None:
        depth, op = 0, self.next_op
        while op is not None:
            if isinstance(op, NoReorderBeginOp):
                depth += 1
            elif isinstance(op, NoReorderEndOp):
                if depth == 0:
                    return
                depth -= 1
            for inner in op.walk():
                if inner.name == "scf.while" or (inner.name == "scf.for"
                                                 and _range_kind(inner) == "dynamic"):
                    raise VerifyException("nisa.no_reorder_begin: runtime (dynamic) loops are not "
                                          "allowed inside a no_reorder block; static loops are")
            op = op.next_op
        raise VerifyException("nisa.no_reorder_begin: no matching nisa.no_reorder_end in the "
                              "same block")


@irdl_op_definition
class NoReorderEndOp(IRDLOperation):
    """``nisa.no_reorder_end``: closes the innermost open ``nisa.no_reorder_begin``."""

    name = "nisa.no_reorder_end"
    assembly_format = "attr-dict"


def _range_kind(op) -> str | None:
    a = op.attributes.get("nki.range")
    return getattr(a, "data", None)


def no_reorder_groups(root: Operation) -> dict[Operation, Operation]:
    """Every op inside a no_reorder span (nested regions included) -> the span's outermost
    ``nisa.no_reorder_begin`` (spans nest; the outermost one orders them all)."""
    groups: dict[Operation, Operation] = {}

    def visit(block: Block, outer: Operation | None) -> None:
        stack: list[Operation] = []
        for op in block.ops:
            if isinstance(op, NoReorderBeginOp):
                stack.append(op)
                continue
            if isinstance(op, NoReorderEndOp):
                if stack:
                    stack.pop()
                continue
            group = outer or (stack[0] if stack else None)
            if group is not None:
                groups[op] = group
            for region in op.regions:
                for b in region.blocks:
                    visit(b, group)

    for region in root.regions:
        for b in region.blocks:
            visit(b, None)
    return groups


_NKI_REGISTER_OPS, _NISA_REGISTER_OPS = register_twins(tuple(
    (nki_op, nisa_op, REGISTER_ENGINE) for nki_op, nisa_op in (
        (RegisterAllocOp, NisaRegisterAllocOp), (RegisterMoveOp, NisaRegisterMoveOp),
        (RegisterLoadOp, NisaRegisterLoadOp), (RegisterStoreOp, NisaRegisterStoreOp),
        (RegisterReadOp, NisaRegisterReadOp))))

#: ops this module adds to the nki dialect
NKI_OPS: list = _NKI_REGISTER_OPS
#: ops this module adds to the nisa dialect
NISA_OPS: list = [*_NISA_REGISTER_OPS, NoReorderBeginOp, NoReorderEndOp]
