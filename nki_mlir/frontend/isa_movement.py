"""Frontend handlers for ``nki.isa`` instructions not yet moved to a definition
(``nki_mlir/instructions``): dma_transpose, dma_compute.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Handlers check the kinds of the arguments; shapes, memories, dtypes and limits are the op
verifiers' job (:mod:`nki_mlir.dialects.isa_movement`), reported at the call's line.
"""
from __future__ import annotations

from ..dialects import isa_movement as mv
from ..dialects.nki import ALU_OPS
from ..errors import NKITypeError
from . import args as A
from .builtins import Builtin, handles
from .values import Tensor


def _int(cg, api: str, role: str, v, optional: bool = False) -> int | None:
    return None if v is None and optional else A.strict_int(cg, api, role, v)


def _ints(cg, api: str, role: str, v) -> list[int]:
    return A.strict_ints(cg, api, role, v)


def _priority(cg, api: str, priority) -> int | None:
    return _int(cg, api, "priority", priority, optional=True)


@handles("nisa.dma_transpose")
def dma_transpose(cg, dst, src, axes=None, priority=None, dge_mode=None, oob_mode=None, name=None):
    """``dst = src.transpose(axes)`` through a DMA queue; ``axes`` defaults by rank."""
    api = "nisa.dma_transpose"
    d, s = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "src", src)
    A.emit(cg, mv.DmaTransposeOp, {"dst": d.value, "src": s.value},
           {"axes": None if axes is None else _ints(cg, api, "axes", axes),
            "priority": _priority(cg, api, priority),
            "dge_mode": A.enum_name(cg, api, "dge_mode", dge_mode, "dge_mode"),
            "oob_mode": A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode")})


@handles("nisa.dma_compute")
def dma_compute(cg, dst, srcs, reduce_op=None, scales=None, unique_indices=True, oob_mode=None,
                name=None):
    """``dst = sum_i srcs[i] * scales[i]`` through a DMA queue (``reduce_op`` must be nl.add).

    The NKI 0.2 positional order ``(dst, srcs, scales, reduce_op)`` is recognised too.
    """
    api = "nisa.dma_compute"
    if isinstance(reduce_op, (list, tuple)) and (scales is None or isinstance(scales, Builtin)):
        reduce_op, scales = scales, reduce_op  # 0.2 order
    if reduce_op is None:
        raise cg.b.error(f"{api}: reduce_op is required (nl.add)", NKITypeError)
    d = A.tensor(cg, api, "dst", dst)
    if isinstance(srcs, Tensor) or not isinstance(srcs, (list, tuple)):
        raise cg.b.error(f"{api}: srcs must be a list of tensors, got {srcs!r}", NKITypeError)
    ss = [A.tensor(cg, api, f"srcs[{i}]", s).value for i, s in enumerate(srcs)]  # type: ignore[union-attr]
    sc = None
    if scales is not None:
        if not isinstance(scales, (list, tuple)) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in scales):
            raise cg.b.error(f"{api}: scales must be a list of compile-time numbers, got {scales!r}",
                             NKITypeError)
        sc = [float(x) for x in scales]
    A.emit(cg, mv.DmaComputeOp, {"dst": d.value, "srcs": ss},
           {"reduce_op": A.op_token(cg, api, "reduce_op", reduce_op, ALU_OPS), "scales": sc,
            "unique_indices": None if unique_indices in (True, None) else bool(unique_indices),
            "oob_mode": A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode")})
