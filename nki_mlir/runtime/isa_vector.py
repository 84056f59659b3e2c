"""Helpers the closure builders of the Vector/Scalar-engine definitions
(``nki_mlir/instructions/vector.py``, ``accumulate.py``) share: ALU functions of NKI operator
tokens, accumulator lanes and the ``reduce_res`` read-out.

Operator tokens are the NKI spellings (``maximum``), mapped to the ALU tables through
``vector_rules.ARITH_OPS``.  Semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from ..diagnostics import error_at
from ..dialects.common import prop_str
from ..dialects.vector_rules import ARITH_OPS
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import Buf, reader

if TYPE_CHECKING:
    from .decoder import Decoder

F32 = np.float32


# ------------------------------------------------------------------------------ helpers


def alu(op: Operation, prop: str):
    """The float32 ALU function of the NKI token in ``prop``."""
    tok = prop_str(op, prop)
    fn = nm.ALU.get(ARITH_OPS.get(tok, tok))  # type: ignore[arg-type]
    if fn is None:
        raise error_at(op, f"{op.name}: {prop}={tok} is not supported by the interpreter",
                       NKIRuntimeError)
    return fn


def apply_op(fn, rev: bool, x, operand):
    """``x fn operand`` (``operand fn x`` when ``rev``)."""
    return fn(operand, x) if rev else fn(x, operand)


def lanes(v, P: int) -> np.ndarray:
    """A scalar or ``[P, 1...]`` operand value as ``[P]`` float32 accumulator lanes."""
    a = np.asarray(v, F32)
    return np.full(P, a, F32) if a.ndim == 0 else a.reshape(P)


def readout_writer(dec: Decoder, op: Operation, P: int):
    """``(buf, write(env, lanes))`` for an optional ``reduce_res[P, 1]``, else ``(None, None)``."""
    if op.reduce_res is None:
        return None, None
    rr = dec.buf(op, op.reduce_res, "reduce_res")
    if rr.parts != P or rr.free != 1:
        raise error_at(op, f"{op.name}: 'reduce_res' must be [{P}, 1], got {list(rr.shape)}",
                       NKIRuntimeError)
    slot, shape, store = rr.slot, rr.shape, nm.make_store(rr.dtype)

    def write(env, lanes):
        store(env[slot], lanes.reshape(shape))
    return rr, write


def flat(b: Buf):
    """Read ``b`` as float32 ``[P, n]`` (free dims flattened)."""
    return reader(b, (b.parts, b.free))
