"""Closure builders for register_alloc, register_move, register_load, register_store,
register_read, the ``nisa.no_reorder_begin/end`` markers (no-ops) and the control-flow ops of runtime loops
(``scf.while``, ``scf.condition``, ``arith.cmpi``; the builders of the last three live in
:mod:`.control`).

A register (``memref<1xi32, #nisa.mem<reg>>``) is, in the env, a NumPy ``int32`` array of
shape ``(1,)`` holding its 32-bit pattern; ``register_alloc`` makes a fresh one each time it
executes.  ``register_load`` keeps the bits of a 4-byte element (int32 / uint32 / float32)
and sign- or zero-extends int8/int16/uint8/uint16; ``register_store`` writes the bits back
to a 4-byte element and the low bits (wrapping) to a narrower int.  ``register_read`` gives
the signed 32-bit value as a Python ``int`` (an ``index``).  A ``src`` that is an integer
or ``index`` SSA value (an immediate, a loop induction value) is wrapped to 32 bits.

Semantics: NKI architecture guide (nki/guides/architecture) ("Registers and control").
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation, SSAValue

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import isa_control as ctl
from ..errors import NKIRuntimeError
from . import control
from .env import Buf, finish, guard

if TYPE_CHECKING:
    from .decoder import Decoder


def wrap32(v: int) -> int:
    """``v`` as a signed 32-bit value (two's complement wrap)."""
    return ((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31


def _value(dec: Decoder, op: Operation, v: SSAValue, role: str) -> Callable[[list], int]:
    """A getter of the signed 32-bit value of a register or integer operand."""
    s = dec.use(op, v, role)
    if ctl.is_register(v):
        return lambda env: int(env[s][0])
    if v in dec.consts:
        c = wrap32(dec.consts[v])
        return lambda env: c
    return lambda env: wrap32(env[s])


def _tensor(dec: Decoder, op: Operation, v: SSAValue, role: str) -> Buf:
    b = dec.buf(op, v, role)
    name = dtypes.name_of(b.dtype)
    if int(np.prod(b.shape)) != 1 or name not in ctl.REGISTER_DTYPES:
        raise error_at(op, f"{op.name}: '{role}' must be a 1-element tensor of "
                           f"{', '.join(ctl.REGISTER_DTYPES)}, got {list(b.shape)} {name}",
                       NKIRuntimeError)
    return b


def register_alloc(dec: Decoder, op: ctl.NisaRegisterAllocOp):
    r = dec.define(op.result, op)
    init = wrap32(op.init.value.data) if op.init is not None else 0

    def run(env):
        env[r] = np.array([init], np.int32)
    return run


def register_move(dec: Decoder, op: ctl.NisaRegisterMoveOp):
    d = dec.buf(op, op.dst, "dst").slot
    src = _value(dec, op, op.src, "src")

    def run(env):
        env[d][0] = src(env)
    return guard(op, run)


def register_load(dec: Decoder, op: ctl.NisaRegisterLoadOp):
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


def register_store(dec: Decoder, op: ctl.NisaRegisterStoreOp):
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


def register_read(dec: Decoder, op: ctl.NisaRegisterReadOp):
    src = _value(dec, op, op.src, "src")
    r = dec.define(op.result, op)

    def run(env):
        env[r] = src(env)
    return guard(op, run)


def no_reorder_marker(dec: Decoder, op: Operation):
    return None  # program order is what the interpreter runs anyway


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.register_alloc": register_alloc,
    "nisa.register_move": register_move,
    "nisa.register_load": register_load,
    "nisa.register_store": register_store,
    "nisa.register_read": register_read,
    "nisa.no_reorder_begin": no_reorder_marker,
    "nisa.no_reorder_end": no_reorder_marker,
    "scf.while": control.scf_while,
    "scf.condition": control.scf_condition,
    "arith.cmpi": control.arith_cmpi,
}
