"""Frontend handlers for ``nki.isa`` instructions: each emits one ``nki`` dialect op.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Each handler checks the kinds of its arguments (tensor / number / op token / enum) and
leaves shape, memory and dtype rules to the op verifiers, which report at the call's line.
"""
from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ..dialects import nki
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .values import Index


def _dst_data(cg, api: str, cls, dst, data, engine, src_role: str = "data") -> None:
    """An instruction of the form ``f(dst, data, engine)``."""
    d, x = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, src_role, data)
    A.emit(cg, cls, {"dst": d.value, src_role: x.value}, {"engine": A.engine(cg, api, engine)})


@handles("nisa.dma_copy")
def dma_copy(cg, dst, src, dst_rmw_op=None, oob_mode=None, dge_mode=None, engine=None,
             name=None, priority=None, unique_indices=True):
    api = "nisa.dma_copy"
    if dst_rmw_op is not None:
        raise cg.b.error(f"{api}: dst_rmw_op was removed in NKI 0.3; use nisa.dma_compute", NKITypeError)
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)
                                 or not 0 <= priority <= 3):
        raise cg.b.error(f"{api}: priority must be a DMA QoS level 0..3, got {priority!r}", NKITypeError)
    d, s = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "src", src)
    if d.indirect is not None or s.indirect is not None:  # gather / scatter (tensor_ap.py)
        from .tensor_ap import emit_indirect_dma
        return emit_indirect_dma(cg, api, d, s, A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode"),
                                 A.enum_name(cg, api, "dge_mode", dge_mode, "dge_mode"))
    mode, eng = A.enum_name(cg, api, "dge_mode", dge_mode, "dge_mode"), A.engine(cg, api, engine)
    if eng is not None and mode != "hwdge":
        raise cg.b.error(f"{api}: engine={eng} is only valid with dge_mode=hwdge (it picks the "
                         f"sync or scalar queue that drives the hardware DGE)", NKITypeError)
    A.emit(cg, nki.DmaCopyOp, {"dst": d.value, "src": s.value},
           {"oob_mode": A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode"),
            "dge_mode": mode, "engine": eng})


@handles("nisa.tensor_copy")
def tensor_copy(cg, dst, src, engine=None, name=None, dtype=None):
    """``nisa.tensor_copy(dst, src, engine)``: copy ``src`` into ``dst`` converting to
    ``dst.dtype`` (nki/api/generated/nki.isa.tensor_copy.rst).

    ``dtype=`` is the legacy (NKI 0.x) spelling of the result dtype that tutorial kernels
    still pass next to ``dst=``: it must name an NKI dtype (else a located ``NKITypeError``)
    and is otherwise ignored, because the copy always converts to ``dst.dtype``."""
    api = "nisa.tensor_copy"
    if dtype is not None:
        from .lang_calls import _dtype
        _dtype(cg, api, dtype)
    _dst_data(cg, api, nki.TensorCopyOp, dst, src, engine, src_role="src")


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


@handles("nisa.nc_matmul")
def nc_matmul(cg, dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=(), tile_size=(), perf_mode=None,
              name=None):
    """``dst[M,N] (+)= stationary[K,M]^T @ moving[K,N]``.  ``is_stationary_onezero`` /
    ``is_moving_onezero`` are performance hints only (kept on the nki op, no effect on results);
    shape, dtype, tiling and target rules are checked by the op verifier (``matmul_rules.matmul``)."""
    api = "nisa.nc_matmul"
    ops = {r: A.tensor(cg, api, r, v).value
           for r, v in (("dst", dst), ("stationary", stationary), ("moving", moving))}
    perf = A.enum_name(cg, api, "perf_mode", perf_mode, "matmul_perf_mode", "none")
    A.emit(cg, nki.NcMatmulOp, ops,
           {"accumulate": None if accumulate is None else _flag(cg, api, "accumulate", accumulate),
            "is_transpose": _flag(cg, api, "is_transpose", is_transpose) or None,
            "tile_position": A.tile_pair(cg, api, "tile_position", tile_position),
            "tile_size": A.tile_pair(cg, api, "tile_size", tile_size),
            "perf_mode": None if perf == "none" else perf,
            "is_stationary_onezero": _flag(cg, api, "is_stationary_onezero", is_stationary_onezero) or None,
            "is_moving_onezero": _flag(cg, api, "is_moving_onezero", is_moving_onezero) or None})


def _flag(cg, api: str, role: str, v) -> bool:
    """A compile-time bool argument."""
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise cg.b.error(f"{api}: {role} must be a compile-time bool, got {v!r}", NKITypeError)


@handles("nisa.nc_transpose")
def nc_transpose(cg, dst, data, engine=None, name=None):
    _dst_data(cg, "nisa.nc_transpose", nki.NcTransposeOp, dst, data, engine)


@handles("nisa.get_nc_sub_version")
def get_nc_sub_version(cg):
    """The silicon revision within the target's generation: 0 (nki-mlir models the first)."""
    return 0


@handles("nisa.get_nc_version")
def get_nc_version(cg):
    from ..targets import GENERATION
    from .isa_enums import nc_version
    return getattr(nc_version, f"gen{GENERATION[cg.b.target]}")
