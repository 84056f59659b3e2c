"""Vocabulary of instruction definitions for instructions whose two ops or whose API call are
not a plain copy of each other (beside :mod:`.ods`).

- :class:`ApiOnly`: an API parameter the ops do not keep (``nisa.tensor_copy(dtype=)``, the
  legacy spelling a definition's ``frontend`` hook checks and drops).
- ``Param(only="nki")`` / ``Param(only="nisa")`` (:data:`ONLY`): an operand or property that
  only one twin has -- ``nki.dma_copy`` keeps the API's ``oob_mode``, ``nisa.dma_copy``
  AWS's ``oob_is_err``; a ``nisa``-only parameter is no API parameter, its value is set by
  the :class:`Lowering`.  With ``isa = "matmul"`` the ``nisa`` twin is ``nisa.matmul``
  (AWS's instruction name) instead of ``nisa.<name>``.
- :class:`Tiles`: a variadic tensor operand; :class:`FloatList`: a list of numbers.
- :class:`Dma`: the cost row of a DMA instruction (which operands it reads, whether it
  transposes).
- :class:`Lowering`: how ``lower-nki-to-nisa`` rewrites ``nki.<name>`` when the default
  engine depends on the operands (an engine chooser), or the ``nisa`` op's properties are
  computed from the ``nki`` op's (a properties map).

A definition may also give a ``frontend`` hook: ``frontend(cg, api, args, emit)`` runs the
call instead of the generated handler, with ``args`` the call's arguments bound to the public
signature (defaults applied) and ``emit(args)`` the generated conversion and emission; it
checks what the parameter kinds cannot say, rewrites arguments, or emits something else (an
indirect DMA), and returns the call's value.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.ir import Attribute, Operation

from .ods import Param, Property, Tile

#: the twins a parameter belongs to: ``None`` both, ``"nki"`` the API op only, ``"nisa"``
#: the ISA op only (no API parameter)
ONLY = (None, "nki", "nisa")


@dataclass(frozen=True)
class ApiOnly(Param):
    """An API parameter the ops do not keep: the definition's ``frontend`` hook reads it
    (else it is accepted and ignored).  ``default``: its default in the public signature."""

    default: Any = None

    @property
    def api_default(self) -> Any:
        return self.default


@dataclass(frozen=True)
class Tiles(Tile):
    """A variadic tensor operand: a list of tiles (``dma_compute``'s ``srcs``), printed as
    ``srcs=[T %a, T %b]``; the definition's ``verify`` checks each (``spaces`` etc. are not
    applied per value)."""


@dataclass(frozen=True)
class FloatList(Property):
    """A list of compile-time numbers kept as an ``ArrayAttr`` of floats (optional: None
    omits it)."""


@dataclass(frozen=True)
class Lowering:
    """How ``nki.<name>`` becomes ``nisa.<name>`` (same operands) besides the default engine.

    Attributes:
        engine: ``engine(op) -> name``, the engine when the user gave none (None: the
            definition's default engine).
        properties: ``properties(op) -> {name: attr}``, the ``nisa`` op's properties from
            the ``nki`` op (None: copied as they are).
        operands: ``operands(op) -> (new ops, operands)``, the ``nisa`` op's operands in its
            definition order (None for an absent optional one) and the ops computing them,
            placed before it (None: the ``nki`` op's operands, as they are).
    """

    engine: Callable[[Operation], str] | None = None
    properties: Callable[[Operation], dict[str, Attribute]] | None = None
    operands: Callable[[Operation], tuple[list[Operation], list]] | None = None


@dataclass(frozen=True)
class Dma:
    """The cost model's row of a DMA instruction: it is timed on the DMA engines
    (``nki_mlir/perf/dma_costs.py``: bytes moved, rows spread over the engines, contiguous
    runs), not on a compute engine.

    Attributes:
        srcs: the source operand roles (every value of a variadic one).
        transpose: a DMA transpose (the DMA transpose efficiencies apply; runs counted on
            ``dst``).
        sum_srcs: the bytes moved are all the sources' bytes (a DMA that reads several
            sources into one ``dst``), instead of ``max(source, dst)`` bytes.
        source: where the formula comes from (docs/cost-model.md).
    """

    srcs: tuple[str, ...] = ("src",)
    transpose: bool = False
    sum_srcs: bool = False
    source: str = ""

    @property
    def row(self) -> None:
        return None


__all__ = ["ApiOnly", "Dma", "FloatList", "Lowering", "ONLY", "Tiles"]
