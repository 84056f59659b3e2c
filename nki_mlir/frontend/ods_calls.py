"""Frontend handlers generated from instruction definitions (:mod:`nki_mlir.dialects.ods`).

:func:`define_call` registers, for one definition, the handler of ``nisa.<name>`` (the NKI
0.3+ call, ``dst`` first) and that of its Beta 1 form ``nisa1.<name>``
(:func:`.beta1.isa.define_beta1`).  The handler has the definition's public signature
(``inspect.signature`` of ``nki.isa.<name>`` shows it) and docstring, binds the call's
arguments to it and converts each by its kind, as the hand-written handlers do:

- :class:`~nki_mlir.dialects.ods.Tile`: a tensor (``None`` when optional), else
  ``NKITypeError``;
- :class:`~nki_mlir.dialects.ods.Scalar`: a tensor, or a number emitted as an
  ``arith.constant`` (the definition's default when not given);
- :class:`~nki_mlir.dialects.ods.Engine`: a ``nisa.engine`` member (``unknown`` / None: the
  default engine, chosen at lowering);
- :class:`~nki_mlir.dialects.ods.Flag`: True / False / None, else ``NKITypeError`` (with
  ``default=False``: the argument's truth, stored only when true);
- :class:`~nki_mlir.dialects.ods.Int`: a compile-time integer (``strict``: an ``int`` only);
- :class:`~nki_mlir.dialects.ods.IntList`: a list of compile-time ``int`` s;
- :class:`~nki_mlir.dialects.ods.IntPair`: ``()`` / None or two compile-time integers;
- :class:`~nki_mlir.dialects.ods.OpToken`: an ``nl`` operator (``nl.max`` / ``nl.min`` stand
  for ``maximum`` / ``minimum``), a bitvec one refused with its own message when ``arith``;
- :class:`~nki_mlir.dialects.ods.EnumProp`: a ``nisa.<enum>`` member (None: the default,
  which is not stored; ``implied``: the member a given operand makes the default stand for);
- :class:`~nki_mlir.dialects.ods_forms.ApiArg`: kept by no op (the ``call`` hook reads it);
- another operand kind: its conversion in :data:`.ods_kinds.CONVERTERS` (registers);

after the definition's ``call`` hook (its own argument errors and replacements), then emits
the ``nki`` op, which verifies itself at the call's line.  A definition's ``frontend`` hook,
when it has one, takes the converted operands and properties and the bound arguments and
emits the op itself (``emit(result_types)``): it may check the call, set a default that
depends on other arguments, and return the call's value.  Shapes, dtypes, enginesand targets are the verifier's job, as for every instruction.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

from typing import Any

from ..dialects.ods import (Engine, EnumProp, Flag, InstructionDef, Int, IntList, IntPair, OpToken,
                            Property, Scalar, Tile)
from ..dialects.ods_forms import EMITTED, ApiArg, FloatList, Tiles
from ..dialects.vector_rules import BITVEC
from ..errors import NKITypeError
from . import args as A
from .beta1.isa import define_beta1
from .builtins import HANDLERS, Builtin
from .ods_kinds import CONVERTERS
from .values import Tensor

#: ``nl.max`` / ``nl.min`` (reduction functions) accepted where an op token is expected
_REDUCE_ALIASES = {"nl.max": "maximum", "nl.min": "minimum"}


def _tile(cg, api: str, p: Tile, v):
    if isinstance(p, Tiles):
        if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
            raise cg.b.error(f"{api}: {p.role} must be a list of tensors, got {v!r}", NKITypeError)
        return [A.tensor(cg, api, f"{p.role}[{i}]", s).value for i, s in enumerate(v)]
    t = A.tensor(cg, api, p.role, v, optional=p.optional)
    return None if t is None else t.value


def _scalar(cg, api: str, p: Scalar, v, args):
    if v is None and p.if_none is not None:
        v = p.if_none
    if p.const:
        v = A.const_float(cg, api, p.role, v)
    like = args.get(p.dtype_of) if p.dtype_of is not None else None
    return A.tile_or_scalar(cg, api, p.role, v, optional=p.optional,
                            dtype=like.dtype if isinstance(like, Tensor) else None)


def op_token(cg, api: str, role: str, v: Any, allowed, arith: bool = False) -> str:
    """The token of an operator argument from ``allowed`` (see the module docstring)."""
    if arith and isinstance(v, Builtin) and v.token in BITVEC:
        raise cg.b.error(f"{api}: {role}=nl.{v.token} is a bitvec operator; this instruction takes "
                         f"arithmetic operators only", NKITypeError)
    if isinstance(v, Builtin) and v.name in _REDUCE_ALIASES and _REDUCE_ALIASES[v.name] in allowed:
        return _REDUCE_ALIASES[v.name]
    return A.op_token(cg, api, role, v, allowed)


def _flag(cg, api: str, p, v):
    if p.default is True:  # stored only when false
        return None if v in (True, None) else bool(v)
    return (bool(v) or None) if p.default is False else A.flag(cg, api, p.role, v)


def _float_list(cg, api: str, p, v):
    if v is None:
        return None
    if not isinstance(v, (list, tuple)) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise cg.b.error(f"{api}: {p.role} must be a list of compile-time numbers, got {v!r}",
                         NKITypeError)
    return [float(x) for x in v]


def _int(cg, api: str, p, v):
    if v is None and p.default is None:
        return None
    return A.strict_int(cg, api, p.role, v) if p.strict else A.const_int(cg, api, p.role, v)


def _int_list(cg, api: str, p, v):
    return None if v is None and p.optional else A.strict_ints(cg, api, p.role, v)


def _int_pair(cg, api: str, p, v):
    return A.tile_pair(cg, api, p.role, v)


def _op_token(cg, api: str, p, v):
    return None if v is None and p.optional else op_token(cg, api, p.role, v, p.allowed, p.arith)


def _enum(cg, api: str, p, v):
    name = A.enum_name(cg, api, p.role, v, p.enum, p.default)
    return None if name == p.default else name


def _no_conversion(cg, api: str, p, v):
    raise TypeError(f"internal error: {api}: no conversion for parameter {p.role!r}")


#: property kind -> its conversion, in the order a parameter's kind is looked up
_PROPERTY_KINDS = ((Flag, _flag), (FloatList, _float_list), (Int, _int), (IntList, _int_list),
                   (IntPair, _int_pair), (OpToken, _op_token), (EnumProp, _enum))


def _property_conversion(p) -> Callable:
    """The conversion of the compile-time argument of property ``p`` (its value, or None:
    absent), by ``p``'s kind."""
    for kind, convert in _PROPERTY_KINDS:
        if isinstance(p, kind):
            return convert
    return _no_conversion


_TILE, _SCALAR, _ENGINE, _PROPERTY = range(4)


def _steps(rec: InstructionDef) -> tuple:
    """``(param, kind, is a Property, property conversion)`` of each parameter the handler
    converts, in definition order: the kind tests of a call made once per definition."""
    steps = []
    for p in rec.params:
        if isinstance(p, ApiArg):
            continue
        kind = _TILE if isinstance(p, Tile) else _SCALAR if isinstance(p, Scalar) else \
            _ENGINE if isinstance(p, Engine) else _PROPERTY
        steps.append((p, kind, isinstance(p, Property),
                      _property_conversion(p) if kind == _PROPERTY else None))
    return tuple(steps)


def make_handler(rec: InstructionDef, nki_op: type) -> Callable:
    """The frontend handler ``handler(cg, *args, **kwargs)`` of ``nisa.<name>``."""
    api = rec.api
    sig = rec.signature()
    cg_param = inspect.Parameter("cg", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    call_sig = sig.replace(parameters=[cg_param, *sig.parameters.values()])
    implied = [p for p in rec.params if isinstance(p, EnumProp) and p.implied is not None]

    bind = binder(call_sig)
    steps = _steps(rec)

    def handler(cg, *args, **kwargs):
        a = bind(cg, args, kwargs)
        if a is None:   # a call that does not bind: the TypeError the tracer reports
            bound = call_sig.bind(cg, *args, **kwargs)
            bound.apply_defaults()
            a = bound.arguments
        if rec.call is not None and rec.call(cg, api, a) is EMITTED:
            return None
        operands, props = {}, {}
        for p, kind, is_property, convert in steps:
            registered = CONVERTERS.get(type(p))    # (a kind's module may register it late)
            if registered is not None:  # a property kind's value goes to the properties
                (props if is_property else operands)[p.role] = \
                    registered(cg, api, p, a.get(p.role))
            elif kind == _TILE:
                operands[p.role] = _tile(cg, api, p, a[p.role])
            elif kind == _SCALAR:
                operands[p.role] = _scalar(cg, api, p, a[p.role], a)
            elif kind == _ENGINE:
                if p.param:
                    props["engine"] = A.engine(cg, api, a["engine"])
            else:
                props[p.role] = convert(cg, api, p, a[p.role])
        for p in implied:  # reduce_res given, reduce_cmd idle: reset_reduce
            role, member = p.implied
            if props[p.role] is None and operands[role] is not None:
                props[p.role] = member
        if rec.frontend is None:
            A.emit(cg, nki_op, operands, props)
            return None

        def emit(result_types=None):
            return A.emit(cg, nki_op, operands, props, result_types)
        return rec.frontend(cg, a, operands, props, emit)
    handler.__signature__ = call_sig
    handler.__name__ = handler.__qualname__ = rec.name
    handler.__doc__ = rec.doc
    handler.__module__ = rec.module
    return handler


def binder(sig: inspect.Signature) -> Callable:
    """The function ``bind(first, args, kwargs)`` giving what ``sig.bind(first, *args,
    **kwargs)`` followed by ``apply_defaults()`` gives as ``arguments`` (a dict in parameter
    order), or None when the call does not bind (the caller binds it with ``sig`` then, which
    raises Python's ``TypeError``).  ``sig``: positional-or-keyword parameters only, at least
    one.  ``inspect``'s binder is general and slow; this one runs per instruction call of a
    traced kernel.

    Raises:
        TypeError: an internal error: ``sig`` has a parameter of another kind.
    """
    kinds = {p.kind for p in sig.parameters.values()}
    if kinds - {inspect.Parameter.POSITIONAL_OR_KEYWORD}:
        raise TypeError("internal error: binder() takes positional-or-keyword parameters only")
    params = tuple((p.name, p.default) for p in sig.parameters.values())
    empty = inspect.Parameter.empty
    n = len(params)

    def bind(first, args: tuple, kwargs: dict) -> dict | None:
        m = len(args) + 1
        if m > n:
            return None
        out = {params[0][0]: first}
        for i in range(1, m):
            out[params[i][0]] = args[i - 1]
        used = 0
        for i in range(m, n):
            name, default = params[i]
            if name in kwargs:
                out[name] = kwargs[name]
                used += 1
            elif default is empty:
                return None
            else:
                out[name] = default
        return out if used == len(kwargs) else None
    return bind


def define_call(rec: InstructionDef, nki_op: type) -> Callable:
    """Register the handlers of ``nisa.<name>`` and ``nisa1.<name>``; return the first.

    Raises:
        ValueError: an internal error: ``nisa.<name>`` already has a handler.
    """
    if rec.api in HANDLERS:
        raise ValueError(f"internal error: {rec.api} has a handler already (defined twice)")
    handler = HANDLERS[rec.api] = make_handler(rec, nki_op)
    define_beta1(rec.name, rec.beta1_result)
    return handler


__all__ = ["binder", "define_call", "make_handler"]
