"""Selection on the Vector engine: tensor_copy_predicated, select_reduce, range_select.

Semantics: the NKI ``nki.isa`` API pages of the instructions (nki/api/nki.isa).  ``src`` is
copied bit-exactly (same dtype); a number is cast to ``dst``'s dtype; ``reverse_pred``
negates the predicate's truth value (``predicate == 0`` selects).  select_reduce and
range_select compare and select in float32, cast once to the ``dst`` dtype, and reduce the
selected values into the VectorE accumulators (:func:`nki_mlir.runtime.isa_select.accumulator`).
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, MemRefType
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import dtype_of, prop_flag, prop_int, prop_str, shape_of
from ..dialects.ods import Engine, EnumProp, Flag, Formula, Int, OpToken, Scalar, Stream, Tile
from ..errors import NKIRuntimeError, NKITypeError
from ..runtime import numerics as nm
from ..runtime.env import check_elems, finish, reader
from ..runtime.isa_select import accumulator, raw_rows
from .define import instruction

_UINT = (dtypes.uint8, dtypes.uint16, dtypes.uint32)
_INT8_16 = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16)
#: reduce_cmd values the VectorE select instructions accept (no ``load_reduce``: they have
#: no ``reduce_init`` operand)
SELECT_REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce")
#: comparison tokens of ``range_select``
RANGE_CMPS = ("equal", "less", "less_equal", "greater", "greater_equal")
#: ``range_select``'s only legal ``on_false_value`` (the hardware fills with FP32_MIN)
FP32_MIN = -3.4028234663852886e38
_CMP = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal,
        "greater": np.greater, "greater_equal": np.greater_equal}


@instruction
class tensor_copy_predicated:
    """``dst = where(predicate != 0, src, dst)`` on the Vector engine (``predicate == 0``
    with ``reverse_pred``).

    ``dst`` / ``predicate``: SBUF or PSUM tiles with the same partition count and elements
    per partition, ``predicate`` uint8, uint16 or uint32.  ``src``: a tile of that shape and
    of ``dst``'s dtype (copied bit-exactly; ``src`` and ``predicate`` not both in PSUM), or a
    number (cast to ``dst``'s dtype).

    Raises ``NKIVerifyError`` for another shape, memory or dtype.
    NKI docs: ``nki.isa.tensor_copy_predicated`` (nki/api/generated/nki.isa.tensor_copy_predicated).
    """

    dst = Tile(writes=True, like=("predicate", "src"))
    src = Scalar(tile=True)
    predicate = Tile()
    reverse_pred = Flag(default=False)
    engine = Engine("vector", param=False)
    cost = Formula("two_input", roles=("src", "predicate"),
                   source="analogue: tensor_tensor (k=1 with a PSUM input or a scalar src)")

    def verify(op):
        api = rules.api(op)
        if dtype_of(op.predicate) not in _UINT:
            raise VerifyException(f"{api}: 'predicate' has dtype "
                                  f"{dtypes.name_of(dtype_of(op.predicate))}, but it must be uint8, "
                                  f"uint16 or uint32")
        if isinstance(op.src.type, MemRefType):
            rules.same_dtype(op, "src", "dst", "they must be the same")
            rules.not_both_psum(op, ("src", op.src), ("predicate", op.predicate))

    def interpret(dec, op):
        dst, pred = dec.buf(op, op.dst, "dst"), dec.buf(op, op.predicate, "predicate")
        check_elems(op, dst, ("predicate", pred))
        shape, d, rp, rev = dst.shape, dst.slot, raw_rows(pred), prop_flag(op, "reverse_pred")
        if isinstance(op.src.type, MemRefType):
            src = dec.buf(op, op.src, "src")
            check_elems(op, dst, ("src", src))
            if dec.declared(src) != dec.declared(dst):
                raise error_at(op, f"{op.name}: 'src' dtype {dtypes.name_of(dec.declared(src))} "
                                   f"differs from 'dst' dtype {dtypes.name_of(dec.declared(dst))}",
                               NKIRuntimeError)
            s, reshape = src.slot, src.shape != shape

            def value(env):
                return env[s].reshape(shape) if reshape else env[s]
        else:
            g, store = dec.scalar(op, op.src, "src", shape), nm.make_store(dst.dtype)

            def value(env):
                box = np.empty(1, dst.dtype)  # 1-element (make_store's int path needs an array)
                store(box, np.asarray(g(env), np.float32).reshape(1))
                return box

        def run(env):
            mask = rp(env) != 0
            if rev:
                mask = ~mask
            np.copyto(env[d], value(env), where=mask.reshape(shape), casting="unsafe")
        return finish(op, run, dst)


# ------------------------------------------------------------ select_reduce, range_select


def _dtype_in(op, role: str, allowed, what: str) -> None:
    v = getattr(op, role)
    if v is not None and isinstance(v.type, MemRefType) and dtype_of(v) not in allowed:
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype "
                              f"{dtypes.name_of(dtype_of(v))}, but it must be {what}")


def _float_dtype(op, role: str) -> None:
    v = getattr(op, role)
    if v is not None and isinstance(v.type, MemRefType) and not dtypes.is_float(dtype_of(v)):
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype "
                              f"{dtypes.name_of(dtype_of(v))}, but it must be a float type")


def _const_float(v) -> float | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    return None


def _verify_reduce_res(op) -> None:
    """``reduce_res``: a float ``[P, 1]`` tile, ``P`` the partitions of ``dst``."""
    rules.per_partition_vector(op, "reduce_res", op.reduce_res, shape_of(op.dst)[0])
    _float_dtype(op, "reduce_res")


@instruction
class select_reduce:
    """``dst = where(predicate != 0, on_true, on_false)`` (``predicate == 0`` with
    ``reverse_pred``) on the Vector engine, with the per-partition maximum of the selected
    values reduced into the Vector engine's accumulators.

    ``dst`` / ``predicate`` / ``on_true``: SBUF or PSUM tiles with the same partition count
    and elements per partition; ``predicate`` int8, uint8, int16 or uint16, ``on_true`` any
    dtype but int32 / uint32 (``on_true`` and ``predicate`` not both in PSUM).  ``on_false``:
    a number or a ``[P, 1]`` per-partition tile.  ``reduce_cmd`` (``nisa.reduce_cmd``: idle,
    reset, reduce, reset_reduce; default idle) says how the accumulators change: ``reset``
    sets them to -inf, ``reset_reduce`` to the row maximum, ``reduce`` takes the maximum with
    it; a ``reduce_res`` (a float ``[P, 1]`` tile) receives them after the update, and with
    ``reduce_cmd`` idle means ``reset_reduce``.  ``reduce_op``: ``nl.maximum`` only.

    Raises ``NKITypeError`` for another ``reduce_op`` and ``NKIVerifyError`` for another
    shape, memory, dtype or ``reduce_cmd``.
    NKI docs: ``nki.isa.select_reduce`` (nki/api/generated/nki.isa.select_reduce).
    """

    dst = Tile(writes=True, like=("predicate", "on_true"))
    predicate = Tile()
    on_true = Tile()
    on_false = Scalar()
    reduce_res = Tile(writes=True, optional=True)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=SELECT_REDUCE_CMDS, default="idle",
                          implied=("reduce_res", "reset_reduce"))
    reduce_op = OpToken(allowed=("maximum",), optional=True)
    reverse_pred = Flag(default=False)
    engine = Engine("vector", param=False)
    cost = Formula("two_input", roles=("on_true", "predicate"),
                   source="analogue: tensor_tensor (k=1 with a PSUM input)")

    def verify(op):
        rules.not_both_psum(op, ("on_true", op.on_true), ("predicate", op.predicate))
        _dtype_in(op, "predicate", _INT8_16, "int8, uint8, int16 or uint16")
        if dtype_of(op.on_true) in (dtypes.int32, dtypes.uint32):
            raise VerifyException(f"{rules.api(op)}: 'on_true' has dtype "
                                  f"{dtypes.name_of(dtype_of(op.on_true))}; int32/uint32/tfloat32 "
                                  f"are not supported")
        _verify_reduce_res(op)

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        pred, tru = dec.buf(op, op.predicate, "predicate"), dec.buf(op, op.on_true, "on_true")
        check_elems(op, dst, ("predicate", pred), ("on_true", tru))
        P, F = dst.parts, dst.free
        rp, rt = raw_rows(pred), reader(tru, (P, F))
        gf = dec.scalar(op, op.on_false, "on_false", (P, F))
        rev, d, store = prop_flag(op, "reverse_pred"), dst.slot, nm.make_store(dst.dtype)
        update, rr = accumulator(dec, op, P, "idle")

        def run(env):
            mask = rp(env) != 0
            if rev:
                mask = ~mask
            vals = np.where(mask, rt(env), gf(env)).astype(np.float32, copy=False)
            store(env[d], vals.reshape(dst.shape))
            update(env, vals)
        return finish(op, run, dst, rr)


def _fp32_min_only(cg, args, operands, props, emit):
    """``on_false_value`` other than FP32_MIN is refused at the call; ``reduce_res`` with
    ``reduce_cmd`` idle means ``reset_reduce``, as for select_reduce."""
    fill = args["on_false_value"]
    if np.float32(fill) != np.float32(FP32_MIN):
        raise cg.b.error(f"nisa.range_select: on_false_value={float(fill)!r} is not supported; "
                         f"the hardware only fills with FP32_MIN (-3.4028235e+38)", NKITypeError)
    if operands["reduce_res"] is not None and props["reduce_cmd"] == "idle":
        props["reduce_cmd"] = "reset_reduce"
    emit()


@instruction
class range_select:
    """``dst = where(comp_op0(idx, bound0) & comp_op1(idx, bound1), on_true_tile,
    on_false_value)`` on the Vector engine, with ``idx = range_start + i`` (float32) for the
    ``i``-th element of each partition, and the per-partition maximum of the selected values
    reduced into the Vector engine's accumulators (as select_reduce; ``reduce_cmd`` defaults
    to ``reset_reduce``).  Needs trn2 or newer.

    ``dst`` / ``on_true_tile``: SBUF or PSUM tiles with the same partition count and elements
    per partition, ``on_true_tile`` of a float dtype.  ``bound0`` / ``bound1``: float32
    ``[P, 1]`` tiles.  ``comp_op0`` / ``comp_op1``: ``nl.equal``, ``nl.less``,
    ``nl.less_equal``, ``nl.greater`` or ``nl.greater_equal``.  ``on_false_value``: FP32_MIN
    (-3.4028235e+38), the only value the hardware fills with.  ``reduce_res``: a float
    ``[P, 1]`` tile.  ``reduce_op``: ``nl.maximum`` only.

    Raises ``NKITypeError`` for another comparison, ``reduce_op`` or ``on_false_value`` and
    ``NKIVerifyError`` before trn2 or for another shape, memory or dtype.
    NKI docs: ``nki.isa.range_select`` (nki/api/generated/nki.isa.range_select).
    """

    dst = Tile(writes=True, like="on_true_tile")
    on_true_tile = Tile()
    comp_op0 = OpToken(allowed=RANGE_CMPS)
    comp_op1 = OpToken(allowed=RANGE_CMPS)
    bound0 = Tile()
    bound1 = Tile()
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=SELECT_REDUCE_CMDS, default="reset_reduce")
    reduce_res = Tile(writes=True, optional=True)
    reduce_op = OpToken(allowed=("maximum",), optional=True)
    range_start = Int(default=0)
    on_false_value = Scalar(default=FP32_MIN, const=True)
    engine = Engine("vector", param=False)
    since = "trn2"
    feature = "range_select"
    cost = Stream("on_true_tile", source="analogue: tensor_scalar (one vector stream)")
    frontend = _fp32_min_only

    def verify(op):
        _float_dtype(op, "on_true_tile")
        parts = shape_of(op.dst)[0]
        for role in ("bound0", "bound1"):
            rules.per_partition_vector(op, role, getattr(op, role), parts)
            _dtype_in(op, role, (dtypes.float32,), "float32")
        c = _const_float(op.on_false_value)
        if c is not None and np.float32(c) != np.float32(FP32_MIN):
            raise VerifyException(f"{rules.api(op)}: on_false_value={c!r} is not supported; the "
                                  f"hardware only fills with FP32_MIN (-3.4028235e+38)")
        _verify_reduce_res(op)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.on_true_tile, "on_true_tile")
        check_elems(op, dst, ("on_true_tile", src))
        P, F = dst.parts, dst.free
        c0, c1 = prop_str(op, "comp_op0", ""), prop_str(op, "comp_op1", "")
        for name in (c0, c1):
            if name not in _CMP:
                raise error_at(op, f"{op.name}: comparison {name!r} is not supported (expected "
                                   f"one of {', '.join(_CMP)})", NKIRuntimeError)
        f0, f1 = _CMP[c0], _CMP[c1]
        g0 = dec.scalar(op, op.bound0, "bound0", (P, F))
        g1 = dec.scalar(op, op.bound1, "bound1", (P, F))
        fill = dec.scalar(op, op.on_false_value, "on_false_value", (P, F))
        idx = (np.float32(prop_int(op, "range_start", 0))
               + np.arange(F, dtype=np.float32)).reshape(1, F)
        read, d, store = reader(src, (P, F)), dst.slot, nm.make_store(dst.dtype)
        update, rr = accumulator(dec, op, P, "reset_reduce")

        def run(env):
            keep = f0(idx, g0(env)) & f1(idx, g1(env))
            vals = np.where(keep, read(env), fill(env)).astype(np.float32, copy=False)
            store(env[d], vals.reshape(dst.shape))
            update(env, vals)
        return finish(op, run, dst, rr)
