"""Engine registers in the vocabulary of instruction definitions (:mod:`.ods`).

A register (``nki.isa.VirtualRegister``, NKI architecture guide (nki/guides/architecture)) is
an SSA value of type ``memref<1xi32, #nisa.mem<reg>>``: one 32-bit word in the ``reg``
memory space, defined by ``register_alloc``.  Being a memref, a register is seen by
``dialects/effects.py`` like any buffer: an instruction that writes it (``register_move``,
``register_load``) has it as a written operand, one that reads it a read operand, so
``nisa-schedule`` orders register accesses against each other and against the tensor
operands.  ``nisa-allocate`` places only SBUF / PSUM, so registers are never placed.

Two operand kinds, each checking itself (the generated tile checks skip them):

- :class:`Register`: a register operand; with ``value=True`` also an integer or ``index``
  SSA value (an immediate, or the read-only induction value of a runtime loop), and with
  ``immediate=True`` the API takes a Python int for it too;
- :class:`OneElement`: a 1-element SBUF or HBM tensor a register is loaded from or stored
  to, of a dtype a register holds (:data:`REGISTER_DTYPES`).

The frontend converts their arguments (``frontend/isa_control.py`` fills
``frontend.ods_calls.CONVERTERS``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import HBM_SPACES, dtype_of, memref, shape_of, space_of
from .ods import Tile

#: the memory space of engine registers
REG_SPACE = "reg"
#: dtypes a register can be loaded from / stored to (nki.isa API reference
#: (nki/api/nki/isa): "Registers hold u8/u16/u32/i8/i16/i32/fp32 values")
REGISTER_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32", "float32")
#: memories a register_load / register_store tensor may live in
REGISTER_TENSOR_SPACES = ("sbuf",) + HBM_SPACES
#: engine registers per engine sequencer (NKI architecture guide (nki/guides/architecture))
REGISTERS_PER_ENGINE = 64


def register_type() -> MemRefType:
    """``memref<1xi32, #nisa.mem<reg>>``: the type of a register."""
    return memref((1,), dtypes.int32, REG_SPACE)


def is_register(v: SSAValue | Attribute | None) -> bool:
    return v is not None and space_of(v) == REG_SPACE


def check_register(op: Operation, role: str, v: SSAValue) -> None:
    """``v`` is a register (``memref<1xi32, #nisa.mem<reg>>``); else VerifyException."""
    if not is_register(v):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a register "
                              f"(memref<1xi32, #nisa.mem<reg>>), got {v.type}")
    if shape_of(v) != (1,) or dtype_of(v) != dtypes.int32:
        raise VerifyException(f"{rules.api(op)}: '{role}' must be memref<1xi32, #nisa.mem<reg>>, "
                              f"got {v.type}")


def _check_value(op: Operation, role: str, v: SSAValue) -> None:
    """A register, or an integer / index value (an immediate or a loop's induction value)."""
    if is_register(v):
        check_register(op, role, v)
    elif not isinstance(v.type, (IndexType, IntegerType)):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a register or an integer, "
                              f"got {v.type}")


def _check_one_element(op: Operation, role: str, v: SSAValue) -> None:
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


@dataclass(frozen=True)
class Register(Tile):
    """A register operand (``value=True``: or an integer / ``index`` value; ``immediate``:
    the API accepts a Python int, emitted as an ``i32`` constant)."""

    tile_checks: ClassVar[bool] = False
    value: bool = False
    immediate: bool = False

    @property
    def constraint(self) -> Any:  # type: ignore[override]
        return None if self.value else MemRefType

    def check(self, op: Operation) -> None:
        v = getattr(op, self.role)
        (_check_value if self.value else check_register)(op, self.role, v)


@dataclass(frozen=True)
class OneElement(Tile):
    """A 1-element SBUF or HBM tensor of a register dtype (loaded into or stored from a register)."""

    tile_checks: ClassVar[bool] = False

    def check(self, op: Operation) -> None:
        _check_one_element(op, self.role, getattr(op, self.role))


__all__ = ["Register", "OneElement", "REG_SPACE", "REGISTER_DTYPES", "REGISTER_TENSOR_SPACES",
           "REGISTERS_PER_ENGINE", "register_type", "is_register", "check_register"]
