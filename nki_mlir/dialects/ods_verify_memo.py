"""The instruction checks that an op's class, target, operand types and properties decide,
remembered per combination that passed them (issue 17: trace time per op).

:func:`~.ods_ops.verify_definition` runs, for every ``nki`` / ``nisa`` instruction op a
kernel makes, generic checks read off its definition (target, memories, ranks, partition
counts, engines, dtypes, op tokens and enum properties; steps 1-6 of its docstring), then
the definition's own ``verify`` and the start-partition rule, which may look further (the
ops defining the operands).  The generic checks read only:

- the op's class (its name and definition), and the ``nisa.target`` of its module;
- of each operand: whether it is a memref, and then its shape, element type and memory
  space -- not its layout (strides and offset: views of one buffer differ only there);
- the op's properties.

A large traced kernel makes ~10^5 instruction ops of about a hundred such combinations, so
a combination that passed (:func:`passed`) is not checked again: :func:`generic_key` is
the key.  A failing op is never remembered: its checks run and raise their message.
A definition's own ``verify`` marked :func:`types_only` (it reads nothing else either) is
remembered with them; the part of it that reads more (its ``also``: the start-partition
rule follows the operands' defining views) runs for every op, as it would after the rest
passed.  Definitions with an operand kind that checks itself (``tile_checks`` False: registers,
tile lists) get no key.  Properties are keyed by identity (attributes are immutable; the
entry keeps them alive so their ids stay unique); operand types by an interned number of
their (shape, element type, memory space), or of the type itself for a non-memref.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation

from .rules import target_of

#: generic_key -> the property values the key holds by id (kept alive)
PASSED: dict[tuple, tuple] = {}
#: id(type) -> (type, its interned number): the number of equal (shape, element type,
#: memory space) -- or of an equal non-memref type
_TYPE_NUMBERS: dict[int, tuple[Attribute, int]] = {}
_NUMBERS: dict[Any, int] = {}
#: id(definition record) -> (record, whether its ops get a key)
_KEYED: dict[int, tuple[Any, bool]] = {}
_LIMIT = 1 << 16
#: bumped when the numbers start again (a key made across that is no key)
_GENERATION = [0]


#: instruction ``verify`` functions whose verdict depends only on what a generic key holds ->
#: the part of them to run even so (None: nothing)
TYPES_ONLY: dict[Callable, Callable | None] = {}


def types_only(also: Callable | None = None) -> Callable:
    """Decorator for an instruction definition's ``verify(op)`` that reads only ``op``'s
    class, target, operand shapes / dtypes / memories and properties -- apart from
    ``also(op)``, a part of it that reads more and that raises what ``verify`` would raise
    when everything else in it passes."""
    def mark(fn: Callable) -> Callable:
        TYPES_ONLY[fn] = also
        return fn
    return mark


#: instruction ``verify`` functions whose verdict depends only on what a generic key holds and
#: on ``extra(op)`` (plain hashable values the function itself reads off ``op``) -> ``extra``
TYPES_AND: dict[Callable, Callable] = {}


def types_and(extra: Callable) -> Callable:
    """Decorator for an instruction definition's ``verify(op)`` that reads only ``op``'s
    class, target, operand shapes / dtypes / memories and properties, and ``extra(op)``: a
    hashable value of plain data (e.g. the values of constant operands) that ``verify``
    computes with ``extra`` itself.  A combination (generic key, ``extra(op)``) that passed
    is not checked again (:func:`verified_with`)."""
    def mark(fn: Callable) -> Callable:
        TYPES_AND[fn] = extra
        return fn
    return mark


def verified_with(op: Operation, fn: Callable, key: tuple | None) -> None:
    """``fn(op)`` (a definition's ``verify``), skipped when ``fn`` is marked :func:`types_and`
    and passed before for ``op``'s generic ``key`` (None: no key) and ``extra(op)``."""
    extra = TYPES_AND.get(fn)
    if extra is None or key is None:
        fn(op)
        return
    gen = _GENERATION[0]
    full = (fn, key, extra(op))
    if full in PASSED:
        return
    fn(op)
    if gen == _GENERATION[0]:
        passed(op, full)


def types_verdict(check: Callable) -> Callable:
    """Decorator for an op class's own ``verify_(self)`` that reads only the op's class,
    operand shapes / dtypes / memories and properties (no target, no defining ops): a
    combination that passed is not checked again."""
    def verify_(self: Operation) -> None:
        gen = _GENERATION[0]
        types = tuple([_type_number(v.type) for v in self._operands])      # noqa: SLF001
        key = (check, self.__class__, types,
               tuple([(k, id(v)) for k, v in self.properties.items()]))
        if key in PASSED:
            return
        check(self)
        if gen == _GENERATION[0]:
            passed(self, key)
    verify_.__doc__ = check.__doc__
    verify_.__name__ = check.__name__
    verify_.__qualname__ = check.__qualname__
    return verify_


def _type_number(t: Attribute) -> int:
    hit = _TYPE_NUMBERS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    if t.__class__ is MemRefType or isinstance(t, MemRefType):
        what: Any = ("memref", tuple(t.get_shape()), t.element_type, t.memory_space)
    else:
        what = ("type", t)
    n = _NUMBERS.get(what)
    if n is None:
        if len(_NUMBERS) >= _LIMIT:    # numbers start again: no remembered key may use them
            _NUMBERS.clear()
            _TYPE_NUMBERS.clear()
            PASSED.clear()
            _GENERATION[0] += 1
        n = _NUMBERS[what] = len(_NUMBERS)
    if len(_TYPE_NUMBERS) >= _LIMIT:
        _TYPE_NUMBERS.clear()
    _TYPE_NUMBERS[id(t)] = (t, n)
    return n


def _keyed(rec: Any) -> bool:
    hit = _KEYED.get(id(rec))
    if hit is None or hit[0] is not rec:
        hit = _KEYED[id(rec)] = (rec, all(p.tile_checks for p in rec.tiles))
    return hit[1]


def generic_key(op: Operation, rec: Any) -> tuple | None:
    """The key of ``op``'s generic checks (module docstring), or None when they must run."""
    if not _keyed(rec):
        return None
    gen = _GENERATION[0]
    types = tuple([_type_number(v.type) for v in op._operands])      # noqa: SLF001
    if gen != _GENERATION[0]:
        return None
    return (op.__class__, target_of(op), types,
            tuple([(k, id(v)) for k, v in op.properties.items()]))


def passed(op: Operation, key: tuple) -> None:
    """Remember that the generic checks of ``op`` (whose key is ``key``) passed."""
    if len(PASSED) >= _LIMIT:
        PASSED.clear()
    PASSED[key] = tuple(op.properties.values())
