"""Frontend handlers for the ``NkiTensor`` methods that reinterpret a view: ``view(dtype)``,
``ap(pattern, offset, scalar_offset=, vector_offset=, dtype=)``, the queries
(``get_pattern``, ``is_contiguous``, ``is_indirect``), and the indirect DMA an
``ap(vector_offset=idx)`` view becomes (:func:`emit_indirect_dma`).  Layout rules: see
:mod:`.tensor_methods`; semantics: nki.language API reference (nki/api/nki/language).
"""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..dialects.views import NkiDmaCopyIndirectOp
from ..errors import NKIError, NKITypeError
from .args import emit
from .builtins import handles
from .values import Index, Indirect, Tensor, as_index, is_int, simplify
from .view_layout import (MAX_VIEW_DIMS, _OOB, _direct, _err, _index_tensor, _int, _prod,
                          _row_major, _static_bounds, _what, restride, scalar_index_of)


# ------------------------------------------------------------------ dtype views


def _scale(cg, m: str, what: str, v: int, a: int, b: int) -> int:
    if (v * a) % b:
        raise _err(cg, m, f"{what} {v} x {a} bytes is not a whole number of {b}-byte elements")
    return v * a // b


def _retype(cg, t: Tensor, m: str, dt) -> Tensor:
    """``t`` viewed as ``dt`` (the last dim scales by the size ratio; must be contiguous)."""
    a, b = t.dtype.itemsize, dt.itemsize
    if t.shape[-1] != 1 and t.strides[-1] != 1:
        raise _err(cg, m, f"the last dim of {_what(t)} has stride {t.strides[-1]}; a dtype "
                          f"view needs it contiguous (stride 1)")
    shape = list(t.shape[:-1]) + [_scale(cg, m, "the last dim", t.shape[-1], a, b)]
    strides = [_scale(cg, m, f"stride of dim {k}", s, a, b) for k, s in enumerate(t.strides[:-1])]
    strides.append(1)
    sto = t.storage_shape
    storage = list(sto[:-1]) + [_scale(cg, m, "the storage's last dim", sto[-1], a, b)]
    off = t.offset_index
    if isinstance(off, Index):
        new_off = off.scale(a).floordiv_exact(b)
        if new_off is None:
            raise _err(cg, m, f"the offset of {_what(t)} is not always a whole number of "
                              f"{b}-byte elements")
    else:
        new_off = _scale(cg, m, "the offset", off, a, b)
    return cg.b.view_dtype(t, dt, shape, strides, new_off, storage)


def _dtype(cg, m: str, dtype: Any):
    try:
        return dtypes.as_dtype(dtype)
    except NKITypeError:  # any non-dtype (as_dtype raises nothing else)
        raise _err(cg, m, f"{dtype!r} is not an NKI dtype") from None


@handles("tensor.view")
def view(cg, t: Tensor, dtype):
    """``t.view(dtype)``: the same bytes as ``dtype``; the last dim scales by
    ``itemsize(t.dtype) / itemsize(dtype)`` and must be contiguous."""
    m = "view"
    _direct(cg, t, m)
    dt = _dtype(cg, m, dtype)
    if dt == t.dtype:
        return t
    return _retype(cg, t, m, dt)


# ---------------------------------------------------------------------- ap


def _pattern(cg, m: str, pattern: Any) -> list[tuple[int, int]]:
    if not isinstance(pattern, (list, tuple)) or not pattern:
        raise _err(cg, m, f"pattern must be a non-empty list of [stride, count] pairs, got {pattern!r}")
    out = []
    for k, pair in enumerate(pattern):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(is_int(x) for x in pair):
            raise _err(cg, m, f"pattern[{k}] must be [stride, count] (two ints), got {pair!r}")
        s, n = int(pair[0]), int(pair[1])
        if n < 1:
            raise _err(cg, m, f"pattern[{k}] has count {n}; counts must be >= 1")
        out.append((s, n))
    if len(out) > MAX_VIEW_DIMS:
        raise _err(cg, m, f"pattern has {len(out)} dims, more than the {MAX_VIEW_DIMS} an access "
                          f"pattern allows (partition + 4 free)", "err_exceed_max_supported_dimension")
    return out


@handles("tensor.ap")
def ap(cg, t: Tensor, pattern, offset=None, scalar_offset=None, vector_offset=None,
       indirect_dim=0, dtype=None):
    """``t.ap(pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0,
    dtype=None)``: the raw access pattern ``[[stride, count], ...]`` over ``t``'s underlying
    storage (``t``'s own shape and strides are replaced; its storage offset is kept).
    Element ``(i0, i1, ...)`` is storage element ``base + offset + sum(stride_k * i_k)``,
    ``base`` being ``t``'s own storage offset (``offset=None`` is 0 more); on-chip
    ``pattern[0]`` must be ``[free_size_of_storage, nparts]``.  ``scalar_offset`` (int,
    loop index, register or ``(1, 1)`` int tensor) adds ``scalar_offset * t.strides[
    indirect_dim]``: ``indirect_dim`` is a dim of ``t.shape`` and its stride scales the
    index (for a reshaped view, the stride of the reshaped dim); ``vector_offset`` (SBUF
    ``[P, 1]`` int tensor, HBM only, ``indirect_dim=0``) makes row ``i0`` read storage row
    ``vector_offset[i0]`` (an indirect view for ``nisa.dma_copy``).  ``dtype``
    reinterprets the storage first (pattern and offset then count ``dtype`` elements; the
    base offset and the stride of ``indirect_dim`` are rescaled to them).

    Doc: ``NkiTensor.ap`` in the nki.language API reference ("offset: element offset added
    to the view's base storage offset", "indirect_dim: dimension in ``self.shape`` whose
    stride scales the indirect scalar/vector offset")."""
    m = "ap"
    _direct(cg, t, m)
    pat = _pattern(cg, m, pattern)
    src = t
    idim = _int(cg, m, "indirect_dim", indirect_dim)
    if not 0 <= idim < t.ndim:
        raise _err(cg, m, f"indirect_dim {idim} is out of range for {_what(t)} ({t.ndim} dims)")
    base: Index | int = t.offset_index  # the view's own storage offset, in t.dtype elements
    pitch = t.strides[idim]  # what one step of scalar_offset moves, in t.dtype elements
    if dtype is not None and _dtype(cg, m, dtype) != t.dtype:
        sto = t.storage_shape
        whole = cg.b.reinterpret(t, sto, _row_major(sto), 0)
        src = _retype(cg, whole, m, _dtype(cg, m, dtype))
        a, b = t.dtype.itemsize, src.dtype.itemsize
        pitch = _scale(cg, m, f"the stride of indirect_dim {idim}", pitch, a, b)
        if isinstance(base, Index):
            scaled = base.scale(a).floordiv_exact(b)
            if scaled is None:
                raise _err(cg, m, f"the storage offset of {_what(t)} is not always a whole "
                                  f"number of {b}-byte elements")
            base = scaled
        else:
            base = _scale(cg, m, "the storage offset", base, a, b)
    sto = src.storage_shape
    off: Index | int
    if offset is None:
        off = base
    elif is_int(offset) or isinstance(offset, Index):
        off = simplify(as_index(base).add(as_index(offset)))
    else:
        raise _err(cg, m, f"offset must be an int or a loop-index expression, got {offset!r}")
    if scalar_offset is not None and vector_offset is not None:
        raise _err(cg, m, "give at most one of scalar_offset and vector_offset")
    if scalar_offset is not None:
        if is_int(scalar_offset) or isinstance(scalar_offset, Index):
            so = simplify(scalar_offset)
            if isinstance(so, Index) and src.on_chip and idim == 0:
                raise _err(cg, m, f"dynamic selection on dim 0 of {_what(t)} is not allowed "
                                  f"(scalar_offset on the partition dim)")
        else:
            if src.on_chip and idim == 0:
                raise _err(cg, m, f"dynamic selection on dim 0 of {_what(t)} is not allowed "
                                  f"(scalar_offset on the partition dim)")
            so = scalar_index_of(cg, scalar_offset, m, "scalar_offset")
        off = simplify(as_index(off).add(as_index(so).scale(pitch)))
    if src.on_chip:
        free = _prod(sto[1:])
        if pat[0][0] != free or pat[0][1] > sto[0]:
            raise _err(cg, m, f"pattern[0] must be [{free}, nparts] with nparts <= {sto[0]} for "
                              f"{_what(t)} (the partition step is the storage's free size "
                              f"{free}; partitions cannot be strided), got {list(pat[0])}")
        if len(pat) < 2:
            raise _err(cg, m, f"an {src.buffer} access pattern needs a partition entry and at least "
                              f"one free entry, got {[list(p) for p in pat]}")
    shape = [n for _, n in pat]
    strides = [s for s, _ in pat]
    if vector_offset is not None:
        if src.on_chip:
            raise _err(cg, m, f"dynamic selection on dim 0 of {_what(t)} is not allowed "
                              f"(vector_offset needs an HBM tensor)")
        if idim != 0:
            raise _err(cg, m, f"vector_offset supports only indirect_dim=0, got {idim}")
        idx = _index_tensor(cg, m, "vector_offset", vector_offset)
        if idx.shape[0] != shape[0]:
            raise _err(cg, m, f"vector_offset has {idx.shape[0]} rows but pattern[0] has count "
                              f"{shape[0]}")
        if pitch < 1:
            raise _err(cg, m, f"vector_offset needs dim 0 of {_what(t)} to have a positive "
                              f"stride, got {pitch}")
        rest_hi = sum(max(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:]))
        rest_lo = sum(min(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:]))
        total = _prod(sto)
        if isinstance(off, Index):
            raise _err(cg, m, "vector_offset needs a compile-time offset")
        rows = (total - 1 - off - rest_hi) // pitch + 1
        if rows < 1 or off + rest_lo < 0:
            raise _err(cg, m, f"the access pattern does not fit in the storage {list(sto)} even "
                              f"for index 0", _OOB)
        table = cg.b.reinterpret(src, [rows] + shape[1:], [pitch] + strides[1:], off)
        return Tensor(table.value, tuple(shape), src.dtype, src.buffer, (pitch,) + tuple(strides[1:]),
                      table.offset, cg.b.block, t.name, is_base=False, storage=sto,
                      indirect=Indirect(idx, table))
    try:
        _static_bounds(cg, src, m, shape, strides, off)
    except NKIError as exc:
        if exc.code != _OOB:
            raise
        # an out-of-storage view is an error when used, not when made: kernels build the
        # view of a last, partial tile before testing whether to use it
        dyn = isinstance(off, Index)
        return Tensor(src.value, tuple(shape), src.dtype, src.buffer, tuple(strides),
                      None if dyn else off, cg.b.block, t.name, is_base=False,
                      storage=src.storage_shape, dyn_offset=off if dyn else None, poison=exc)
    return cg.b.reinterpret(src, shape, strides, off)


# ------------------------------------------------------------------------ queries


@handles("tensor.get_pattern")
def get_pattern(cg, t: Tensor):
    """``[[stride, count], ...]`` of the view over its storage (on-chip the partition step
    is the storage's free size)."""
    return [[int(s), int(n)] for s, n in zip(t.strides, t.shape)]


@handles("tensor.is_contiguous")
def is_contiguous(cg, t: Tensor) -> bool:
    """Whether the view's elements are dense and row-major in storage (size-1 dims ignored;
    on-chip dim 0 ignored: partitions are independent)."""
    if t.indirect is not None:
        return False
    dims = range(1, t.ndim) if t.on_chip else range(t.ndim)
    live = [(t.shape[k], t.strides[k]) for k in dims if t.shape[k] != 1]
    expect = 1
    for n, s in reversed(live):
        if s != expect:
            return False
        expect *= n
    return True


@handles("tensor.is_indirect")
def is_indirect(cg, t: Tensor) -> bool:
    return t.indirect is not None


# ------------------------------------------------------------------- indirect DMA


def emit_indirect_dma(cg, api: str, d: Tensor, s: Tensor, oob_mode: str | None,
                      dge_mode: str | None):
    """``nisa.dma_copy`` with an indirect ``src`` (gather) and/or ``dst`` (scatter) ->
    ``nki.dma_copy_indirect(dst, src, src_index, dst_index, oob_mode)``; the indexed side
    is passed as its table ``[rows, ...]``."""
    if d.indirect is None and s.indirect is not None and d.shape[0] != s.shape[0]:
        raise cg.b.error(f"{api}: dst has {d.shape[0]} rows but the indirect src selects "
                         f"{s.shape[0]} rows (one per index)", NKITypeError)
    ops = {"dst": (d.indirect.table if d.indirect else d).value,
           "src": (s.indirect.table if s.indirect else s).value,
           "src_index": s.indirect.index.value if s.indirect else None,
           "dst_index": d.indirect.index.value if d.indirect else None}
    emit(cg, NkiDmaCopyIndirectOp, ops, {"oob_mode": oob_mode, "dge_mode": dge_mode})


__all__ = ["restride", "scalar_index_of", "emit_indirect_dma", "MAX_VIEW_DIMS"]
