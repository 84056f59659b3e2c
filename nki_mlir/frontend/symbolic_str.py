"""f-strings of a symbolic program id: a name like ``f"out_{pid}"`` keeps a launch traced once.

A kernel traced once for every program instance of its launch (:mod:`.spmd`) sees
``nl.program_id`` as a symbolic :class:`~.proxies.LoopIndex`.  Kernels put it in
instruction names (``name=f"mask_bo{batch_start}"``); formatting it as a Python ``str``
would need its value and trace the kernel once per instance.  The tracer therefore rewrites
the kernel's f-strings (:mod:`.loop_rewrite`) into :func:`nki_fstr`:

- no value is symbolic: the ``str`` Python builds (same conversions ``!r !s !a`` and format
  specs; the values are formatted after all of them are evaluated, not each one before the
  next is evaluated: the same string unless formatting one changes another);
- a value is a symbolic program id (or such a name): a :class:`SymbolicName`, which an NKI
  call takes as its ``name=`` (rendered with the expression's source text,
  ``"mask_bo{batch_start}"``), and which may be concatenated and formatted into further
  names.  Every other use -- comparing, hashing, ``len``, slicing, ``str()``, a string
  method, another argument of an NKI call -- needs the real text: the kernel is traced again
  per instance, as if the f-string had been Python's.

An index of a rolled loop in an f-string is formatted as before (its loop is unrolled).
"""
from __future__ import annotations

from typing import Any

from .context import LAUNCH_KEY
from .proxies import LoopIndex

_LAUNCH_ONLY = frozenset((LAUNCH_KEY,))
_CONVERT = {115: str, 114: repr, 97: ascii}    # ast.FormattedValue.conversion: !s !r !a


def _symbolic(v: Any) -> bool:
    t = type(v)
    return t is SymbolicName or (t is LoopIndex and v.keys <= _LAUNCH_ONLY)


def nki_fstr(*parts: Any) -> Any:
    """An f-string's value: ``parts`` are its literal ``str`` pieces and ``(value,
    conversion, format_spec, source)`` for each replacement field.

    (Every f-string of a kernel and its helpers runs here, log messages included: the
    common case, no symbolic field, is two plain loops, without a call per field.)"""
    for p in parts:
        if type(p) is tuple:
            t = type(p[0])
            if (t is SymbolicName or t is LoopIndex) and _symbolic(p[0]) and p[1] == -1 \
                    and not p[2]:
                return SymbolicName(parts)
    return _join(parts)


def _join(parts: tuple | list) -> str:
    """The text of ``parts`` (``str`` pieces and ``(value, conversion, format_spec,
    source)`` fields), each field formatted as Python's f-string formats it."""
    out = []
    for p in parts:
        if type(p) is str:
            out.append(p)
            continue
        v, conv, spec, _ = p
        if conv != -1:
            v = _CONVERT[conv](v)
        out.append(format(v, spec) if spec is not None else format(v))
    return "".join(out)


class SymbolicName:
    """A ``str`` whose text depends on a symbolic program id (see the module docstring)."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple):
        self.parts = parts

    def render(self) -> str:
        """The text with each symbolic field shown as its source: ``"out_{pid}"``."""
        return _join([p if type(p) is str
                      else p[0].render() if type(p[0]) is SymbolicName
                      else "{" + p[3] + "}" if _symbolic(p[0])
                      else p for p in self.parts])

    def _index(self) -> LoopIndex:
        for p in self.parts:
            if type(p) is tuple:
                v = p[0]
                if type(v) is LoopIndex and v.keys <= _LAUNCH_ONLY:
                    return v
                if type(v) is SymbolicName:
                    return v._index()
        raise AssertionError("internal error: a SymbolicName without a symbolic field")

    def concretize(self, what: str):
        from .context import tracer
        tracer().concretize(self._index(), f"in a string that is {what}")

    # ------------------------------------------------ building more names stays symbolic
    def __add__(self, other: Any) -> Any:
        if type(other) is SymbolicName:
            return SymbolicName((*self.parts, *other.parts))
        if type(other) is str:
            return SymbolicName((*self.parts, other))
        return NotImplemented

    def __radd__(self, other: Any) -> Any:
        if type(other) is str:
            return SymbolicName((other, *self.parts))
        return NotImplemented

    # ------------------------------------------------ uses that need the text
    def __str__(self) -> str:
        self.concretize("converted with str()")

    def __repr__(self) -> str:
        self.concretize("shown with repr()")

    def __format__(self, spec: str) -> str:
        self.concretize("formatted")

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        self.concretize("compared")

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        self.concretize("compared")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __hash__(self) -> int:
        self.concretize("used as a dict key or set member")

    def __len__(self) -> int:
        self.concretize("measured with len()")

    def __bool__(self) -> bool:
        self.concretize("used as a truth value")

    def __getitem__(self, key: Any) -> Any:
        self.concretize("indexed or sliced")

    def __iter__(self):
        self.concretize("iterated over")

    def __contains__(self, item: Any) -> bool:
        self.concretize("searched with 'in'")

    def __mul__(self, other: Any) -> Any:
        self.concretize("repeated with '*'")

    __rmul__ = __mul__

    def __mod__(self, other: Any) -> Any:
        self.concretize("formatted with '%'")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self.concretize(f"used through the str method .{name}()")
