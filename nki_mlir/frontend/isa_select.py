"""Frontend handlers for ``nki.isa`` instructions not yet moved to a definition
(``nki_mlir/instructions``): select_reduce, range_select.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Each handler checks the kinds of its arguments (tensor / number / op token / enum /
compile-time int) and emits one ``nki`` op; shape, memory, dtype and target rules are the
op verifiers' (:mod:`nki_mlir.dialects.isa_select`), reported at the call's line.
"""
from __future__ import annotations

import numpy as np

from ..dialects import isa_select as S
from ..errors import NKITypeError
from . import args as A
from .builtins import handles


def _tensors(cg, api: str, **roles) -> dict:
    return {r: A.tensor(cg, api, r, v).value for r, v in roles.items()}


def _opt_tensor(cg, api: str, role: str, v):
    t = A.tensor(cg, api, role, v, optional=True)
    return None if t is None else t.value


def _reduce_props(cg, api: str, reduce_cmd, reduce_op, default_cmd: str) -> dict:
    cmd = A.enum_name(cg, api, "reduce_cmd", reduce_cmd, "reduce_cmd", default_cmd)
    if cmd not in S.SELECT_REDUCE_CMDS:
        raise cg.b.error(f"{api}: reduce_cmd={cmd} is not supported (expected one of: "
                         f"{', '.join(S.SELECT_REDUCE_CMDS)}; there is no reduce_init to load)",
                         NKITypeError)
    rop = "maximum" if reduce_op is None else A.op_token(cg, api, "reduce_op", reduce_op, ("maximum",))
    return {"reduce_cmd": cmd, "reduce_op": rop}


@handles("nisa.select_reduce")
def select_reduce(cg, dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=None,
                  reduce_op=None, reverse_pred=False, name=None):
    """``dst = where(predicate (xor reverse_pred), on_true, on_false)`` with an optional
    max-reduce into the VectorE accumulators.  Our reading: ``reduce_cmd`` defaults to
    ``idle`` as in NKI 0.6, and ``idle`` together with a ``reduce_res`` means
    ``reset_reduce`` (the docs' NumPy equivalent computes ``max(result)`` into
    ``reduce_res``)."""
    api = "nisa.select_reduce"
    ops = _tensors(cg, api, dst=dst, predicate=predicate, on_true=on_true)
    ops["on_false"] = A.tile_or_scalar(cg, api, "on_false", on_false)
    ops["reduce_res"] = _opt_tensor(cg, api, "reduce_res", reduce_res)
    props = _reduce_props(cg, api, reduce_cmd, reduce_op, "idle")
    if ops["reduce_res"] is not None and props["reduce_cmd"] == "idle":
        props["reduce_cmd"] = "reset_reduce"
    props["reverse_pred"] = bool(reverse_pred) or None
    A.emit(cg, S.SelectReduceOp, ops, props)


@handles("nisa.range_select")
def range_select(cg, dst, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=None,
                 reduce_res=None, reduce_op=None, range_start=0, on_false_value=S.FP32_MIN,
                 name=None):
    """``dst = where(cmp0(idx, bound0) & cmp1(idx, bound1), on_true_tile, FP32_MIN)`` with
    ``idx = range_start + free index``; NeuronCore-v3+ (checked by the op verifier)."""
    api = "nisa.range_select"
    ops = _tensors(cg, api, dst=dst, on_true_tile=on_true_tile, bound0=bound0, bound1=bound1)
    fill = A.const_float(cg, api, "on_false_value", on_false_value)
    if np.float32(fill) != np.float32(S.FP32_MIN):
        raise cg.b.error(f"{api}: on_false_value={fill!r} is not supported; the hardware only "
                         f"fills with FP32_MIN (-3.4028235e+38)", NKITypeError)
    ops["on_false_value"] = A.tile_or_scalar(cg, api, "on_false_value", float(np.float32(fill)))
    ops["reduce_res"] = _opt_tensor(cg, api, "reduce_res", reduce_res)
    props = _reduce_props(cg, api, reduce_cmd, reduce_op, "reset_reduce")
    if ops["reduce_res"] is not None and props["reduce_cmd"] == "idle":
        props["reduce_cmd"] = "reset_reduce"  # as select_reduce: reduce_res means a reduction
    props["comp_op0"] = A.op_token(cg, api, "comp_op0", comp_op0, S.RANGE_CMPS)
    props["comp_op1"] = A.op_token(cg, api, "comp_op1", comp_op1, S.RANGE_CMPS)
    props["range_start"] = A.const_int(cg, api, "range_start", range_start)
    A.emit(cg, S.RangeSelectOp, ops, props)
