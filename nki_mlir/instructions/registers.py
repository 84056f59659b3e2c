"""Engine registers: register_alloc, register_move, register_load, register_store, and
register_read (ours: a register's value as an ``index``).

A register is ``memref<1xi32, #nisa.mem<reg>>`` (:mod:`nki_mlir.dialects.ods_registers`);
in the interpreter a NumPy ``int32`` array of shape ``(1,)`` holding its 32-bit pattern,
made afresh each time ``register_alloc`` executes.  ``register_load`` keeps the bits of a
4-byte element (int32 / uint32 / float32) and sign- or zero-extends int8 / int16 / uint8 /
uint16; ``register_store`` writes the bits back to a 4-byte element and the low bits
(wrapping) to a narrower int.  ``register_read`` gives the signed 32-bit value as an
``index``.  A ``src`` that is an integer or ``index`` value (an immediate, a loop induction
value) is wrapped to 32 bits.  Which engine sequencer runs these is not documented: they
run on the ``sync`` queue and cost nothing in the cost model.

Semantics: NKI architecture guide (nki/guides/architecture) ("Registers and control") and
the ``nki.isa`` API pages of the instructions (nki/api/nki.isa).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.ods import Engine, Formula, Int
from ..dialects.ods_registers import (REGISTER_DTYPES, OneElement, Register, check_register,
                                      is_register, register_type)
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend.isa_control import Register as FrontRegister
from ..runtime.env import Buf, finish, guard
from .define import instruction

_NO_COST = Formula("none", source="registers live in the engine sequencers: no engine time "
                                  "(NKI architecture guide, Registers and control)")
_SYNC = Engine("sync", param=False)


def wrap32(v: int) -> int:
    """``v`` as a signed 32-bit value (two's complement wrap)."""
    return ((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31


def _value(dec, op: Operation, v: SSAValue, role: str) -> Callable[[list], int]:
    """A getter of the signed 32-bit value of a register or integer operand."""
    s = dec.use(op, v, role)
    if is_register(v):
        return lambda env: int(env[s][0])
    if v in dec.consts:
        c = wrap32(dec.consts[v])
        return lambda env: c
    return lambda env: wrap32(env[s])


def _tensor(dec, op: Operation, v: SSAValue, role: str) -> Buf:
    b = dec.buf(op, v, role)
    name = dtypes.name_of(b.dtype)
    if int(np.prod(b.shape)) != 1 or name not in REGISTER_DTYPES:
        raise error_at(op, f"{op.name}: '{role}' must be a 1-element tensor of "
                           f"{', '.join(REGISTER_DTYPES)}, got {list(b.shape)} {name}",
                       NKIRuntimeError)
    return b


def _fits(v: int) -> bool:
    return -(2 ** 31) <= v < 2 ** 32


def _new_register(cg, args, operands, props, emit):
    """The call's value: a :class:`~nki_mlir.frontend.isa_control.Register`."""
    x = props["x"]
    if x is not None and not _fits(x):
        raise cg.b.error(f"nisa.register_alloc: 'x'={x} does not fit in a 32-bit register",
                         NKITypeError)
    return FrontRegister(emit([register_type()]).results[0], cg.b.block)


@instruction
class register_alloc:
    """A new 32-bit engine register (``nki.isa.VirtualRegister``), set to the int ``x`` when
    given (else 0).

    ``x``: a compile-time Python int that fits in 32 bits (signed or unsigned).  The register
    can be read and written by ``register_move`` / ``register_load`` / ``register_store``,
    bound runtime loops (``nl.dynamic_range``, ``while reg:``) and give dynamic offsets
    (``.ap(scalar_offset=reg)``); its value is known only on the device, so Python arithmetic,
    comparisons and ``if reg:`` on it are errors.

    Raises ``NKITypeError`` for an ``x`` that is not an int or does not fit in 32 bits.
    NKI docs: ``nki.isa.register_alloc`` (nki/api/generated/nki.isa.register_alloc).
    """

    x = Int(default=None, strict=True)
    engine = _SYNC
    cost = _NO_COST
    results = (("result", MemRefType),)
    beta1_result = False
    frontend = _new_register

    def verify(op):
        check_register(op, "result", op.result)
        if op.x is not None and not _fits(op.x.value.data):
            raise VerifyException(f"{rules.api(op)}: initial value {op.x.value.data} does not "
                                  f"fit in a 32-bit register")

    def interpret(dec, op):
        r = dec.define(op.result, op)
        init = wrap32(op.x.value.data) if op.x is not None else 0

        def run(env):
            env[r] = np.array([init], np.int32)
        return run


@instruction
class register_move:
    """``dst = src``: copy a register or an int into register ``dst``.

    ``dst``: a register from ``register_alloc`` (not a loop's read-only induction register).
    ``src``: a register or a compile-time int that fits in 32 bits.

    Raises ``NKITypeError`` for another kind of argument, a read-only ``dst`` or a register
    made inside a loop body and used after the loop.
    NKI docs: ``nki.isa.register_move`` (nki/api/generated/nki.isa.register_move).
    """

    dst = Register(writes=True)
    src = Register(value=True, immediate=True)
    engine = _SYNC
    cost = _NO_COST
    beta1_result = False

    def interpret(dec, op):
        d = dec.buf(op, op.dst, "dst").slot
        src = _value(dec, op, op.src, "src")

        def run(env):
            env[d][0] = src(env)
        return guard(op, run)


@instruction
class register_load:
    """Load the one element of a tensor into register ``dst``.

    ``dst``: a register from ``register_alloc``.  ``src``: a 1-element SBUF or HBM tensor of
    int8, int16, int32, uint8, uint16, uint32 or float32 (4-byte values keep their bits;
    narrower ints are sign- or zero-extended).

    Raises ``NKITypeError`` for a tensor of another size or memory and ``NKIVerifyError`` for
    another dtype.
    NKI docs: ``nki.isa.register_load`` (nki/api/generated/nki.isa.register_load).
    """

    dst = Register(writes=True)
    src = OneElement()
    engine = _SYNC
    cost = _NO_COST
    beta1_result = False

    def interpret(dec, op):
        d = dec.buf(op, op.dst, "dst").slot
        b = _tensor(dec, op, op.src, "src")
        s, dt = b.slot, b.dtype
        if dt.itemsize == 4:
            def run(env):
                env[d][0] = np.ascontiguousarray(env[s]).reshape(1).view(np.int32)[0]
        else:
            def run(env):
                env[d][0] = wrap32(int(np.asarray(env[s]).reshape(1)[0]))
        return guard(op, run)


@instruction
class register_store:
    """Store register ``src`` into the one element of tensor ``dst``.

    ``dst``: a 1-element SBUF or HBM tensor of int8, int16, int32, uint8, uint16, uint32 or
    float32 (4-byte values get the register's bits; narrower ints its low bits).  ``src``: a
    register (a runtime loop's induction register too).

    Raises ``NKITypeError`` for a tensor of another size or memory or a ``src`` that is no
    register, and ``NKIVerifyError`` for another dtype.
    NKI docs: ``nki.isa.register_store`` (nki/api/generated/nki.isa.register_store).
    """

    dst = OneElement(writes=True)
    src = Register(value=True)
    engine = _SYNC
    cost = _NO_COST
    beta1_result = False

    def interpret(dec, op):
        b = _tensor(dec, op, op.dst, "dst")
        d, dt, at = b.slot, b.dtype, (0,) * len(b.shape)
        src = _value(dec, op, op.src, "src")
        if dt.itemsize == 4:
            def run(env):
                env[d][at] = np.array([src(env)], np.int32).view(dt)[0]
        else:
            def run(env):
                env[d][at] = np.array([src(env)], np.int64).astype(dt)[0]
        return finish(op, run, b)


@instruction
class register_read:
    """Ours, not an NKI API: the value of register ``src`` (signed 32-bit) as an ``index``,
    read when the op executes, for ``scf.for`` bounds, ``scf.while`` conditions and dynamic
    offsets (the frontend emits it: ``frontend/isa_control.scalar_index``).
    """

    src = Register()
    engine = _SYNC
    cost = _NO_COST
    results = (("result", IndexType),)
    public = False

    def interpret(dec, op):
        src = _value(dec, op, op.src, "src")
        r = dec.define(op.result, op)

        def run(env):
            env[r] = src(env)
        return guard(op, run)
