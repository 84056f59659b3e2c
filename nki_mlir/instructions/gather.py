"""On-chip gathers and shuffles: nc_n_gather, local_gather (GpSimd), nc_stream_shuffle
(Vector engine).

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa).  Indices
outside the data (undefined on the hardware) are runtime faults in the interpreter, naming
the partition, position and value.  ``nc_stream_shuffle`` reads its source before writing
(in-place safe).
"""
from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerAttr
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import describe, dtype_of, free_size, prop_int, shape_of
from ..dialects.ods import Engine, Int, IntList, Stream, Tile
from ..errors import NKIRuntimeError
from ..runtime.env import Fault, check_elems, finish
from .define import instruction

#: partitions served by one GpSimd core (local_gather groups)
GPSIMD_GROUP = 16
#: local_gather limits
LOCAL_GATHER_ELEMS = (1, 2, 4, 8, 16, 32)
LOCAL_GATHER_MAX_INDICES = 4096
#: nc_stream_shuffle quadrant size and "keep dst" mask value
QUADRANT = 32
SHUFFLE_KEEP = 255


# ------------------------------------------------------------------------ nc_n_gather


@instruction
class nc_n_gather:
    """A per-partition gather on GpSimd: ``dst[p, j] = data[p].flat[indices[p, j]]``.

    ``dst`` / ``data`` / ``indices``: SBUF tiles with the same partition count; ``indices``
    uint32 in ``[0, F)`` (``F`` the elements per partition of ``data``) with one index per
    element of ``dst``; ``dst`` has ``data``'s dtype.

    Raises ``NKIVerifyError`` for another memory, dtype or shape, and ``NKIRuntimeError``
    for an index out of range.
    NKI docs: ``nki.isa.nc_n_gather`` (nki/api/generated/nki.isa.nc_n_gather).
    """

    dst = Tile(writes=True, spaces=("sbuf",), partitions_of=("data", "indices"))
    data = Tile(spaces=("sbuf",))
    indices = Tile(spaces=("sbuf",))
    engine = Engine("gpsimd", param=False)
    cost = Stream("dst", source="analogue: iota (GpSimd 150 + N over dst)")

    def verify(op):
        api = rules.api(op)
        rules.same_dtype(op, "dst", "data", "nc_n_gather does not cast")
        if dtype_of(op.indices) != dtypes.uint32:
            raise VerifyException(f"{api}: 'indices' must be uint32, got "
                                  f"{dtypes.name_of(dtype_of(op.indices))}")
        if free_size(op.dst) != free_size(op.indices):
            raise VerifyException(f"{api}: 'dst' must hold one element per index: 'indices' has "
                                  f"{free_size(op.indices)} per partition, 'dst' is {describe(op.dst)}")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        idx = dec.buf(op, op.indices, "indices")
        check_elems(op, dst, ("indices", idx))
        if data.parts != dst.parts or dec.declared(data) != dec.declared(dst):
            raise error_at(op, f"{op.name}: 'data' must have the partitions and dtype of 'dst'",
                           NKIRuntimeError)
        d, x, i = dst.slot, data.slot, idx.slot
        parts, f, n, shape = dst.parts, data.free, idx.free, dst.shape

        def run(env):
            ix = env[i].reshape(parts, n).astype(np.int64)
            bad = (ix < 0) | (ix >= f)
            if bad.any():
                p, j = (int(a[0]) for a in np.nonzero(bad))
                raise Fault(f"'indices' value {int(ix[p, j])} at partition {p}, position {j} is out "
                            f"of range [0, {f}) ('data' has {f} elements per partition); "
                            f"{int(bad.sum())} index(es) out of range in total")
            src = env[x].reshape(parts, f)
            env[d][...] = np.take_along_axis(src, ix, axis=1).reshape(shape)
        return finish(op, run, dst)


# ----------------------------------------------------------------------- local_gather


def local_gather_valid(op) -> int:
    """``num_valid_indices`` of a local_gather (default: every index of a 16-partition slice)."""
    n = prop_int(op, "num_valid_indices")
    return GPSIMD_GROUP * free_size(op.index) if n is None else n


@instruction
class local_gather:
    """A gather inside each 16-partition group on GpSimd (one GpSimd core per group).

    Core ``c`` flattens ``index[16c:16c+16]`` partition dim first into ``idx`` (uint16) and
    keeps the first ``num_valid_indices`` (default: all); every partition ``p`` of the group
    then gets ``dst[p].flat[k*E + e] = src_buffer[p].flat[idx[k] + e]`` for
    ``e < E = num_elem_per_idx`` (1, 2, 4, 8, 16 or 32).  All operands are SBUF tiles with
    the same partition count, a multiple of 16; ``dst`` has ``src_buffer``'s dtype and
    ``num_valid_indices * num_elem_per_idx`` elements per partition; at most 4096 indices
    per core.

    Raises ``NKITypeError`` for a non-integer count, ``NKIVerifyError`` for another memory,
    dtype, shape or count, and ``NKIRuntimeError`` for an index reading past ``src_buffer``.
    NKI docs: ``nki.isa.local_gather`` (nki/api/generated/nki.isa.local_gather).
    """

    dst = Tile(writes=True, spaces=("sbuf",))
    src_buffer = Tile(spaces=("sbuf",), partitions_of=("index", "dst"))
    index = Tile(spaces=("sbuf",))
    num_elem_per_idx = Int(default=1, strict=True)
    num_valid_indices = Int(default=None, strict=True)
    engine = Engine("gpsimd", param=False)
    cost = Stream("dst", source="analogue: iota (GpSimd 150 + N over dst)")

    def verify(op):
        api = rules.api(op)
        parts = shape_of(op.src_buffer)[0]
        if parts % GPSIMD_GROUP:
            raise VerifyException(f"{api}: 'src_buffer' has {parts} partitions; local_gather needs "
                                  f"a multiple of {GPSIMD_GROUP} (one GpSimd core per 16 partitions)")
        if dtype_of(op.index) != dtypes.uint16:
            raise VerifyException(f"{api}: 'index' must be uint16, got "
                                  f"{dtypes.name_of(dtype_of(op.index))}")
        rules.same_dtype(op, "dst", "src_buffer", "local_gather does not cast")
        elems = prop_int(op, "num_elem_per_idx") or 1
        if elems not in LOCAL_GATHER_ELEMS:
            raise VerifyException(f"{api}: num_elem_per_idx={elems} is not supported (expected "
                                  f"one of {', '.join(map(str, LOCAL_GATHER_ELEMS))})")
        slice_size = GPSIMD_GROUP * free_size(op.index)
        valid = local_gather_valid(op)
        if not 1 <= valid <= slice_size:
            raise VerifyException(f"{api}: num_valid_indices={valid} must be between 1 and the "
                                  f"{slice_size} indices of a 16-partition 'index' slice")
        if valid > LOCAL_GATHER_MAX_INDICES:
            raise VerifyException(f"{api}: 'index' gives {valid} indices per GpSimd core, more "
                                  f"than the limit of {LOCAL_GATHER_MAX_INDICES}")
        if free_size(op.dst) != valid * elems:
            raise VerifyException(f"{api}: 'dst' must hold num_valid_indices * num_elem_per_idx = "
                                  f"{valid} * {elems} = {valid * elems} elements per partition, "
                                  f"got {describe(op.dst)}")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src_buffer, "src_buffer")
        idx = dec.buf(op, op.index, "index")
        elems = int(op.num_elem_per_idx.value.data) if op.num_elem_per_idx is not None else 1
        valid = local_gather_valid(op)
        parts, f, n = src.parts, src.free, idx.free
        if parts % GPSIMD_GROUP or idx.parts != parts or dst.parts != parts \
                or dst.free != valid * elems:
            raise error_at(op, f"{op.name}: operand shapes do not fit (src_buffer {list(src.shape)}, "
                               f"index {list(idx.shape)}, dst {list(dst.shape)})", NKIRuntimeError)
        groups = parts // GPSIMD_GROUP
        d, s, i, shape = dst.slot, src.slot, idx.slot, dst.shape
        offs = np.arange(elems, dtype=np.int64)

        def run(env):
            # (group, partition-in-group, free) -> read partition dim first: (group, free, partition)
            ix = env[i].reshape(groups, GPSIMD_GROUP, n).transpose(0, 2, 1).reshape(groups, -1)
            ix = ix[:, :valid].astype(np.int64)
            pos = ix[:, :, None] + offs  # (group, valid, elems) element offsets in a partition
            bad = pos[:, :, -1] >= f
            if bad.any():
                g, k = (int(a[0]) for a in np.nonzero(bad))
                raise Fault(f"'index' value {int(ix[g, k])} (flattened index {k} of GpSimd core {g}) "
                            f"with num_elem_per_idx={elems} reads past the {f} elements per "
                            f"partition of 'src_buffer'")
            data = env[s].reshape(groups, GPSIMD_GROUP, f)
            flat = pos.reshape(groups, 1, valid * elems)
            out = np.take_along_axis(
                data, np.broadcast_to(flat, (groups, GPSIMD_GROUP, valid * elems)), axis=2)
            env[d][...] = out.reshape(shape)
        return finish(op, run, dst)


# ------------------------------------------------------------------- nc_stream_shuffle


def _mask(op) -> list[int]:
    a = op.properties.get("shuffle_mask")
    out = []
    for x in (a.data if a is not None else ()):
        if not isinstance(x, IntegerAttr):
            raise VerifyException(f"{rules.api(op)}: shuffle_mask must be a list of integers, got {a}")
        out.append(int(x.value.data))
    return out


@instruction
class nc_stream_shuffle:
    """A partition shuffle inside each 32-partition quadrant on the Vector engine:
    ``dst[q*32 + i] = src[q*32 + shuffle_mask[i]]``; ``shuffle_mask[i] == 255`` leaves
    ``dst[q*32 + i]`` unchanged.

    ``src`` / ``dst``: SBUF or PSUM tiles of the same dtype and elements per partition;
    ``shuffle_mask``: 32 compile-time integers in 0..31 or 255.

    Raises ``NKITypeError`` for a mask that is not a list of integers and ``NKIVerifyError``
    for another length, an entry out of range or one reading past ``src``.
    NKI docs: ``nki.isa.nc_stream_shuffle`` (nki/api/generated/nki.isa.nc_stream_shuffle).
    """

    dst = Tile(writes=True)
    src = Tile()
    shuffle_mask = IntList()
    engine = Engine("vector", param=False)
    cost = Stream("src", source="analogue: tensor_scalar (one vector stream over src)")

    def verify(op):
        api = rules.api(op)
        rules.same_free_size(op, ("dst", op.dst), ("src", op.src))
        rules.same_dtype(op, "dst", "src", "nc_stream_shuffle does not cast")
        mask = _mask(op)
        if len(mask) != QUADRANT:
            raise VerifyException(f"{api}: shuffle_mask has {len(mask)} entries; it must have "
                                  f"exactly {QUADRANT} (one per partition of a quadrant)")
        for i, m in enumerate(mask):
            if m != SHUFFLE_KEEP and not 0 <= m < QUADRANT:
                raise VerifyException(f"{api}: shuffle_mask[{i}]={m} is out of range (0..31, or "
                                      f"255 to leave the dst partition unchanged)")
        ps, pd = shape_of(op.src)[0], shape_of(op.dst)[0]
        for q in range(math.ceil(max(ps, pd) / QUADRANT)):
            for i, m in enumerate(mask):
                if m != SHUFFLE_KEEP and q * QUADRANT + i < pd and q * QUADRANT + m >= ps:
                    raise VerifyException(
                        f"{api}: shuffle_mask[{i}]={m} makes dst partition {q * QUADRANT + i} read "
                        f"src partition {q * QUADRANT + m}, but 'src' has {ps} partitions")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        if dst.free != src.free or dec.declared(dst) != dec.declared(src):
            raise error_at(op, f"{op.name}: 'dst' and 'src' must have the same dtype and elements "
                               f"per partition", NKIRuntimeError)
        mask = [int(a.value.data) for a in op.shuffle_mask.data]
        pairs = []  # (dst partition, src partition)
        for q in range(math.ceil(max(dst.parts, src.parts) / QUADRANT)):
            for i, m in enumerate(mask):
                pd, ps = q * QUADRANT + i, q * QUADRANT + m
                if m == SHUFFLE_KEEP or pd >= dst.parts:
                    continue
                if ps >= src.parts:
                    raise error_at(op, f"{op.name}: shuffle_mask[{i}]={m} reads src partition {ps}, "
                                       f"but 'src' has {src.parts} partitions", NKIRuntimeError)
                pairs.append((pd, ps))
        dsts = np.array([p for p, _ in pairs], np.int64)
        srcs = np.array([p for _, p in pairs], np.int64)
        d, s, free = dst.slot, src.slot, src.free

        def run(env):
            if not len(dsts):
                return
            rows = env[s].reshape(src.parts, free)[srcs]  # fancy indexing copies: in-place safe
            out = env[d].reshape(dst.parts, free).copy()
            out[dsts] = rows
            env[d][...] = out.reshape(dst.shape)
        return finish(op, run, dst)
