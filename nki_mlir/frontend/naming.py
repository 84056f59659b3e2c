"""Names of allocations: the variable a kernel line binds a fresh tensor or register to.

Names make diagnostics and printed IR readable (``tensor 'out_tile' ...``, ``%out_tile``);
they never change what a kernel computes.
"""
from __future__ import annotations

import linecache
import re
from typing import Any

from ..dialects.common import str_attr

from ..errors import SourceLoc
from .isa_control import Register
from .values import Tensor

_BINDING = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def binding_name(loc: SourceLoc) -> str | None:
    """``x`` when the line at ``loc`` is ``x = <expr>`` and ``loc`` lies inside ``<expr>``."""
    m = _BINDING.match(linecache.getline(loc.file, loc.line))
    if m is None or loc.col - 1 < m.end():
        return None
    return m.group(1)


def name_tensor(value: Any, name: str) -> None:
    """Give an unnamed allocation (a base tensor or a writable register) ``name``."""
    if isinstance(value, Register) and not value.readonly and not value.name:
        value.value.name_hint = name if name.isidentifier() else None
        object.__setattr__(value, "name", name)
        return
    if isinstance(value, Tensor) and value.is_base and not value.name:
        op = value.value.owner
        defn = getattr(type(op), "get_irdl_definition", None)
        if defn is not None and "name" in defn().properties and "name" not in op.properties:
            op.properties["name"] = str_attr(name)     # (shared: attributes are immutable)
        value.value.name_hint = name if name.isidentifier() else None
        object.__setattr__(value, "name", name)
