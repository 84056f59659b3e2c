"""Base classes of the instruction ops of both dialects, and the 1:1 lowering registry.

An instruction that has the same operand roles and properties at the API level (``nki``)
and the ISA level (``nisa``) is declared once, as a mixin holding its operands,
properties and verifier, and instantiated twice::

    class _BnStats(KeywordOp):
        dst = operand_def(MemRefType)
        data = operand_def(MemRefType)
        def verify_(self) -> None: ...

    @irdl_op_definition
    class BnStatsOp(_BnStats, NkiInstruction):
        name = "nki.bn_stats"

    @irdl_op_definition
    class NisaBnStatsOp(_BnStats, NisaInstruction):
        name = "nisa.bn_stats"

    direct_lowering(BnStatsOp, NisaBnStatsOp, "vector")

``lower-nki-to-nisa`` then rewrites ``nki.bn_stats`` into ``nisa.bn_stats`` with the same
operands and properties and the engine chosen by :func:`direct_lowering`'s ``engine``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.irdl import opt_prop_def, prop_def

from .syntax import KeywordOp

#: operand roles an instruction WRITES (every other memref operand is read); shared by
#: nisa-allocate, nisa-schedule and the interpreter's PSUM-flag bookkeeping
WRITE_ROLES = ("dst", "reduce_res", "dst_idx", "val_dst", "idx_dst", "dst_scale")


class NkiInstruction(KeywordOp):
    """An ``nki`` op standing for one NKI API call; ``engine`` is the user's choice, if any."""

    engine = opt_prop_def(StringAttr)


class NisaInstruction(KeywordOp):
    """A hardware instruction; ``engine`` says which engine queue runs it."""

    engine = prop_def(StringAttr)


@dataclass(frozen=True)
class DirectLowering:
    """How ``lower-nki-to-nisa`` rewrites one ``nki`` op 1:1 into its ``nisa`` twin.

    Attributes:
        target: the ``nisa`` op class (same operand roles as the ``nki`` op).
        engine: the default engine name, or ``f(op) -> name`` (used when the user gave
            none or ``nisa.engine.unknown``); None for ops that are not instructions (views,
            constants), which get no ``engine``.
        properties: optional ``f(op) -> {name: attr}`` giving the ``nisa`` op's properties
            (default: the ``nki`` op's properties, copied).
    """

    target: type[Operation]
    engine: str | Callable[[Operation], str] | None
    properties: Callable[[Operation], dict[str, Attribute]] | None = None


#: ``nki`` op name -> its direct lowering
DIRECT_LOWERINGS: dict[str, DirectLowering] = {}


def direct_lowering(nki_op: type[Operation], nisa_op: type[Operation],
                    engine: str | Callable[[Operation], str] | None,
                    properties: Callable[[Operation], dict[str, Attribute]] | None = None) -> None:
    """Register ``nki_op`` -> ``nisa_op`` as a 1:1 lowering (see module docstring)."""
    DIRECT_LOWERINGS[nki_op.name] = DirectLowering(nisa_op, engine, properties)


def register_twins(pairs) -> tuple[list, list]:
    """Register ``(nki_op, nisa_op, engine)`` triples as direct lowerings; return the
    family's ``(NKI_OPS, NISA_OPS)`` lists for its dialect registration."""
    for nki_op, nisa_op, engine in pairs:
        direct_lowering(nki_op, nisa_op, engine)
    return [p[0] for p in pairs], [p[1] for p in pairs]
