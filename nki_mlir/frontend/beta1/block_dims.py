"""Beta 1 block dimensions: ``nl.ndarray((B0, B1, nl.par_dim(P), F0, F1), buffer=nl.sbuf)``.

Semantics (Neuron SDK migration guide, "Removing block dimensions from NKI kernels";
``nki.compiler.sbuf.mod_alloc`` / ``psum.mod_alloc`` API pages): the dims left of
``nl.par_dim`` are block dims, a logical array of ``B0 * B1`` tiles of shape
``[P, F0, F1]``.  ``t[i]`` / ``t[i, :, :]`` / ``t[i, i_p, i_f]`` index one block (``i`` an
int or a loop index); ``t[i]`` of a tensor with two block dims keeps the second.  A
block dim cannot be indexed with ``nl.arange`` / a slice mixed with index expressions,
and a tensor with block dims must be indexed down to a tile before an instruction uses it.

Layout (the migration guide's "move the block dimension into the free dimension", which
it documents as functionally equivalent): the storage is one on-chip tensor
``[P, S0, S1, F0, F1]`` whose block slots ``S`` sit in the free dims, so every block has its
own free-dim space in every partition and a block-dim tensor occupies
``S0 * S1 * F0 * F1 * itemsize`` bytes per partition.  Block ``(i0, i1)`` is slot
``(i0 % S0, i1 % S1)``:

- automatic placement: ``S = B`` (one slot per block, the modulo is the identity);
- ``ncc.sbuf.mod_alloc(num_free_tiles=(S0, S1))``: ``S`` as given, ``()`` meaning all 1
  (every block at ``base_addr``), slots ``F0 * F1 * itemsize`` bytes apart;
- ``ncc.psum.mod_alloc(num_bank_tiles=(S0,))``: one PSUM bank (2 KiB) per slot;
  ``num_free_tiles`` as for SBUF.

A PSUM slot never straddles a bank: when a block's bytes do not divide 2 KiB (or are not
whole banks) the slots are padded (the storage is bigger than the view over it).

Because blocks are plain offsets into one buffer, the dependence analysis, the hazard
checks and the interpreter see exactly which bytes each instruction touches: blocks ``i``
and ``j`` are independent only when their slots are provably distinct.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Callable

import numpy as np

from ...errors import NKIError, NKITypeError
from ...targets import PSUM_BANK_BYTES  # bytes per partition of one PSUM bank
from ..values import DynSlice, Index, Tensor, as_index, is_int, simplify
from .index import ParDim


# ------------------------------------------------------------------------ allocation


def split_shape(cg, api: str, raw_shape: Any, buffer: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(blocks, tile_shape)`` of a Beta 1 shape: the dims left of ``nl.par_dim`` and the
    rest.  ``blocks`` is empty when ``par_dim`` is absent or first, and for HBM tensors
    (where ``par_dim`` marks nothing: the shape is used as written)."""
    if not isinstance(raw_shape, (tuple, list)):
        return (), ()
    at = [i for i, d in enumerate(raw_shape) if isinstance(d, ParDim)]
    if len(at) > 1:
        raise cg.b.error(f"{api}: nl.par_dim marks one dim, got {len(at)} in {tuple(raw_shape)}",
                         NKITypeError)
    if not at or at[0] == 0:
        return (), tuple(raw_shape)
    if buffer not in ("sbuf", "psum"):
        return (), tuple(int(d) if isinstance(d, ParDim) else d for d in raw_shape)
    n = at[0]
    return tuple(int(d) for d in raw_shape[:n]), tuple(int(d) for d in raw_shape[n:])


def psum_slot_bytes(block_bytes: int) -> int:
    """Bytes per partition between two PSUM block slots so that no slot straddles a bank:
    the next power of two (at most one bank), or whole banks."""
    if block_bytes <= PSUM_BANK_BYTES:
        return 1 << max(int(block_bytes) - 1, 0).bit_length()
    return -(-block_bytes // PSUM_BANK_BYTES) * PSUM_BANK_BYTES


def new_block_tensor(cg, api: str, make: Callable[[tuple[int, ...]], Tensor], blocks: tuple[int, ...],
                     slots: tuple[int, ...], tile: tuple[int, ...], dtype, buffer: str,
                     slot_bytes: int | None = None) -> Tensor:
    """A tensor of ``blocks`` tiles of shape ``tile`` over ``slots`` physical slots.

    ``make(shape)`` emits the allocation of the storage (``[P, *slots, *free]``).
    ``slot_bytes``: bytes per partition between consecutive slots (default: one block's
    bytes, PSUM rounded by :func:`psum_slot_bytes`).
    """
    itemsize = np.dtype(dtype).itemsize
    part, free = tile[0], tuple(tile[1:])
    block_bytes = int(np.prod(free, dtype=np.int64)) * itemsize
    nslots = int(np.prod(slots, dtype=np.int64))
    if slot_bytes is None:
        slot_bytes = psum_slot_bytes(block_bytes) if buffer == "psum" and nslots > 1 else block_bytes
    pairs = tuple(zip(blocks, slots))
    if slot_bytes < block_bytes and nslots > 1:
        raise cg.b.error(f"{api}: a block of {block_bytes} bytes per partition does not fit its "
                         f"slot of {slot_bytes} bytes (one PSUM bank per slot)", NKITypeError)
    if slot_bytes == block_bytes:
        t = make((part, *slots, *free))
        return dataclasses.replace(t, blocks=pairs)
    if slot_bytes % itemsize:
        raise cg.b.error(f"{api}: block slots {slot_bytes} bytes apart are not a whole number of "
                         f"{np.dtype(dtype).name} elements", NKITypeError)
    slot_elems = slot_bytes // itemsize
    base = make((part, *slots, slot_elems))
    strides, acc = [], slot_elems
    for s in reversed(slots):
        strides.insert(0, acc)
        acc *= int(s)
    from ...dialects.common import contiguous_strides
    free_strides = tuple(contiguous_strides(free)) if free else ()
    view = cg.b.reinterpret(base, (part, *slots, *free), (acc, *strides, *free_strides), 0)
    return dataclasses.replace(view, blocks=pairs, name=base.name)


# -------------------------------------------------------------------------- indexing


def user_keys(t: Tensor, key: Any) -> list:
    """``key`` as one entry per user-visible dim of ``t`` (block dims first); ``...`` expanded."""
    keys = list(key) if isinstance(key, tuple) else [key]
    ndim = len(t.user_shape)
    if Ellipsis in keys and sum(k is Ellipsis for k in keys) == 1:
        at = keys.index(Ellipsis)
        keys = keys[:at] + [slice(None)] * (ndim - (len(keys) - 1)) + keys[at + 1:]
    return keys


def scalar_blocks(t: Tensor, key: Any) -> bool:
    """True when ``key`` indexes every block dim of ``t`` with an int or a loop index."""
    keys = user_keys(t, key)
    nb = len(t.blocks)
    return len(keys) >= nb and all(_is_scalar(k) for k in keys[:nb])


def index_blocks(cg, node: ast.AST, t: Tensor, key: Any, plain: Callable) -> tuple[Tensor, Any]:
    """``t[key]`` for a tensor with block dims.

    Returns ``(tile, rest)``: when every block dim is indexed by an int / loop index,
    ``tile`` is that block (a tile, no block dims) and ``rest`` the keys still to apply to
    it; otherwise ``rest`` is None and ``tile`` is the view (block dims kept by slices stay
    block dims).  ``plain(cg, node, t, keys)`` indexes ignoring block dims.

    Raises:
        NKITypeError: a block index out of bounds, an index expression / tensor on a block
            dim, a partial slice of a modulo-allocated block dim, index expressions with
            block dims kept.
    """
    keys = user_keys(t, key)
    if sum(k is Ellipsis for k in keys) > 1:
        raise cg.fail(node, "an index can contain at most one '...'", NKITypeError)
    nb = len(t.blocks)
    bkeys, rest = keys[:nb], keys[nb:]
    bkeys += [slice(None)] * (nb - len(bkeys))
    phys: list = []
    kept: list[tuple[int, int]] = []
    for d, (k, (size, slots)) in enumerate(zip(bkeys, t.blocks)):
        if isinstance(k, DynSlice):
            k = slice(k.start, as_index(k.start).add(k.size), 1)
        if _is_scalar(k):
            x = simplify(k)
            if is_int(x):
                x = int(x) + (size if int(x) < 0 else 0)
                if not 0 <= x < size:
                    raise cg.fail(node, f"block index {k} is out of bounds for block dim {d} of "
                                        f"size {size}", NKITypeError,
                                  code="err_tensor_access_out_of_bound")
            phys.append(_slot(cg, x, size, slots))
        elif isinstance(k, slice):
            whole = k.start in (None, 0) and k.stop in (None, size) and k.step in (None, 1)
            if whole:
                phys.append(slice(None))
                kept.append((size, slots))
            elif slots != size:
                raise cg.fail(node, f"a slice {_show_slice(k)} of block dim {d}, whose {size} blocks "
                                    f"share {slots} slots (modulo allocation), is not supported; "
                                    f"index one block at a time", NKIError, category="not implemented")
            else:
                from ..indexing import _slice
                start, n, step = _slice(cg, node, k, size, d)
                phys.append(slice(start, simplify(as_index(start).add((n - 1) * step + 1)), step))
                kept.append((n, n))
        else:
            raise cg.fail(node, f"block dim {d} (a dim left of nl.par_dim) is indexed by an int, a "
                                f"loop index or a slice, not {type(k).__name__} {k!r}", NKITypeError)
    ntile = t.ndim - nb
    if not kept:
        tile = plain(cg, node, t, tuple([slice(None)] + phys + [slice(None)] * (ntile - 1)))
        return tile, tuple(rest)
    from .index import is_advanced
    if is_advanced(rest):
        raise cg.fail(node, "index expressions (nl.arange / nl.mgrid) apply to one block: index "
                            "every block dim with an int or a loop index first", NKITypeError,
                      code="err_unsupported_mixing_basic_advanced_tensor_indexing")
    if len(rest) > ntile:
        raise cg.fail(node, f"too many indices: tensor has {len(t.user_shape)} dims, got "
                            f"{len(keys)}", NKITypeError, code="err_tensor_access_out_of_bound")
    rest = rest + [slice(None)] * (ntile - len(rest))
    view = plain(cg, node, t, tuple([rest[0]] + phys + rest[1:]))
    return dataclasses.replace(view, blocks=tuple(kept)), None


def _is_scalar(k: Any) -> bool:
    return isinstance(k, Index) or is_int(k)


def _slot(cg, x: "Index | int", size: int, slots: int) -> "Index | int":
    """The physical slot of block ``x``: ``x % slots`` (the identity when every block has
    its own slot)."""
    if slots >= size:
        return x
    if slots == 1:
        return 0
    if is_int(x):
        return int(x) % slots
    return cg.b.index_arith("mod", x, slots)


def _show_slice(k: slice) -> str:
    return f"{'' if k.start is None else k.start}:{'' if k.stop is None else k.stop}"


def check_operand(cg, api: str, v: Any) -> None:
    """An instruction operand must be a tile: a tensor with block dims is a located error."""
    if isinstance(v, Tensor) and v.blocks:
        raise cg.b.error(f"{api}: operand {v.name or 'tensor'} {list(v.user_shape)} still has block "
                         f"dims {[b for b, _ in v.blocks]} (the dims left of nl.par_dim); index one "
                         f"block first, e.g. t[i] or t[i, :, :]", NKITypeError)


from .. import indexing as _indexing  # noqa: E402

_indexing.BETA1_FORMS["index_blocks"] = index_blocks   # subscripts of tensors with block dims
