"""Closure builders for select_reduce, range_select, and helpers the
search and select definitions (``nki_mlir/instructions/search.py``, ``select.py``) share.

Semantics: nki.isa API reference (nki/api/nki/isa) and the NKI 0.6 ``nki.isa`` API page.  Where the docs
leave a detail open, this is the reading implemented (and tested):

- VectorE values are compared and selected in float32 and cast once to the ``dst`` dtype
  (:func:`.numerics.make_store`).
- ``reverse_pred`` negates the predicate's truth value (``predicate == 0`` selects).
- Accumulators (``select_reduce``, ``range_select``): the VectorE per-lane fp32 registers
  (:class:`~.program.State` ``dve_acc``, lane = partition of the tile).  ``reset`` sets
  them to -inf (the max identity), ``reset_reduce`` to the row max of this instruction,
  ``reduce`` takes the max with it, ``idle`` leaves them alone.  The max is taken over the
  float32 selected values *before* the cast to ``dst`` (so a full row of FP32_MIN gives
  FP32_MIN even into a bf16 ``dst``, as the range_select docs describe).  ``reduce_res``
  (``[P, 1]``) receives the registers after the update.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects.common import prop_flag, prop_int, prop_str
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Buf, check_elems, finish, reader

if TYPE_CHECKING:
    from .decoder import Decoder

_CMP = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal,
        "greater": np.greater, "greater_equal": np.greater_equal}
_FP32_MIN = np.float32(-3.4028235e38)


def raw_rows(b: Buf):
    """A getter for ``b``'s raw values as ``[P, free]`` (a copy only when the view is strided)."""
    s, shape = b.slot, (b.parts, b.free)
    return lambda env: env[s].reshape(shape)


def all_ones(dt: np.dtype) -> int:
    return int(np.iinfo(dt).max)


# ----------------------------------------------------------------------- accumulators


def _accumulator(dec: Decoder, op, parts: int, default_cmd: str):
    """``update(env, values[P, F] float32)``: the VectorE max-accumulator and reduce_res readout."""
    cmd = prop_str(op, "reduce_cmd", default_cmd)
    rop = prop_str(op, "reduce_op", "maximum")
    if rop != "maximum":
        raise error_at(op, f"{op.name}: reduce_op={rop} is not supported (only maximum)", NKIRuntimeError)
    if cmd not in ("idle", "reset", "reduce", "reset_reduce"):
        raise error_at(op, f"{op.name}: reduce_cmd={cmd} is not supported (expected idle, reset, "
                           f"reduce or reset_reduce)", NKIRuntimeError)
    rr = dec.buf(op, op.reduce_res, "reduce_res") if op.reduce_res is not None else None
    if rr is not None and (rr.parts != parts or rr.free != 1):
        raise error_at(op, f"{op.name}: 'reduce_res' must be [{parts}, 1], got {list(rr.shape)}",
                       NKIRuntimeError)
    rr_store = nm.make_store(rr.dtype) if rr is not None else None

    def update(env, values):
        acc = env[STATE].dve_acc
        if cmd == "reset":
            acc[:parts] = -np.inf
        elif cmd != "idle":
            row = np.max(values, axis=1) if values.shape[1] else np.full(parts, -np.inf, np.float32)
            acc[:parts] = row if cmd == "reset_reduce" else np.maximum(acc[:parts], row)
        if rr is not None:
            rr_store(env[rr.slot], acc[:parts].reshape(rr.shape))
    return update, rr


# ----------------------------------------------------------------------- VectorE


def select_reduce(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    pred, tru = dec.buf(op, op.predicate, "predicate"), dec.buf(op, op.on_true, "on_true")
    check_elems(op, dst, ("predicate", pred), ("on_true", tru))
    P, F = dst.parts, dst.free
    rp, rt = raw_rows(pred), reader(tru, (P, F))
    gf = dec.scalar(op, op.on_false, "on_false", (P, F))
    rev, d, store = prop_flag(op, "reverse_pred"), dst.slot, nm.make_store(dst.dtype)
    update, rr = _accumulator(dec, op, P, "idle")

    def run(env):
        mask = rp(env) != 0
        if rev:
            mask = ~mask
        vals = np.where(mask, rt(env), gf(env)).astype(np.float32, copy=False)
        store(env[d], vals.reshape(dst.shape))
        update(env, vals)
    return finish(op, run, dst, rr)


def range_select(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.on_true_tile, "on_true_tile")
    check_elems(op, dst, ("on_true_tile", src))
    P, F = dst.parts, dst.free
    c0, c1 = prop_str(op, "comp_op0", ""), prop_str(op, "comp_op1", "")
    for name in (c0, c1):
        if name not in _CMP:
            raise error_at(op, f"{op.name}: comparison {name!r} is not supported (expected one of "
                               f"{', '.join(_CMP)})", NKIRuntimeError)
    f0, f1 = _CMP[c0], _CMP[c1]
    g0 = dec.scalar(op, op.bound0, "bound0", (P, F))
    g1 = dec.scalar(op, op.bound1, "bound1", (P, F))
    fill = dec.scalar(op, op.on_false_value, "on_false_value", (P, F))
    idx = (np.float32(prop_int(op, "range_start", 0)) + np.arange(F, dtype=np.float32)).reshape(1, F)
    read, d, store = reader(src, (P, F)), dst.slot, nm.make_store(dst.dtype)
    update, rr = _accumulator(dec, op, P, "reset_reduce")

    def run(env):
        keep = f0(idx, g0(env)) & f1(idx, g1(env))
        vals = np.where(keep, read(env), fill(env)).astype(np.float32, copy=False)
        store(env[d], vals.reshape(dst.shape))
        update(env, vals)
    return finish(op, run, dst, rr)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.select_reduce": select_reduce,
    "nisa.range_select": range_select,
}
