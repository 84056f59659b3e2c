"""Closure builders for the structural ops: ``func``, ``scf.for`` and ``arith`` index code.

``func.return`` and ``scf.yield`` build nothing (the decoder reads the return operands
itself; loop-carried values are rejected).  ``arith.constant`` and ``arith`` integer ops on
constants fold at decode time into the env template; the rest run on Python ``int``\\ s
(``divsi`` / ``remsi`` truncate toward zero, ``floordivsi`` / ``ceildivsi`` round as named,
the unsigned forms divide the values as they are).  Division by zero is a runtime fault.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from ..diagnostics import error_at
from ..errors import NKIRuntimeError
from .env import Fault, guard, is_float_type

if TYPE_CHECKING:
    from .decoder import Decoder


def func_return(dec: Decoder, op: func.ReturnOp):
    return None  # handled by function()


def scf_yield(dec: Decoder, op: scf.YieldOp):
    if op.operands:
        raise error_at(op, "scf.yield with values (loop-carried values) is not supported by "
                           "the interpreter", NKIRuntimeError)
    return None


def arith_constant(dec: Decoder, op: arith.ConstantOp):
    attr = op.value
    t = op.result.type
    if isinstance(attr, IntegerAttr):
        value: object = int(attr.value.data)
        if is_float_type(t):
            value = np.float32(value)
    elif isinstance(attr, FloatAttr):
        value = np.float32(attr.value.data)
    else:
        raise error_at(op, f"arith.constant: only scalar integer/index/float constants are "
                           f"supported, got {attr}", NKIRuntimeError)
    s = dec.define(op.result, op)
    dec.template[s] = value
    dec.consts[op.result] = value
    return None


def index_cast(dec: Decoder, op: Operation):
    src = dec.use(op, op.operands[0], "in")
    if op.operands[0] in dec.consts:
        s = dec.define(op.results[0], op)
        dec.template[s] = dec.consts[op.results[0]] = int(dec.consts[op.operands[0]])
        return None
    r = dec.define(op.results[0], op)

    def run(env):
        env[r] = int(env[src])
    return run


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise Fault("division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise Fault("division by zero")
    return a // b


def _trunc_rem(a: int, b: int) -> int:
    if b == 0:
        raise Fault("remainder by zero")
    return a - b * _trunc_div(a, b)


def _floor_rem(a: int, b: int) -> int:
    if b == 0:
        raise Fault("remainder by zero")
    return a % b


INT_BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _trunc_div,
    "arith.divui": _floor_div,
    "arith.floordivsi": _floor_div,
    "arith.ceildivsi": lambda a, b: -_floor_div(-a, b),
    "arith.remsi": _trunc_rem,
    "arith.remui": _floor_rem,
    "arith.minsi": min,
    "arith.maxsi": max,
    "arith.minui": min,
    "arith.maxui": max,
}


def int_binary(dec: Decoder, op: Operation):
    fn = INT_BINARY[op.name]
    a, b = op.operands
    sa, sb = dec.use(op, a, "lhs"), dec.use(op, b, "rhs")
    if a in dec.consts and b in dec.consts:
        try:
            value = fn(int(dec.consts[a]), int(dec.consts[b]))
        except Fault:
            pass
        else:
            s = dec.define(op.results[0], op)
            dec.template[s] = dec.consts[op.results[0]] = value
            return None
    r = dec.define(op.results[0], op)

    def run(env):
        env[r] = fn(env[sa], env[sb])
    return guard(op, run)


def scf_for(dec: Decoder, op: scf.ForOp):
    if op.iter_args or op.res:
        raise error_at(op, "scf.for with iter_args (loop-carried values) is not supported by "
                           "the interpreter", NKIRuntimeError)
    lb, ub, st = (dec.use(op, op.lb, "lowerBound"), dec.use(op, op.ub, "upperBound"),
                  dec.use(op, op.step, "step"))
    iv = dec.define(op.body.block.args[0], op)
    body = tuple(dec.block(op.body.block))

    def run(env):
        lo, hi, step = env[lb], env[ub], env[st]
        if step <= 0:
            raise Fault(f"step must be positive, got {step}")
        for i in range(lo, hi, step):
            env[iv] = i
            for f in body:
                f(env)
    return guard(op, run)  # errors raised inside the body are already located
