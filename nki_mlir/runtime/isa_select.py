"""Helpers the search and select definitions (``nki_mlir/instructions/search.py``,
``select.py``) share: raw predicate rows and the VectorE accumulators.

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
from ..dialects.common import prop_str
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Buf

if TYPE_CHECKING:
    from .decoder import Decoder



def raw_rows(b: Buf):
    """A getter for ``b``'s raw values as ``[P, free]`` (a copy only when the view is strided)."""
    s, shape = b.slot, (b.parts, b.free)
    return lambda env: env[s].reshape(shape)


def all_ones(dt: np.dtype) -> int:
    return int(np.iinfo(dt).max)


# ----------------------------------------------------------------------- accumulators


def accumulator(dec: Decoder, op, parts: int, default_cmd: str):
    """``(update, reduce_res)``: ``update(env, values[P, F] float32)`` applies ``op``'s
    ``reduce_cmd`` (``default_cmd`` when absent) to the VectorE max-accumulators and writes
    ``reduce_res``, the :class:`~.env.Buf` of that operand (None when absent)."""
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
