"""The keyword syntax shared by every instruction op of the ``nki`` and ``nisa`` dialects.

AWS's ``nisa`` text writes every operand and attribute inside one pair of parentheses as
``role=...`` keywords, with the engine after them (aws-neuron/nkipy)::

    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %c,
        lhs=memref<...> %a, rhs=memref<...> %b, op=add) engine=vector
    nisa.activation(dst=..., src=..., bias=f32 %cst, scale=f32 %one, op=exp) engine=scalar
    %t = nki.load(src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a) : memref<128x512xf32, #nisa.mem<sbuf>>

An operand is ``role=TYPE %value`` (tiles and scalars alike), a variadic one a list
``role=[TYPE %a, TYPE %b]``; a property is
``name=VALUE`` where VALUE is a bare identifier (enum), an integer, a float, ``true`` /
``false``, a string literal or a ``[...]`` list.  Discardable attributes follow in
``{...}`` and a result type after ``:``.  :class:`KeywordOp` implements ``parse`` and
``print`` once for all ops from their IRDL definitions, so a new op needs no syntax code.
"""
from __future__ import annotations

import math
import re

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, OptOperandDef, VarOperandDef
from xdsl.parser import Parser
from xdsl.printer import Printer

from .memo_printer import MemoPrinter

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}

# Properties that are printed outside the parentheses or not at all.
_HIDDEN_PROPS = ("engine", "operandSegmentSizes", "resultSegmentSizes")


def _format_float(x: float) -> str:
    if not math.isfinite(x):
        return '"' + ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")) + '"'
    text = repr(float(x))
    if "e" in text and "." not in text.split("e")[0]:
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    return text


def print_value(printer: Printer, attr: Attribute) -> None:
    """Print a property value in the keyword syntax (see module docstring)."""
    if isinstance(attr, StringAttr):
        if _IDENT.match(attr.data) and attr.data not in ("true", "false"):
            printer.print_string(attr.data)
        else:
            printer.print_string_literal(attr.data)
    elif isinstance(attr, IntegerAttr) and isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
        printer.print_string("true" if attr.value.data else "false")
    elif isinstance(attr, IntegerAttr):
        printer.print_string(str(attr.value.data))
    elif isinstance(attr, FloatAttr):
        printer.print_string(_format_float(attr.value.data))
    elif isinstance(attr, ArrayAttr):
        printer.print_string("[")
        for i, a in enumerate(attr.data):
            if i:
                printer.print_string(", ")
            print_value(printer, a)
        printer.print_string("]")
    else:
        printer.print_attribute(attr)


def _value_text(printer: MemoPrinter, attr: Attribute) -> str | None:
    """What :func:`print_value` prints for ``attr``, or None (an attribute printed in place)."""
    if isinstance(attr, StringAttr):
        if _IDENT.match(attr.data) and attr.data not in ("true", "false"):
            return attr.data
        return printer.literal_text(attr.data)
    if isinstance(attr, IntegerAttr) and isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
        return "true" if attr.value.data else "false"
    if isinstance(attr, IntegerAttr):
        return str(attr.value.data)
    if isinstance(attr, FloatAttr):
        return _format_float(attr.value.data)
    if isinstance(attr, ArrayAttr):
        items = [_value_text(printer, a) for a in attr.data]
        return None if None in items else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return printer.attr_text(attr)


def parse_value(parser: Parser) -> Attribute:
    """Parse a property value printed by :func:`print_value`."""
    if parser.parse_optional_punctuation("[") is not None:
        items: list[Attribute] = []
        if parser.parse_optional_punctuation("]") is None:
            while True:
                items.append(parse_value(parser))
                if parser.parse_optional_punctuation(",") is None:
                    break
            parser.parse_punctuation("]")
        return ArrayAttr(items)
    text = parser.parse_optional_str_literal()
    if text is not None:
        if text in _NON_FINITE:
            return FloatAttr(_NON_FINITE[text], f64)
        return StringAttr(text)
    num = parser.parse_optional_number()
    if num is not None:
        return FloatAttr(num, f64) if isinstance(num, float) else IntegerAttr(num, i64)
    word = parser.parse_optional_identifier()
    if word is not None:
        if word in ("true", "false"):
            return BoolAttr.from_bool(word == "true")
        return StringAttr(word)
    return parser.parse_attribute()


class KeywordOp(IRDLOperation):
    """Base of all instruction ops: ``name(role=TYPE %v, ..., prop=VALUE, ...) engine=E {attrs} : T``."""

    @classmethod
    def _roles(cls) -> tuple[list[str], set[str], list[str]]:
        hit = cls.__dict__.get("_nkim_roles")
        if hit is None:
            defn = cls.get_irdl_definition()
            names = [n for n, _ in defn.operands]
            optional = {n for n, d in defn.operands if isinstance(d, (OptOperandDef, VarOperandDef))}
            props = [p for p in defn.properties if p not in _HIDDEN_PROPS]
            hit = (names, optional, props)
            cls._nkim_roles = hit
        return hit

    def print(self, printer: Printer) -> None:
        if isinstance(printer, MemoPrinter) and self._print_at_once(printer):
            return
        names, _, props = self._roles()
        parts: list[tuple[str, object]] = []
        for name in names:
            value = getattr(self, name)
            if value is not None:
                parts.append((name, value))
        for p in props:
            if p in self.properties:
                parts.append((p, self.properties[p]))
        printer.print_string("(")
        for i, (key, value) in enumerate(parts):
            if i:
                printer.print_string(", ")
            printer.print_string(f"{key}=")
            if isinstance(value, SSAValue):
                printer.print_attribute(value.type)
                printer.print_string(" ")
                printer.print_ssa_value(value)
            elif isinstance(value, tuple):  # a variadic operand: [T %a, T %b]
                printer.print_string("[")
                for j, v in enumerate(value):
                    if j:
                        printer.print_string(", ")
                    printer.print_attribute(v.type)
                    printer.print_string(" ")
                    printer.print_ssa_value(v)
                printer.print_string("]")
            else:
                print_value(printer, value)  # type: ignore[arg-type]
        printer.print_string(")")
        engine = self.properties.get("engine")
        if isinstance(engine, StringAttr):
            printer.print_string(f" engine={engine.data}")
        printer.print_op_attributes(self.attributes)
        if self.results:
            printer.print_string(" : ")
            printer.print_attribute(self.results[0].type)

    def _print_at_once(self, printer: MemoPrinter) -> bool:
        """:meth:`print`'s text built from the printer's memoized texts and written at once;
        False (nothing printed, no value named) when some part has no memoized text."""
        names, _, props = self._roles()
        operands = []
        for name in names:
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, SSAValue):
                return False
            t = printer.attr_text(value.type)
            if t is None:
                return False
            operands.append((name, t, value))
        properties = self.properties
        texts = []
        for p in props:
            if p in properties:
                t = _value_text(printer, properties[p])
                if t is None:
                    return False
                texts.append(f"{p}={t}")
        result = None
        if self.results:
            result = printer.attr_text(self.results[0].type)
            if result is None:
                return False
        items = [f"{name}={t} {printer.ssa_text(v)}" for name, t, v in operands] + texts
        engine = properties.get("engine")
        tail = f" engine={engine.data}" if isinstance(engine, StringAttr) else ""
        printer.print_string("(" + ", ".join(items) + ")" + tail)
        printer.print_op_attributes(self.attributes)
        if result is not None:
            printer.print_string(f" : {result}")
        return True

    @classmethod
    def parse(cls, parser: Parser):
        names, optional, props = cls._roles()
        defn = cls.get_irdl_definition()
        operands: dict[str, SSAValue | list[SSAValue]] = {}
        properties: dict[str, Attribute] = {}
        parser.parse_punctuation("(")
        if parser.parse_optional_punctuation(")") is None:
            while True:
                pos = parser.pos
                key = parser.parse_identifier(f"operand role or property of '{cls.name}'")
                if key in operands or key in properties:
                    parser.raise_error(f"'{key}' given twice", pos, parser.pos)
                parser.parse_punctuation("=")
                if key in names and parser.parse_optional_punctuation("[") is not None:
                    vals: list[SSAValue] = []  # a variadic operand
                    if parser.parse_optional_punctuation("]") is None:
                        while True:
                            vals.append(parser.parse_operand(parser.parse_type()))
                            if parser.parse_optional_punctuation(",") is None:
                                break
                        parser.parse_punctuation("]")
                    operands[key] = vals
                elif key in names:
                    ty = parser.parse_type()
                    operands[key] = parser.parse_operand(ty)
                elif key in props:
                    properties[key] = parse_value(parser)
                else:
                    allowed = ", ".join(names + props)
                    parser.raise_error(f"'{cls.name}' has no operand or property '{key}' "
                                       f"(expected one of: {allowed})", pos, parser.pos)
                if parser.parse_optional_punctuation(",") is None:
                    break
            parser.parse_punctuation(")")
        if parser.parse_optional_keyword("engine") is not None:
            parser.parse_punctuation("=")
            properties["engine"] = StringAttr(parser.parse_identifier("engine name"))
        attributes = parser.parse_optional_attr_dict()
        result_types: list[Attribute] = []
        if defn.results:
            parser.parse_punctuation(":")
            result_types = [parser.parse_type()]
        missing = [n for n in names if n not in optional and n not in operands]
        if missing:
            parser.raise_error(f"'{cls.name}' needs operand(s) {', '.join(missing)}")
        variadic = {n for n, d in defn.operands if isinstance(d, VarOperandDef)}
        return cls.build(
            operands=[operands.get(n, [] if n in variadic else None) for n in names],
            result_types=result_types,
            properties=properties,
            attributes=attributes,
        )
