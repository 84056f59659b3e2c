"""A faster xDSL printer for whole modules: same text, attribute text printed once.

Large unrolled kernels print tens of thousands of ops whose attributes (buffer types,
locations) are shared or repeated; xDSL 0.74's :class:`~xdsl.printer.Printer` rebuilds an
attribute's text on every use, one small ``print`` call per token, and escapes string
literals (file names in locations) byte by byte.  :class:`MemoPrinter` keeps the text of
each attribute object it has printed (attributes are immutable) and writes straight to its
stream.  The output is byte-for-byte the one of ``Printer`` (checked by the tests).
"""
from __future__ import annotations

import io

from xdsl.ir import Attribute
from xdsl.printer import Printer


def _escaped(bytestring: bytes) -> str:
    """``Printer.print_bytes_literal``'s text, built in one pass."""
    out = ['"']
    for byte in bytestring:
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 > byte or byte > 0x7E or byte == 0x22:
            out.append(f"\\{byte:02X}")
        else:
            out.append(chr(byte))
    out.append('"')
    return "".join(out)


class MemoPrinter(Printer):
    """``Printer`` with a per-printer memo of attribute text (keyed by attribute object)."""

    _memo: dict[int, tuple[Attribute, str]] | None = None
    _capturing: bool = False

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" not in text:
            self._current_column += len(text)
            self.stream.write(text)  # type: ignore[union-attr]
            return
        super().print_string(text, indent=indent)

    def print_bytes_literal(self, bytestring: bytes) -> None:
        self.print_string(_escaped(bytestring))

    def print_attribute(self, attribute: Attribute) -> None:
        if self._capturing or self.printing_location:
            super().print_attribute(attribute)
            return
        if self._memo is None:
            self._memo = {}
        hit = self._memo.get(id(attribute))
        if hit is not None and hit[0] is attribute:
            self.print_string(hit[1])
            return
        stream, line, column = self.stream, self._current_line, self._current_column
        self.stream, self._capturing = io.StringIO(), True
        try:
            super().print_attribute(attribute)
            text = self.stream.getvalue()  # type: ignore[union-attr]
        finally:
            self.stream, self._capturing = stream, False
            self._current_line, self._current_column = line, column
        if "\n" in text:       # multi-line text depends on indentation: not memoized
            super().print_attribute(attribute)
            return
        self._memo[id(attribute)] = (attribute, text)  # the attribute is kept alive: ids stay unique
        self.print_string(text)
