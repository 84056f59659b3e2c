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
    """``dst = src.transpose(axes)`` through a DMA queue; ``axes`` defaults by rank.

    An indirect ``src`` (``hbm_tensor.ap(pattern, vector_offset=idx, indirect_dim=0)``) is
    the documented gather-transpose: ``gathered = src[idx[:, 0], ...]``, ``dst =
    gathered.transpose(axes)`` (see :func:`_gather_transpose`).
    """
    api = "nisa.dma_transpose"
    if isinstance(src, Tensor) and src.indirect is not None:
        _gather_transpose(cg, api, dst, src, axes, priority, dge_mode, oob_mode)
        return
    d, s = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "src", src)
    A.emit(cg, mv.DmaTransposeOp, {"dst": d.value, "src": s.value},
           {"axes": None if axes is None else _ints(cg, api, "axes", axes),
            "priority": _priority(cg, api, priority),
            "dge_mode": A.enum_name(cg, api, "dge_mode", dge_mode, "dge_mode"),
            "oob_mode": A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode")})


def _gather_transpose(cg, api: str, dst, src: Tensor, axes, priority, dge_mode, oob_mode) -> None:
    """Indirect ``nisa.dma_transpose`` (a software-DGE ``dma_gather_transpose``).

    nki.isa API reference (nki/api/nki/isa, ``dma_transpose``, "DMA Indirect Transpose
    Constraints"): ``flat_indices = indices.T.flatten()[:src.shape[0]]``, ``gathered =
    src[flat_indices, :]``, ``dst = gathered.T`` -- with ``indices`` ``[P, 1]`` (the only
    form ``ap(vector_offset=...)`` builds) this is ``gathered[i] = table[indices[i, 0]]``.
    It is emitted as that gather (``nisa.dma_copy`` of the indirect view into a private HBM
    tensor of ``src``'s shape) followed by a direct ``nisa.dma_transpose`` of it into
    ``dst``, so the numbers are those of the instruction; the cost model sees two DMAs.

    Raises NKITypeError (located at the call) for what the page forbids: a ``src`` dtype not
    2 bytes wide, ``src.shape[-1] > 128``, ``src.shape[0]`` not a multiple of 16, a 4-D
    ``src`` with both dims 1 and 2 longer than 1, a ``dge_mode`` other than ``unknown`` /
    ``swdge``, a target before trn2; and ``oob_mode=skip``, which nki-mlir does not support
    for a gather-transpose (an out-of-bounds index is an error, the default mode).
    """
    from ..targets import GENERATION
    from .lang_calls import new_tensor
    from .tensor_ap import emit_indirect_dma
    from ..dialects import nki as nki_d
    d = A.tensor(cg, api, "dst", dst)
    mode = A.enum_name(cg, api, "dge_mode", dge_mode, "dge_mode")
    oob = A.enum_name(cg, api, "oob_mode", oob_mode, "oob_mode")
    shape = tuple(src.shape)

    def bad(msg: str):
        raise cg.b.error(f"{api}: indirect 'src' (a gather-transpose): {msg}", NKITypeError)

    if GENERATION[cg.b.target] < GENERATION["trn2"]:
        bad(f"needs trn2 (NeuronCore-v3) or newer, but the target is {cg.b.target}")
    if mode not in (None, "unknown", "swdge"):
        bad(f"dge_mode={mode} is not allowed (only unknown or swdge)")
    if oob == "skip":
        bad("oob_mode=skip is not supported by nki-mlir for a gather-transpose; use the "
            "default oob_mode=error")
    if src.dtype not in mv.TWO_BYTE:
        bad(f"'src' must have a 2-byte dtype (bfloat16, float16, int16, uint16), got "
            f"{src.dtype}")
    if len(shape) not in (2, 3, 4):
        bad(f"'src' has rank {len(shape)}; dma_transpose supports ranks 2, 3 and 4")
    if shape[-1] > 128:
        bad(f"src.shape[-1] must be <= 128, got {shape[-1]}")
    if shape[0] % 16:
        bad(f"src.shape[0] must be divisible by 16, got {shape[0]}")
    if len(shape) == 4 and shape[1] != 1 and shape[2] != 1:
        bad(f"a 4-D 'src' needs src.shape[1] or src.shape[2] to be 1, got {list(shape)}")
    gathered = new_tensor(cg, nki_d.NdarrayOp, shape, src.dtype, "private_hbm",
                          "gather_transpose_src")
    emit_indirect_dma(cg, api, gathered, src, oob, None if mode == "unknown" else mode)
    A.emit(cg, mv.DmaTransposeOp, {"dst": d.value, "src": gathered.value},
           {"axes": None if axes is None else _ints(cg, api, "axes", axes),
            "priority": _priority(cg, api, priority), "dge_mode": None, "oob_mode": None})


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
