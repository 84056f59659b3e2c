"""Source locations of a traced kernel, read off the running Python frames.

When the tracer runs a kernel, every ``nki.language`` / ``nki.isa`` call, tensor method
and operator is a Python call into nki-mlir.  The kernel line that made it is the nearest
frame outside nki-mlir (and outside the standard library); its position comes from the
code object's ``co_positions()`` table (Python 3.11+: line and 0-based column of the
instruction being executed), so an op or an error points at the exact expression, in a
helper function or helper module as well as in the kernel itself.
"""
from __future__ import annotations

import bisect
import dis
import os
import sys
from types import CodeType, FrameType

from ..errors import SourceLoc

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_POSITIONS: dict[CodeType, list] = {}
_USER_FILE: dict[str, bool] = {}
#: (id(code), instruction offset) -> (code, the SourceLoc :func:`frame_loc` gives there),
#: when it does not depend on the frame's ``f_lineno`` (SourceLoc is immutable; the entry
#: keeps its code alive, and a hit must be that very code object: equal code objects of two
#: files compare equal, so the code itself is no key)
_LOCS: dict[tuple[int, int], tuple[CodeType, SourceLoc]] = {}


def is_user_file(filename: str) -> bool:
    """True for kernel code: not nki-mlir itself, not the standard library / site-packages."""
    hit = _USER_FILE.get(filename)
    if hit is None:
        from .source import _std_prefixes
        f = os.path.abspath(filename)
        hit = not f.startswith(_PKG_DIR) and not any(f.startswith(p) for p in _std_prefixes()) \
            and not filename.startswith("<frozen")
        _USER_FILE[filename] = hit
    return hit


def frame_loc(frame: FrameType) -> SourceLoc:
    """``file:line:col`` (1-based column) of the instruction ``frame`` is executing."""
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    hit = _LOCS.get(key)
    if hit is not None and hit[0] is code:
        return hit[1]
    table = _POSITIONS.get(code)
    if table is None:
        table = _POSITIONS[code] = list(code.co_positions())
    i = frame.f_lasti // 2
    line, col = frame.f_lineno, 0
    if 0 <= i < len(table) and _is_branch(code, frame.f_lasti):
        # a truth test: the branch spans the whole if/while statement; point at the
        # condition, the expression computed just before it
        j = i - 1
        while j >= 0 and (table[j][0] is None or table[j] == table[i]):
            j -= 1
        if j >= 0:
            i = j
    if 0 <= i < len(table):
        pline, _, pcol, _ = table[i]
        if pline is not None:
            line = pline
        if pcol is not None:
            col = pcol
        if pline is not None and pcol is not None:  # a function of (code, instruction) only
            loc = SourceLoc(code.co_filename, line, col + 1)
            _LOCS[key] = (code, loc)
            return loc
    return SourceLoc(code.co_filename, line, col + 1)


_BRANCHES = frozenset(op for name, op in dis.opmap.items() if "JUMP_IF" in name or
                      name.startswith("POP_JUMP"))


def _is_branch(code: CodeType, lasti: int) -> bool:
    return 0 <= lasti < len(code.co_code) and code.co_code[lasti] in _BRANCHES


_AND = frozenset(op for name, op in dis.opmap.items() if name == "JUMP_IF_FALSE_OR_POP")
_OR = frozenset(op for name, op in dis.opmap.items() if name == "JUMP_IF_TRUE_OR_POP")
_NOT = frozenset(op for name, op in dis.opmap.items() if name == "UNARY_NOT")


def truth_context() -> str:
    """What needs a truth value at the innermost user frame: ``"and"``, ``"or"``, ``"not"``,
    or ``"condition"`` (if / while / anything else)."""
    f = user_frame()
    if f is None or not 0 <= f.f_lasti < len(f.f_code.co_code):
        return "condition"
    op = f.f_code.co_code[f.f_lasti]
    return "and" if op in _AND else "or" if op in _OR else "not" if op in _NOT else "condition"


_STORES = frozenset(("STORE_FAST", "STORE_DEREF", "STORE_NAME"))
_DROPS = frozenset(("POP_TOP", "RETURN_VALUE"))
_NEXT: dict[CodeType, tuple[list[int], list[dis.Instruction]]] = {}


def result_use(frame: FrameType) -> tuple[str, str | None]:
    """What ``frame``'s code does with the value of the call it is executing, read off the
    instruction after the call: ``("name", x)`` for ``x = call(...)`` (the name is still
    bound to its previous value while the call runs), ``("global", x)`` for the same with
    ``global x``, ``("drop", None)`` for a call
    statement or ``return call(...)``, ``("other", None)`` for any other use (an argument,
    an operand, ``t[k] = call(...)``, whose target is evaluated after the call)."""
    code = frame.f_code
    table = _NEXT.get(code)
    if table is None:
        ins = list(dis.get_instructions(code))
        table = _NEXT[code] = ([i.offset for i in ins], ins)
    offsets, ins = table
    k = bisect.bisect_right(offsets, frame.f_lasti)  # f_lasti may be the call's last cache entry
    if k >= len(ins):
        return ("other", None)
    nxt = ins[k]
    if nxt.opname in _STORES:
        return ("name", nxt.argval)
    if nxt.opname == "STORE_GLOBAL":
        return ("global", nxt.argval)
    return ("drop", None) if nxt.opname in _DROPS else ("other", None)


def user_frame(skip: int = 0) -> FrameType | None:
    """The innermost frame of kernel code calling into nki-mlir.

    Every frame between it and the caller is nki-mlir's own, so the walk starts at the
    caller (``skip`` is accepted for readability of call sites and ignored)."""
    f = sys._getframe(1)
    known = _USER_FILE
    while f is not None:
        name = f.f_code.co_filename
        hit = known.get(name)       # (is_user_file's memo, read inline: one call per op)
        if hit is None:
            hit = is_user_file(name)
        if hit:
            return f
        f = f.f_back
    return None


def user_loc(skip: int = 0) -> SourceLoc | None:
    f = user_frame()
    return frame_loc(f) if f is not None else None


def call_chain(frame: FrameType | None, stop_code: CodeType | None) -> list[SourceLoc]:
    """Locations of the user frames calling ``frame``, innermost first, up to the kernel's
    own frame (whose code is ``stop_code``); empty when ``frame`` is the kernel's."""
    out: list[SourceLoc] = []
    f = frame
    while f is not None and f.f_code is not stop_code:
        f = f.f_back
        while f is not None and not is_user_file(f.f_code.co_filename):
            f = f.f_back
        if f is None:
            return []
        out.append(frame_loc(f))
    return out


_TRANSPARENT: set[CodeType] = set()


def transparent(fn):
    """Mark a function of nki-mlir that only forwards the user's own Python call (e.g. the
    NKIObject constructor): an exception passing through it is the user's, not internal."""
    _TRANSPARENT.add(fn.__code__)
    return fn


#: attribute lookups of nki-mlir's modules and objects: what they raise (an AttributeError
#: for a misspelt name) is the user's mistake, not an internal error
_LOOKUPS = frozenset({"__getattr__", "__getattribute__"})


def traceback_user_frame(tb) -> tuple[FrameType | None, bool]:
    """The innermost user frame of a traceback, and whether the exception was raised by
    nki-mlir's own code below it (an internal error) rather than by the user's."""
    last_user, internal = None, False
    while tb is not None:
        if tb.tb_frame.f_code in _TRANSPARENT or tb.tb_frame.f_code.co_name in _LOOKUPS:
            pass
        elif is_user_file(tb.tb_frame.f_code.co_filename):
            last_user, internal = tb.tb_frame, False
        else:
            internal = tb.tb_frame.f_code.co_filename.startswith(_PKG_DIR) or internal
        tb = tb.tb_next
    return last_user, internal


def tb_loc(tb, frame: FrameType) -> SourceLoc:
    """The location in ``frame`` recorded by traceback ``tb`` (the line it was executing)."""
    while tb is not None:
        if tb.tb_frame is frame:
            code = frame.f_code
            table = _POSITIONS.get(code)
            if table is None:
                table = _POSITIONS[code] = list(code.co_positions())
            i = tb.tb_lasti // 2
            if 0 <= i < len(table) and table[i][0] is not None:
                return SourceLoc(code.co_filename, table[i][0], (table[i][2] or 0) + 1)
            return SourceLoc(code.co_filename, tb.tb_lineno, 1)
        tb = tb.tb_next
    return frame_loc(frame)
