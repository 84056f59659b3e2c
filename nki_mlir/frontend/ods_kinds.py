"""The table of argument conversions for operand kinds beyond those of
:mod:`.ods_calls` (a leaf module, so a kind's frontend module can fill it without importing
the generated handlers).

``CONVERTERS[kind] = convert``: ``kind`` a :class:`~nki_mlir.dialects.ods.Param` subclass
(``dialects/ods_registers.Register``), ``convert(cg, api, param, value) -> SSA value`` the
conversion of one argument of that kind, raising a located ``NKITypeError`` for a bad one.
Filled by the frontend module of each kind (registers: :mod:`.isa_control`).
"""
from __future__ import annotations

from collections.abc import Callable

#: operand kind -> ``convert(cg, api, param, value) -> SSA value``
CONVERTERS: dict[type, Callable] = {}

__all__ = ["CONVERTERS"]
