"""Closure builders for select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, sequence_bounds, nonzero_with_count, topk.

Semantics: nki.isa API reference (nki/api/nki/isa) and the NKI 0.6 ``nki.isa`` API page.  Where the docs
leave a detail open, this is the reading implemented (and tested):

- VectorE values are compared and selected in float32 and cast once to the ``dst`` dtype
  (:func:`.numerics.make_store`).  ``tensor_copy_predicated`` copies ``src`` bit-exactly
  (same dtype); a scalar ``src`` is cast to ``dst``'s dtype.
- ``reverse_pred`` negates the predicate's truth value (``predicate == 0`` selects).
- Accumulators (``select_reduce``, ``range_select``): the VectorE per-lane fp32 registers
  (:class:`~.program.State` ``dve_acc``, lane = partition of the tile).  ``reset`` sets
  them to -inf (the max identity), ``reset_reduce`` to the row max of this instruction,
  ``reduce`` takes the max with it, ``idle`` leaves them alone.  The max is taken over the
  float32 selected values *before* the cast to ``dst`` (so a full row of FP32_MIN gives
  FP32_MIN even into a bf16 ``dst``, as the range_select docs describe).  ``reduce_res``
  (``[P, 1]``) receives the registers after the update.
- ``nc_find_index8``: column ``i`` gets the position of the ``c``-th occurrence of
  ``vals[i]``, where ``c`` counts the earlier columns holding the same value (duplicates
  pair with matching positions in ascending order, per the 2.32 docs); a value that is not
  found gives all ones (0xFFFF / 0xFFFFFFFF).
- ``nc_match_replace8``: vals are processed ``i = 7 .. 0``; each replaces the first
  position still equal to it in the working copy with ``imm``; ``dst_idx[i]`` is that
  position or all ones when nothing matched.
- ``nonzero_with_count``: "partitions 0, 16, ..., 112" are counted from the tile's first
  partition (the docs speak of the GpSimd cores' physical partitions; kernels pass tiles
  starting at partition 0).
- ``topk`` (NKI 0.6 page plus the 0.7 page's layout description): each 16-partition group
  is an independent snake (element ``s`` at partition ``s % 16``, free position
  ``s // 16``, flattened free dims) of ``n`` elements; the K largest (ties: lower snake
  index first) are written in ascending value order (equal values by ascending index),
  result ``j`` at partition ``j % 16``, free position ``j // 16``, with their snake indices
  in ``idx_dst``.  Slots ``j >= K`` are left unchanged.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import MemRefType

from .. import dtypes
from ..diagnostics import error_at
from ..dialects.common import prop_flag, prop_int, prop_str
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Buf, check_elems, finish, reader

if TYPE_CHECKING:
    from .decoder import Decoder

_CMP = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal,
        "greater": np.greater, "greater_equal": np.greater_equal}
_FP32_MIN = np.float32(-3.4028235e38)


def _flat(b: Buf):
    """A getter for ``b``'s raw values as ``[P, free]`` (a copy only when the view is strided)."""
    s, shape = b.slot, (b.parts, b.free)
    return lambda env: env[s].reshape(shape)


def _all_ones(dt: np.dtype) -> int:
    return int(np.iinfo(dt).max)


# ----------------------------------------------------------------------- accumulators


def _accumulator(dec: Decoder, op, parts: int, default_cmd: str):
    """``update(env, values[P, F] float32)``: the VectorE max-accumulator and reduce_res readout."""
    cmd = prop_str(op, "reduce_cmd", default_cmd)
    rop = prop_str(op, "reduce_op", "maximum")
    if rop != "maximum":
        raise error_at(op, f"{op.name}: reduce_op={rop} is not supported (only maximum)", NKIRuntimeError)
    if cmd not in ("idle", "reset", "reduce", "reset_reduce"):
        raise error_at(op, f"{op.name}: reduce_cmd={cmd} is not supported (expected idle, reset, "
                           f"reduce or reset_reduce)", NKIRuntimeError)
    rr = dec.buf(op, op.reduce_res, "reduce_res") if op.reduce_res is not None else None
    if rr is not None and (rr.parts != parts or rr.free != 1):
        raise error_at(op, f"{op.name}: 'reduce_res' must be [{parts}, 1], got {list(rr.shape)}",
                       NKIRuntimeError)
    rr_store = nm.make_store(rr.dtype) if rr is not None else None

    def update(env, values):
        acc = env[STATE].dve_acc
        if cmd == "reset":
            acc[:parts] = -np.inf
        elif cmd != "idle":
            row = np.max(values, axis=1) if values.shape[1] else np.full(parts, -np.inf, np.float32)
            acc[:parts] = row if cmd == "reset_reduce" else np.maximum(acc[:parts], row)
        if rr is not None:
            rr_store(env[rr.slot], acc[:parts].reshape(rr.shape))
    return update, rr


# ----------------------------------------------------------------------- VectorE


def select_reduce(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    pred, tru = dec.buf(op, op.predicate, "predicate"), dec.buf(op, op.on_true, "on_true")
    check_elems(op, dst, ("predicate", pred), ("on_true", tru))
    P, F = dst.parts, dst.free
    rp, rt = _flat(pred), reader(tru, (P, F))
    gf = dec.scalar(op, op.on_false, "on_false", (P, F))
    rev, d, store = prop_flag(op, "reverse_pred"), dst.slot, nm.make_store(dst.dtype)
    update, rr = _accumulator(dec, op, P, "idle")

    def run(env):
        mask = rp(env) != 0
        if rev:
            mask = ~mask
        vals = np.where(mask, rt(env), gf(env)).astype(np.float32, copy=False)
        store(env[d], vals.reshape(dst.shape))
        update(env, vals)
    return finish(op, run, dst, rr)


def range_select(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.on_true_tile, "on_true_tile")
    check_elems(op, dst, ("on_true_tile", src))
    P, F = dst.parts, dst.free
    c0, c1 = prop_str(op, "comp_op0", ""), prop_str(op, "comp_op1", "")
    for name in (c0, c1):
        if name not in _CMP:
            raise error_at(op, f"{op.name}: comparison {name!r} is not supported (expected one of "
                               f"{', '.join(_CMP)})", NKIRuntimeError)
    f0, f1 = _CMP[c0], _CMP[c1]
    g0 = dec.scalar(op, op.bound0, "bound0", (P, F))
    g1 = dec.scalar(op, op.bound1, "bound1", (P, F))
    fill = dec.scalar(op, op.on_false_value, "on_false_value", (P, F))
    idx = (np.float32(prop_int(op, "range_start", 0)) + np.arange(F, dtype=np.float32)).reshape(1, F)
    read, d, store = reader(src, (P, F)), dst.slot, nm.make_store(dst.dtype)
    update, rr = _accumulator(dec, op, P, "reset_reduce")

    def run(env):
        keep = f0(idx, g0(env)) & f1(idx, g1(env))
        vals = np.where(keep, read(env), fill(env)).astype(np.float32, copy=False)
        store(env[d], vals.reshape(dst.shape))
        update(env, vals)
    return finish(op, run, dst, rr)


def max8(dec: Decoder, op):
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


def _vals8(dec: Decoder, op, data: Buf) -> Buf:
    vals = dec.buf(op, op.vals, "vals")
    if vals.parts != data.parts or vals.free != 8:
        raise error_at(op, f"{op.name}: 'vals' must be [{data.parts}, 8], got {list(vals.shape)}",
                       NKIRuntimeError)
    return vals


def _index_buf(dec: Decoder, op, v, role: str, parts: int) -> Buf:
    b = dec.buf(op, v, role)
    if b.parts != parts or b.free != 8 or b.dtype not in (dtypes.uint16, dtypes.uint32):
        raise error_at(op, f"{op.name}: '{role}' must be a [{parts}, 8] uint16/uint32 tile, got "
                           f"{list(b.shape)} {dtypes.name_of(b.dtype)}", NKIRuntimeError)
    return b


def nc_find_index8(dec: Decoder, op):
    data = dec.buf(op, op.data, "data")
    vals = _vals8(dec, op, data)
    dst = _index_buf(dec, op, op.dst, "dst", data.parts)
    P, F = data.parts, data.free
    rd, rv, d = reader(data, (P, F)), reader(vals, (P, 8)), dst.slot
    missing = _all_ones(dst.dtype)

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


def nc_match_replace8(dec: Decoder, op):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    check_elems(op, dst, ("data", data))
    vals = _vals8(dec, op, data)
    P, F = data.parts, data.free
    idx = _index_buf(dec, op, op.dst_idx, "dst_idx", P) if op.dst_idx is not None else None
    rd, rv, d, store = reader(data, (P, F)), reader(vals, (P, 8)), dst.slot, nm.make_store(dst.dtype)
    gimm = dec.scalar(op, op.imm, "imm", (P, F))
    missing = _all_ones(idx.dtype) if idx is not None else 0
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


def tensor_copy_predicated(dec: Decoder, op):
    dst, pred = dec.buf(op, op.dst, "dst"), dec.buf(op, op.predicate, "predicate")
    check_elems(op, dst, ("predicate", pred))
    shape, d, rp, rev = dst.shape, dst.slot, _flat(pred), prop_flag(op, "reverse_pred")
    if isinstance(op.src.type, MemRefType):
        src = dec.buf(op, op.src, "src")
        check_elems(op, dst, ("src", src))
        if src.dtype != dst.dtype:
            raise error_at(op, f"{op.name}: 'src' dtype {dtypes.name_of(src.dtype)} differs from "
                               f"'dst' dtype {dtypes.name_of(dst.dtype)}", NKIRuntimeError)
        s, reshape = src.slot, src.shape != shape

        def value(env):
            return env[s].reshape(shape) if reshape else env[s]
    else:
        g, store = dec.scalar(op, op.src, "src", shape), nm.make_store(dst.dtype)

        def value(env):
            box = np.empty(1, dst.dtype)  # 1-element (make_store's int path needs an array)
            store(box, np.asarray(g(env), np.float32).reshape(1))
            return box

    def run(env):
        mask = rp(env) != 0
        if rev:
            mask = ~mask
        np.copyto(env[d], value(env), where=mask.reshape(shape))
    return finish(op, run, dst)


# ----------------------------------------------------------------------- GpSimd


def sequence_bounds(dec: Decoder, op):
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


def nonzero_with_count(dec: Decoder, op):
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


def topk(dec: Decoder, op):
    vd, xd = dec.buf(op, op.val_dst, "val_dst"), dec.buf(op, op.idx_dst, "idx_dst")
    src = dec.buf(op, op.src, "src")
    P, K, n = src.parts, vd.free, prop_int(op, "n", 0)
    if P % 16 or vd.parts != P or xd.parts != P or xd.free != K or not 1 <= K <= n \
            or src.free * 16 < n:
        raise error_at(op, f"{op.name}: inconsistent shapes (src {list(src.shape)}, val_dst "
                           f"{list(vd.shape)}, idx_dst {list(xd.shape)}, n={n})", NKIRuntimeError)
    rs, rv, rx = reader(src, (P, src.free)), _flat(vd), _flat(xd)
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


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.select_reduce": select_reduce,
    "nisa.range_select": range_select,
    "nisa.max8": max8,
    "nisa.nc_find_index8": nc_find_index8,
    "nisa.nc_match_replace8": nc_match_replace8,
    "nisa.tensor_copy_predicated": tensor_copy_predicated,
    "nisa.sequence_bounds": sequence_bounds,
    "nisa.nonzero_with_count": nonzero_with_count,
    "nisa.topk": topk,
}
