"""Direct allocation (``nl.ndarray(..., address=(p, off))``, NKI ``nl.ndarray`` docs): the
``nkim.address`` attribute and the legal start partitions of an on-chip tensor."""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr

from ..diagnostics import error_at
from ..errors import NKIAllocationError

ATTR_ADDRESS = "nkim.address"   # [partition, byte_offset] from nl.ndarray(address=...)


def pinned_address(alloc) -> tuple[int, int] | None:
    """The ``[partition, byte_offset]`` the user asked for, or None.

    Raises:
        NKIAllocationError: the attribute is not a pair of integers."""
    attr = alloc.attributes.get(ATTR_ADDRESS)
    if attr is None:
        return None
    items = attr.data if isinstance(attr, ArrayAttr) else ()
    if len(items) != 2 or not all(isinstance(a, IntegerAttr) for a in items):
        raise error_at(alloc, f"{ATTR_ADDRESS} must be [partition, byte_offset], got {attr}",
                       NKIAllocationError, category="invalid address")
    return items[0].value.data, items[1].value.data


def legal_starts(partitions: int) -> tuple[int, ...]:
    """Start partitions an operand of ``partitions`` partitions may use (NKI architecture guide (nki/guides/architecture))."""
    if partitions > 64:
        return (0,)
    if partitions > 32:
        return (0, 64)
    return (0, 32, 64, 96)
