"""DMA instructions beyond dma_copy: dma_transpose (direct and indirect forms), dma_compute.

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa):

- ``dma_transpose(dst, src, axes)``: DMA ``dst = src.transpose(axes)`` with axes ``(1, 0)``,
  ``(2, 1, 0)`` or ``(3, 1, 2, 0)`` by rank, bit-exact (equal dtypes; 2-byte with
  ``dge_mode=hwdge``, whose constraints the API page lists; the default ``unknown`` mode
  takes any dtype, as nki-library's kernels use it on float32); ``dst`` in SBUF.  An
  indirect ``src`` is the page's gather-transpose (:func:`_gather_transpose`).
- ``dma_compute(dst, srcs, reduce_op=add, scales)``: DMA ``dst = sum_i srcs[i] * scales[i]``
  accumulated in float32 in source order, each source read in flat element order, cast to
  ``dst``'s dtype (<= 16 sources, scales all 1.0).
"""
from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import HBM_SPACES, describe, dtype_of, prop_int, shape_of, space_of
from ..dialects.vector_rules import ALU_OPS
from ..dialects.ods import Engine, EnumProp, Flag, Int, IntList, OpToken, Tile
from ..dialects.ods_forms import Dma, FloatList, Tiles
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend import args as A
from ..frontend.builtins import Builtin
from ..frontend.values import Tensor
from ..runtime import numerics as nm
from ..runtime.env import f32_scratch, finish, scratch
from .define import instruction

#: dma_transpose permutation by source rank (the only ones the DMA engine supports)
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}
#: dtypes dma_transpose accepts with dge_mode=hwdge (2-byte elements only)
TWO_BYTE = (dtypes.bfloat16, dtypes.float16, dtypes.int16, dtypes.uint16)
DGE_MODES = ("unknown", "swdge", "hwdge", "none")
OOB_MODES = ("error", "skip")
#: at most this many dma_compute sources (NKI migration guide (nki/migration))
DMA_COMPUTE_MAX_SRCS = 16


def priority(op) -> None:
    """A DMA QoS ``priority`` property is 0..3."""
    p = prop_int(op, "priority")
    if p is not None and not 0 <= p <= 3:
        raise VerifyException(f"{rules.api(op)}: priority={p} is out of range (DMA QoS priority "
                              f"levels are 0..3, lower is higher priority)")


def endpoint(op, role: str, v: SSAValue, spaces: tuple[str, ...]) -> None:
    """A DMA operand: a tensor in ``spaces`` (HBM or SBUF; DMA cannot access PSUM)."""
    if not isinstance(v.type, MemRefType):
        raise VerifyException(f"{rules.api(op)}: operand '{role}' must be a tensor")
    sp = space_of(v)
    if sp not in spaces:
        extra = " (DMA cannot access PSUM)" if sp == "psum" else ""
        raise VerifyException(f"{rules.api(op)}: operand '{role}' is a tensor in {sp}, but this "
                              f"instruction only accepts {'/'.join(spaces)} tensors{extra}")
    if sp == "sbuf":
        rules.on_chip_shape(op, role, v)


# ---------------------------------------------------------------------- dma_transpose


def _gather_transpose(cg, api: str, a: dict) -> None:
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
    from ..dialects import nki as nki_d
    from ..frontend.lang_calls import new_tensor
    from ..frontend.tensor_ap import emit_indirect_dma
    from ..targets import GENERATION
    src = a["src"]
    A.tensor(cg, api, "dst", a["dst"])
    mode = A.enum_name(cg, api, "dge_mode", a["dge_mode"], "dge_mode")
    oob = A.enum_name(cg, api, "oob_mode", a["oob_mode"], "oob_mode")
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
    if src.dtype not in TWO_BYTE:
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
    a.update(src=gathered, dge_mode=None, oob_mode=None)


def _dma_transpose_call(cg, api: str, a: dict) -> None:
    """An indirect ``src`` (``hbm_tensor.ap(pattern, vector_offset=idx, indirect_dim=0)``)
    is the gather-transpose: the gather first, then the transpose of what it gathered."""
    if isinstance(a["src"], Tensor) and a["src"].indirect is not None:
        _gather_transpose(cg, api, a)


@instruction
class dma_transpose:
    """``dst = src.transpose(axes)`` on a DMA queue, bit-exact.

    ``src``: an HBM or SBUF tensor of rank 2, 3 or 4; ``axes``: ``(1, 0)``, ``(2, 1, 0)`` or
    ``(3, 1, 2, 0)`` by rank (the only permutations; None: that one); ``dst``: an SBUF
    tensor of the permuted shape and ``src``'s dtype.  ``dge_mode=hwdge`` (trn2+) needs a
    2-byte dtype, ``src.shape[0]`` 16 (2-D) or in (1, 2, 4, 8, 16) with ``src.shape[0] *
    src.shape[-2]`` a multiple of 16, and ``src.shape[-1] <= 128``.  ``priority``: a DMA QoS
    level 0..3.  An indirect ``src`` (``.ap(..., vector_offset=idx)``, trn2+) is a
    gather-transpose: ``dst = src_table[idx[:, 0]].T``.

    Raises ``NKITypeError`` for an ill-typed argument or an indirect ``src`` the API page
    forbids, and ``NKIVerifyError`` for another memory, rank, shape, dtype or mode.
    NKI docs: ``nki.isa.dma_transpose`` (nki/api/generated/nki.isa.dma_transpose).
    """

    dst = Tile(writes=True, spaces=None)
    src = Tile(spaces=None)
    axes = IntList(optional=True)
    priority = Int(default=None, strict=True)
    dge_mode = EnumProp(enum="dge_mode", allowed=DGE_MODES)
    oob_mode = EnumProp(enum="oob_mode", allowed=OOB_MODES)
    engine = Engine("dma", param=False)
    cost = Dma(srcs=("src",), transpose=True,
               source="DMABW, DMAOV with the DMA transpose efficiencies (ARCH3)")
    call = _dma_transpose_call
    full_writes = ("dst",)

    def verify(op):
        api = rules.api(op)
        endpoint(op, "dst", op.dst, ("sbuf",))
        endpoint(op, "src", op.src, (*HBM_SPACES, "sbuf"))
        priority(op)
        shape = shape_of(op.src)
        rank = len(shape)
        if rank not in TRANSPOSE_AXES:
            raise VerifyException(f"{api}: 'src' has rank {rank} ({describe(op.src)}); "
                                  f"dma_transpose supports ranks 2, 3 and 4")
        perm = TRANSPOSE_AXES[rank]
        axes = op.properties.get("axes")
        axes = None if axes is None else tuple(int(x.value.data) for x in axes.data)
        if axes is not None and axes != perm:
            raise VerifyException(f"{api}: axes={axes} is not supported for a rank-{rank} "
                                  f"'src'; the only permutation is {perm}")
        want = tuple(shape[a] for a in perm)
        if shape_of(op.dst) != want:
            raise VerifyException(f"{api}: 'dst' must have the permuted shape {list(want)} "
                                  f"(src {list(shape)} permuted by {perm}), got {describe(op.dst)}")
        rules.same_dtype(op, "dst", "src", "dma_transpose keeps the dtype")
        mode = op.properties.get("dge_mode")
        mode = mode.data if isinstance(mode, StringAttr) else "unknown"
        if mode in ("swdge", "none"):
            raise VerifyException(f"{api}: dge_mode={mode} is not supported for a direct "
                                  f"transpose (use unknown or hwdge; swdge is for an indirect "
                                  f"'src', the gather-transpose)")
        if mode == "hwdge":
            _hwdge(op, api, shape)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        perm = TRANSPOSE_AXES.get(len(src.shape))
        if perm is None or tuple(src.shape[a] for a in perm) != dst.shape or \
                dec.declared(dst) != dec.declared(src):
            raise error_at(op, f"{op.name}: 'dst' {list(dst.shape)} must be 'src' {list(src.shape)} "
                               f"permuted by {perm}, with the same dtype", NKIRuntimeError)
        d, s = dst.slot, src.slot

        def run(env):
            env[d][...] = env[s].transpose(perm)
        return finish(op, run, dst)


def _hwdge(op, api: str, shape: tuple[int, ...]) -> None:
    """The constraints of a ``dge_mode=hwdge`` transpose (the API page)."""
    rules.require_target(op, "trn2", "dge_mode=hwdge")
    if dtype_of(op.src) not in TWO_BYTE:
        raise VerifyException(f"{api}: with dge_mode=hwdge 'src' must have a 2-byte "
                              f"dtype (bfloat16, float16, int16, uint16), got "
                              f"{dtypes.name_of(dtype_of(op.src))}")
    p0, rank = shape[0], len(shape)
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


# ------------------------------------------------------------------------ dma_compute


def _dma_compute_call(cg, api: str, a: dict) -> None:
    """The NKI 0.2 positional order ``(dst, srcs, scales, reduce_op)`` is recognised too;
    ``reduce_op`` is required."""
    if isinstance(a["reduce_op"], (list, tuple)) and (a["scales"] is None or isinstance(a["scales"], Builtin)):
        a["reduce_op"], a["scales"] = a["scales"], a["reduce_op"]  # 0.2 order
    if a["reduce_op"] is None:
        raise cg.b.error(f"{api}: reduce_op is required (nl.add)", NKITypeError)


@instruction
class dma_compute:
    """``dst = sum_i srcs[i] * scales[i]`` on a DMA queue, in float32 in source order, cast
    to ``dst``'s dtype; each source is read in flat element order.

    ``dst`` / ``srcs``: HBM or SBUF tensors (DMA cannot access PSUM), 1 to 16 sources with
    ``dst``'s number of elements; ``reduce_op``: ``nl.add``; ``scales``: one number per
    source, all 1.0 (the DMA engine does not scale); ``unique_indices``, ``oob_mode``: as
    for ``dma_copy``.

    Raises ``NKITypeError`` for an ill-typed argument and ``NKIVerifyError`` for another
    memory, size, count, operator or scale.
    NKI docs: ``nki.isa.dma_compute`` (nki/api/generated/nki.isa.dma_compute).
    """

    dst = Tile(writes=True, spaces=None)
    srcs = Tiles(spaces=None)
    reduce_op = OpToken(allowed=ALU_OPS, optional=True)
    scales = FloatList()
    unique_indices = Flag(default=True)
    oob_mode = EnumProp(enum="oob_mode", allowed=OOB_MODES)
    engine = Engine("dma", param=False)
    cost = Dma(srcs=("srcs",), sum_srcs=True, source="DMABW, DMAOV over the bytes of every source")
    call = _dma_compute_call
    beta1_result = False

    def verify(op):
        api = rules.api(op)
        n = len(op.srcs)
        if not 1 <= n <= DMA_COMPUTE_MAX_SRCS:
            raise VerifyException(f"{api}: 'srcs' has {n} tensors; dma_compute takes 1 to "
                                  f"{DMA_COMPUTE_MAX_SRCS} sources")
        if op.reduce_op is None:
            raise VerifyException(f"{api}: reduce_op is required (add)")
        rules.enum(op, "reduce_op", ("add",))
        spaces = (*HBM_SPACES, "sbuf")
        endpoint(op, "dst", op.dst, spaces)
        total = math.prod(shape_of(op.dst))
        for i, s in enumerate(op.srcs):
            endpoint(op, f"srcs[{i}]", s, spaces)
            if math.prod(shape_of(s)) != total:
                raise VerifyException(f"{api}: 'srcs[{i}]' has {math.prod(shape_of(s))} elements "
                                      f"but 'dst' has {total} (srcs[{i}] is {describe(s)}, dst is "
                                      f"{describe(op.dst)})")
        scales = op.properties.get("scales")
        if scales is not None:
            vals = []
            for x in scales.data:  # type: ignore[attr-defined]
                if not isinstance(x, (FloatAttr, IntegerAttr)):
                    raise VerifyException(f"{api}: scales must be a list of numbers, got {scales}")
                vals.append(float(x.value.data))
            if len(vals) != n:
                raise VerifyException(f"{api}: scales has {len(vals)} entries but there are "
                                      f"{n} sources")
            if any(v != 1.0 for v in vals):
                raise VerifyException(f"{api}: scales must all be 1.0 (the DMA engine does not "
                                      f"scale), got {vals}")

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        srcs = [dec.buf(op, v, f"srcs[{i}]") for i, v in enumerate(op.srcs)]
        total = math.prod(dst.shape)
        for i, b in enumerate(srcs):
            if math.prod(b.shape) != total:
                raise error_at(op, f"{op.name}: 'srcs[{i}]' has {math.prod(b.shape)} elements but "
                                   f"'dst' has {total}", NKIRuntimeError)
        scales = op.properties.get("scales")
        factors = [np.float32(1.0)] * len(srcs) if scales is None else \
            [np.float32(a.value.data) for a in scales.data]
        d, shape, store = dst.slot, dst.shape, nm.make_store(dst.dtype)
        slots = [b.slot for b in srcs]

        def run(env):   # (both temporaries are the state's scratch: no page faults per run)
            acc = scratch(env, shape, nm.F32)
            acc.fill(0.0)
            for s, f in zip(slots, factors):
                v = f32_scratch(env, env[s]).reshape(shape)
                if f != 1.0:
                    np.multiply(v, f, out=v)
                np.add(acc, v, out=acc)
            store(env[d], acc)
        return finish(op, run, dst)
