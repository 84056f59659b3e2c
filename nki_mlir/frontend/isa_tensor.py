"""Frontend handlers for ``nki.isa`` instructions: nc_matmul_mx, quantize_mx.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Shape, dtype, tiling and target rules (trn3 only) are checked by the op verifiers in
:mod:`nki_mlir.dialects.isa_tensor`, which report at the call's line.
"""
from __future__ import annotations

import numpy as np

from ..dialects import isa_tensor as T
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .values import Index


def tile_pair(cg, api: str, role: str, v) -> list[int] | None:
    """``tile_position`` / ``tile_size``: ``()`` or None -> None, else a pair of compile-time ints.

    Loop-index (affine) expressions are not supported: the tile must be known at compile time.
    """
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return None
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise cg.b.error(f"{api}: {role} must be a (row, column) pair of integers, got {v!r}", NKITypeError)
    out = []
    for x in v:
        if isinstance(x, Index) and not x.terms:
            x = x.const
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            what = "a loop index expression" if isinstance(x, Index) else repr(x)
            raise cg.b.error(f"{api}: {role} entries must be compile-time integers, got {what}",
                             NKITypeError)
        out.append(int(x))
    return out


@handles("nisa.nc_matmul_mx")
def nc_matmul_mx(cg, dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                 tile_size=None, accumulate=None, name=None):
    api = "nisa.nc_matmul_mx"
    roles = (("dst", dst), ("stationary", stationary), ("moving", moving),
             ("stationary_scale", stationary_scale), ("moving_scale", moving_scale))
    ops = {r: A.tensor(cg, api, r, v).value for r, v in roles}
    if accumulate is not None and not isinstance(accumulate, (bool, np.bool_)):
        raise cg.b.error(f"{api}: accumulate must be True, False or None, got {accumulate!r}", NKITypeError)
    A.emit(cg, T.NcMatmulMxOp, ops,
           {"tile_position": tile_pair(cg, api, "tile_position", tile_position),
            "tile_size": tile_pair(cg, api, "tile_size", tile_size),
            "accumulate": None if accumulate is None else bool(accumulate)})


@handles("nisa.quantize_mx")
def quantize_mx(cg, dst, src, dst_scale, name=None):
    api = "nisa.quantize_mx"
    ops = {r: A.tensor(cg, api, r, v).value for r, v in (("dst", dst), ("src", src), ("dst_scale", dst_scale))}
    A.emit(cg, T.QuantizeMxOp, ops)
