"""Shared checks and layout arithmetic of ``NkiTensor`` views (the handlers are in
:mod:`.tensor_methods` and :mod:`.tensor_ap`).

A :class:`~.values.Tensor` carries its layout over the underlying storage (``strides`` and
``offset`` in elements); :func:`restride` re-expresses a reshape of a strided layout, and
the ``_`` helpers give the located errors every method shares.
"""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..errors import NKITypeError
from .values import Index, Tensor, is_int

#: dims of an NkiTensor view (NKI architecture guide (nki/guides/architecture))
MAX_VIEW_DIMS = 5
_OOB = "err_tensor_access_out_of_bound"


def _err(cg, method: str, msg: str, code: str | None = None) -> Exception:
    return cg.b.error(f"tensor.{method}: {msg}", NKITypeError, code=code)


def _what(t: Tensor) -> str:
    return f"{t.name or 'tensor'} {list(t.shape)} in {t.buffer}"


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _row_major(shape) -> tuple[int, ...]:
    out, acc = [], 1
    for d in reversed(tuple(shape)):
        out.append(acc)
        acc *= int(d)
    return tuple(reversed(out))


def _int(cg, method: str, role: str, v: Any) -> int:
    if not is_int(v):
        raise _err(cg, method, f"'{role}' must be a compile-time int, got {v!r}")
    return int(v)


def _dim(cg, t: Tensor, method: str, dim: Any, *, extra: int = 0) -> int:
    """``dim`` normalised to ``[0, ndim + extra)`` (negative dims count from the end)."""
    d = _int(cg, method, "dim", dim)
    n = t.ndim + extra
    if d < 0:
        d += n
    if not 0 <= d < n:
        raise _err(cg, method, f"dim {dim} is out of range for {_what(t)} (valid: "
                               f"{-n}..{n - 1})", _OOB)
    return d


def _not_partition(cg, t: Tensor, method: str, d: int, what: str) -> None:
    """NKI error catalogue (nki.errors): a view op touching dim 0 of an on-chip tensor."""
    if t.on_chip and d == 0:
        raise _err(cg, method, f"cannot {what} dim 0 of {_what(t)}: dim 0 is the partition "
                               f"dim, which views of SBUF/PSUM tensors cannot change")


def _direct(cg, t: Tensor, method: str) -> None:
    if t.indirect is not None:
        raise _err(cg, method, f"{_what(t)} is an indirect view (its dim 0 is selected by an "
                               f"index tensor); an indirect dimension cannot be sliced, selected "
                               f"or reshaped again -- pass it to nisa.dma_copy")


def _rank(cg, t: Tensor, method: str, shape) -> None:
    if len(shape) > MAX_VIEW_DIMS:
        raise _err(cg, method, f"the view would have {len(shape)} dims {list(shape)}, more than "
                               f"the {MAX_VIEW_DIMS} an NkiTensor view allows",
                   "err_exceed_max_supported_dimension")
    if t.on_chip and len(shape) < 2:
        raise _err(cg, method, f"an {t.buffer} view needs at least 2 dims (partition + free), "
                               f"got {list(shape)} (Insufficient rank)")
    if not t.on_chip and len(shape) < 1:
        raise _err(cg, method, "an HBM view needs at least 1 dim")


def _shape_arg(cg, method: str, args: tuple) -> list:
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    out = []
    for s in shape:
        if not is_int(s):
            raise _err(cg, method, f"shape entries must be compile-time ints, got {s!r}")
        out.append(int(s))
    return out


def _infer(cg, method: str, shape: list, total: int) -> list:
    """Resolve one -1 in ``shape`` so that the product is ``total``."""
    if shape.count(-1) > 1:
        raise _err(cg, method, f"at most one -1 in the shape, got {shape}")
    if any(s == 0 or s < -1 for s in shape):
        raise _err(cg, method, f"shape entries must be positive (or one -1), got {shape}")
    if -1 in shape:
        known = _prod(s for s in shape if s != -1)
        if total % known:
            raise _err(cg, method, f"cannot infer -1 in {shape}: {total} elements do not divide "
                                   f"by {known}")
        shape = [total // known if s == -1 else s for s in shape]
    if _prod(shape) != total:
        raise _err(cg, method, f"shape {shape} has {_prod(shape)} elements but the tensor has "
                               f"{total}; reshape must preserve the element count")
    return shape


def restride(old_shape, old_strides, new_shape) -> tuple[int, ...] | None:
    """Strides viewing (``old_shape``, ``old_strides``) as ``new_shape`` without a copy, or None.

    Dims are grouped so that each group of old dims has the product of a group of new dims;
    the old dims of a group must be mutually contiguous (size-1 dims are ignored), as in
    NumPy's no-copy reshape.
    """
    olds = [(int(n), int(s)) for n, s in zip(old_shape, old_strides) if n != 1]
    new = [int(n) for n in new_shape]
    out = [0] * len(new)
    oi, ni = 0, 0
    while oi < len(olds) and ni < len(new):
        oj, nj = oi + 1, ni + 1
        op, np_ = olds[oi][0], new[ni]
        while op != np_:
            if np_ < op:
                if nj >= len(new):
                    return None
                np_ *= new[nj]
                nj += 1
            else:
                if oj >= len(olds):
                    return None
                op *= olds[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if olds[k][1] != olds[k + 1][0] * olds[k + 1][1]:
                return None
        out[nj - 1] = olds[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        oi, ni = oj, nj
    if oi != len(olds):
        return None
    for k in range(ni, len(new)):  # trailing size-1 dims
        if new[k] != 1:
            return None
        out[k] = 1
    return tuple(out)


def _restride_view(cg, t: Tensor, method: str, new_shape) -> tuple[int, ...]:
    """Strides of ``t`` reshaped to ``new_shape`` (on-chip: dim 0 kept as is)."""
    if t.on_chip:
        if new_shape[0] != t.shape[0]:
            raise _err(cg, method, f"cannot change the partition dim of {_what(t)}: new shape "
                                   f"{list(new_shape)} has {new_shape[0]} partitions (dim 0 must "
                                   f"stay {t.shape[0]})")
        free = restride(t.shape[1:], t.strides[1:], new_shape[1:])
        strides = None if free is None else (t.strides[0],) + free
    else:
        strides = restride(t.shape, t.strides, new_shape)
    if strides is None:
        raise _err(cg, method, f"{_what(t)} with strides {list(t.strides)} is not contiguous "
                               f"enough to be viewed as {list(new_shape)}; copy it first "
                               f"(reshape/flatten need a contiguous layout)")
    return strides


def scalar_index_of(cg, value: Any, method: str, role: str) -> Index:
    """A run-time index read from a register or a ``(1, 1)`` int tensor (isa_control)."""
    try:
        from .isa_control import scalar_index
    except ImportError:  # pragma: no cover -- registers not merged yet
        raise _err(cg, method, f"'{role}' read from a tensor or register at run time is not "
                               f"supported yet (no nki_mlir.frontend.isa_control.scalar_index)")
    return Index.of(scalar_index(cg, value, f"tensor.{method}", role))


def _extents(shape, strides) -> tuple[int, int, int, int]:
    """``(lo, hi)`` of the element offsets an access pattern reaches from its start (the
    sums of each dim's negative / positive extent ``stride * (size - 1)``), then the same
    over the free dims (all but the first)."""
    lo = hi = flo = fhi = 0
    first = True
    for s, n in zip(strides, shape):
        e = s * (n - 1)
        if e < 0:
            lo += e
            if not first:
                flo += e
        elif e > 0:
            hi += e
            if not first:
                fhi += e
        first = False
    return lo, hi, flo, fhi


def _static_bounds(cg, t: Tensor, method: str, shape, strides, offset) -> None:
    """The pattern stays inside the storage (a compile-time check when ``offset`` is static;
    with a dynamic offset the interpreter checks every execution)."""
    sto = t.storage_shape
    total = _prod(sto)
    lo, hi, flo, fhi = _extents(shape, strides)
    if isinstance(offset, Index):
        if hi - lo + 1 > total:
            raise _err(cg, method, f"the access pattern spans {hi - lo + 1} elements but the "
                                   f"storage has {total}", _OOB)
        return
    if t.on_chip:
        free = _prod(sto[1:])
        p0, f0 = divmod(offset, free)
        nparts = shape[0]
        if p0 + nparts > sto[0] or f0 + flo < 0 or f0 + fhi >= free:
            raise _err(cg, method, f"the access pattern (offset {offset}, partitions "
                                   f"[{p0}, {p0 + nparts}), free elements [{f0 + flo}, "
                                   f"{f0 + fhi + 1})) is outside the storage of {sto[0]} "
                                   f"partitions x {free} elements", _OOB)
        return
    if offset + lo < 0 or offset + hi >= total:
        raise _err(cg, method, f"the access pattern covers elements [{offset + lo}, "
                               f"{offset + hi + 1}) but the storage {list(sto)} has {total}", _OOB)


def _index_tensor(cg, method: str, role: str, v: Any) -> Tensor:
    """The ``[P, 1]`` row-number tensor of an indirect view; an SBUF ``[P, 1, ..., 1]`` view
    (one element per partition, e.g. a column picked with ``ap``) is taken as its ``[P, 1]``
    reshape."""
    if not isinstance(v, Tensor):
        raise _err(cg, method, f"'{role}' must be an SBUF [P, 1] int32/uint32 tensor, got {v!r}")
    if v.buffer == "sbuf" and v.ndim > 2 and v.indirect is None and all(d == 1 for d in v.shape[1:]):
        v = cg.b.reinterpret(v, [v.shape[0], 1], [v.strides[0], 1], v.offset_index)
    if v.buffer != "sbuf" or v.ndim != 2 or v.shape[1] != 1 or v.indirect is not None:
        raise _err(cg, method, f"'{role}' must be an SBUF [P, 1] tensor (one row number per "
                               f"partition), got {_what(v)}")
    if v.dtype not in (dtypes.int32, dtypes.uint32):
        raise _err(cg, method, f"'{role}' must be int32 or uint32, got {dtypes.name_of(v.dtype)}")
    return v
