"""Search and sequence instructions: max8, nc_find_index8, nc_match_replace8 (Vector engine);
sequence_bounds, nonzero_with_count, topk (GpSimd).

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa).  Where the
docs leave a detail open, this is the reading implemented (and tested):

- values are compared in float32 and cast once to the ``dst`` dtype.
- ``nc_find_index8``: column ``i`` gets the position of the ``c``-th occurrence of
  ``vals[i]``, where ``c`` counts the earlier columns holding the same value (duplicates
  pair with matching positions in ascending order); a value that is not found gives all
  ones (0xFFFF / 0xFFFFFFFF).
- ``nc_match_replace8``: vals are processed ``i = 7 .. 0``; each replaces the first
  position still equal to it in the working copy with ``imm``; ``dst_idx[i]`` is that
  position or all ones when nothing matched.
- ``nonzero_with_count``: "partitions 0, 16, ..., 112" are counted from the tile's first
  partition.
- ``topk``: each 16-partition group is an independent snake (element ``s`` at partition
  ``s % 16``, free position ``s // 16``, flattened free dims) of ``n`` elements; the K
  largest (ties: lower snake index first) are written in ascending value order (equal
  values by ascending index), result ``j`` at partition ``j % 16``, free position
  ``j // 16``, with their snake indices in ``idx_dst``.  Slots ``j >= K`` are left unchanged.
"""
from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import describe, dtype_of, free_size, prop_int, shape_of
from ..dialects.ods import Engine, Int, Scalar, Stream, Tile
from ..errors import NKIRuntimeError
from ..runtime import numerics as nm
from ..runtime.env import Buf, check_elems, finish, reader
from ..runtime.isa_select import all_ones, raw_rows
from .define import instruction

#: per-partition element limits of max8 / nc_find_index8 / nc_match_replace8
MAX8_MIN, MAX8_MAX = 8, 16384
_INDEX = (dtypes.uint16, dtypes.uint32)


# ---------------------------------------------------------------------- verifier rules


def _dtype_in(op, role: str, allowed, what: str) -> None:
    v = getattr(op, role)
    if v is not None and dtype_of(v) not in allowed:
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {dtypes.name_of(dtype_of(v))}, "
                              f"but it must be {what}")


def _per_partition_count(op, role: str, lo: int, hi: int) -> None:
    n = free_size(getattr(op, role))
    if not lo <= n <= hi:
        raise VerifyException(f"{rules.api(op)}: '{role}' has {n} elements per partition, but "
                              f"{rules.api(op)} needs {lo}..{hi}")


def _max_rank(op, role: str, rank: int) -> None:
    v = getattr(op, role)
    if len(shape_of(v)) > rank:
        raise VerifyException(f"{rules.api(op)}: '{role}' is {len(shape_of(v))}-D "
                              f"({describe(v)}); at most {rank}-D is supported")


def _eight_wide(op, role: str, v: SSAValue, parts: int) -> None:
    """``v`` is a 2-D ``[parts, 8]`` tile."""
    if shape_of(v) != (parts, 8):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a 2-D [{parts}, 8] tile, got "
                              f"{describe(v)}")


def _verify_search8(op) -> None:
    """``data`` (8..16384 elements per partition) and ``vals`` (8), at most 3-D, with the
    same partition count."""
    rules.same_partitions(op, ("data", op.data), ("vals", op.vals))
    _max_rank(op, "data", 3)
    _max_rank(op, "vals", 3)
    _per_partition_count(op, "data", MAX8_MIN, MAX8_MAX)
    if free_size(op.vals) != 8:
        raise VerifyException(f"{rules.api(op)}: 'vals' must hold exactly 8 elements per "
                              f"partition, got {describe(op.vals)}")


def _vals8(dec, op, data: Buf) -> Buf:
    vals = dec.buf(op, op.vals, "vals")
    if vals.parts != data.parts or vals.free != 8:
        raise error_at(op, f"{op.name}: 'vals' must be [{data.parts}, 8], got {list(vals.shape)}",
                       NKIRuntimeError)
    return vals


def _index_buf(dec, op, v, role: str, parts: int) -> Buf:
    b = dec.buf(op, v, role)
    if b.parts != parts or b.free != 8 or b.dtype not in _INDEX:
        raise error_at(op, f"{op.name}: '{role}' must be a [{parts}, 8] uint16/uint32 tile, got "
                           f"{list(b.shape)} {dtypes.name_of(b.dtype)}", NKIRuntimeError)
    return b


# ------------------------------------------------------------------------------ max8


@instruction
class max8:
    """``dst[P, 8]`` = the 8 largest values of each partition of ``src`` (compared in
    float32), in descending order, on the Vector engine.

    ``src``: an SBUF or PSUM tile, at most 3-D, with 8..16384 elements per partition;
    ``dst``: a 2-D ``[P, 8]`` tile.

    Raises ``NKIVerifyError`` for other shapes.
    NKI docs: ``nki.isa.max8`` (nki/api/generated/nki.isa.max8).
    """

    dst = Tile(writes=True)
    src = Tile()
    engine = Engine("vector", param=False)
    cost = Stream("src", source="analogue: tensor_reduce (one vector stream over src)")

    def verify(op):
        _eight_wide(op, "dst", op.dst, shape_of(op.src)[0])
        _max_rank(op, "src", 3)
        _per_partition_count(op, "src", MAX8_MIN, MAX8_MAX)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        P, F = src.parts, src.free
        if dst.parts != P or dst.free != 8 or F < 8:
            raise error_at(op, f"{op.name}: 'dst' must be [{P}, 8] and 'src' must hold at least 8 "
                               f"elements per partition (got dst {list(dst.shape)}, src "
                               f"{list(src.shape)})", NKIRuntimeError)
        read, d, store = reader(src, (P, F)), dst.slot, nm.make_store(dst.dtype)

        def run(env):
            top = np.partition(read(env), F - 8, axis=1)[:, F - 8:]
            store(env[d], np.sort(top, axis=1)[:, ::-1].reshape(dst.shape))
        return finish(op, run, dst)


# -------------------------------------------------------------------- nc_find_index8


@instruction
class nc_find_index8:
    """``dst[P, 8]`` = the index (flattened free dims) in ``data`` of each of the 8 ``vals``
    per partition, on the Vector engine; a value not found gives all ones.

    ``data``: at most 3-D with 8..16384 elements per partition; ``vals``: at most 3-D with
    8 elements per partition, same partition count; ``dst``: a 2-D ``[P, 8]`` uint16 or
    uint32 tile.  Duplicated values pair with successive occurrences.

    Raises ``NKIVerifyError`` for other shapes or dtypes.
    NKI docs: ``nki.isa.nc_find_index8`` (nki/api/generated/nki.isa.nc_find_index8).
    """

    dst = Tile(writes=True)
    data = Tile()
    vals = Tile()
    engine = Engine("vector", param=False)
    cost = Stream("data", source="analogue: tensor_reduce (one vector stream over data)")

    def verify(op):
        _verify_search8(op)
        _eight_wide(op, "dst", op.dst, shape_of(op.data)[0])
        _dtype_in(op, "dst", _INDEX, "uint16 or uint32")

    def interpret(dec, op):
        data = dec.buf(op, op.data, "data")
        vals = _vals8(dec, op, data)
        dst = _index_buf(dec, op, op.dst, "dst", data.parts)
        P, F = data.parts, data.free
        rd, rv, d = reader(data, (P, F)), reader(vals, (P, 8)), dst.slot
        missing = all_ones(dst.dtype)

        def run(env):
            x, v = rd(env), rv(env)
            out = np.full((P, 8), missing, np.int64)
            for i in range(8):
                # occurrence wanted = number of earlier columns holding the same value
                nth = (v[:, :i] == v[:, i:i + 1]).sum(axis=1)
                eq = x == v[:, i:i + 1]
                hit = eq & (np.cumsum(eq, axis=1) == (nth + 1)[:, None])
                found = hit.any(axis=1)
                out[found, i] = hit[found].argmax(axis=1)
            env[d][...] = out.astype(dst.dtype).reshape(dst.shape)
        return finish(op, run, dst)


# ----------------------------------------------------------------- nc_match_replace8


@instruction
class nc_match_replace8:
    """``dst`` = ``data`` with the first occurrence of each of the 8 ``vals`` replaced by
    ``imm`` (vals processed i = 7..0, each taking the first position still unreplaced), on
    the Vector engine; the positions go to the optional ``dst_idx[P, 8]``.

    ``data`` / ``dst``: the same partition count and elements per partition (8..16384),
    at most 3-D; ``vals``: 8 elements per partition; ``imm``: a compile-time number;
    ``dst_idx``: a 2-D uint16 or uint32 tile (all ones where nothing matched).

    Raises ``NKITypeError`` for an ``imm`` that is not a number and ``NKIVerifyError`` for
    other shapes or dtypes.
    NKI docs: ``nki.isa.nc_match_replace8`` (nki/api/generated/nki.isa.nc_match_replace8).
    """

    dst = Tile(writes=True)
    data = Tile()
    vals = Tile()
    imm = Scalar(const=True)
    dst_idx = Tile(writes=True, optional=True)
    engine = Engine("vector", param=False)
    cost = Stream("data", source="analogue: tensor_reduce (one vector stream over data)")

    def verify(op):
        _verify_search8(op)
        rules.elementwise(op, ("dst", "data"))
        if op.dst_idx is not None:
            _eight_wide(op, "dst_idx", op.dst_idx, shape_of(op.data)[0])
            _dtype_in(op, "dst_idx", _INDEX, "uint16 or uint32")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        check_elems(op, dst, ("data", data))
        vals = _vals8(dec, op, data)
        P, F = data.parts, data.free
        idx = _index_buf(dec, op, op.dst_idx, "dst_idx", P) if op.dst_idx is not None else None
        rd, rv = reader(data, (P, F)), reader(vals, (P, 8))
        d, store = dst.slot, nm.make_store(dst.dtype)
        gimm = dec.scalar(op, op.imm, "imm", (P, F))
        missing = all_ones(idx.dtype) if idx is not None else 0
        rows = np.arange(P)

        def run(env):
            cur = np.array(rd(env), dtype=np.float32)  # working copy
            v, imm = rv(env), np.float32(gimm(env))
            pos = np.full((P, 8), missing, np.int64)
            for i in range(7, -1, -1):
                eq = cur == v[:, i:i + 1]
                found = eq.any(axis=1)
                at = eq.argmax(axis=1)
                cur[rows[found], at[found]] = imm
                pos[found, i] = at[found]
            store(env[d], cur.reshape(dst.shape))
            if idx is not None:
                env[idx.slot][...] = pos.astype(idx.dtype).reshape(idx.shape)
        return finish(op, run, dst, idx)


# -------------------------------------------------------------------- sequence_bounds


@instruction
class sequence_bounds:
    """Segment bounds on GpSimd: for ``segment_ids`` ``[1, n]``, ``dst[0, 0, i]`` /
    ``dst[0, 1, i]`` = the start / exclusive end of the run of equal ids holding ``i``; id 0
    is padding and gets ``(n, -1)``.

    ``segment_ids`` ``[1, n]`` and ``dst`` ``[1, 2, n]``: SBUF tiles of float32 or int32.

    Raises ``NKIVerifyError`` for another memory, dtype or shape.
    NKI docs: ``nki.isa.sequence_bounds`` (nki/api/generated/nki.isa.sequence_bounds).
    """

    dst = Tile(writes=True, spaces=("sbuf",))
    segment_ids = Tile(spaces=("sbuf",))
    engine = Engine("gpsimd", param=False)
    cost = Stream("dst", source="analogue: iota (GpSimd 150 + N over dst)")

    def verify(op):
        for role in ("dst", "segment_ids"):
            v = getattr(op, role)
            _dtype_in(op, role, (dtypes.float32, dtypes.int32), "float32 or int32")
            if shape_of(v)[0] != 1:
                raise VerifyException(f"{rules.api(op)}: '{role}' has partition dimension "
                                      f"{shape_of(v)[0]}, but sequence_bounds needs exactly 1")
        n = free_size(op.segment_ids)
        if shape_of(op.dst) != (1, 2, n):
            raise VerifyException(f"{rules.api(op)}: 'dst' must be [1, 2, {n}] ([start, end] for "
                                  f"each of the {n} segment ids), got {describe(op.dst)}")

    def interpret(dec, op):
        dst, ids = dec.buf(op, op.dst, "dst"), dec.buf(op, op.segment_ids, "segment_ids")
        n = ids.free
        if ids.parts != 1 or dst.shape != (1, 2, n):
            raise error_at(op, f"{op.name}: needs segment_ids [1, n] and dst [1, 2, n], got "
                               f"{list(ids.shape)} and {list(dst.shape)}", NKIRuntimeError)
        s, d, store = ids.slot, dst.slot, nm.make_int_store(dst.dtype)

        def run(env):
            x = env[s].reshape(n)
            new = np.ones(n, bool)
            new[1:] = x[1:] != x[:-1]
            starts = np.flatnonzero(new)
            run_of = np.cumsum(new) - 1
            ends = np.append(starts[1:], n)
            lo, hi = starts[run_of].astype(np.int64), ends[run_of].astype(np.int64)
            pad = x == 0
            lo[pad], hi[pad] = n, -1
            store(env[d], np.stack([lo, hi]).reshape(dst.shape))
        return finish(op, run, dst)


# ----------------------------------------------------------------- nonzero_with_count


@instruction
class nonzero_with_count:
    """The nonzero positions of partitions 0, 16, ..., 112 of ``src`` on GpSimd (trn2 and
    newer): ``dst[p] = [nonzero indices of src[p] + index_offset..., padding_val...,
    count]``; other partitions are not read or written.

    ``src``: a float32 or int32 SBUF tile; ``dst``: an int32 SBUF tile with the same
    partition count and one more element per partition.  ``index_offset`` /
    ``padding_val``: compile-time int32 integers.

    Raises ``NKIVerifyError`` before trn2 or for another memory, dtype or shape.
    NKI docs: ``nki.isa.nonzero_with_count`` (nki/api/generated/nki.isa.nonzero_with_count).
    """

    dst = Tile(writes=True, spaces=("sbuf",), partitions_of="src")
    src = Tile(spaces=("sbuf",))
    index_offset = Int(default=0)
    padding_val = Int(default=-1)
    engine = Engine("gpsimd", param=False)
    since = "trn2"
    feature = "nonzero_with_count"
    cost = Stream("src", source="analogue: iota (GpSimd 150 + N over src)")

    def verify(op):
        _dtype_in(op, "src", (dtypes.float32, dtypes.int32), "float32 or int32")
        _dtype_in(op, "dst", (dtypes.int32,), "int32")
        if free_size(op.dst) != free_size(op.src) + 1:
            raise VerifyException(f"{rules.api(op)}: 'dst' must hold {free_size(op.src) + 1} "
                                  f"elements per partition (src's {free_size(op.src)} + 1 for the "
                                  f"count), got {describe(op.dst)}")
        for p in ("index_offset", "padding_val"):
            v = prop_int(op, p, 0)
            if not -2**31 <= v < 2**31:
                raise VerifyException(f"{rules.api(op)}: {p}={v} does not fit in int32")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        F = src.free
        if dst.parts != src.parts or dst.free != F + 1:
            raise error_at(op, f"{op.name}: 'dst' must be [{src.parts}, {F + 1}], got "
                               f"{list(dst.shape)}", NKIRuntimeError)
        offset, padding = prop_int(op, "index_offset", 0), prop_int(op, "padding_val", -1)
        lanes = range(0, src.parts, 16)
        s, d, row_shape = src.slot, dst.slot, dst.shape[1:]

        def run(env):
            for p in lanes:
                nz = np.flatnonzero(env[s][p].reshape(F) != 0)
                out = np.full(F + 1, padding, np.int64)
                out[:nz.size] = nz + offset
                out[F] = nz.size
                env[d][p] = out.astype(np.int32).reshape(row_shape)  # int32 wraps
        return finish(op, run, dst)


# ------------------------------------------------------------------------------- topk


@instruction
class topk:
    """The K largest of each 16-partition snake of ``n`` elements of ``src``, on GpSimd.

    Every 16-partition group of ``src`` (bfloat16, SBUF, a multiple of 16 partitions) holds
    one snake: element ``s`` at partition ``s % 16``, free position ``s // 16`` (8 <= n <
    65536, at least ceil(n/16) elements per partition).  K = the elements per partition of
    ``val_dst`` (bfloat16 ``[P, K]``) = those of ``idx_dst`` (uint32 ``[P, K]``), 1 <= K <
    32768, K <= n.  The K largest values (ascending) and their snake indices are written in
    the same snake layout (result j at partition j % 16, position j // 16).

    Raises ``NKITypeError`` for a non-integer ``n`` and ``NKIVerifyError`` for another
    memory, dtype or shape.
    NKI docs: ``nki.isa.topk`` (nki/api/generated/nki.isa.topk).
    """

    val_dst = Tile(writes=True, spaces=("sbuf",))
    idx_dst = Tile(writes=True, spaces=("sbuf",))
    src = Tile(spaces=("sbuf",))
    n = Int()
    engine = Engine("gpsimd", param=False)
    cost = Stream("src", source="analogue: iota (GpSimd 150 + N over src)")

    def verify(op):
        api = rules.api(op)
        rules.same_partitions(op, ("src", op.src), ("val_dst", op.val_dst),
                              ("idx_dst", op.idx_dst))
        parts = shape_of(op.src)[0]
        if parts % 16:
            raise VerifyException(f"{api}: 'src' has {parts} partitions; topk works on "
                                  f"16-partition groups, so the partition count must be a multiple of 16")
        _dtype_in(op, "src", (dtypes.bfloat16,), "bfloat16")
        _dtype_in(op, "val_dst", (dtypes.bfloat16,), "bfloat16")
        _dtype_in(op, "idx_dst", (dtypes.uint32,), "uint32")
        k, n = free_size(op.val_dst), prop_int(op, "n", 0)
        if free_size(op.idx_dst) != k:
            raise VerifyException(f"{api}: 'idx_dst' must hold K={k} elements per "
                                  f"partition like 'val_dst', got {describe(op.idx_dst)}")
        if not 8 <= n < 65536:
            raise VerifyException(f"{api}: n={n} is out of range (8 <= n < 65536)")
        if not 1 <= k < 32768 or k > n:
            raise VerifyException(f"{api}: K={k} (the free size of 'val_dst') must "
                                  f"satisfy 1 <= K < 32768 and K <= n={n}")
        need = -(-n // 16)
        if free_size(op.src) < need:
            raise VerifyException(f"{api}: 'src' has {free_size(op.src)} elements per "
                                  f"partition, fewer than ceil(n/16)={need} for a snake of n={n}")

    def interpret(dec, op):
        vd, xd = dec.buf(op, op.val_dst, "val_dst"), dec.buf(op, op.idx_dst, "idx_dst")
        src = dec.buf(op, op.src, "src")
        P, K, n = src.parts, vd.free, prop_int(op, "n", 0)
        if P % 16 or vd.parts != P or xd.parts != P or xd.free != K or not 1 <= K <= n \
                or src.free * 16 < n:
            raise error_at(op, f"{op.name}: inconsistent shapes (src {list(src.shape)}, val_dst "
                               f"{list(vd.shape)}, idx_dst {list(xd.shape)}, n={n})", NKIRuntimeError)
        rs, rv, rx = reader(src, (P, src.free)), raw_rows(vd), raw_rows(xd)
        vstore = nm.make_store(vd.dtype)
        j = np.arange(K)
        part, pos = j % 16, j // 16

        def run(env):
            x = rs(env)
            vals, idxs = np.array(rv(env), dtype=np.float32), np.array(rx(env))
            for g in range(P // 16):
                snake = x[g * 16:(g + 1) * 16].T.reshape(-1)[:n]
                chosen = np.lexsort((np.arange(n), -snake))[:K]
                chosen = chosen[np.lexsort((chosen, snake[chosen]))]  # ascending value, then index
                vals[g * 16 + part, pos] = snake[chosen]
                idxs[g * 16 + part, pos] = chosen
            vstore(env[vd.slot], vals.reshape(vd.shape))
            env[xd.slot][...] = idxs.astype(xd.dtype).reshape(xd.shape)
        return finish(op, run, vd, xd)
