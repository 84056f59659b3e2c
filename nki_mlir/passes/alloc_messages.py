"""The messages of ``nisa-allocate`` (:mod:`.allocate`): a tensor's name, shape, dtype, bytes
per partition and location, and the overflow message listing the largest live tensors
(``Tensor`` and ``Arena`` are :mod:`.allocate`'s, which imports this module)."""
from __future__ import annotations


from xdsl.dialects.builtin import StringAttr

from .. import dtypes
from ..diagnostics import loc_of



#: how many live tensors an overflow message lists
LISTED = 8


def tensor_name(t: "Tensor") -> str:
    """The user's name (``nkim.name``), else the SSA name, else ``<unnamed>``."""
    attr = t.op.attributes.get("nkim.name")
    if isinstance(attr, StringAttr):
        return attr.data
    return t.op.result.name_hint or "<unnamed>"


def _where(t: "Tensor") -> str:
    loc = loc_of(t.op)
    return f"{loc.file}:{loc.line}" if loc is not None else "<unknown location>"


def _shape_dtype(t: "Tensor") -> str:
    ty = t.op.result.type
    try:
        dt = dtypes.name_of(dtypes.from_mlir(ty.element_type))
    except KeyError:
        dt = str(ty.element_type)
    return f"{list(ty.get_shape())} {dt}"


def _bytes(t: "Tensor") -> str:
    """``'2048 bytes per partition'``, with the copies of a multi-buffered tensor."""
    if t.copies == 1:
        return f"{t.size} bytes per partition"
    return f"{t.footprint} bytes per partition ({t.copies} rotating copies of {t.size})"


def describe_tensor(t: "Tensor") -> str:
    """``'a_sb' ([128, 512] float32, 2048 bytes per partition, kernel.py:12)``."""
    return f"'{tensor_name(t)}' ({_shape_dtype(t)}, {_bytes(t)}, {_where(t)})"


def overflow_message(t: "Tensor", live: list["Tensor"], arena: "Arena", target: str) -> str:
    """Why ``t`` does not fit: capacity, need, and the largest tensors live with it."""
    need = t.footprint + sum(o.footprint for o in live)
    mem = arena.space.upper()
    msg = (f"cannot place tensor '{tensor_name(t)}' in {mem}: the tensors live at the same time "
           f"need {need} bytes per partition, but {mem} on {target} has {arena.capacity} "
           f"bytes per partition")
    if need <= arena.capacity:
        msg += (" (no free range can hold it: the free space is fragmented by alignment, "
                "PSUM bank boundaries or the placement of other tensors)")
    rows = sorted([t, *live], key=lambda o: (-o.footprint, o.base.start))
    msg += "\nlargest live tensors:"
    for o in rows[:LISTED]:
        msg += f"\n  '{tensor_name(o)}' {_shape_dtype(o)}: {_bytes(o)} at {_where(o)}"
    if len(rows) > LISTED:
        msg += f"\n  ... and {len(rows) - LISTED} more"
    return msg
