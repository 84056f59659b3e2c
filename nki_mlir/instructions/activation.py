"""The Scalar engine's activation instructions: activation and activation_reduce.

Semantics: the NKI ``nki.isa.activation`` / ``nki.isa.activation_reduce`` API pages
(nki/api/nki.isa) and the NKI API common tables (nki/api/nki.api.shared) for the activation
functions and their valid input ranges.  Both lower to AWS's ``nisa.activation(dst,
reduce_res, src, bias, scale)``: ``bias`` 0.0 when absent, ``activation_reduce`` with
``reduce_cmd=reset_reduce``.  ``dst = f(src * scale + bias)``: ``scale`` and ``bias`` are
numbers or ``[P, 1]`` tiles (a constant 1.0 / 0.0 is skipped); ``f`` is one of
``runtime/numerics.ACTIVATION`` (float32 results).  With ``reduce_cmd`` (``reset``,
``reduce``, ``reset_reduce``; ``idle`` with a ``reduce_res`` means ``reset_reduce``) the
per-partition sum of the results is kept in the run's ScalarE float32 accumulators
(``State.act_acc``), which carry across instructions; ``reduce_res`` (``[P, 1]``) receives
them (``runtime/isa_activation.accumulate``).  Only ``reduce_op=add`` is supported, and not
``load_reduce``.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import shape_of, str_attr
from ..dialects.ods import Engine, EnumProp, OpToken, Scalar, Stream, Tile
from ..dialects.ods_forms import IsaForm
from ..dialects.vector_rules import ACTIVATIONS, REDUCE_CMDS
from ..errors import NKIRuntimeError
from ..runtime import numerics as nm
from ..runtime.act_range import range_checker
from ..runtime.env import STATE, check_elems, finish, reader, scratch, writes_f32
from ..runtime.isa_activation import accumulate
from .define import instruction

#: ``reduce_op`` of the activation instructions
REDUCE_OPS = ("add",)


def _verify_nki(op) -> None:
    """The rules of ``nki.activation`` / ``nki.activation_reduce`` beyond their fields."""
    rules.per_partition_vector(op, "reduce_res", op.reduce_res, shape_of(op.data)[0])
    if op.reduce_res is not None and op.properties.get("reduce_op") is None:
        raise VerifyException(f"{op.name}: reduce_res needs reduce_op=add")
    rules.activation_operands(op, op.scale, op.bias)
    rules.reduce_cmd_needs_op(op)


def _verify_isa(op) -> None:
    rules.per_partition_vector(op, "reduce_res", op.reduce_res, shape_of(op.src)[0])
    rules.activation_operands(op, op.scale, op.bias)


def _lower_props(op) -> dict:
    """The ``nisa.activation`` properties of an ``nki.activation`` / ``activation_reduce``."""
    props = {"op": op.op}
    if op.reduce_res is not None:
        props["reduce_op"] = op.properties.get("reduce_op") or StringAttr("add")
    cmd = op.properties.get("reduce_cmd")
    if op.name == "nki.activation_reduce":
        cmd = str_attr("reset_reduce")
    if cmd is not None:
        props["reduce_cmd"] = cmd
    return props


@instruction
class activation:
    """``dst = op(data * scale + bias)`` on the Scalar engine, with an optional sum of the
    results along the free dims into ``reduce_res``.

    ``data`` / ``dst``: SBUF or PSUM tiles with the same partition count and elements per
    partition.  ``op``: an activation function (``nl.exp``, ``nl.tanh``, ``nl.gelu``, ...;
    the NKI API common tables list them and their valid input ranges).  ``scale``: a number
    or a ``[P, 1]`` float32 tile; ``bias``: a ``[P, 1]`` float32 / bfloat16 / float16 tile or
    a number.  ``reduce_res`` (``[P, 1]``, with ``reduce_op=nl.add``) receives the Scalar
    engine's accumulators after ``reduce_cmd`` (``reset``, ``reduce``, ``reset_reduce``;
    ``idle``, the default, means ``reset_reduce`` when ``reduce_res`` is given); the
    accumulators carry across activation instructions.

    Raises ``NKITypeError`` for another function, operator or ``reduce_cmd``, and
    ``NKIVerifyError`` for mismatched tiles, dtypes, or a ``reduce_res`` without ``reduce_op``.
    NKI docs: ``nki.isa.activation`` (nki/api/generated/nki.isa.activation).
    """

    dst = Tile(writes=True, like="data")
    op = OpToken(allowed=ACTIVATIONS)
    data = Tile()
    bias = Scalar(default=None)
    scale = Scalar(default=1.0, if_none=1.0)
    reduce_op = OpToken(allowed=REDUCE_OPS, optional=True)
    reduce_res = Tile(writes=True, optional=True)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=REDUCE_CMDS, default="idle",
                          implied=("reduce_res", "reset_reduce"))
    engine = Engine("scalar", param=False)
    start_partitions = True
    elementwise = True
    full_writes = ("dst", "reduce_res")
    cost = Stream("src", source="ISA_OLD activation: scalar k=1 (+MIN_II reading out reduce_res, "
                  "ISA_OLD activation_reduce)")
    isa = IsaForm("activation", dst=Tile(writes=True, like="src"),
                  reduce_res=Tile(writes=True, optional=True), src=Tile(), bias=Scalar(),
                  scale=Scalar(), op=OpToken(allowed=ACTIVATIONS),
                  reduce_op=OpToken(allowed=REDUCE_OPS, optional=True),
                  reduce_cmd=EnumProp(enum="reduce_cmd", allowed=REDUCE_CMDS),
                  sources={"src": "data"}, defaults={"bias": 0.0}, props=_lower_props,
                  verify=_verify_isa)

    verify = _verify_nki

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        check_elems(op, dst, ("src", src))
        name = op.op.data
        fn = nm.ACTIVATION.get(name)
        if fn is None:
            raise error_at(op, f"nisa.activation: op={name} is not supported (expected one of "
                               f"{', '.join(nm.ACTIVATION)})", NKIRuntimeError)
        shape, d, P = dst.shape, dst.slot, dst.parts
        read, store = reader(src, shape), nm.make_store(dst.dtype)
        scale_c, bias_c = dec.const_value(op.scale), dec.const_value(op.bias)
        gs = None if scale_c is not None and float(scale_c) == 1.0 else \
            dec.scalar(op, op.scale, "scale", shape)
        gb = None if bias_c is not None and float(bias_c) == 0.0 else \
            dec.scalar(op, op.bias, "bias", shape)
        rr = dec.buf(op, op.reduce_res, "reduce_res") if op.reduce_res is not None else None
        cmd = op.reduce_cmd.data if op.reduce_cmd is not None else "idle"
        rop = op.reduce_op.data if op.reduce_op is not None else "add"
        if rop != "add":
            raise error_at(op, f"nisa.activation: reduce_op={rop} is not supported (only add)",
                           NKIRuntimeError)
        if cmd == "load_reduce":
            raise error_at(op, "nisa.activation: reduce_cmd=load_reduce is not supported by the "
                               "ScalarE accumulators (use reset, reduce or reset_reduce)",
                           NKIRuntimeError)
        if rr is not None and (rr.parts != P or rr.free != 1):
            raise error_at(op, f"nisa.activation: 'reduce_res' must be [{P}, 1], got "
                               f"{list(rr.shape)}", NKIRuntimeError)
        if cmd == "idle":
            cmd = "reset_reduce" if rr is not None else "idle"
        rr_slot = rr.slot if rr is not None else None
        rr_shape = rr.shape if rr is not None else None
        rr_store = nm.make_store(rr.dtype) if rr is not None else None
        check = range_checker(dec, op, name)  # documented input range (act_range.py)

        def run(env):
            x = read(env)
            if gs is not None:
                x = x * gs(env)
            if gb is not None:
                x = x + gb(env)
            if check is not None:
                check(env, x)
            y = fn(x)
            store(env[d], y)
            acc = env[STATE].act_acc
            accumulate(acc, cmd, "add", y)
            if rr_slot is not None:
                rr_store(env[rr_slot], acc[:P].reshape(rr_shape))
        if writes_f32(dst):
            return finish(op, _into_f32(op, fn, read, d, shape, P, gs, gb, check, cmd, rr_slot,
                                        rr_shape, rr_store, run), dst, rr)
        return finish(op, run, dst, rr)


def _into_f32(op, fn, read, d, shape, P, gs, gb, check, cmd, rr_slot, rr_shape, rr_store,
              general):
    """``activation`` into a float32 ``dst``: the same steps computed in place in ``dst``
    (and a reused float64 temporary for the functions evaluated in float64), so the results
    are bit-identical and no tile-sized temporary is allocated.  A ``dst`` access pattern
    with a zero step (several elements stored to one address, e.g. ``dst.ap([[1, P], [0, F]])``
    when only ``reduce_res`` is wanted) takes the ``general`` path: the accumulators sum the
    computed values, not what is left in ``dst``.  ``reduce_cmd=reset_reduce`` folds the
    results into the accumulators in place (:func:`_reset_fold`)."""
    f64 = nm.ACTIVATION_F64_TO.get(op.op.data)
    temp = op.op.data in nm.F64_TEMP
    into = nm.ACTIVATION_INTO.get(op.op.data)
    fold = _reset_fold(P, rr_slot, rr_shape, rr_store) if cmd == "reset_reduce" else None

    def run(env):
        dv = env[d]
        if 0 in dv.strides and dv.size > 1:
            return general(env)
        sv = gs(env) if gs is not None else None
        bv = gb(env) if gb is not None else None   # [P, 1] tiles may be views of dst
        if isinstance(bv, np.ndarray) and np.may_share_memory(bv, dv):
            bv = bv.copy()
        x = read(env)
        if sv is not None:
            x = np.multiply(x, sv, out=dv)
        if f64 is not None:
            # float64 steps on the float32 x + bias, rounded once into dst
            t = scratch(env, shape, nm.F64) if temp or (bv is not None and check is None) \
                else None
            if bv is not None and check is None:
                x = np.add(x, bv, out=t, dtype=nm.F32)   # (converted exactly into t)
            elif bv is not None:
                x = np.add(x, bv, out=dv)
            if check is not None:
                check(env, x)
            f64(x, dv, t)
        else:
            if bv is not None:
                x = np.add(x, bv, out=dv)
            if check is not None:
                check(env, x)
            if into is not None:
                into(x, dv)
            else:
                y = fn(x)
                if y is not dv:
                    dv[...] = y
        if fold is not None:
            fold(env, dv)
            return
        acc = env[STATE].act_acc
        if cmd != "idle":
            accumulate(acc, cmd, "add", dv)
        if rr_slot is not None:
            rr_store(env[rr_slot], acc[:P].reshape(rr_shape))
    return run


_ZERO = np.float32(0.0)


def _reset_fold(P, rr_slot, rr_shape, rr_store):
    """``fold(env, dv)``: ``reduce_cmd=reset_reduce`` of the float32 results ``dv`` into the
    ScalarE accumulators, and ``reduce_res`` when given: the steps of :func:`accumulate`
    (each row summed in float32, added to the reset lane 0.0, so -0.0 becomes +0.0) with the
    sums written straight into the lanes."""
    def fold(env, dv):
        acc = env[STATE].act_acc[:P]
        np.add.reduce(dv.reshape(P, -1), axis=1, out=acc)
        np.add(acc, _ZERO, out=acc)
        if rr_slot is not None:
            rr_store(env[rr_slot], acc.reshape(rr_shape))
    return fold


@instruction
class activation_reduce:
    """``dst = op(data * scale + bias)`` on the Scalar engine and the sum of the results
    along the free dims into ``reduce_res`` (``[P, 1]``): ``activation`` with
    ``reduce_cmd=reset_reduce``, whose ``nisa.activation`` it lowers to.

    ``data`` / ``dst``: SBUF or PSUM tiles with the same partition count and elements per
    partition; ``op``: an activation function; ``reduce_op``: ``nl.add``; ``scale`` / ``bias``
    as for ``activation``.

    Raises ``NKITypeError`` for another function or operator and ``NKIVerifyError`` for
    mismatched tiles or dtypes.
    NKI docs: ``nki.isa.activation_reduce`` (nki/api/generated/nki.isa.activation_reduce).
    """

    dst = Tile(writes=True, like="data")
    op = OpToken(allowed=ACTIVATIONS)
    data = Tile()
    reduce_op = OpToken(allowed=REDUCE_OPS)
    reduce_res = Tile(writes=True)
    bias = Scalar(default=None)
    scale = Scalar(default=1.0, if_none=1.0)
    engine = Engine("scalar", param=False)
    start_partitions = True
    order = ("dst", "data", "bias", "scale", "reduce_res")
    isa = IsaForm("activation", of="activation", sources={"src": "data"}, defaults={"bias": 0.0},
                  props=_lower_props)

    verify = _verify_nki
