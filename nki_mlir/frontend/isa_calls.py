"""Frontend handlers for ``nki.isa`` instructions: each emits one ``nki`` dialect op.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Each handler checks the kinds of its arguments (tensor / number / op token / enum) and
leaves shape, memory and dtype rules to the op verifiers, which report at the call's line.
"""
from __future__ import annotations

from xdsl.ir import SSAValue

from ..dialects import nki
from ..dialects.nki import ACTIVATIONS, ALU_OPS, REDUCE_OPS
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .values import Index, Tensor


def _dst_data(cg, api: str, cls, dst, data, engine, src_role: str = "data") -> None:
    """An instruction of the form ``f(dst, data, engine)``."""
    d, x = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, src_role, data)
    A.emit(cg, cls, {"dst": d.value, src_role: x.value}, {"engine": A.engine(cg, api, engine)})


@handles("nisa.tensor_tensor")
def tensor_tensor(cg, dst, data1, data2, op, engine=None, name=None):
    api = "nisa.tensor_tensor"
    ops = {r: A.tensor(cg, api, r, v).value for r, v in (("dst", dst), ("data1", data1), ("data2", data2))}
    A.emit(cg, nki.TensorTensorOp, ops,
           {"op": A.op_token(cg, api, "op", op, ALU_OPS), "engine": A.engine(cg, api, engine)})


@handles("nisa.tensor_scalar")
def tensor_scalar(cg, dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=None, name=None):
    api = "nisa.tensor_scalar"
    d, x = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "data", data)
    if (op1 is None) != (operand1 is None):
        raise cg.b.error(f"{api}: op1 and operand1 must be given together", NKITypeError)
    A.emit(cg, nki.TensorScalarOp,
           {"dst": d.value, "data": x.value,
            "operand0": A.tile_or_scalar(cg, api, "operand0", operand0),
            "operand1": A.tile_or_scalar(cg, api, "operand1", operand1, optional=True)},
           {"op0": A.op_token(cg, api, "op0", op0, ALU_OPS),
            "op1": None if op1 is None else A.op_token(cg, api, "op1", op1, ALU_OPS),
            "reverse0": bool(reverse0) or None, "reverse1": bool(reverse1) or None,
            "engine": A.engine(cg, api, engine)})


def _activation_common(cg, api, dst, op, data, bias, scale, reduce_res):
    d, x = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "data", data)
    return {"dst": d.value, "data": x.value,
            "bias": A.tile_or_scalar(cg, api, "bias", bias, optional=True),
            "scale": A.tile_or_scalar(cg, api, "scale", 1.0 if scale is None else scale),
            "reduce_res": None if reduce_res is None else A.tensor(cg, api, "reduce_res", reduce_res).value}, \
        A.op_token(cg, api, "op", op, ACTIVATIONS)


@handles("nisa.activation")
def activation(cg, dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=None, name=None):
    """``dst = op(data*scale + bias)``; with ``reduce_res`` the free-axis sum of the result is
    written to ``reduce_res`` (``reduce_cmd`` idle/absent with a ``reduce_res`` means
    reset_reduce, the NKI 0.2 behaviour)."""
    api = "nisa.activation"
    operands, tok = _activation_common(cg, api, dst, op, data, bias, scale, reduce_res)
    cmd = A.enum_name(cg, api, "reduce_cmd", reduce_cmd, "reduce_cmd", "idle")
    if reduce_res is not None and cmd == "idle":
        cmd = "reset_reduce"
    A.emit(cg, nki.ActivationOp, operands,
           {"op": tok,
            "reduce_op": None if reduce_op is None else A.op_token(cg, api, "reduce_op", reduce_op, ("add",)),
            "reduce_cmd": None if cmd == "idle" else cmd})


@handles("nisa.activation_reduce")
def activation_reduce(cg, dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    api = "nisa.activation_reduce"
    operands, tok = _activation_common(cg, api, dst, op, data, bias, scale, reduce_res)
    A.emit(cg, nki.ActivationReduceOp, operands,
           {"op": tok, "reduce_op": A.op_token(cg, api, "reduce_op", reduce_op, ("add",))})


@handles("nisa.tensor_reduce")
def tensor_reduce(cg, dst, op, data, axis, negate=False, keepdims=False, name=None):
    api = "nisa.tensor_reduce"
    d, x = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "data", data)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise cg.b.error(f"{api}: axis must be an int or a tuple of ints, got {axis!r}", NKITypeError)
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    A.emit(cg, nki.TensorReduceOp, {"dst": d.value, "data": x.value},
           {"op": A.op_token(cg, api, "op", op, REDUCE_OPS), "axis": list(axes),
            "negate": bool(negate) or None, "keepdims": bool(keepdims) or None})


@handles("nisa.reciprocal")
def reciprocal(cg, dst, data, engine=None, name=None):
    _dst_data(cg, "nisa.reciprocal", nki.ReciprocalOp, dst, data, engine)


def _check_memset_value(cg, api: str, d: Tensor, value) -> None:
    """NKI API common tables (nki/api/nki.api.shared) (item 26): the value's kind must match ``dst``'s dtype
    (an int literal in range for int tensors) and packed x4 tensors accept only 0."""
    import numpy as np

    from .. import dtypes
    if not isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        return  # tile_or_scalar reports the wrong kind
    dt = d.dtype
    if dt in dtypes.X4_VALUE:
        if value != 0:
            raise cg.b.error(f"{api}: dst is {dtypes.name_of(dt)}, a packed x4 type; memset accepts "
                             f"only the value 0 for it, got {value!r}", NKITypeError)
        return
    if dtypes.is_int(dt) and dt != dtypes.bool_:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise cg.b.error(f"{api}: dst is {dtypes.name_of(dt)}, so value must be an integer, got "
                             f"{value!r}", NKITypeError)
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise cg.b.error(f"{api}: value {value!r} is out of range for dst dtype "
                             f"{dtypes.name_of(dt)} [{info.min}, {info.max}]", NKITypeError)


@handles("nisa.memset")
def memset(cg, dst, value, engine=None, name=None):
    api = "nisa.memset"
    d = A.tensor(cg, api, "dst", dst)
    if isinstance(value, Tensor):
        raise cg.b.error(f"{api}: value must be a compile-time number", NKITypeError)
    _check_memset_value(cg, api, d, value)
    A.emit(cg, nki.MemsetOp, {"dst": d.value, "value": A.tile_or_scalar(cg, api, "value", value, dtype=d.dtype)},
           {"engine": A.engine(cg, api, engine)})


def _pattern(cg, api, pattern):
    try:
        pairs = [[int(s), int(c)] for s, c in pattern]
    except (TypeError, ValueError):
        raise cg.b.error(f"{api}: pattern must be a list of [step, count] pairs, got {pattern!r}", NKITypeError)
    return pairs


def _offset(cg, api: str, offset) -> tuple[int, SSAValue | None]:
    """An iota / affine_select ``offset``: (its constant part, an SSA ``index`` computing its
    loop-index part or None).  An offset may be an affine expression of loop indices."""
    if isinstance(offset, Index):
        rest = Index(offset.terms, 0)
        return offset.const, (cg.b.materialize(rest) if rest.terms else None)
    try:
        return int(offset), None
    except (TypeError, ValueError):
        raise cg.b.error(f"{api}: offset must be an int or an affine expression of loop "
                         f"indices, got {offset!r}", NKITypeError) from None


@handles("nisa.iota")
def iota(cg, dst, pattern, offset=0, channel_multiplier=0, name=None):
    api = "nisa.iota"
    d = A.tensor(cg, api, "dst", dst)
    const, dyn = _offset(cg, api, offset)
    A.emit(cg, nki.IotaOp, {"dst": d.value, "offset_index": dyn},
           {"pattern": _pattern(cg, api, pattern), "offset": const,
            "channel_multiplier": int(channel_multiplier)})


@handles("nisa.affine_select")
def affine_select(cg, dst, pattern, channel_multiplier, on_true_tile, on_false_value,
                  cmp_op=None, offset=0, name=None):
    api = "nisa.affine_select"
    d = A.tensor(cg, api, "dst", dst)
    t = A.tensor(cg, api, "on_true_tile", on_true_tile)
    cmp = "equal" if cmp_op is None else A.op_token(cg, api, "cmp_op", cmp_op,
                                                     ("equal", "not_equal", "greater", "greater_equal",
                                                      "less", "less_equal"))
    const, dyn = _offset(cg, api, offset)
    A.emit(cg, nki.AffineSelectOp,
           {"dst": d.value, "on_true_tile": t.value,
            "on_false_value": A.tile_or_scalar(cg, api, "on_false_value", float(on_false_value)),
            "offset_index": dyn},
           {"pattern": _pattern(cg, api, pattern), "offset": const,
            "channel_multiplier": int(channel_multiplier), "cmp_op": cmp})


@handles("nisa.get_nc_sub_version")
def get_nc_sub_version(cg):
    """The silicon revision within the target's generation: 0 (nki-mlir models the first)."""
    return 0


@handles("nisa.get_nc_version")
def get_nc_version(cg):
    from ..targets import GENERATION
    from .isa_enums import nc_version
    return getattr(nc_version, f"gen{GENERATION[cg.b.target]}")
