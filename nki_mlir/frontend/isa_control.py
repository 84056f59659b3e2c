"""Frontend of engine registers: the :class:`Register` values the register instructions
(``nki_mlir/instructions/registers.py``) take and return, the conversion of their operand
kinds (:mod:`nki_mlir.dialects.ods_registers`, into ``ods_calls.CONVERTERS``), and the
runtime values of registers and 1-element tensors as ``index`` values (:func:`scalar_index`).

Values: a register is a :class:`Register` -- an SSA ``memref<1xi32, #nisa.mem<reg>>``
(``dialects/ods_registers.py``), or, read-only, the ``index`` induction value of a runtime
loop (``nl.dynamic_range`` / ``fori_loop`` induction register, ``while_loop``'s condition
value, which NKI passes by value; the loops: :mod:`.device_loops`).

Rules (located errors): the induction register is read-only and takes no Python
arithmetic; ``if reg:`` / ``int(reg)`` are type errors (NKI raises ``TypeError`` under the
tracer); registers made in a runtime-loop body are not visible after the loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, SSAValue

from .. import dtypes
from ..dialects import ods_registers
from ..dialects.ods_ops import op_class
from ..errors import NKISyntaxError, NKITypeError, SourceLoc
from . import args as A
from .ods_kinds import CONVERTERS
from .values import Tensor, is_int

#: the ``nki.range`` of every runtime loop
DYNAMIC = "dynamic"
#: integer dtypes a (1, 1) tensor used as a runtime index may have
_INDEX_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


@dataclass(frozen=True)
class Register:
    """An engine register (``nki.isa.VirtualRegister``) seen by the frontend.

    Attributes:
        value: ``memref<1xi32, #nisa.mem<reg>>``, or an ``index`` when read-only.
        block: the IR block it was made in (for the loop-scope rule).
        name: the variable it was first bound to ("" if none yet).
        readonly: True for an induction register / a value passed by value.
        what: what a read-only register is, for messages.
    """

    value: SSAValue
    block: Block | None
    name: str = ""
    readonly: bool = False
    what: str = ""

    @property
    def is_index(self) -> bool:
        return isinstance(self.value.type, IndexType)

    def describe(self) -> str:
        return self.what or f"register '{self.name or '?'}'"

    def __repr__(self) -> str:
        return f"<register {self.name or '?'}>"

    # A traced kernel's Python meets registers directly: arithmetic, comparisons and
    # truth values need the device value, so each is a located error (NKI's tracer raises
    # TypeError).
    def _misuse(self, truth: bool, *_: Any) -> Any:
        from .frames import user_loc
        from .context import active
        loc = user_loc(2)
        raise (register_truth_error if truth else register_operator_error)(active(), loc)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = \
        __rfloordiv__ = __mod__ = __truediv__ = __lt__ = __le__ = __gt__ = __ge__ = \
        lambda self, other: self._misuse(False)
    __bool__ = __int__ = __index__ = __float__ = lambda self: self._misuse(True)


# ----------------------------------------------------------------------- diagnostics


def _show(v: Any) -> str:
    return v.describe() if isinstance(v, Register) else A._show(v)


def register_operator_error(cg, loc: SourceLoc | None) -> Exception:
    """Python arithmetic / comparison on a register (its value exists only on the device)."""
    return cg.fail(loc, "Python arithmetic or comparison on a register is not allowed: its value "
                         "is only known on the device; use the induction register only as "
                         ".ap(scalar_offset=...) or with nisa.register_* instructions",
                   NKITypeError)


def register_truth_error(cg, loc: SourceLoc | None) -> Exception:
    """``if reg:`` / ``bool(reg)``: NKI's tracer raises TypeError here."""
    return cg.fail(loc, "a register's value is only known on the device, so it cannot be used "
                         "as an if/elif condition or converted with bool()/int(); the only runtime "
                         "control flow is 'while reg:', nl.while_loop and nl.fori_loop",
                   NKITypeError)


def _check_visible(cg, api: str, role: str, r: Register) -> None:
    """A register made in a runtime-loop body cannot be used after that loop."""
    target = r.block
    cur = cg.b.block
    while cur is not None:
        if cur is target:
            return
        parent = cur.parent_op()
        cur = parent.parent_block() if parent is not None else None
    raise cg.b.error(f"{api}: '{role}' is {r.describe()}, which was created inside a loop body "
                     f"and cannot be used outside it; allocate it before the loop",
                     NKISyntaxError, code="err_local_variable_used_out_of_scope")


def _register(cg, api: str, role: str, v: Any, *, write: bool = False) -> Register:
    if not isinstance(v, Register):
        raise cg.b.error(f"{api}: '{role}' must be a register (nisa.register_alloc()), got "
                         f"{_show(v)}", NKITypeError)
    _check_visible(cg, api, role, v)
    if write and v.readonly:
        raise cg.b.error(f"{api}: '{role}' is {v.describe()}, which is read-only; copy it into a "
                         f"register from nisa.register_alloc() with nisa.register_move first",
                         NKITypeError)
    return v


def _int32(cg, api: str, role: str, v: Any) -> int:
    if not is_int(v):
        raise cg.b.error(f"{api}: '{role}' must be an int or a register, got {_show(v)}",
                         NKITypeError)
    if not -(2 ** 31) <= int(v) < 2 ** 32:
        raise cg.b.error(f"{api}: '{role}'={int(v)} does not fit in a 32-bit register", NKITypeError)
    return int(v)


def _one_element(cg, api: str, role: str, v: Any) -> Tensor:
    t = A.tensor(cg, api, role, v)
    if t.size != 1:
        raise cg.b.error(f"{api}: '{role}' must be a 1-element tensor (e.g. shape (1, 1)), got "
                         f"{t.describe()}", NKITypeError)
    if t.buffer not in ods_registers.REGISTER_TENSOR_SPACES:
        raise cg.b.error(f"{api}: '{role}' must be in SBUF or HBM, got {t.describe()}", NKITypeError)
    return t


# ------------------------------------------------------------------------- registers


def _convert_register(cg, api: str, p: ods_registers.Register, v: Any) -> SSAValue:
    """A :class:`~nki_mlir.dialects.ods_registers.Register` argument: a register (or, with
    ``immediate``, an int emitted as an ``i32`` constant)."""
    if p.immediate:
        return register_value(cg, api, p.role, v)
    return _register(cg, api, p.role, v, write=p.writes).value


def _convert_one_element(cg, api: str, p: ods_registers.OneElement, v: Any) -> SSAValue:
    return _one_element(cg, api, p.role, v).value


CONVERTERS[ods_registers.Register] = _convert_register
CONVERTERS[ods_registers.OneElement] = _convert_one_element


def new_register(cg, init: int | None = None, name: str = "") -> Register:
    """Emit ``nki.register_alloc`` (set to ``init``) and return the new register."""
    op = A.emit(cg, op_class("nki.register_alloc"), {}, {"x": init},
                [ods_registers.register_type()])
    return Register(op.results[0], cg.b.block, name)


def register_value(cg, api: str, role: str, v: Any) -> SSAValue:
    """The SSA operand for a register-or-int source: a register, an index, or an i32 constant."""
    if isinstance(v, Register):
        return _register(cg, api, role, v).value
    return cg.b.const_scalar(_int32(cg, api, role, v), dtypes.int32)


def scalar_index(cg, value: Any, api: str = "scalar_offset", role: str = "scalar_offset") -> SSAValue:
    """An ``index`` SSA value holding ``value``'s run-time value.

    ``value`` is a register (read when the emitted ``register_read`` executes; an
    induction register is used directly), a 1-element int SBUF/HBM tensor (loaded through a
    fresh register: ``register_alloc`` + ``register_load`` + ``register_read``) or a
    compile-time int (a constant).  Other values are an NKITypeError naming ``api``/``role``.
    """
    if is_int(value):
        return cg.b.const_index(int(value))
    if isinstance(value, Tensor):
        t = _one_element(cg, api, role, value)
        if dtypes.name_of(t.dtype) not in _INDEX_DTYPES:
            raise cg.b.error(f"{api}: '{role}' must have an integer dtype "
                             f"({', '.join(_INDEX_DTYPES)}), got {t.describe()}", NKITypeError)
        reg = new_register(cg)
        A.emit(cg, op_class("nki.register_load"), {"dst": reg.value, "src": t.value})
        value = reg
    if not isinstance(value, Register):
        raise cg.b.error(f"{api}: '{role}' must be a register, a 1-element int tensor or an int, "
                         f"got {_show(value)}", NKITypeError)
    _check_visible(cg, api, role, value)
    if value.is_index:
        return value.value
    return A.emit(cg, op_class("nki.register_read"), {"src": value.value}, {},
                  [IndexType()]).results[0]
