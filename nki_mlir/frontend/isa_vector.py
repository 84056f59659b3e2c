"""Frontend handlers for ``nki.isa`` instructions not yet moved to a definition
(``nki_mlir/instructions``): tensor_scalar_reduce, exponential, activate2.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Each handler checks the kinds of its arguments (tensor / number / op token / enum) and the
argument combinations the API forbids; shape, memory, dtype and target rules are the op
verifiers' (``dialects/isa_vector.py``), which report at the call's line.
"""
from __future__ import annotations

from typing import Any

from ..dialects import isa_vector as V
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .ods_calls import op_token
from .values import Tensor


def _op(cg, api: str, role: str, v: Any, allowed) -> str:
    return op_token(cg, api, role, v, allowed)


def _arith(cg, api: str, role: str, v: Any, allowed=V.ARITH) -> str:
    """An arithmetic ALU token; a bitvec one gets its own message."""
    return op_token(cg, api, role, v, allowed, arith=True)


def _tiles(cg, api: str, **roles: Any) -> dict:
    return {r: A.tensor(cg, api, r, v).value for r, v in roles.items()}


def _cmd(cg, api: str, v: Any, default: str) -> str:
    return A.enum_name(cg, api, "reduce_cmd", v, "reduce_cmd", default)


@handles("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(cg, dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                         reduce_cmd=None, reduce_init=None, reduce_res_negate=False, name=None):
    """``dst = data op0 operand0``; ``reduce_op`` over the free dims into the VectorE
    accumulators (``reduce_cmd`` default reset_reduce), read out into ``reduce_res``."""
    api = "nisa.tensor_scalar_reduce"
    if reverse0:
        raise cg.b.error(f"{api}: reverse0=True is not supported by tensor_scalar_reduce "
                         f"(the NKI API documents it as not supported yet)", NKITypeError)
    ops = _tiles(cg, api, dst=dst, data=data)
    ops["operand0"] = A.tile_or_scalar(cg, api, "operand0", 0.0 if operand0 is None else operand0)
    if reduce_res is not None:
        ops["reduce_res"] = A.tensor(cg, api, "reduce_res", reduce_res).value
    cmd = _cmd(cg, api, reduce_cmd, "reset_reduce")
    if reduce_init is not None:
        ops["reduce_init"] = A.tile_or_scalar(cg, api, "reduce_init", reduce_init)
    A.emit(cg, V.TensorScalarReduceOp, ops,
           {"op0": _arith(cg, api, "op0", op0),
            "reduce_op": _op(cg, api, "reduce_op", reduce_op, V.TSR_REDUCE_OPS),
            "reduce_cmd": None if cmd == "reset_reduce" else cmd,
            "reduce_res_negate": bool(reduce_res_negate) or None})


@handles("nisa.exponential")
def exponential(cg, dst, src, max_value=0.0, reduce_res=None, reduce_cmd=None, reduce_init=0.0,
                name=None):
    """trn3: ``dst = exp(src - max_value)`` with an optional running sum in the VectorE
    accumulators.  ``reduce_res`` with ``reduce_cmd`` idle means reset_reduce (as for
    ``nisa.activation``): reading out accumulators nothing has defined is never useful."""
    api = "nisa.exponential"
    ops = _tiles(cg, api, dst=dst, src=src)
    ops["max_value"] = A.tile_or_scalar(cg, api, "max_value", 0.0 if max_value is None else max_value)
    if reduce_res is not None:
        ops["reduce_res"] = A.tensor(cg, api, "reduce_res", reduce_res).value
    cmd = _cmd(cg, api, reduce_cmd, "idle")
    if cmd == "idle" and reduce_res is not None:
        cmd = "reset_reduce"
    if cmd == "load_reduce":
        ops["reduce_init"] = A.tile_or_scalar(cg, api, "reduce_init",
                                              0.0 if reduce_init is None else reduce_init)
    elif isinstance(reduce_init, Tensor) or (reduce_init is not None and reduce_init != 0.0):
        raise cg.b.error(f"{api}: reduce_init must be unset or 0.0 unless "
                         f"reduce_cmd=nisa.reduce_cmd.load_reduce (reduce_cmd is {cmd})",
                         NKITypeError)
    A.emit(cg, V.ExponentialOp, ops, {"reduce_cmd": None if cmd == "idle" else cmd})


@handles("nisa.activate2")
def activate2(cg, dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False,
              reverse1=False, reduce_op=None, reduce_res=None, reduce_cmd=None, name=None):
    """trn3: ``dst = op((data op0 imm0) op1 imm1, relu_param)`` with an optional reduction in
    the ScalarE accumulators.  ``reduce_res`` with ``reduce_cmd`` idle means reset_reduce
    (as for ``nisa.activation``)."""
    api = "nisa.activate2"
    ops = _tiles(cg, api, dst=dst, data=data)
    ops["imm0"] = A.tile_or_scalar(cg, api, "imm0", 0.0 if imm0 is None else imm0)
    ops["imm1"] = A.tile_or_scalar(cg, api, "imm1", 0.0 if imm1 is None else imm1)
    if isinstance(relu_param, Tensor) or (relu_param is not None and relu_param != 0.0):
        ops["relu_param"] = A.tile_or_scalar(cg, api, "relu_param", relu_param)
    if reduce_res is not None:
        ops["reduce_res"] = A.tensor(cg, api, "reduce_res", reduce_res).value
    cmd = _cmd(cg, api, reduce_cmd, "idle")
    if cmd == "idle" and reduce_res is not None:
        cmd = "reset_reduce"
    rop = None if reduce_op is None else _op(cg, api, "reduce_op", reduce_op, V.ACT2_REDUCE_OPS)
    if reduce_res is not None and rop is None:
        raise cg.b.error(f"{api}: reduce_res needs reduce_op (one of "
                         f"{', '.join('nl.' + o for o in V.ACT2_REDUCE_OPS)})", NKITypeError)
    A.emit(cg, V.Activate2Op, ops,
                    {"op": _op(cg, api, "op", op, V.ACT2_FUNCS),
                     "op0": _arith(cg, api, "op0", op0), "op1": _arith(cg, api, "op1", op1),
                     "reverse0": bool(reverse0) or None, "reverse1": bool(reverse1) or None,
                     "reduce_op": rop, "reduce_cmd": None if cmd == "idle" else cmd})
