"""Instruction definitions whose ``nisa`` op is not the ``nki`` op's 1:1 twin.

Most definitions (:mod:`.ods`) give two ops with the same operands and properties,
``nki.<name>`` and ``nisa.<name>``.  AWS's ``nisa`` dialect names some instructions and
their operands differently (``nki.tensor_tensor(dst, data1, data2, op=maximum)`` is
``nisa.tensor_tensor_arith(dst, lhs, rhs, op=max)``), keeps other properties
(``reverse_operands`` for ``reverse0`` / ``reverse1``) or has one op for two API calls
(``nisa.activation`` for ``activation`` and ``activation_reduce``).  A definition says so
with an :class:`IsaForm` in its ``isa`` field::

    isa = IsaForm("tensor_tensor_arith",
                  dst=Tile(writes=True, like=("lhs", "rhs")), lhs=Tile(), rhs=Tile(),
                  op=OpToken(allowed=ARITH_NAMES),
                  sources={"lhs": "data1", "rhs": "data2"}, spellings={"op": ARITH_OPS},
                  engine=lambda op: ...)

From it :mod:`.ods_ops` builds the ``nisa`` op (its operands and properties are the form's
parameters, in the order given; its verifier is the generated one over them, then the
form's ``verify``) and the lowering ``nki.<name>`` -> ``nisa.<form name>``
(:func:`lowering`): each ``nisa`` operand is the ``nki`` operand it comes from
(``sources``; a missing one becomes the float32 constant of ``defaults``), the properties
are ``props(op)`` or else the same-named ``nki`` properties with their tokens respelled
(``spellings``), and the engine is the user's, else ``engine(op)`` (a rule over the
operands), else the definition's default engine.

:class:`ApiArg` is an API parameter the ops do not keep (the definition's ``call`` hook reads
it, e.g. to refuse a value the instruction does not support).  :class:`Tiles` is a variadic
tensor operand, :class:`FloatList` a list of numbers, :class:`Dma` the cost row of a DMA.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, StringAttr, f32
from xdsl.ir import Attribute, Operation

from .common import str_attr
from .ods import REQUIRED, InstructionDef, Param, Property, Scalar, Tile

#: what a definition's ``call`` hook returns when it emitted the call itself
EMITTED = object()


@dataclass(frozen=True)
class ApiArg(Param):
    """An API parameter kept by no op: the ``call`` hook of the definition reads it."""

    default: Any = None

    @property
    def api_default(self) -> Any:
        return self.default


@dataclass(frozen=True)
class IsaForm:
    """The ``nisa`` op of a definition when it is not ``nisa.<name>`` with the ``nki`` op's
    operands and properties (module docstring).

    Attributes:
        name: the ``nisa`` op's name without the dialect (``"tensor_tensor_arith"``).
        params: its operands and properties (:class:`~.ods.Tile`, :class:`~.ods.Scalar`,
            :class:`~.ods.Property` kinds, roles filled in), in IR order.
        sources: ``nisa`` operand role -> the ``nki`` operand role it comes from (default:
            the same role).
        defaults: ``nisa`` operand role -> the float32 constant it gets when the ``nki`` op
            has none (``activation``'s ``bias``: 0.0).
        spellings: property -> ``{nki token: nisa token}`` (``maximum`` -> ``max``).
        props: ``props(nki_op) -> {name: Attribute}``, the ``nisa`` properties when they are
            not the same-named ones (``reverse0`` / ``reverse1`` -> ``reverse_operands``).
        engine: ``engine(nki_op) -> name``, the engine when the user chose none (a rule over
            the operands: GpSimd for an int32 ``tensor_tensor``); None: the default engine.
        verify: ``verify(op)``, rules of the ``nisa`` op beyond its fields.
        operands: ``operands(nki_op) -> (new ops, {nisa role: value})``, ``nisa`` operands
            computed from the ``nki`` op (``row_pos`` / ``col_pos`` constants from
            ``tile_position``) and the ops computing them, placed before the ``nisa`` op.
        of: the ``nisa`` op is that of another definition (``activation_reduce`` lowers to
            ``activation``'s ``nisa.activation``); ``params`` and ``verify`` are then that
            definition's.
    """

    name: str
    params: tuple[Param, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, float] = field(default_factory=dict)
    spellings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    props: Callable[[Operation], dict[str, Attribute]] | None = None
    engine: Callable[[Operation], str] | None = None
    verify: Callable | None = None
    of: str | None = None
    operands: Callable | None = None

    def __init__(self, name: str, *, sources=None, defaults=None, spellings=None, props=None,
                 engine=None, verify=None, of=None, operands=None, **params: Param):
        for r, p in params.items():
            if not isinstance(p, (Tile, Scalar, Property)):
                raise TypeError(f"internal error: nisa.{name}: {r} is not an operand or a property")
        ps = tuple(replace(p, role=r) for r, p in params.items())
        for k, v in dict(name=name, params=ps, sources=dict(sources or {}),
                         defaults=dict(defaults or {}), spellings=dict(spellings or {}),
                         props=props, engine=engine, verify=verify, of=of,
                         operands=operands).items():
            object.__setattr__(self, k, v)

    def __hash__(self) -> int:
        return hash((self.name, self.params, self.of))

    def source(self, role: str) -> str:
        """The ``nki`` operand role the ``nisa`` operand ``role`` comes from."""
        return self.sources.get(role, role)


def form_record(rec: InstructionDef) -> InstructionDef:
    """The record the ``nisa`` op of ``rec``'s :class:`IsaForm` is built and verified from:
    ``rec`` with the form's name, parameters and ``verify`` (engines, target, start-partition
    rule and state are the instruction's)."""
    form: IsaForm = rec.isa
    return replace(rec, name=form.name, params=(*form.params, rec.engine), verify=form.verify,
                   order=())


def default_engine(rec: InstructionDef, op: Operation) -> str:
    """The engine ``op`` (an ``nki`` op of ``rec``) runs on when the user chose none."""
    form = rec.isa
    rule = form.engine if form is not None else None
    return rule(op) if rule is not None else rec.engine.default


def lowering(rec: InstructionDef, nisa_op: type[Operation]) -> Callable[[Operation], list[Operation]]:
    """``build(nki_op) -> [new ops..., the nisa op]`` for ``rec``'s form (module docstring)."""
    form: IsaForm = rec.isa
    target = form_record(rec) if form.of is None else nisa_op.DEFINITION
    tgt_params = target.params if form.of is None else (
        target.isa.params if target.isa is not None else target.params)
    operands = [p.role for p in tgt_params if isinstance(p, (Tile, Scalar))]
    properties = [p.role for p in tgt_params if isinstance(p, Property)]

    def build(op: Operation) -> list[Operation]:
        new: list[Operation] = []
        values = []
        computed = {}
        if form.operands is not None:
            before, computed = form.operands(op)
            new.extend(before)
        for role in operands:
            v = computed[role] if role in computed else getattr(op, form.source(role), None)
            if v is None and role in form.defaults:
                c = arith.ConstantOp(FloatAttr(form.defaults[role], f32), f32)
                new.append(c)
                v = c.result
            values.append(v)
        if form.props is not None:
            props = dict(form.props(op))
        else:
            props = {}
            for name in properties:
                a = op.properties.get(name)
                if a is None:
                    continue
                spell = form.spellings.get(name)
                props[name] = str_attr(spell[a.data]) if spell and isinstance(a, StringAttr) else a
        e = op.properties.get("engine")
        props["engine"] = e if isinstance(e, StringAttr) and e.data != "unknown" else \
            str_attr(default_engine(rec, op))
        new.append(nisa_op.build(operands=values, properties=props))
        return new
    return build


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
class PairList(Property):
    """A required list of ``[step, count]`` pairs of compile-time integers (an ``ArrayAttr``
    of ``ArrayAttr`` s; ``iota``'s ``pattern``); the frontend converts it
    (``frontend/ods_kinds.CONVERTERS``)."""

    @property
    def api_default(self) -> Any:
        return REQUIRED


@dataclass(frozen=True)
class LoopIndex(Tile):
    """An optional ``index`` operand of the ops that is no API parameter: loop-index
    arithmetic the definition's ``call`` hook splits off an API argument (``iota``'s
    ``offset_index``, added to ``offset`` at run time).  Not memory: no tile checks."""

    in_api: ClassVar[bool] = False
    tile_checks: ClassVar[bool] = False
    constraint: ClassVar[Any] = IndexType
    optional: bool = True
    spaces: tuple[str, ...] | None = None

    def check(self, op: Operation) -> None:
        """The IRDL constraint checks the type; nothing more to check."""


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


__all__ = ["ApiArg", "IsaForm", "form_record", "default_engine", "lowering", "Tiles", "FloatList",
           "PairList", "LoopIndex", "Dma", "EMITTED"]
