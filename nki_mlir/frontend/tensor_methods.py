"""Frontend handlers for ``NkiTensor`` methods (``t.slice(...)``, ``t.ap(...)``, ...).

A method ``m`` is registered as ``@handles("tensor.m")`` and called as
``handler(cg, tensor, *args, **kwargs)``.  Semantics: nki.language API reference (nki/api/nki/language).

Every view shares storage with its source.  A :class:`~.values.Tensor` carries its layout
over the *underlying storage* (``strides`` and ``offset`` in elements; for SBUF/PSUM the
partition stride is the storage's free size), so views of views compose by arithmetic on
that layout and each method emits one upstream op whose result is a strided memref of the
same storage:

- ``slice`` / ``select`` (static or loop index): ``memref.subview``;
- ``permute``, ``broadcast`` (stride 0), ``expand_dim``, ``squeeze_dim``, ``reshape``,
  ``reshape_dim``, ``flatten_dims``, ``rearrange``, ``ap``: ``memref.reinterpret_cast``
  whose offset/strides are absolute (from the start of the buffer, as in MLIR);
- ``view(dtype)`` (and ``ap(dtype=...)``): ``nki.view_dtype`` (``dialects/views.py``);
- ``ap(vector_offset=idx)`` / ``vector_select(0, idx)`` / ``select(0, idx[P,1])`` on HBM:
  an *indirect* view (``Tensor.indirect``), which only ``nisa.dma_copy`` accepts and which
  becomes ``nki.dma_copy_indirect``: row ``i`` of the view is row ``idx[i]`` of the table
  ``[rows, *pattern[1:]]`` (the indirect dim's pattern index is *replaced* by the index
  value, the row pitch being ``prod(storage.shape[1:])``);
- ``scalar_offset=`` / ``select(dim, x)`` with a register or a ``(1, 1)`` int tensor ``x``: a
  dynamic offset read at run time (``isa_control.scalar_index``).

On-chip restrictions (nki.language API reference (nki/api/nki/language)): views cannot
move, broadcast, insert, squeeze or reshape the partition dim (dim 0), cannot stride it,
select it dynamically or index it indirectly, and ``ap`` patterns must start with
``[free_size_of_storage, nparts]``.  Views have at most 5 dims.
"""
from __future__ import annotations

import re
from typing import Any

from .. import dtypes
from ..errors import NKITypeError
from .builtins import handles
from .values import Index, Indirect, Tensor, as_index, is_int, simplify

#: dims of an NkiTensor view (NKI architecture guide (nki/guides/architecture))
MAX_VIEW_DIMS = 5
_OOB = "err_tensor_access_out_of_bound"


# ----------------------------------------------------------------------------- helpers


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


def _static_bounds(cg, t: Tensor, method: str, shape, strides, offset) -> None:
    """The pattern stays inside the storage (a compile-time check when ``offset`` is static;
    with a dynamic offset the interpreter checks every execution)."""
    sto = t.storage_shape
    total = _prod(sto)
    lo = sum(min(0, s * (n - 1)) for s, n in zip(strides, shape))
    hi = sum(max(0, s * (n - 1)) for s, n in zip(strides, shape))
    if isinstance(offset, Index):
        if hi - lo + 1 > total:
            raise _err(cg, method, f"the access pattern spans {hi - lo + 1} elements but the "
                                   f"storage has {total}", _OOB)
        return
    if t.on_chip:
        free = _prod(sto[1:])
        p0, f0 = divmod(offset, free)
        nparts = shape[0]
        flo = sum(min(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:]))
        fhi = sum(max(0, s * (n - 1)) for s, n in zip(strides[1:], shape[1:]))
        if p0 + nparts > sto[0] or f0 + flo < 0 or f0 + fhi >= free:
            raise _err(cg, method, f"the access pattern (offset {offset}, partitions "
                                   f"[{p0}, {p0 + nparts}), free elements [{f0 + flo}, "
                                   f"{f0 + fhi + 1})) is outside the storage of {sto[0]} "
                                   f"partitions x {free} elements", _OOB)
        return
    if offset + lo < 0 or offset + hi >= total:
        raise _err(cg, method, f"the access pattern covers elements [{offset + lo}, "
                               f"{offset + hi + 1}) but the storage {list(sto)} has {total}", _OOB)


# ------------------------------------------------------------------- slicing / selection


@handles("tensor.slice")
def slice_(cg, t: Tensor, dim, start, end, step=1):
    """``t.slice(dim, start, end, step=1)``: elements ``start:end:step`` of ``dim``
    (``0 <= start < end <= shape[dim]``, ``step >= 1``; ``start`` may be a loop index when
    ``end - start`` is a compile-time int)."""
    m = "slice"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim)
    step = _int(cg, m, "step", step)
    if step < 1:
        raise _err(cg, m, f"step must be >= 1, got {step}")
    if t.on_chip and d == 0 and step != 1:
        raise _err(cg, m, f"step {step} on dim 0 of {_what(t)}: an instruction accesses a "
                          f"contiguous range of partitions (no partition striding)")
    for role, v in (("start", start), ("end", end)):
        if not (is_int(v) or isinstance(v, Index)):
            raise _err(cg, m, f"'{role}' must be an int or a loop-index expression, got {v!r}")
    start, end = simplify(start), simplify(end)
    extent = simplify(as_index(end).sub(start))
    if not is_int(extent):
        raise _err(cg, m, "end - start must be known at compile time (it depends on a loop index)")
    dimsize = t.shape[d]
    if extent <= 0 or (is_int(start) and not 0 <= start < end <= dimsize) or extent > dimsize:
        raise _err(cg, m, f"slice({d}, {start}, {end}) needs 0 <= start < end <= {dimsize} "
                          f"(dim {d} of {_what(t)})", _OOB)
    size = (int(extent) + step - 1) // step
    offsets = [0] * t.ndim
    offsets[d] = start
    sizes = list(t.shape)
    sizes[d] = size
    steps = [1] * t.ndim
    steps[d] = step
    return cg.b.subview(t, offsets, sizes, steps, [True] * t.ndim)


@handles("tensor.select")
def select(cg, t: Tensor, dim, index):
    """``t.select(dim, index)``: fix ``dim`` at ``index`` and drop it (on-chip the partition
    dim stays as size 1, and a tensor keeps 2 dims).  ``index``: an int, a loop index, a
    register or ``(1, 1)`` int tensor (read at run time), or on HBM dim 0 an SBUF ``[P, 1]``
    index tensor (a per-partition gather, like ``vector_select``)."""
    m = "select"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim)
    if isinstance(index, Tensor) and index.shape[0] > 1:
        return _vector_select(cg, t, d, index, m)
    if is_int(index):
        i = int(index)
        if i < 0:
            i += t.shape[d]
        if not 0 <= i < t.shape[d]:
            raise _err(cg, m, f"index {int(index)} is out of bounds for dim {d} of {_what(t)}", _OOB)
        off: Index | int = i
    else:
        if t.on_chip and d == 0:
            raise _err(cg, m, f"dynamic selection on dim 0 of {_what(t)} is not allowed (the "
                              f"partition dim of an on-chip tensor must be static)")
        off = index if isinstance(index, Index) else scalar_index_of(cg, index, m, "index")
    keep = [k != d for k in range(t.ndim)]
    if t.on_chip:
        keep[0] = True
        if sum(keep) < 2:
            keep[d] = True
    elif not any(keep):
        keep[d] = True
    offsets = [0] * t.ndim
    offsets[d] = off
    sizes = list(t.shape)
    sizes[d] = 1
    return cg.b.subview(t, offsets, sizes, [1] * t.ndim, keep)


@handles("tensor.vector_select")
def vector_select(cg, t: Tensor, dim, index):
    """``t.vector_select(0, idx)``: row ``i`` of the result is row ``idx[i]`` of ``t``
    (``idx`` an SBUF ``[P, 1]`` int32/uint32 tensor; HBM tensors only; an indirect view
    for ``nisa.dma_copy``)."""
    m = "vector_select"
    _direct(cg, t, m)
    return _vector_select(cg, t, _dim(cg, t, m, dim), index, m)


def _vector_select(cg, t: Tensor, d: int, index, m: str) -> Tensor:
    if t.on_chip:
        raise _err(cg, m, f"dynamic selection on dim 0 of {_what(t)} is not allowed; a "
                          f"per-partition gather reads an HBM tensor")
    if d != 0:
        raise _err(cg, m, f"a per-partition index selects dim 0 only, got dim {d}")
    idx = _index_tensor(cg, m, "index", index)
    return Tensor(t.value, (idx.shape[0],) + t.shape[1:], t.dtype, t.buffer, t.strides, t.offset,
                  cg.b.block, t.name, is_base=False, storage=t.storage_shape,
                  dyn_offset=t.dyn_offset, indirect=Indirect(idx, t))


def _index_tensor(cg, method: str, role: str, v: Any) -> Tensor:
    if not isinstance(v, Tensor):
        raise _err(cg, method, f"'{role}' must be an SBUF [P, 1] int32/uint32 tensor, got {v!r}")
    if v.buffer != "sbuf" or v.ndim != 2 or v.shape[1] != 1 or v.indirect is not None:
        raise _err(cg, method, f"'{role}' must be an SBUF [P, 1] tensor (one row number per "
                               f"partition), got {_what(v)}")
    if v.dtype not in (dtypes.int32, dtypes.uint32):
        raise _err(cg, method, f"'{role}' must be int32 or uint32, got {dtypes.name_of(v.dtype)}")
    return v


# ------------------------------------------------------------------- layout views


@handles("tensor.permute")
def permute(cg, t: Tensor, *dims):
    """``t.permute(dims)``: reorder the dims (on-chip ``dims[0]`` must be 0)."""
    m = "permute"
    _direct(cg, t, m)
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    ds = [_dim(cg, t, m, x) for x in dims]
    if sorted(ds) != list(range(t.ndim)):
        raise _err(cg, m, f"dims {list(dims)} are not a permutation of the {t.ndim} dims of {_what(t)}")
    if t.on_chip and ds[0] != 0:
        raise _err(cg, m, f"dims[0] must be 0 for {_what(t)} (dim 0 is the partition dim and "
                          f"cannot move), got dims={list(dims)}")
    return cg.b.reinterpret(t, [t.shape[k] for k in ds], [t.strides[k] for k in ds], t.offset_index)


@handles("tensor.broadcast")
def broadcast(cg, t: Tensor, dim, size):
    """``t.broadcast(dim, size)``: repeat a size-1 dim ``size`` times (stride 0)."""
    m = "broadcast"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim)
    size = _int(cg, m, "size", size)
    _not_partition(cg, t, m, d, "broadcast")
    if t.shape[d] != 1:
        raise _err(cg, m, f"dim {d} of {_what(t)} has size {t.shape[d]}; only a size-1 dim can "
                          f"be broadcast")
    if size < 1:
        raise _err(cg, m, f"size must be >= 1, got {size}")
    shape, strides = list(t.shape), list(t.strides)
    shape[d], strides[d] = size, 0
    return cg.b.reinterpret(t, shape, strides, t.offset_index)


@handles("tensor.expand_dim")
def expand_dim(cg, t: Tensor, dim):
    """``t.expand_dim(dim)``: insert a size-1 dim at position ``dim`` (not 0 on-chip)."""
    m = "expand_dim"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim, extra=1)
    _not_partition(cg, t, m, d, "insert a dim before")
    shape, strides = list(t.shape), list(t.strides)
    stride = strides[d] * shape[d] if d < t.ndim else 1
    shape.insert(d, 1)
    strides.insert(d, stride)
    _rank(cg, t, m, shape)
    return cg.b.reinterpret(t, shape, strides, t.offset_index)


@handles("tensor.squeeze_dim")
def squeeze_dim(cg, t: Tensor, dim):
    """``t.squeeze_dim(dim)``: drop a size-1 dim (not 0 on-chip)."""
    m = "squeeze_dim"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim)
    _not_partition(cg, t, m, d, "squeeze")
    if t.shape[d] != 1:
        raise _err(cg, m, f"dim {d} of {_what(t)} has size {t.shape[d]}; only a size-1 dim can "
                          f"be squeezed")
    shape = [n for k, n in enumerate(t.shape) if k != d]
    strides = [s for k, s in enumerate(t.strides) if k != d]
    _rank(cg, t, m, shape)
    return cg.b.reinterpret(t, shape, strides, t.offset_index)


@handles("tensor.reshape")
def reshape(cg, t: Tensor, *shape, **kw):
    """``t.reshape(shape)`` or ``t.reshape(shape=...)``: same elements, new shape (one -1
    allowed; on-chip ``shape[0]`` unchanged; the layout must allow it without a copy).
    See nki/api/nki.language.rst (tensor.reshape).  Other keywords raise ``NKITypeError``."""
    m = "reshape"
    if kw:
        if set(kw) != {"shape"} or shape:
            raise _err(cg, m, f"takes the new shape positionally or as shape=, got keywords "
                              f"{sorted(kw)} and {len(shape)} positional argument(s)")
        shape = (kw["shape"],)
    _direct(cg, t, m)
    new = _infer(cg, m, _shape_arg(cg, m, shape), t.size)
    _rank(cg, t, m, new)
    if tuple(new) == t.shape:
        return t
    return cg.b.reinterpret(t, new, _restride_view(cg, t, m, new), t.offset_index)


@handles("tensor.reshape_dim")
def reshape_dim(cg, t: Tensor, dim, *shape):
    """``t.reshape_dim(dim, shape)``: split ``dim`` into ``shape`` (one -1 allowed)."""
    m = "reshape_dim"
    _direct(cg, t, m)
    d = _dim(cg, t, m, dim)
    parts = _infer(cg, m, _shape_arg(cg, m, shape), t.shape[d])
    if t.on_chip and d == 0 and parts != [t.shape[0]]:
        raise _err(cg, m, f"cannot reshape dim 0 of {_what(t)} into {parts}: dim 0 is the "
                          f"partition dim")
    new_shape = list(t.shape[:d]) + parts + list(t.shape[d + 1:])
    _rank(cg, t, m, new_shape)
    inner = _row_major(parts)
    new_strides = list(t.strides[:d]) + [t.strides[d] * s for s in inner] + list(t.strides[d + 1:])
    return cg.b.reinterpret(t, new_shape, new_strides, t.offset_index)


@handles("tensor.flatten_dims")
def flatten_dims(cg, t: Tensor, start_dim, end_dim):
    """``t.flatten_dims(s, e)``: merge dims ``s..e`` (inclusive) into one; ``s > 0`` on-chip;
    the merged dims must be contiguous with each other."""
    m = "flatten_dims"
    _direct(cg, t, m)
    s, e = _dim(cg, t, m, start_dim), _dim(cg, t, m, end_dim)
    if s > e:
        raise _err(cg, m, f"start dim {start_dim} is after end dim {end_dim}")
    if t.on_chip and s == 0:
        raise _err(cg, m, f"start dim must be > 0 for {_what(t)}: dim 0 is the partition dim")
    new_shape = list(t.shape[:s]) + [_prod(t.shape[s:e + 1])] + list(t.shape[e + 1:])
    merged = restride(t.shape[s:e + 1], t.strides[s:e + 1], [new_shape[s]])
    if merged is None:
        raise _err(cg, m, f"dims {s}..{e} of {_what(t)} (sizes {list(t.shape[s:e + 1])}, strides "
                          f"{list(t.strides[s:e + 1])}) are not contiguous, so they cannot be "
                          f"merged without a copy")
    new_strides = list(t.strides[:s]) + [merged[0]] + list(t.strides[e + 1:])
    return cg.b.reinterpret(t, new_shape, new_strides, t.offset_index)


_TOKEN = re.compile(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S")


def _groups(cg, m: str, side: str) -> list[list[str]]:
    groups: list[list[str]] = []
    cur: list[str] | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if cur is not None:
                raise _err(cg, m, f"nested parentheses in {side!r}")
            cur = []
        elif tok == ")":
            if cur is None:
                raise _err(cg, m, f"unbalanced ')' in {side!r}")
            groups.append(cur)
            cur = None
        elif re.match(r"[A-Za-z_]", tok):
            if cur is None:
                groups.append([tok])
            else:
                cur.append(tok)
        else:
            raise _err(cg, m, f"unexpected {tok!r} in {side!r} (axis names, spaces and "
                              f"parentheses only)")
    if cur is not None:
        raise _err(cg, m, f"unbalanced '(' in {side!r}")
    return groups


@handles("tensor.rearrange")
def rearrange(cg, t: Tensor, src, dst=None, sizes=None, **axis_sizes):
    """``t.rearrange("p (a b)", "p b a", {"a": 4})`` (or one ``"src -> dst"`` string):
    einops-style split / permute / merge in one view.  On-chip the first axis must stay
    the partition axis."""
    m = "rearrange"
    _direct(cg, t, m)
    if dst is None or (isinstance(dst, dict) and sizes is None):
        if not isinstance(src, str) or "->" not in src:
            raise _err(cg, m, "give the source and destination patterns, e.g. "
                              "rearrange('p (a b)', 'p b a', {'a': 4}) or 'p (a b) -> p b a'")
        sizes = dst if isinstance(dst, dict) else sizes
        src, dst = (s.strip() for s in src.split("->", 1))
    if not isinstance(src, str) or not isinstance(dst, str):
        raise _err(cg, m, f"patterns must be strings, got {src!r} and {dst!r}")
    if sizes is not None and not isinstance(sizes, dict):
        raise _err(cg, m, f"sizes must be a dict of axis name -> size, got {sizes!r}")
    known: dict[str, int] = {}
    for k, v in list((sizes or {}).items()) + list(axis_sizes.items()):
        known[str(k)] = _int(cg, m, f"sizes[{k!r}]", v)
    sg, dg = _groups(cg, m, src), _groups(cg, m, dst)
    if len(sg) != t.ndim:
        raise _err(cg, m, f"pattern {src!r} has {len(sg)} dims but {_what(t)} has {t.ndim}")
    names = [a for g in sg for a in g]
    dnames = [a for g in dg for a in g]
    if len(set(names)) != len(names) or sorted(names) != sorted(dnames):
        raise _err(cg, m, f"{src!r} and {dst!r} must name the same axes, each once")
    size: dict[str, int] = {}
    stride: dict[str, int] = {}
    for d, g in enumerate(sg):
        unknown = [a for a in g if a not in known]
        if len(unknown) > 1:
            raise _err(cg, m, f"group ({' '.join(g)}) of dim {d} has more than one axis of "
                              f"unknown size {unknown}; give sizes")
        kprod = _prod(known[a] for a in g if a in known)
        if unknown:
            if t.shape[d] % kprod:
                raise _err(cg, m, f"dim {d} of size {t.shape[d]} does not split into "
                                  f"({' '.join(g)}) with sizes {known}")
            size[unknown[0]] = t.shape[d] // kprod
        elif kprod != t.shape[d]:
            raise _err(cg, m, f"axes ({' '.join(g)}) have {kprod} elements but dim {d} has "
                              f"{t.shape[d]}")
        for a in g:
            size.setdefault(a, known.get(a, 1))
        for a, s in zip(g, _row_major([size[a] for a in g])):
            stride[a] = t.strides[d] * s
    if t.on_chip and (len(sg[0]) != 1 or dg[0] != sg[0]):
        raise _err(cg, m, f"the first axis of {src!r} must stay the first (partition) axis of "
                          f"{dst!r} for {_what(t)}")
    shape, strides = [], []
    for g in dg:
        n = _prod(size[a] for a in g)
        merged = restride([size[a] for a in g], [stride[a] for a in g], [n])
        if merged is None:
            raise _err(cg, m, f"axes ({' '.join(g)}) are not contiguous in {_what(t)}, so they "
                              f"cannot be merged without a copy")
        shape.append(n)
        strides.append(merged[0])
    _rank(cg, t, m, shape)
    return cg.b.reinterpret(t, shape, strides, t.offset_index)


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
    except Exception:  # noqa: BLE001 -- any non-dtype
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
    """``t.ap(pattern, offset=0, scalar_offset=None, vector_offset=None, indirect_dim=0,
    dtype=None)``: the raw access pattern ``[[stride, count], ...]`` over ``t``'s underlying
    storage (``t``'s own view is ignored).  Element ``(i0, i1, ...)`` is storage element
    ``offset + sum(stride_k * i_k)``; on-chip ``pattern[0]`` must be
    ``[free_size_of_storage, nparts]``.  ``scalar_offset`` (int, loop index, register or
    ``(1, 1)`` int tensor) adds ``scalar_offset * prod(storage.shape[indirect_dim + 1:])``;
    ``vector_offset`` (SBUF ``[P, 1]`` int tensor, HBM only, ``indirect_dim=0``) makes row
    ``i0`` read storage row ``vector_offset[i0]`` (an indirect view for ``nisa.dma_copy``).
    ``dtype`` reinterprets the storage first (pattern and offset then count ``dtype``
    elements)."""
    m = "ap"
    _direct(cg, t, m)
    pat = _pattern(cg, m, pattern)
    src = t
    if dtype is not None and _dtype(cg, m, dtype) != t.dtype:
        sto = t.storage_shape
        whole = cg.b.reinterpret(t, sto, _row_major(sto), 0)
        src = _retype(cg, whole, m, _dtype(cg, m, dtype))
    sto = src.storage_shape
    idim = _int(cg, m, "indirect_dim", indirect_dim)
    if not 0 <= idim < len(sto):
        raise _err(cg, m, f"indirect_dim {idim} is out of range for a storage of {len(sto)} dims")
    off: Index | int
    if offset is None:
        off = 0
    elif is_int(offset) or isinstance(offset, Index):
        off = simplify(offset)
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
        off = simplify(as_index(off).add(as_index(so).scale(_prod(sto[idim + 1:]))))
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
        pitch = _prod(sto[1:])
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
    _static_bounds(cg, src, m, shape, strides, off)
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
    from ..dialects.views import NkiDmaCopyIndirectOp
    from .args import emit
    if d.indirect is None and s.indirect is not None and d.shape[0] != s.shape[0]:
        raise cg.b.error(f"{api}: dst has {d.shape[0]} rows but the indirect src selects "
                         f"{s.shape[0]} rows (one per index)", NKITypeError)
    ops = {"dst": (d.indirect.table if d.indirect else d).value,
           "src": (s.indirect.table if s.indirect else s).value,
           "src_index": s.indirect.index.value if s.indirect else None,
           "dst_index": d.indirect.index.value if d.indirect else None}
    emit(cg, NkiDmaCopyIndirectOp, ops, {"oob_mode": oob_mode, "dge_mode": dge_mode})


__all__ = ["restride", "scalar_index_of", "emit_indirect_dma", "MAX_VIEW_DIMS"]
