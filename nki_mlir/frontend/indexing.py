"""Tensor subscripts (``t[i*128:(i+1)*128, nl.ds(j*512, 512)]``) as ``memref.subview``.

A subscript by a tensor or register is ``t.select(dim, x)`` (tensor_methods.py): a
``(1, 1)`` int tensor or a register is read at run time; on HBM dim 0 an SBUF ``[P, 1]``
int tensor gathers rows (an indirect view for ``nisa.dma_copy``).  One such key per
subscript.

Rules (nki.language API reference (nki/api/nki/language), NKI ``NkiTensor`` indexing): integers, slices with a
static positive step, ``...`` and ``nl.ds(start, size)``; starts may depend on loop
indices, sizes must be compile-time.  On-chip: an integer on dim 0 keeps a size-1
partition dim; an integer on a free dim drops it unless the result would fall below
2-D.  HBM: an integer drops the dim (the result stays at least 1-D).  Static
out-of-range accesses are ``err_tensor_access_out_of_bound``.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..errors import NKITypeError
from .values import DynSlice, Index, Tensor, as_index, is_int, simplify

#: the Beta 1 forms of a subscript, registered by the Beta 1 front when it is imported (this
#: module, below it, does not import it): ``index_blocks(cg, node, t, key, plain)`` for a
#: tensor with block dims (beta1/block_dims.py), ``is_advanced(keys)`` /
#: ``index_advanced(cg, node, t, keys)`` for nl.arange / nl.mgrid keys (beta1/index.py)
BETA1_FORMS: dict[str, Callable[..., Any]] = {}


def index_tensor(cg, node: ast.AST, t: Tensor, key: Any) -> Tensor:
    if t.blocks:  # Beta 1 block dims (beta1/block_dims.py): the block first, then the tile
        t, key = BETA1_FORMS["index_blocks"](cg, node, t, key, _index_plain)
        if key is None:
            return t
    return _index_plain(cg, node, t, key)


def _index_plain(cg, node: ast.AST, t: Tensor, key: Any) -> Tensor:
    keys = list(key) if isinstance(key, tuple) else [key]
    for k in keys:
        if type(k) not in _STATIC_KEYS:     # (the usual keys are no index expression)
            advanced = BETA1_FORMS.get("is_advanced")
            if advanced is not None and advanced(keys):  # Beta 1 nl.arange / nl.mgrid index expressions
                return BETA1_FORMS["index_advanced"](cg, node, t, keys)
            break
    if sum(k is Ellipsis for k in keys) > 1:
        raise cg.fail(node, "an index can contain at most one '...'", NKITypeError)
    if Ellipsis in keys:
        at = keys.index(Ellipsis)
        fill = t.ndim - (len(keys) - 1)
        keys = keys[:at] + [slice(None)] * fill + keys[at + 1:]
    if len(keys) > t.ndim:
        raise cg.fail(node, f"too many indices: tensor has {t.ndim} dims, got {len(keys)}",
                      NKITypeError, code="err_tensor_access_out_of_bound")
    keys += [slice(None)] * (t.ndim - len(keys))
    dyn = [d for d, k in enumerate(keys) if _is_runtime_index(k)]
    if dyn:
        return _runtime_index(cg, node, t, keys, dyn)

    offsets: list[Index | int] = []
    sizes: list[int] = []
    steps: list[int] = []
    is_scalar: list[bool] = []
    for d, k in enumerate(keys):
        dim = t.shape[d]
        if isinstance(k, DynSlice):
            k = slice(k.start, as_index(k.start).add(k.size), 1)
        if isinstance(k, (Index, int)) and not isinstance(k, bool) and (is_int(k) or isinstance(k, Index)):
            start = simplify(k)
            if is_int(start):
                start = int(start)
                if start < 0:
                    start += dim
                if not 0 <= start < dim:
                    raise cg.fail(node, f"index {k} is out of bounds for dim {d} of size {dim}",
                                  NKITypeError, code="err_tensor_access_out_of_bound")
            offsets.append(start)
            sizes.append(1)
            steps.append(1)
            is_scalar.append(True)
        elif isinstance(k, slice):
            start, size, step = _slice(cg, node, k, dim, d)
            offsets.append(start)
            sizes.append(size)
            steps.append(step)
            is_scalar.append(False)
        elif isinstance(k, Tensor):
            raise cg.fail(node, "indexing a tensor with a tensor (indirect access) is not supported "
                                "yet; use a static or loop-index subscript", NKITypeError)
        else:
            raise cg.fail(node, f"cannot index a tensor with {type(k).__name__} {k!r}; use ints, "
                                f"slices, nl.ds(start, size) or '...'", NKITypeError)

    keep = [not s for s in is_scalar]
    if t.on_chip:
        keep[0] = True
        if sum(keep) < 2:
            last = max(i for i in range(1, t.ndim)) if t.ndim > 1 else 0
            keep[last] = True
    elif not any(keep):
        keep[-1] = True
    if all(keep) and all(o == 0 for o in offsets if is_int(o)) and all(is_int(o) for o in offsets) \
            and list(sizes) == list(t.shape) and all(s == 1 for s in steps):
        return t  # the whole tensor
    return cg.b.subview(t, offsets, sizes, steps, keep)


def _slice(cg, node, k: slice, dim: int, d: int) -> tuple[Index | int, int, int]:
    step = 1 if k.step is None else k.step
    if not is_int(step) or step < 1:
        raise cg.fail(node, f"slice step must be a positive compile-time int, got {step!r}", NKITypeError)
    start = 0 if k.start is None else simplify(k.start)
    stop = dim if k.stop is None else simplify(k.stop)
    for v in (start, stop):
        if not (is_int(v) or isinstance(v, Index)):
            raise cg.fail(node, f"slice bounds must be ints or loop-index expressions, got {v!r}",
                          NKITypeError)
    if is_int(start) and start < 0:
        start += dim
    if is_int(stop) and stop < 0:
        stop += dim
    extent = simplify(as_index(stop).sub(start))
    if not is_int(extent):
        raise cg.fail(node, "the size of a slice must be known at compile time (stop - start "
                            "must not depend on a loop index); use nl.ds(start, size)", NKITypeError)
    if extent <= 0:
        raise cg.fail(node, f"empty slice {start}:{stop} on dim {d}", NKITypeError,
                      code="err_tensor_access_out_of_bound")
    size = (int(extent) + step - 1) // step
    if is_int(start):
        if start < 0 or int(start) + int(extent) > dim:
            raise cg.fail(node, f"slice {start}:{stop} is out of bounds for dim {d} of size {dim}",
                          NKITypeError, code="err_tensor_access_out_of_bound")
        start = int(start)
    elif size > dim:
        raise cg.fail(node, f"slice of size {size} is larger than dim {d} of size {dim}",
                      NKITypeError, code="err_tensor_access_out_of_bound")
    return start, size, step


def _is_runtime_index(k: Any) -> bool:
    if type(k) in _STATIC_KEYS:     # the usual keys, without the import below
        return False
    if isinstance(k, Tensor):
        return True
    try:
        from .isa_control import Register
    except ImportError:  # pragma: no cover
        return False
    return isinstance(k, Register)


#: key types that are never a runtime index (exact types: a subclass goes the long way)
_STATIC_KEYS = frozenset({slice, int, DynSlice, Index, type(Ellipsis)})


def _runtime_index(cg, node: ast.AST, t: Tensor, keys: list, dyn: list[int]) -> Tensor:
    """``t[..., x, ...]`` with a tensor / register ``x``: the other keys first, then
    ``select`` on the dim ``x`` indexes."""
    from .tensor_methods import select
    if len(dyn) > 1:
        raise cg.fail(node, "at most one tensor or register index per subscript", NKITypeError)
    d = dyn[0]
    x = keys[d]
    keys = list(keys)
    keys[d] = slice(None)
    v = index_tensor(cg, node, t, tuple(keys))
    # dims before d that the other keys dropped (integer keys) shift d left
    dropped = sum(1 for j, k in enumerate(keys[:d])
                  if (is_int(k) or isinstance(k, Index)) and not (t.on_chip and j == 0))
    cg.b.loc = cg.loc(node)
    return select(cg, v, d - dropped, x)
