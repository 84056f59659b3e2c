"""A faster xDSL printer for whole modules: same text, attribute text printed once.

Large unrolled kernels print tens of thousands of ops whose attributes (buffer types,
locations) are shared or repeated; xDSL 0.74's :class:`~xdsl.printer.Printer` rebuilds an
attribute's text on every use, one small ``print`` call per token, and escapes string
literals (file names in locations) byte by byte.  :class:`MemoPrinter` keeps the text of
each attribute object it has printed (attributes are immutable) and writes straight to its
stream.  Attribute dictionaries are printed as one string from the memoized texts, the ops
frontends emit by the thousand (``memref.subview`` / ``reinterpret_cast``, ``arith.constant``,
``arith.addi`` & co.) as one string each instead of through their assembly format, and
:meth:`MemoPrinter.attr_text` / :meth:`MemoPrinter.ssa_text` let op printers (the keyword
syntax of ``syntax.py``) build a whole op's text before writing it.  The output is
byte-for-byte the one of ``Printer`` (checked by the tests).
"""
from __future__ import annotations

import io
from collections.abc import Mapping

from xdsl.dialects import arith
from xdsl.dialects.builtin import (DYNAMIC_INDEX, ArrayAttr, IntegerAttr, StringAttr, UnitAttr,
                                   UnregisteredOp, i1, i64)
from xdsl.dialects.memref import ReinterpretCastOp, SubviewOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove


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
    _keys: dict[str, str] | None = None         # attribute-dictionary key -> its text
    _literals: dict[str, str] | None = None     # string -> its literal text
    _plain: dict[type, bool] | None = None      # op class -> printed by the custom-format path
    _capturing: bool = False

    def print_op(self, op: Operation) -> None:
        """``Printer.print_op`` for an op without regions in its custom format (results,
        name, format, location), each part written as one string."""
        if self._capturing or op.regions or self.print_generic_format or self.diagnostic.op_messages \
                or not self._custom_format(type(op)):
            super().print_op(op)
            return
        head = op.name
        if op.results:
            head = ", ".join([self.ssa_text(r) for r in op.results]) + " = " + head
        self.print_string(head)
        fast = _FAST.get(type(op))
        text = None if fast is None else fast(self, op)
        if text is None:
            op.print(self)
        else:
            self.print_string(text)
        if self.print_debuginfo:
            loc = self.attr_text(op.location)
            if loc is None:
                self.print_string(" ")
                self.print_attribute(op.location)
            else:
                self.print_string(" " + loc)

    def _custom_format(self, cls: type) -> bool:
        """Ops of ``cls`` print in their custom format with no scope of their own."""
        if self._plain is None:
            self._plain = {}
        hit = self._plain.get(cls)
        if hit is None:
            hit = self._plain[cls] = (not issubclass(cls, UnregisteredOp) and Operation.print is not cls.print
                                      and not cls.has_trait(IsolatedFromAbove))
        return hit

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" not in text:
            self._current_column += len(text)
            self.stream.write(text)  # type: ignore[union-attr]
            return
        super().print_string(text, indent=indent)

    def print_bytes_literal(self, bytestring: bytes) -> None:
        self.print_string(_escaped(bytestring))

    def literal_text(self, string: str) -> str:
        """What ``print_string_literal(string)`` prints."""
        if self._literals is None:
            self._literals = {}
        text = self._literals.get(string)
        if text is None:
            text = self._literals[string] = _escaped(string.encode("utf-8"))
        return text

    def print_attribute(self, attribute: Attribute) -> None:
        text = self.attr_text(attribute)
        if text is None:
            super().print_attribute(attribute)
        else:
            self.print_string(text)

    def attr_text(self, attribute: Attribute) -> str | None:
        """The text ``print_attribute`` prints for ``attribute`` (memoized), or None when it
        must be printed in place (multi-line, or while capturing / printing a location)."""
        if self._capturing or self.printing_location:
            return None
        cls = attribute.__class__
        if cls is IntegerAttr or cls is ArrayAttr or cls is StringAttr:
            return self._direct_text(attribute)
        if self._memo is None:
            self._memo = {}
        hit = self._memo.get(id(attribute))
        if hit is not None and hit[0] is attribute:
            return hit[1]
        text = self._captured(super().print_attribute, attribute)
        if "\n" in text:       # multi-line text depends on indentation: not memoized
            return None
        self._memo[id(attribute)] = (attribute, text)  # the attribute is kept alive: ids stay unique
        return text

    def _direct_text(self, attr) -> str | None:
        """The text of the builtin integer, array and string attributes (often one object
        per op: ids, dependence lists), built as their ``print_builtin`` prints them."""
        if attr.__class__ is StringAttr:
            return self.literal_text(attr.data)
        if attr.__class__ is ArrayAttr:
            items = [self.attr_text(a) for a in attr.data]
            return None if None in items else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
        ty = attr.type
        if ty is not i64 and ty == i1:
            return "true" if attr.value.data else "false"
        t = self.attr_text(ty)
        return None if t is None else f"{attr.value.data:d} : {t}"

    def _captured(self, fn, arg) -> str:
        """What ``fn(arg)`` prints, without printing it."""
        stream, line, column = self.stream, self._current_line, self._current_column
        self.stream, self._capturing = io.StringIO(), True
        try:
            fn(arg)
            return self.stream.getvalue()  # type: ignore[union-attr]
        finally:
            self.stream, self._capturing = stream, False
            self._current_line, self._current_column = line, column

    def ssa_text(self, value: SSAValue) -> str:
        """``%name`` as ``print_ssa_value`` prints it (naming the value on first use)."""
        name = self._ssa_values.get(value)
        if name is None:
            if value.name_hint:
                curr_ind = self.ssa_names.get(value.name_hint, 0)
                name = f"{value.name_hint}_{curr_ind}" if curr_ind != 0 else value.name_hint
                self.ssa_names[value.name_hint] = curr_ind + 1
            else:
                name = self._get_new_valid_name_id()
            self._ssa_values[value] = name
        return "%" + name

    def print_attr_dict(self, attr_dict: Mapping[str, Attribute]) -> None:
        """``{key = value, unit_key, ...}`` as upstream prints it, written at once."""
        if self._capturing or self.printing_location:
            super().print_attr_dict(attr_dict)
            return
        if self._keys is None:
            self._keys = {}
        parts = []
        for key, value in attr_dict.items():
            k = self._keys.get(key)
            if k is None:
                k = self._keys[key] = self._captured(self.print_identifier_or_string_literal, key)
            if isinstance(value, UnitAttr):
                parts.append(k)
                continue
            v = self.attr_text(value)
            if v is None:
                super().print_attr_dict(attr_dict)
                return
            parts.append(f"{k} = {v}")
        self.print_string("{" + ", ".join(parts) + "}")


_VIEW_PROPS = {"static_offsets", "static_sizes", "static_strides", "operandSegmentSizes"}


def _index_lists(printer: MemoPrinter, op) -> list[str] | None:
    """The ``[...]`` texts of a view op's offsets, sizes and strides (static values, or the
    dynamic operand where the static list says ``?``), or None (printed by the format).
    The op has exactly the :data:`_VIEW_PROPS` properties and no attributes."""
    props = op.properties
    if len(op._operands) == 1:         # noqa: SLF001 -- the source only: every list static
        parts = [_static_text(props["static_offsets"]), _static_text(props["static_sizes"]),
                 _static_text(props["static_strides"])]
        return None if None in parts else parts  # type: ignore[return-value]
    parts = []
    for dynamic, static in ((op.offsets, props["static_offsets"]), (op.sizes, props["static_sizes"]),
                            (op.strides, props["static_strides"])):
        values = static.get_values()
        if sum(1 for v in values if v == DYNAMIC_INDEX) != len(dynamic):
            return None
        it = iter(dynamic)
        parts.append("[" + ", ".join([printer.ssa_text(next(it)) if v == DYNAMIC_INDEX else f"{v}"
                                      for v in values]) + "]")
    return parts


def _static_text(attr) -> str | None:
    """``[v, ...]`` of a static index list without dynamic markers (once per attribute
    object: the frontend shares one per list), or None when it has any."""
    try:
        return attr.__dict__["_nkim_list_text"]
    except KeyError:
        values = attr.get_values()
        text = None if DYNAMIC_INDEX in values else "[" + ", ".join([f"{v}" for v in values]) + "]"
        object.__setattr__(attr, "_nkim_list_text", text)
        return text


def _types(printer: MemoPrinter, op) -> str | None:
    """`` : T to T`` of a view op (its source and result types), or None."""
    src, res = printer.attr_text(op.source.type), printer.attr_text(op.result.type)
    return None if src is None or res is None else f" : {src} to {res}"


def _subview_text(printer: MemoPrinter, op: SubviewOp) -> str | None:
    """What ``memref.subview``'s assembly format prints after the op name
    (`` %src[offsets] [sizes] [strides] : T to T``), or None (printed by the format)."""
    types = _types(printer, op)
    if types is None or op.attributes or op.properties.keys() != _VIEW_PROPS:
        return None
    src = printer.ssa_text(op.source)      # (values are named in the order the format prints them)
    lists = _index_lists(printer, op)
    return None if lists is None else f" {src}{' '.join(lists)}{types}"


def _reinterpret_text(printer: MemoPrinter, op: ReinterpretCastOp) -> str | None:
    """What ``memref.reinterpret_cast``'s assembly format prints after the op name
    (`` %src to offset: [o], sizes: [s, ...], strides: [t, ...] : T to T``), or None."""
    types = _types(printer, op)
    if types is None or op.attributes or op.properties.keys() != _VIEW_PROPS:
        return None
    src = printer.ssa_text(op.source)
    lists = _index_lists(printer, op)
    if lists is None:
        return None
    return f" {src} to offset: {lists[0]}, sizes: {lists[1]}, strides: {lists[2]}{types}"


def _constant_text(printer: MemoPrinter, op: arith.ConstantOp) -> str | None:
    """`` <value>`` (``arith.constant``'s format ``attr-dict $value``), or None."""
    if op.attributes or op.properties.keys() != {"value"}:
        return None
    value = printer.attr_text(op.properties["value"])
    return None if value is None else " " + value


_NO_OVERFLOW = arith.IntegerOverflowAttr("none")


def _int_binop_text(printer: MemoPrinter, op) -> str | None:
    """`` %lhs, %rhs : T`` (the format of ``arith.addi`` & co. without overflow flags, which
    print only when not ``none``), or None."""
    props = op.properties
    if op.attributes or not props.keys() <= {"overflowFlags"} or \
            props.get("overflowFlags", _NO_OVERFLOW) != _NO_OVERFLOW:
        return None
    t = printer.attr_text(op.result.type)
    if t is None:
        return None
    return f" {printer.ssa_text(op.lhs)}, {printer.ssa_text(op.rhs)} : {t}"


#: op class -> the text after its name, built at once (None: printed by its format)
_FAST = {SubviewOp: _subview_text, ReinterpretCastOp: _reinterpret_text,
         arith.ConstantOp: _constant_text, arith.AddiOp: _int_binop_text,
         arith.MuliOp: _int_binop_text, arith.SubiOp: _int_binop_text}
