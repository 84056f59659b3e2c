"""In-place assignment into a tensor: ``t[...] = value`` (NKI Beta 1).

``t[idx] = value`` writes ``value`` into the view ``t[idx]`` (NKI language guide (nki/get-started/nki-language-guide),
"Assignment"): a number is a ``memset``; an on-chip tile is copied with an
``nki.tensor_copy`` marked ``nki.assign`` -- ``nki-legalize`` folds that copy away when the
value is a fresh result nobody else reads, so ``t[...] = nl.exp(x)`` becomes one
``activation`` writing ``t`` directly (the same IR as Beta 2's ``nisa.activation(dst=t, ...)``).
An HBM destination is a store (``dma_copy``).  The destination must be at least as large
as the value; the value broadcasts to it with NumPy rules (size-1 dims), otherwise it is
``err_store_dst_shape_smaller_than_other_shape``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import UnitAttr

from ..dialects.ods_ops import op_class
from ..errors import NKITypeError
from .builtins import HANDLERS
from .values import Tensor

#: the attribute marking a copy made for an assignment (it may be folded into its producer)
ASSIGN_ATTR = "nki.assign"
_NUMBER = (int, float, bool, np.integer, np.floating, np.bool_)


def assign_into(cg, dst: Tensor, value: Any) -> None:
    """Write ``value`` (a tile or a number) into the view ``dst``.

    Raises:
        NKITypeError: ``value`` is not a tile or number, or does not broadcast to ``dst``
            (``err_store_dst_shape_smaller_than_other_shape``).
    """
    if isinstance(value, _NUMBER):
        if not dst.on_chip:
            raise cg.b.error(f"cannot assign a number to {dst.describe()}: HBM tensors are written "
                             f"by storing a tile (nl.store)", NKITypeError)
        HANDLERS["nisa.memset"](cg, dst, value)
        return
    if not isinstance(value, Tensor):
        raise cg.b.error(f"cannot assign {type(value).__name__} {value!r} into a tensor; assign a "
                         f"tile or a number", NKITypeError)
    if tuple(value.shape) != tuple(dst.shape):
        value = broadcast_value(cg, dst, value)
    if not dst.on_chip:
        HANDLERS["nl.store"](cg, dst, value)
        return
    if not value.on_chip:
        HANDLERS["nisa.dma_copy"](cg, dst, value)
        return
    op = cg.b.emit(op_class("nki.tensor_copy").build(operands=[dst.value, value.value]))
    op.attributes[ASSIGN_ATTR] = UnitAttr()


def broadcast_value(cg, dst: Tensor, value: Tensor) -> Tensor:
    """``value`` broadcast (NumPy rules, size-1 dims) to ``dst``'s shape."""
    src, want = tuple(value.shape), tuple(dst.shape)
    ok = len(src) <= len(want)
    if ok:
        try:
            ok = np.broadcast_shapes(src, want) == want
        except ValueError:
            ok = False
    if not ok:
        raise cg.b.error(f"cannot assign a tile of shape {list(src)} into {dst.describe()}: the "
                         f"destination must be at least as large as the value, which broadcasts "
                         f"to it only along size-1 dims", NKITypeError,
                         code="err_store_dst_shape_smaller_than_other_shape")
    if len(src) < len(want):
        value = HANDLERS["tensor.reshape"](cg, value, (1,) * (len(want) - len(src)) + src)
    return HANDLERS["nl.broadcast_to"](cg, value, want)
