"""Beta 1 advanced indexing: ``t[t*128 + i_p, i_f]`` with ``nl.arange`` / ``nl.mgrid`` grids.

Every key is an :class:`~.index_expr.IndexExpr` (or an int / loop index, a constant grid),
and the keys broadcast to one grid: the result is a view of that grid's shape whose
element ``[k_0, k_1, ...]`` is ``t[key_0(k), key_1(k), ...]`` (NKI language guide (nki/get-started/nki-language-guide)).

- When key ``d`` varies only along grid axis ``d`` with a positive step (the usual
  ``t[i_p, i_f]`` form) the view is the ``memref.subview`` that Beta 2 slicing makes
  (``t[start:stop:step, ...]``), so both spellings compile to the same IR.
- Any other affine map (strided or permuted free access, several grid axes folded into one
  dim: ``t[i_p, i_f2 * F1 + i_f1]``) is an access pattern (``memref.reinterpret_cast``).
  On-chip tensors keep the partition dim: grid axis 0 must index dim 0 with step 1.
- A tile key is a dynamic (indirect) index: ``data[idx_tile[i_p, 0], i_f]`` gathers rows
  on the partition / first dim only (after int / loop-index keys on HBM, which drop their
  dims: ``data[b, idx_tile[i_p, 0], i_f]``).

Errors: ``err_1d_arange_not_supported`` (a key with a 1-D grid),
``err_unsupported_mixing_basic_advanced_tensor_indexing`` (slices together with index
expressions), ``err_indirect_indices_free_dim``, ``err_tensor_access_out_of_bound``.
"""
from __future__ import annotations

import ast

import numpy as np

from ...errors import NKITypeError
from ..builtins import handles
from .index_expr import IndexExpr, Mask
from ..values import Index, Tensor, as_index, is_int, simplify


def is_advanced(keys: list) -> bool:
    return any(isinstance(k, (IndexExpr, Mask)) for k in keys)


def index_advanced(cg, node: ast.AST, t: Tensor, keys: list) -> Tensor:
    """``t[keys]`` where at least one key is an index expression."""
    for k in keys:
        if isinstance(k, Mask):
            raise cg.fail(node, "a mask (a comparison of index expressions) cannot index a tensor; "
                                "pass it as mask=", NKITypeError)
        if isinstance(k, (slice,)) or k is Ellipsis:
            raise cg.fail(node, "this subscript mixes basic indexing (slices, '...') with "
                                "nl.arange / nl.mgrid index expressions; use index expressions for "
                                "every dim", NKITypeError,
                          code="err_unsupported_mixing_basic_advanced_tensor_indexing")
    if len(keys) != t.ndim:
        raise cg.fail(node, f"tensor has {t.ndim} dims but the subscript has {len(keys)} index "
                            f"expressions; index every dim", NKITypeError,
                      code="err_tensor_access_out_of_bound")
    tiles = [d for d, k in enumerate(keys) if isinstance(k, Tensor)]
    if tiles:
        return _indirect(cg, node, t, keys, tiles)
    exprs = []
    for k in keys:
        if isinstance(k, IndexExpr):
            if k.rank < 2:
                raise cg.fail(node, "a 1-D nl.arange cannot index a tensor: give it a 2-D shape, "
                                    "nl.arange(P)[:, None] for the partition dim and "
                                    "nl.arange(F)[None, :] for a free dim", NKITypeError,
                              code="err_1d_arange_not_supported")
            exprs.append(k)
        elif is_int(k) or isinstance(k, Index):
            exprs.append(IndexExpr((), (), simplify(as_index(k))))
        else:
            raise cg.fail(node, f"cannot index a tensor with {type(k).__name__} {k!r} together with "
                                f"index expressions", NKITypeError)
    rank = max(e.rank for e in exprs)
    grids = [e._grid(rank) for e in exprs]
    shape = []
    for r in range(rank):
        sizes = {g[0][r] for g in grids if g[0][r] > 1}
        if len(sizes) > 1:
            raise cg.fail(node, f"the index expressions do not broadcast together on grid axis {r} "
                                f"(sizes {sorted(sizes)})", NKITypeError)
        shape.append(sizes.pop() if sizes else 1)
    _check_bounds(cg, node, t, exprs)
    simple = _as_slices(t, exprs, grids, rank)
    if simple is not None:
        from ..indexing import index_tensor
        return index_tensor(cg, node, t, tuple(simple))
    return _pattern(cg, node, t, exprs, grids, tuple(shape))


def _check_bounds(cg, node, t: Tensor, exprs: list[IndexExpr]) -> None:
    for d, e in enumerate(exprs):
        lo, hi = e.value_range()
        dim = t.shape[d]
        if is_int(lo) and is_int(hi):
            if lo < 0 or hi >= dim:
                raise cg.fail(node, f"index expression on dim {d} covers [{lo}, {hi}], out of bounds "
                                    f"for size {dim}", NKITypeError, code="err_tensor_access_out_of_bound")
        else:
            span = simplify(as_index(hi).sub(lo))
            if is_int(span) and span >= dim:
                raise cg.fail(node, f"index expression on dim {d} spans {span + 1} elements, more than "
                                    f"the dim's size {dim}", NKITypeError,
                              code="err_tensor_access_out_of_bound")


def _as_slices(t: Tensor, exprs, grids, rank: int) -> list | None:
    """Slices when key ``d`` varies only along grid axis ``d`` (rank == t.ndim), step > 0."""
    if rank != t.ndim:
        return None
    out = []
    for d, (e, (sizes, coeffs)) in enumerate(zip(exprs, grids)):
        axes = [r for r in range(rank) if sizes[r] > 1 and coeffs[r] != 0]
        if axes not in ([], [d]):
            return None
        n, step = (sizes[d], coeffs[d]) if axes else (1, 1)
        if step <= 0:
            return None
        out.append(slice(e.const, simplify(as_index(e.const).add((n - 1) * step + 1)), step))
    # a grid axis of size > 1 that no key varies along would broadcast: not a plain view
    for r in range(rank):
        if any(g[0][r] > 1 for g in grids) and not any(g[0][r] > 1 and g[1][r] != 0 for g in grids):
            return None
    return out


def _pattern(cg, node, t: Tensor, exprs, grids, shape: tuple[int, ...]) -> Tensor:
    """A general affine map as an access pattern over ``t``'s storage."""
    rank = len(shape)
    strides = [0] * rank
    offset: Index | int = 0
    for d, (e, (sizes, coeffs)) in enumerate(zip(exprs, grids)):
        for r in range(rank):
            if sizes[r] > 1:
                strides[r] += coeffs[r] * t.strides[d]
        offset = simplify(as_index(offset).add(as_index(e.const).scale(t.strides[d])))
    if any(s < 0 for s in strides):
        raise cg.fail(node, "index expressions with negative steps are not supported", NKITypeError)
    if any(s == 0 and n > 1 for s, n in zip(strides, shape)):
        raise cg.fail(node, "an index grid axis that no key varies along would read the same "
                            "elements repeatedly (a broadcast); use .broadcast_to on the tile "
                            "instead", NKITypeError)
    if t.on_chip and (rank < 2 or strides[0] != t.strides[0] or any(
            e.coeffs and e._grid(rank)[1][0] != 0 for e in exprs[1:])):
        raise cg.fail(node, "on-chip tensors keep their partition dim: grid axis 0 must index dim 0 "
                            "with step 1 and the free dims must not depend on it (strided or "
                            "permuted access is allowed on free dims only)", NKITypeError)
    base_offset = t.offset_index
    total = simplify(as_index(base_offset).add(offset))
    return cg.b.reinterpret(t, shape, strides, total)


def _indirect(cg, node, t: Tensor, keys: list, tiles: list[int]) -> Tensor:
    """``data[idx_tile, i_f]``: rows gathered through an SBUF index tile on the dim that
    becomes the result's partition dim: dim 0, or the dim after leading int / loop-index
    keys of an HBM tensor (``data[b, idx_tile, i_f]``: those dims are dropped first)."""
    lead = tiles[0] if len(tiles) == 1 else -1
    if lead > 0 and not t.on_chip and all(
            is_int(k) or isinstance(k, Index) for k in keys[:lead]):
        from ..indexing import index_tensor
        view = index_tensor(cg, node, t, tuple(keys[:lead]) + (Ellipsis,))
        return _indirect(cg, node, view, keys[lead:], [0])
    if tiles != [0]:
        raise cg.fail(node, "a tile used as an index (dynamic / indirect indexing) is only allowed on "
                            "the partition (first) dim, after any int / loop-index keys",
                      NKITypeError, code="err_indirect_indices_free_dim")
    rest = []
    for d, k in enumerate(keys[1:], start=1):
        if isinstance(k, IndexExpr):
            axes = k.axes()
            if k.rank < 2:
                raise cg.fail(node, "a 1-D nl.arange cannot index a tensor", NKITypeError,
                              code="err_1d_arange_not_supported")
            if len(axes) > 1 or (axes and k.coeffs[axes[0]] != 1):
                raise cg.fail(node, "with an indirect partition index the free index must be a plain "
                                    "nl.arange range", NKITypeError)
            n = k.sizes[axes[0]] if axes else 1
            start = k.const
            stop = as_index(start).add(n) if not is_int(start) else int(start) + n
            rest.append(slice(simplify(start), simplify(stop), 1))
        else:
            rest.append(k)
    from ..indexing import index_tensor
    return index_tensor(cg, node, t, tuple([keys[0]] + rest))


# ------------------------------------------------------------------ nl.arange, nl.par_dim


class ParDim(int):
    """``nl.par_dim(n)``: the partition dim's size in a Beta 1 shape (an int marker)."""

    def __repr__(self) -> str:
        return f"nl.par_dim({int(self)})"


@handles("nl.arange")
def arange(cg, start, stop=None, step=1):
    """``nl.arange([start,] stop)``: a 1-D index grid ``start .. stop-1`` (give it a 2-D shape
    with ``[:, None]`` / ``[None, :]`` before indexing)."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not is_int(v):
            raise cg.b.error(f"nl.arange: bounds must be compile-time ints, got {v!r}", NKITypeError)
    if int(step) <= 0 or int(stop) <= int(start):
        raise cg.b.error(f"nl.arange({start}, {stop}, {step}) is empty or has a non-positive step",
                         NKITypeError)
    return IndexExpr.arange(int(start), int(stop), int(step))


@handles("nl.par_dim")
def par_dim(cg, n):
    if not is_int(n) or int(n) <= 0:
        raise cg.b.error(f"nl.par_dim: the partition size must be a positive int, got {n!r}", NKITypeError)
    return ParDim(int(n))


from .. import indexing as _indexing  # noqa: E402

_indexing.BETA1_FORMS.update(is_advanced=is_advanced, index_advanced=index_advanced)  # nl.arange keys

__all__ = ["index_advanced", "is_advanced", "ParDim", "np"]
