"""DMA instructions defined declaratively: dma_transpose.

Semantics: the NKI ``nki.isa`` API page of the instruction (nki/api/nki.isa).  ``dst`` is
``src`` permuted by the one permutation the DMA engine supports for its rank, bit-exact
(equal dtypes).  With ``dge_mode=hwdge`` the API page's constraints apply (2-byte dtypes,
``src.shape[0]`` limits); the default ``unknown`` mode takes any dtype, as nki-library's
kernels use it on float32.  A DMA's cost is its transfer shape (``nki_mlir/perf/dma_costs.py``).
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import HBM_SPACES, describe, dtype_of, prop_int, shape_of
from ..dialects.isa_movement import DGE_MODES, OOB_MODES
from ..dialects.ods import Engine, EnumProp, Formula, Int, IntList, Tile
from ..errors import NKIRuntimeError
from ..runtime.env import finish
from .define import instruction

#: dma_transpose permutation by source rank (the only ones the DMA engine supports)
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}
#: dtypes dma_transpose accepts with dge_mode=hwdge (2-byte elements only)
TWO_BYTE = (dtypes.bfloat16, dtypes.float16, dtypes.int16, dtypes.uint16)


def _axes(op) -> list[int] | None:
    a = op.properties.get("axes")
    if a is None:
        return None
    out = []
    for x in a.data:
        if not isinstance(x, IntegerAttr):
            raise VerifyException(f"{rules.api(op)}: axes must be a list of integers, got {a}")
        out.append(int(x.value.data))
    return out


def _verify_hwdge(op, api: str, shape: tuple[int, ...]) -> None:
    rules.require_target(op, "trn2", "dge_mode=hwdge")
    if dtype_of(op.src) not in TWO_BYTE:
        raise VerifyException(f"{api}: with dge_mode=hwdge 'src' must have a 2-byte "
                              f"dtype (bfloat16, float16, int16, uint16), got "
                              f"{dtypes.name_of(dtype_of(op.src))}")
    rank, p0 = len(shape), shape[0]
    if rank == 2 and p0 != 16:
        raise VerifyException(f"{api}: with dge_mode=hwdge a 2-D 'src' needs "
                              f"src.shape[0] == 16, got {p0}")
    if rank > 2 and (p0 not in (1, 2, 4, 8, 16) or (p0 * shape[-2]) % 16 != 0):
        raise VerifyException(f"{api}: with dge_mode=hwdge a {rank}-D 'src' needs "
                              f"src.shape[0] in (1, 2, 4, 8, 16) and "
                              f"src.shape[0] * src.shape[-2] a multiple of 16, got "
                              f"{list(shape)}")
    if shape[-1] > 128:
        raise VerifyException(f"{api}: with dge_mode=hwdge src.shape[-1] must be at "
                              f"most 128, got {shape[-1]}")


@instruction
class dma_transpose:
    """``dst = src.transpose(axes)`` through a DMA queue.

    ``src``: an HBM or SBUF tensor of rank 2, 3 or 4; ``axes``: ``(1, 0)``, ``(2, 1, 0)`` or
    ``(3, 1, 2, 0)`` by rank (the default); ``dst``: an SBUF tile of the permuted shape and
    the same dtype.  ``dge_mode``: ``nisa.dge_mode.unknown`` (the default) or ``hwdge``
    (trn2 and newer: 2-byte dtypes, ``src.shape[0]`` 16 for 2-D, in (1, 2, 4, 8, 16) with
    ``src.shape[0] * src.shape[-2]`` a multiple of 16 otherwise, ``src.shape[-1] <= 128``).
    ``priority``: the DMA QoS level 0..3; ``oob_mode``: ``nisa.oob_mode`` member.

    Raises ``NKITypeError`` for non-integer ``axes`` / ``priority`` and ``NKIVerifyError``
    for another memory (DMA cannot access PSUM), rank, permutation, shape, dtype or mode.
    NKI docs: ``nki.isa.dma_transpose`` (nki/api/generated/nki.isa.dma_transpose).
    """

    dst = Tile(writes=True, spaces=("sbuf",), dma=True)
    src = Tile(spaces=(*HBM_SPACES, "sbuf"), dma=True)
    axes = IntList(optional=True)
    priority = Int(default=None, strict=True)
    dge_mode = EnumProp(enum="dge_mode", allowed=DGE_MODES)
    oob_mode = EnumProp(enum="oob_mode", allowed=OOB_MODES)
    engine = Engine("dma", param=False)
    cost = Formula("dma", source="DMABW, DMAOV, ARCH3: the transfer's shape over the DMA "
                                 "engines (transposes at 0.9 from HBM, 0.5 SBUF to SBUF)")

    def verify(op):
        api = rules.api(op)
        p = prop_int(op, "priority")
        if p is not None and not 0 <= p <= 3:
            raise VerifyException(f"{api}: priority={p} is out of range (DMA QoS priority "
                                  f"levels are 0..3, lower is higher priority)")
        shape = shape_of(op.src)
        rank = len(shape)
        if rank not in TRANSPOSE_AXES:
            raise VerifyException(f"{api}: 'src' has rank {rank} ({describe(op.src)}); "
                                  f"dma_transpose supports ranks 2, 3 and 4")
        perm = TRANSPOSE_AXES[rank]
        axes = _axes(op)
        if axes is not None and tuple(axes) != perm:
            raise VerifyException(f"{api}: axes={tuple(axes)} is not supported for a rank-{rank} "
                                  f"'src'; the only permutation is {perm}")
        want = tuple(shape[a] for a in perm)
        if shape_of(op.dst) != want:
            raise VerifyException(f"{api}: 'dst' must have the permuted shape {list(want)} "
                                  f"(src {list(shape)} permuted by {perm}), got {describe(op.dst)}")
        if dtype_of(op.dst) != dtype_of(op.src):
            raise VerifyException(f"{api}: 'dst' dtype {dtypes.name_of(dtype_of(op.dst))} differs "
                                  f"from 'src' dtype {dtypes.name_of(dtype_of(op.src))}; "
                                  f"dma_transpose keeps the dtype")
        mode = op.properties.get("dge_mode")
        mode = mode.data if isinstance(mode, StringAttr) else "unknown"
        if mode in ("swdge", "none"):
            raise VerifyException(f"{api}: dge_mode={mode} is not supported for a direct "
                                  f"transpose (use unknown or hwdge; swdge is the indirect "
                                  f"gather-transpose, which nki-mlir does not support yet)")
        if mode == "hwdge":
            _verify_hwdge(op, api, shape)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        perm = TRANSPOSE_AXES.get(len(src.shape))
        if perm is None or tuple(src.shape[a] for a in perm) != dst.shape or dst.dtype != src.dtype:
            raise error_at(op, f"{op.name}: 'dst' {list(dst.shape)} must be 'src' {list(src.shape)} "
                               f"permuted by {perm}, with the same dtype", NKIRuntimeError)
        d, s = dst.slot, src.slot

        def run(env):
            env[d][...] = env[s].transpose(perm)
        return finish(op, run, dst)
