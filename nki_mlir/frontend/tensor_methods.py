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
  these, ``ap``, the queries and the indirect DMA are in :mod:`.tensor_ap`;
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

from .builtins import handles
from .values import Index, Indirect, Tensor, as_index, is_int, simplify
from .view_layout import (_OOB, _dim, _direct, _err, _index_tensor, _infer, _int, _not_partition,
                          _prod, _rank, _restride_view, _row_major, _shape_arg, _what, restride,
                          scalar_index_of)


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
