"""Instructions feeding the engines' accumulator registers: tensor_scalar_reduce (Vector),
exponential (Vector, trn3), activate2 (Scalar, trn3).

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the NKI
API common tables (nki/api/nki.api.shared) for the ALU operators and activation functions.
Inputs are read as float32, the math is float32, results are cast to the ``dst`` dtype.
``tensor_scalar_reduce`` and ``exponential`` accumulate in the VectorE accumulators
(``State.dve_acc``), ``activate2`` in the ScalarE ones it shares with ``activation``
(``State.act_acc``); the accumulator rules are ``runtime/isa_activation.accumulate``.
"""
from __future__ import annotations

import numpy as np
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import prop_flag, prop_str
from ..dialects.ods import Engine, EnumProp, Flag, Formula, OpToken, Scalar, Stream, Tile
from ..dialects.ods_forms import ApiArg
from ..dialects.vector_rules import (ACT2_FUNCS, ACT2_PAIRS, ACT2_REDUCE_OPS, ACT_CMDS, ARITH,
                                     DVE_CMDS, EXP_CMDS, TSR_REDUCE_OPS, f32_operands,
                                     partitions, reduce_res_tile)
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend import args as A
from ..frontend.values import Tensor
from ..runtime import numerics as nm
from ..runtime.env import STATE, check_elems, finish, reader
from ..runtime.isa_activation import accumulate
from ..runtime.isa_vector import alu, apply_op, lanes, readout_writer
from .define import instruction

F32 = np.float32


def _init_only_with_load(op, cmd: str) -> None:
    """``reduce_init`` goes with ``reduce_cmd=load_reduce`` and only with it."""
    if cmd == "load_reduce" and op.reduce_init is None:
        raise VerifyException(f"{rules.api(op)}: reduce_cmd=load_reduce needs 'reduce_init' "
                              f"(the value loaded into the accumulators)")
    if cmd != "load_reduce" and op.reduce_init is not None:
        raise VerifyException(f"{rules.api(op)}: 'reduce_init' is only used with "
                              f"reduce_cmd=load_reduce, but reduce_cmd={cmd}")


# ---------------------------------------------------------------- tensor_scalar_reduce


@instruction
class tensor_scalar_reduce:
    """``dst = data op0 operand0`` on the Vector engine, and a reduction of the results over
    the free dims into its accumulators, read out into ``reduce_res``.

    Per partition: ``acc = reduce_op(acc, reduce_op over the free dims of the float32
    result)`` where ``reduce_cmd`` first sets ``acc``: ``reset_reduce`` (the default) to the
    identity of ``reduce_op`` (add 0, multiply 1, maximum -inf, minimum +inf),
    ``load_reduce`` to ``reduce_init`` (a number or a ``[P, 1]`` float32 tile), ``reduce``
    keeps it.  ``reduce_res`` (``[P, 1]``) receives ``acc``, negated with
    ``reduce_res_negate``.  ``data`` / ``dst``: SBUF or PSUM tiles of the same partition count
    and elements per partition.  ``op0``: an arithmetic ``nl`` operator; ``reduce_op``:
    add, multiply, maximum or minimum.  ``reverse0=True`` is not supported.

    Raises ``NKITypeError`` for another operator, ``reduce_cmd`` or ``reverse0=True``, and
    ``NKIVerifyError`` for mismatched tiles or a ``reduce_init`` without ``load_reduce``.
    NKI docs: ``nki.isa.tensor_scalar_reduce`` (nki/api/generated/nki.isa.tensor_scalar_reduce).
    """

    dst = Tile(writes=True, like="data")
    data = Tile()
    op0 = OpToken(allowed=ARITH, arith=True)
    operand0 = Scalar(if_none=0.0)
    reduce_op = OpToken(allowed=TSR_REDUCE_OPS)
    reduce_res = Tile(writes=True, optional=True)
    reverse0 = ApiArg(default=False)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=DVE_CMDS, default="reset_reduce")
    reduce_init = Scalar(default=None)
    reduce_res_negate = Flag(default=False)
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Stream("data", perf="other", source="analogue: tensor_scalar (k=1, bf16 perf mode "
                  "other; +MIN_II reading out reduce_res)")

    def call(cg, api, args):
        if args["reverse0"]:
            raise cg.b.error(f"{api}: reverse0=True is not supported by tensor_scalar_reduce "
                             f"(the NKI API documents it as not supported yet)", NKITypeError)

    def verify(op):
        reduce_res_tile(op, partitions(op.dst))
        _init_only_with_load(op, prop_str(op, "reduce_cmd") or "reset_reduce")
        f32_operands(op, "operand0", "reduce_init")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        check_elems(op, dst, ("data", data))
        shape, d, P = dst.shape, dst.slot, dst.parts
        rx, store = reader(data, shape), nm.make_store(dst.dtype)
        g0 = dec.scalar(op, op.operand0, "operand0", shape)
        f0 = alu(op, "op0")
        rop = op.reduce_op.data
        cmd = prop_str(op, "reduce_cmd", "reset_reduce")
        gi = dec.scalar(op, op.reduce_init, "reduce_init", (P, 1)) if op.reduce_init is not None else None
        if cmd == "load_reduce" and gi is None:
            raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'reduce_init'", NKIRuntimeError)
        negate = prop_flag(op, "reduce_res_negate")
        rr, readout = readout_writer(dec, op, P)

        def run(env):
            t = f0(rx(env), g0(env))
            store(env[d], t)
            acc = env[STATE].dve_acc
            accumulate(acc, cmd, rop, np.asarray(t).reshape(P, -1),
                       lanes(gi(env), P) if gi is not None else None)
            if readout is not None:
                readout(env, np.negative(acc[:P]) if negate else acc[:P])
        return finish(op, run, dst, rr)


# ------------------------------------------------------------------------- exponential


@instruction
class exponential:
    """``dst = exp(src - max_value)`` on the Vector engine (trn3, NeuronCore-v4).

    ``src`` / ``dst``: SBUF or PSUM tiles of the same partition count and elements per
    partition; ``max_value``: a number or a ``[P, 1]`` float32 tile.  With ``reduce_cmd`` the
    free-axis sum of the float32 results goes into the Vector engine's accumulators:
    ``reset_reduce`` from 0, ``load_reduce`` from ``reduce_init``, ``reduce`` on top of the
    current value, ``idle`` (the default) untouched; ``reduce_res`` (``[P, 1]``) receives the
    accumulators.  A ``reduce_res`` with ``reduce_cmd`` idle means ``reset_reduce``.
    ``reduce_init`` must be unset or 0.0 unless ``reduce_cmd=load_reduce``.

    Raises ``NKITypeError`` for another ``reduce_cmd`` or a ``reduce_init`` without
    ``load_reduce``, and ``NKIVerifyError`` on older targets and for mismatched tiles.
    NKI docs: ``nki.isa.exponential`` (nki/api/generated/nki.isa.exponential).
    """

    dst = Tile(writes=True, like="src")
    src = Tile()
    max_value = Scalar(default=0.0, if_none=0.0)
    reduce_res = Tile(writes=True, optional=True)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=EXP_CMDS, default="idle",
                          implied=("reduce_res", "reset_reduce"))
    reduce_init = Scalar(default=0.0, omit=True)
    engine = Engine("vector", param=False)
    since = "trn3"
    feature = "this instruction"
    start_partitions = True
    cost = Formula("exponential", roles=("src",),
                   source="ARCH4: VectorE exp has 4x the throughput of ScalarE exp "
                          "(+MIN_II reading out reduce_res)")

    def call(cg, api, args):
        cmd = A.enum_name(cg, api, "reduce_cmd", args["reduce_cmd"], "reduce_cmd", "idle")
        if cmd == "idle" and args["reduce_res"] is not None:
            cmd = "reset_reduce"
        init = args["reduce_init"]
        if cmd == "load_reduce":
            args["reduce_init"] = 0.0 if init is None else init
        elif isinstance(init, Tensor) or (init is not None and init != 0.0):
            raise cg.b.error(f"{api}: reduce_init must be unset or 0.0 unless "
                             f"reduce_cmd=nisa.reduce_cmd.load_reduce (reduce_cmd is {cmd})",
                             NKITypeError)
        else:
            args["reduce_init"] = None

    def verify(op):
        reduce_res_tile(op, partitions(op.dst))
        _init_only_with_load(op, prop_str(op, "reduce_cmd") or "idle")
        f32_operands(op, "max_value", "reduce_init")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        check_elems(op, dst, ("src", src))
        shape, d, P = dst.shape, dst.slot, dst.parts
        rx, store, exp = reader(src, shape), nm.make_store(dst.dtype), nm.ACTIVATION["exp"]
        gm = dec.scalar(op, op.max_value, "max_value", shape)
        gi = dec.scalar(op, op.reduce_init, "reduce_init", (P, 1)) if op.reduce_init is not None else None
        cmd = prop_str(op, "reduce_cmd", "idle")
        if cmd == "load_reduce" and gi is None:
            raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'reduce_init'", NKIRuntimeError)
        rr, readout = readout_writer(dec, op, P)

        def run(env):
            y = exp(np.subtract(rx(env), gm(env)))
            store(env[d], y)
            acc = env[STATE].dve_acc
            accumulate(acc, cmd, "add", np.asarray(y).reshape(P, -1),
                       lanes(gi(env), P) if gi is not None else None)
            if readout is not None:
                readout(env, acc[:P])
        return finish(op, run, dst, rr)


# --------------------------------------------------------------------------- activate2


@instruction
class activate2:
    """``dst = op((data op0 imm0) op1 imm1, relu_param)`` on the Scalar engine (trn3,
    NeuronCore-v4).

    ``(op0, op1)`` is one of (multiply, add), (multiply, subtract), (multiply, bypass),
    (add, bypass), (subtract, bypass), (bypass, bypass); ``reverse0`` / ``reverse1`` swap the
    operands of ``op0`` / ``op1``.  ``imm0``, ``imm1`` and ``relu_param`` (the negative slope
    of ``prelu``) are numbers or ``[P, 1]`` tiles; ``op`` is an activation function of the
    NKI API common tables or ``prelu``.  With ``reduce_cmd`` the Scalar engine's accumulators
    (shared with ``activation``) are reset to the identity of ``reduce_op`` (add 0, maximum
    -inf, minimum +inf, abs_max 0, abs_min +inf) and/or reduced with the float32 results;
    ``reduce_res`` (``[P, 1]``) receives them (with ``reduce_cmd`` idle it means
    ``reset_reduce``, and it needs a ``reduce_op``).

    Raises ``NKITypeError`` for another function, operator or ``reduce_cmd``, or a
    ``reduce_res`` without ``reduce_op``; ``NKIVerifyError`` on older targets, for another
    ``(op0, op1)`` pair and for mismatched tiles.
    NKI docs: ``nki.isa.activate2`` (nki/api/generated/nki.isa.activate2).
    """

    dst = Tile(writes=True, like="data")
    op = OpToken(allowed=ACT2_FUNCS)
    data = Tile()
    imm0 = Scalar(if_none=0.0)
    imm1 = Scalar(if_none=0.0)
    op0 = OpToken(allowed=ARITH, arith=True)
    op1 = OpToken(allowed=ARITH, arith=True)
    relu_param = Scalar(default=0.0, omit=True)
    reverse0 = Flag(default=False)
    reverse1 = Flag(default=False)
    reduce_op = OpToken(allowed=ACT2_REDUCE_OPS, optional=True)
    reduce_res = Tile(writes=True, optional=True)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=ACT_CMDS, default="idle",
                          implied=("reduce_res", "reset_reduce"))
    engine = Engine("scalar", param=False)
    since = "trn3"
    feature = "this instruction"
    start_partitions = True
    cost = Stream("data", source="ISA_OLD activation: scalar k=1 (+MIN_II reading out reduce_res)")

    def call(cg, api, args):
        rp = args["relu_param"]
        if not isinstance(rp, Tensor) and (rp is None or rp == 0.0):
            args["relu_param"] = None
        if args["reduce_res"] is not None and args["reduce_op"] is None:
            raise cg.b.error(f"{api}: reduce_res needs reduce_op (one of "
                             f"{', '.join('nl.' + o for o in ACT2_REDUCE_OPS)})", NKITypeError)

    def verify(op):
        api = rules.api(op)
        reduce_res_tile(op, partitions(op.dst))
        pair = (prop_str(op, "op0"), prop_str(op, "op1"))
        if pair not in ACT2_PAIRS:
            shown = ", ".join(f"({a}, {b})" for a, b in ACT2_PAIRS)
            raise VerifyException(f"{api}: (op0, op1) = ({pair[0]}, {pair[1]}) is not "
                                  f"supported; the allowed pairs are {shown}")
        if prop_flag(op, "reverse0") and pair[0] == "bypass":
            raise VerifyException(f"{api}: reverse0 needs op0 to be set (op0=bypass)")
        if prop_flag(op, "reverse1") and pair[1] == "bypass":
            raise VerifyException(f"{api}: reverse1 needs op1 to be set (op1=bypass)")
        cmd = prop_str(op, "reduce_cmd") or "idle"
        if cmd in ("reduce", "reset_reduce") and op.reduce_op is None:
            raise VerifyException(f"{api}: reduce_cmd={cmd} needs reduce_op (one of "
                                  f"{', '.join(ACT2_REDUCE_OPS)})")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        check_elems(op, dst, ("data", data))
        shape, d, P = dst.shape, dst.slot, dst.parts
        rx, store = reader(data, shape), nm.make_store(dst.dtype)
        name = op.op.data
        fn = nm.ACTIVATION.get(name)
        if fn is None and name != "prelu":
            raise error_at(op, f"{op.name}: op={name} is not supported by the interpreter (supported: "
                               f"prelu, {', '.join(nm.ACTIVATION)})", NKIRuntimeError)
        o0, o1 = op.op0.data, op.op1.data
        f0 = None if o0 == "bypass" else alu(op, "op0")
        f1 = None if o1 == "bypass" else alu(op, "op1")
        g0 = dec.scalar(op, op.imm0, "imm0", shape)
        g1 = dec.scalar(op, op.imm1, "imm1", shape)
        gr = dec.scalar(op, op.relu_param, "relu_param", shape) if op.relu_param is not None else None
        rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")
        cmd = prop_str(op, "reduce_cmd", "idle")
        rop = prop_str(op, "reduce_op", "add")
        rr, readout = readout_writer(dec, op, P)

        def run(env):
            t = rx(env)
            if f0 is not None:
                t = apply_op(f0, rev0, t, g0(env))
            if f1 is not None:
                t = apply_op(f1, rev1, t, g1(env))
            if fn is not None:
                y = fn(t)
            else:  # prelu: x for x > 0, relu_param * x otherwise
                alpha = gr(env) if gr is not None else F32(0.0)
                y = np.where(t > 0, t, np.multiply(t, alpha, dtype=F32)).astype(F32)
            store(env[d], y)
            acc = env[STATE].act_acc
            accumulate(acc, cmd, rop, np.asarray(y).reshape(P, -1))
            if readout is not None:
                readout(env, acc[:P])
        return finish(op, run, dst, rr)
