"""Glue between source locations (of IR ops, of the user's calls) and located :class:`~nki_mlir.errors.NKIError`s.

Every op the frontend emits carries ``loc("file.py":line:col)``; passes and the
interpreter use :func:`loc_of` to point their diagnostics at the user's source line.
"""
from __future__ import annotations

import functools
import os
import sys
from typing import TYPE_CHECKING

from .errors import NKIError, SourceLoc

if TYPE_CHECKING:  # xDSL loads on first use: ``import nki_mlir`` (a warm cache hit) needs none of it
    from xdsl.dialects.builtin import FileLineColLoc
    from xdsl.ir import Operation

#: the nki_mlir package directory: frames inside it are not the user's
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class OpSite:
    """What a run-time diagnostic says about an op, as plain data: its ``name``, its source
    position ``loc`` (None without one) and ``hint``, the name hint of its first result
    (None without one or when not asked for: :func:`site_of`).  A decoded program keeps
    these instead of the op, so that it holds none of the compile's IR; :func:`loc_of` and
    :func:`error_at` take either."""

    __slots__ = ("name", "loc", "hint")

    def __init__(self, name: str, loc: SourceLoc | None, hint: str | None):
        self.name, self.loc, self.hint = name, loc, hint

    def __repr__(self) -> str:
        return f"<OpSite {self.name} at {self.loc}>"


def site_of(op: Operation | OpSite | None, hint: bool = False) -> OpSite | None:
    """The :class:`OpSite` of ``op`` (one shared object per name, position and hint; the
    hint is left out unless ``hint``).  A decode asks for one per instruction, so the
    sites of a location attribute are remembered by its identity until
    :func:`forget_sites`."""
    if op is None or type(op) is OpSite:
        return op
    attr = op.location
    hit = _BY_LOC.get(id(attr))
    if hit is None or hit[0] is not attr:
        if len(_BY_LOC) >= _BY_LOC_MAX:
            _BY_LOC.clear()
        hit = _BY_LOC[id(attr)] = (attr, {})
    name = op.name
    if hint:
        res = op.results
        key = (name, res[0].name_hint if res else None)
    else:
        key = name
    site = hit[1].get(key)
    if site is None:
        site = hit[1][key] = _site(name, loc_of(op), key[1] if hint else None)
    return site


#: ``id(location attribute) -> (attribute, {(name, hint): site})`` (:func:`site_of`)
_BY_LOC: dict[int, tuple] = {}
_BY_LOC_MAX = 1 << 14


def forget_sites() -> None:
    """Drop :func:`site_of`'s memo of location attributes (a decode's end: the sites stay
    shared through :func:`_site`, which keeps no IR)."""
    _BY_LOC.clear()


@functools.lru_cache(maxsize=1 << 16)
def _site(name: str, loc: SourceLoc | None, hint: str | None) -> OpSite:
    return OpSite(name, loc, hint)


def loc_of(op: Operation | OpSite | None) -> SourceLoc | None:
    """The kernel source position an op (or an :class:`OpSite`) came from, or None if it
    has none."""
    if op is None:
        return None
    if type(op) is OpSite:
        return op.loc
    from xdsl.dialects.builtin import FileLineColLoc  # loaded already: ``op`` is xDSL IR
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
    return None


def make_loc(loc: SourceLoc) -> FileLineColLoc:
    """The MLIR location attribute ``loc("file":line:col)`` of a source position (one shared
    object per position: attributes are immutable)."""
    return _file_line_col(loc.file, loc.line, loc.col)


@functools.lru_cache(maxsize=1 << 14)
def _file_line_col(file: str, line: int, col: int) -> FileLineColLoc:
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))


def error_at(op: Operation | None, message: str, cls: type[NKIError] = NKIError, **kw) -> NKIError:
    """An ``NKIError`` of class ``cls`` located at ``op``'s source position (``op``: an op
    or its :class:`OpSite`)."""
    err = cls(message, loc_of(op), **kw)
    err.op = op      # lets a driver without source locations (nki-opt) place it in its input
    return err


def caller_loc() -> SourceLoc | None:
    """The location of the innermost frame outside nki-mlir (the user's launch or call)."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_PKG_DIR + os.sep):
            col = 1
            try:
                import inspect
                pos = inspect.getframeinfo(f, context=0).positions  # Python 3.11+
                if pos is not None and pos.col_offset is not None:
                    col = pos.col_offset + 1
            except (AttributeError, ValueError):
                pass
            return SourceLoc(path, f.f_lineno, col)
        f = f.f_back
    return None
