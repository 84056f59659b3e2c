"""Tensor-engine instructions: nc_transpose.

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the
NKI API common tables (nki/api/nki.api.shared).  ``nc_transpose`` is bit-exact on either
engine (the Tensor engine's identity matmul keeps the bits of every TensorE input dtype).
"""
from __future__ import annotations

import numpy as np

from ..diagnostics import error_at
from ..dialects import matmul_rules, rules
from ..dialects.ods import Engine, Formula, Tile
from ..errors import NKITypeError, NKIRuntimeError
from ..frontend.values import Tensor
from ..runtime.env import finish
from .define import instruction


def _transpose_result(cg, api, bound, dt):
    """The Beta 1 result of ``nc_transpose(data)``: ``[F, P]`` in PSUM (SBUF on Vector)."""
    t = bound.get("data")
    if not isinstance(t, Tensor) or t.ndim != 2:
        raise cg.b.error(f"{api}: data must be a 2-D tile", NKITypeError)
    eng = bound.get("engine")
    buf = "sbuf" if getattr(eng, "name", None) == "vector" else "psum"
    return (t.shape[1], t.shape[0]), dt or t.dtype, buf


@instruction
class nc_transpose:
    """``dst[f, p] = data[p, f]``: a 2-D transpose between the partition dim and the
    (flattened) free dims, bit-exact, on the Tensor engine (default) or the Vector engine.

    ``data``: ``[P, F]``; ``dst``: ``[F, P]`` of ``data``'s dtype.  Tensor engine: ``P``,
    ``F`` <= 128, ``data`` in SBUF of a TensorE input dtype, ``dst`` in PSUM (an identity
    matmul).  Vector engine: ``P``, ``F`` <= 32, SBUF or PSUM tiles of any dtype.

    Raises ``NKITypeError`` for a non-tile argument and ``NKIVerifyError`` for another
    shape, memory, dtype or engine.
    NKI docs: ``nki.isa.nc_transpose`` (nki/api/generated/nki.isa.nc_transpose).
    """

    dst = Tile(writes=True, spaces=None, whole=True)
    data = Tile(spaces=None)
    engine = Engine("tensor", vector="trn1")
    cost = Formula("transpose", roles=("data",),
                   source="ISA_OLD: tensor max(P, min(64, F)); vector: analogue tensor_copy (k=1)")
    beta1_result = _transpose_result

    def verify(op):
        matmul_rules.transpose(op, op.dst, op.data, rules.engine_of(op, "tensor"))

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        P, F = data.parts, data.free
        if dst.parts != F or dst.free != P:
            raise error_at(op, f"nisa.nc_transpose: 'dst' must be [{F}, {P}] (the transpose of "
                               f"'data'), got {list(dst.shape)}", NKIRuntimeError)
        d, s, shape = dst.slot, data.slot, dst.shape

        def run(env):
            # a contiguous copy first: transposing strided tile rows directly is ~4x slower
            env[d][...] = np.ascontiguousarray(env[s]).reshape(P, F).T.reshape(shape)
        return finish(op, run, dst)
