"""Closure builders for the structural ops: ``func``, ``scf.for``, ``scf.while``, ``scf.if``
and ``arith`` index code.

``func.return``, ``scf.condition`` and ``scf.yield`` build nothing (the decoder reads the
return operands itself; ``scf.while`` reads its condition and carried values; iter_args of
``scf.for`` are rejected).  ``arith.constant`` and ``arith`` integer ops (and ``cmpi``) on
constants fold at decode time into the env template; the rest run on Python ``int``\\ s
(``divsi`` / ``remsi`` truncate toward zero, ``floordivsi`` / ``ceildivsi`` round as named,
the unsigned forms divide the values as they are; ``andi`` / ``ori`` / ``xori`` combine
``i1`` conditions).  Division by zero is a runtime fault.  ``scf.if`` (no results) runs one
of its blocks.

Runaway guard: a runtime loop -- an ``scf.while``, or an ``scf.for`` whose bounds are not
decode-time constants (``nl.dynamic_range`` / ``nl.fori_loop`` on registers) -- that would
run more than :data:`MAX_LOOP_ITERATIONS` iterations stops with an NKIRuntimeError located
at the loop.  The limit is read each time a loop starts; its initial value comes from the
environment variable ``NKI_MLIR_MAX_LOOP_ITERATIONS`` at import (default 1000000), and it
can be changed later by assigning this module's attribute.
"""
from __future__ import annotations

import operator
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from ..diagnostics import error_at
from ..errors import NKIError, NKIRuntimeError
from .env import STATE, Fault, guard, is_float_type, program_order, raise_located

if TYPE_CHECKING:
    from .decoder import Decoder


def func_return(dec: Decoder, op: func.ReturnOp):
    return None  # handled by function()


def _max_iterations() -> int:
    try:
        return max(int(os.environ.get("NKI_MLIR_MAX_LOOP_ITERATIONS", "1000000")), 0)
    except ValueError:
        return 1_000_000


#: iterations a runtime loop may run before it is reported as runaway (see module doc)
MAX_LOOP_ITERATIONS = _max_iterations()


def _runaway(n: int) -> Fault:
    return Fault(f"runaway loop: more than {n} iterations (the interpreter's limit for runtime "
                 f"loops; if the count is intended, raise it with NKI_MLIR_MAX_LOOP_ITERATIONS "
                 f"before importing nki_mlir, or nki_mlir.runtime.control.MAX_LOOP_ITERATIONS)")


def scf_yield(dec: Decoder, op: scf.YieldOp):
    if isinstance(op.parent_op(), scf.WhileOp):
        return None  # read by scf_while
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
    # (operator.add etc.: a + b, a - b, a * b, without a Python frame per call)
    "arith.addi": operator.add,
    "arith.subi": operator.sub,
    "arith.muli": operator.mul,
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
    # i1 (and integer) logic: values are Python bools / ints
    "arith.andi": operator.and_,
    "arith.ori": operator.or_,
    "arith.xori": operator.xor,
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
    by_const = _BY_CONST.get(op.name)
    if by_const is not None and b in dec.consts and type(dec.consts[b]) is int:
        return by_const(r, sa, dec.consts[b])    # (an index times / plus a constant)
    inline = _INLINE.get(op.name)
    if inline is not None:
        return inline(r, sa, sb)

    def run(env):
        env[r] = fn(env[sa], env[sb])
    # (add, sub, mul, min, max and the logic ops of Python ints cannot fail: no guard)
    return run if op.name in _TOTAL else guard(op, run)


def _times_const(r: int, sa: int, c: int):
    def run(env):
        env[r] = env[sa] * c
    return run


def _plus_const(r: int, sa: int, c: int):
    def run(env):
        env[r] = env[sa] + c
    return run


#: ``arith.muli`` / ``arith.addi`` with a constant Python int ``rhs``: the closure computing
#: ``lhs * c`` / ``lhs + c`` inline (the operation ``operator.mul`` / ``add`` would call,
#: one list read and one call fewer)
_BY_CONST = {"arith.muli": _times_const, "arith.addi": _plus_const}


def _add(r: int, sa: int, sb: int):
    def run(env):
        env[r] = env[sa] + env[sb]
    return run


def _sub(r: int, sa: int, sb: int):
    def run(env):
        env[r] = env[sa] - env[sb]
    return run


def _mul(r: int, sa: int, sb: int):
    def run(env):
        env[r] = env[sa] * env[sb]
    return run


#: ``arith.addi`` / ``subi`` / ``muli`` of two values: the operation inline (what
#: ``operator.add`` / ``sub`` / ``mul`` of :data:`INT_BINARY` runs, without the call)
_INLINE = {"arith.addi": _add, "arith.subi": _sub, "arith.muli": _mul}


#: the ops of :data:`INT_BINARY` defined for every pair of ints
_TOTAL = frozenset({"arith.addi", "arith.subi", "arith.muli", "arith.minsi", "arith.maxsi",
                    "arith.minui", "arith.maxui", "arith.andi", "arith.ori", "arith.xori"})


def scf_for(dec: Decoder, op: scf.ForOp):
    if op.iter_args or op.res:
        raise error_at(op, "scf.for with iter_args (loop-carried values) is not supported by "
                           "the interpreter", NKIRuntimeError)
    lb, ub, st = (dec.use(op, op.lb, "lowerBound"), dec.use(op, op.ub, "upperBound"),
                  dec.use(op, op.step, "step"))
    iv = dec.define(op.body.block.args[0], op)
    li = dec.loop_index(op)
    body = tuple(dec.block(op.body.block))
    # program order: the instructions' own closures, unguarded, in one try (env.program_order)
    po_body, po_ops = program_order(body)
    dynamic = not all(v in dec.consts for v in (op.lb, op.ub, op.step))

    def run(env):
        lo, hi, step = env[lb], env[ub], env[st]
        if step <= 0:
            raise Fault(f"step must be positive, got {step}")
        iters = range(lo, hi, step)
        if dynamic and len(iters) > MAX_LOOP_ITERATIONS:
            raise _runaway(MAX_LOOP_ITERATIONS)
        qr = env[STATE].queues
        if qr is not None:  # queue mode: count iteration serials (queues.py)
            serial = qr.serial
            for i in iters:
                env[iv] = i
                serial[li] += 1
                for f in body:
                    f(env)
            return
        f = None
        try:
            for i in iters:
                env[iv] = i
                for f in po_body:
                    f(env)
        except NKIError:
            raise
        except Exception as e:  # noqa: BLE001  (located at the op of the closure that raised)
            raise_located(po_ops, f, e)
    return guard(op, run)  # errors raised inside the body are already located


def scf_if(dec: Decoder, op: scf.IfOp):
    """``scf.if`` without results (the guards of masked instructions, frontend/beta1/masks.py):
    run the then-block when the ``i1`` condition holds, else the else-block (if any).  A
    condition folded at decode time keeps only the branch taken."""
    if op.output:
        raise error_at(op, "scf.if with results is not supported by the interpreter",
                       NKIRuntimeError)
    c = dec.use(op, op.cond, "condition")
    then = tuple(dec.block(op.true_region.block))
    other = tuple(dec.block(op.false_region.block)) if op.false_region.blocks else ()
    if op.cond in dec.consts:
        taken = then if dec.consts[op.cond] else other

        def run_const(env):
            for f in taken:
                f(env)
        return run_const

    def run(env):
        for f in (then if env[c] else other):
            f(env)
    return run  # errors raised inside the branches are already located


def scf_condition(dec: Decoder, op: scf.ConditionOp):
    return None  # read by scf_while


def scf_while(dec: Decoder, op: scf.WhileOp):
    """``scf.while``: run ``before`` (ending in ``scf.condition``); while the condition holds,
    run ``after`` with the forwarded values (its ``scf.yield`` feeds ``before`` again)."""
    init = [dec.use(op, v, "arguments") for v in op.arguments]
    bargs = [dec.define(a, op) for a in op.before_region.block.args]
    before = tuple(dec.block(op.before_region.block))
    cond_op = op.before_region.block.last_op
    if not isinstance(cond_op, scf.ConditionOp):
        raise error_at(op, "scf.while: the before region must end with scf.condition",
                       NKIRuntimeError)
    cslot = dec.use(cond_op, cond_op.condition, "condition")
    fwd = [dec.use(cond_op, v, "args") for v in cond_op.args]
    aargs = [dec.define(a, op) for a in op.after_region.block.args]
    after = tuple(dec.block(op.after_region.block))
    yield_op = op.after_region.block.last_op
    ys = [dec.use(yield_op, v, "results") for v in yield_op.operands] if yield_op else []
    res = [dec.define(r, op) for r in op.res]
    li = dec.loop_index(op)

    def run(env):
        qr = env[STATE].queues
        vals = [env[s] for s in init]
        cap, n = MAX_LOOP_ITERATIONS, 0
        while True:
            for s, v in zip(bargs, vals):
                env[s] = v
            for f in before:
                f(env)
            out = [env[s] for s in fwd]
            if not env[cslot]:
                break
            n += 1
            if n > cap:
                raise _runaway(cap)
            for s, v in zip(aargs, out):
                env[s] = v
            if qr is not None:  # queue mode: an iteration starts with the after region
                qr.serial[li] += 1
            for f in after:
                f(env)
            vals = [env[s] for s in ys]
        for s, v in zip(res, out):
            env[s] = v
    return guard(op, run)


#: ``arith.cmpi`` predicates by their attribute value (signed and unsigned alike: values
#: are Python ints)
CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
        3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b,
        6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b,
        9: lambda a, b: a >= b}


def arith_cmpi(dec: Decoder, op: arith.CmpiOp):
    fn = CMPI[op.predicate.value.data]
    a, b = op.lhs, op.rhs
    sa, sb = dec.use(op, a, "lhs"), dec.use(op, b, "rhs")
    if a in dec.consts and b in dec.consts:
        s = dec.define(op.result, op)
        dec.template[s] = dec.consts[op.result] = bool(fn(int(dec.consts[a]), int(dec.consts[b])))
        return None
    r = dec.define(op.result, op)

    def run(env):
        env[r] = fn(env[sa], env[sb])
    return run
