"""The vocabulary of instruction definitions: one declarative record per ``nki.isa`` instruction.

In the manner of MLIR's ODS (LLVM TableGen records), an instruction is written once, as a
class body in ``nki_mlir/instructions/`` that :func:`record_of` reads into an
:class:`InstructionDef`::

    @instruction
    class rng:
        '''Public docstring of ``nki.isa.rng`` (shapes, dtypes, engines, errors).'''
        dst = Tile(writes=True, dtypes=INTEGER)      # API parameters, in signature order
        engine = Engine("vector", gpsimd="trn2")     # engines: default, others by oldest target
        cost = Stream("dst", source="...")           # the cost model's row (perf layer)

        def verify(op): ...                          # verifier rules the fields cannot say
        def interpret(dec, op): ...                  # the interpreter's closure builder

The class attributes that are :class:`Param` s are the API parameters in signature order
(``name=None`` is added last); every layer reads the rest of the record from the same
object: the op twins and their verifier (:mod:`.ods_ops`), the frontend handler and the Beta 1
form (``frontend/ods_calls.py``), the interpreter and the cost model (by the registrar,
``nki_mlir/instructions/define.py``).  The dialects layer reads the fields below; the
``interpret`` field is the runtime's and opaque here; the cost model reads ``cost`` from
the op (``op.DEFINITION``).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cached_property
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from xdsl.dialects.builtin import MemRefType

from ..targets import TARGETS
from .common import ON_CHIP

#: the default of a required parameter (it has no default in the API signature)
REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One API parameter.  ``role`` is filled in from the class attribute's name."""

    #: the parameter is one of the API's (False: an operand of the ops only, which the
    #: definition's ``call`` hook sets, e.g. ``ods_forms.LoopIndex``)
    in_api: ClassVar[bool] = True

    role: str = ""

    @property
    def api_default(self) -> Any:
        """The parameter's default in the public signature (:data:`REQUIRED`: none)."""
        return REQUIRED


@dataclass(frozen=True)
class Tile(Param):
    """A tensor operand (a memref).

    Attributes:
        writes: the instruction writes this operand (else it reads it): its memory effect.
        optional: the operand may be omitted (``None``).
        spaces: the memories it may live in (default SBUF or PSUM; None: any, the
            definition's ``verify`` checks them).
        dtypes: the dtypes it may have (None: any).
        like: a role (or roles) whose partition count and elements per partition this one
            must equal.
        partitions_of: a role (or roles) whose partition count this one must equal.
        same_dtype_as: a role whose dtype this one must have.
        allowed: how the dtype error names ``dtypes`` (``"bfloat16 or float16"``; None: the
            list, as ``allowed: ...``).
    """

    #: the generated verifier checks it as a tile (memory, shape, ``like``, dtypes); a kind
    #: of operand that checks itself (``ods_registers.Register``) sets False and has a
    #: ``check(op)`` method instead
    tile_checks: ClassVar[bool] = True
    #: the IRDL type constraint of the operand (None: any type)
    constraint: ClassVar[Any] = MemRefType

    writes: bool = False
    optional: bool = False
    spaces: tuple[str, ...] | None = ON_CHIP
    dtypes: tuple | None = None
    like: str | tuple[str, ...] | None = None
    partitions_of: str | tuple[str, ...] | None = None
    same_dtype_as: str | None = None
    allowed: str | None = None

    @property
    def likes(self) -> tuple[str, ...]:
        """The roles of ``like``, as a tuple."""
        return _roles(self.like)

    @property
    def partition_peers(self) -> tuple[str, ...]:
        """The roles of ``partitions_of``, as a tuple."""
        return _roles(self.partitions_of)

    @property
    def api_default(self) -> Any:
        return None if self.optional else REQUIRED


def _roles(r: str | tuple[str, ...] | None) -> tuple[str, ...]:
    return () if r is None else (r,) if isinstance(r, str) else tuple(r)


@dataclass(frozen=True)
class Scalar(Param):
    """A number (emitted as an ``arith.constant``) or a ``[P, 1]`` per-partition tile, ``P``
    the partition count of the instruction's first tile operand.

    Attributes:
        default: the API default (a number, None for an optional operand, or REQUIRED).
        if_none: the number an explicit ``None`` stands for (None: ``None`` is refused, or
            omits an optional operand).
        const: a compile-time number only (no tile), as an ``arith.constant``.
        tile: a number or a whole tile (not ``[P, 1]``): a tile joins the ``like`` checks of
            the tile operands that name it.
        omit: the operand may be absent although the API has a default (the definition's
            ``call`` hook sets the argument to None when the instruction does without it).
        dtype_of: a tile role whose dtype a number is emitted with (``memset``'s ``value``
            takes ``dst``'s; None: the number's own kind, f32 or an integer).
    """

    default: Any = REQUIRED
    if_none: float | None = None
    const: bool = False
    tile: bool = False
    omit: bool = False
    dtype_of: str | None = None

    @property
    def optional(self) -> bool:
        return self.default is None or self.omit

    @property
    def api_default(self) -> Any:
        return self.default


@dataclass(frozen=True)
class Property(Param):
    """A compile-time API parameter kept as a property of the ops (optional: None omits it)."""

    @property
    def api_default(self) -> Any:
        return None


@dataclass(frozen=True)
class Flag(Property):
    """A boolean kept as an ``IntegerAttr``.  ``default=None`` (``accumulate``): True /
    False / None, anything else refused, the property absent for None; ``default=False``
    (``reverse0``): the truth of the argument, the property present only when true;
    ``default=True`` (``unique_indices``): the property present (false) only when the
    argument is false."""

    default: bool | None = None

    @property
    def api_default(self) -> Any:
        return self.default


@dataclass(frozen=True)
class OpToken(Property):
    """An ALU or activation operator (``nl.add`` -> ``"add"``), kept as a string property.

    Attributes:
        allowed: the tokens it may be (a vocabulary defined once, e.g.
            ``dialects/vector_rules.ARITH``).
        arith: a bitvec token gets its own error ("takes arithmetic operators only").
        optional: the argument may be None (the property is then absent).
    """

    allowed: tuple[str, ...] = ()
    arith: bool = False
    optional: bool = False

    @property
    def api_default(self) -> Any:
        return None if self.optional else REQUIRED


@dataclass(frozen=True)
class EnumProp(Property):
    """A member of the ``nisa.<enum>`` enum (``reduce_cmd``), kept as a string property that
    is absent when the member is ``default``.

    Attributes:
        enum: the ``nki.isa`` enum's name.
        allowed: the members the instruction accepts (checked by the verifier; empty: any).
        default: the member None stands for.
        implied: ``(role, member)``: when the operand ``role`` is given and the argument is
            the default, the member it stands for (``reduce_res`` given with ``reduce_cmd``
            idle means ``reset_reduce``).
    """

    enum: str = ""
    allowed: tuple[str, ...] = ()
    default: str | None = None
    implied: tuple[str, str] | None = None


@dataclass(frozen=True)
class Int(Property):
    """A compile-time integer (an ``IntegerAttr``; ``default=REQUIRED``: the API has no
    default; ``default=None``: optional, absent when None; else always stored).  ``strict``:
    a Python ``int`` only (else an integral float is accepted too)."""

    default: Any = REQUIRED
    strict: bool = False

    @property
    def api_default(self) -> Any:
        return self.default


@dataclass(frozen=True)
class IntList(Property):
    """A list of compile-time Python ``int`` s (an ``ArrayAttr``; required unless
    ``optional``: None omits it)."""

    optional: bool = False

    @property
    def api_default(self) -> Any:
        return None if self.optional else REQUIRED


@dataclass(frozen=True)
class IntPair(Property):
    """A pair of compile-time integers, ``()`` or None for none (an ``ArrayAttr``)."""


@dataclass(frozen=True)
class Engine(Param):
    """The engines an instruction runs on.

    ``Engine("vector", gpsimd="trn2")``: Vector by default (from the oldest target), GpSimd
    from trn2 on.  ``param=False``: the API has no ``engine=`` parameter (the instruction
    runs on its default engine, or one a pass chooses).  ``checked=False``: the generated
    verifier leaves the engine to the definition's ``verify`` (whose rules differ by twin).
    """

    default: str = "vector"
    since: dict[str, str] = field(default_factory=dict)
    param: bool = True
    checked: bool = True

    def __init__(self, default: str, *, param: bool = True, checked: bool = True, **since: str):
        object.__setattr__(self, "role", "engine")
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "since", {default: TARGETS[0], **since})
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "checked", checked)
        for t in self.since.values():
            assert t in TARGETS, f"unknown target {t!r}"

    def __hash__(self) -> int:
        return hash((self.default, tuple(self.since.items()), self.param, self.checked))

    @property
    def names(self) -> tuple[str, ...]:
        """Every engine the instruction may run on, the default first."""
        return tuple(self.since)

    @property
    def api_default(self) -> Any:
        return None  # None or nisa.engine.unknown: the default engine


@dataclass(frozen=True)
class Stream:
    """The cost model's row of an instruction (as LLVM's TableGen records hold scheduling
    models): one stream over its main operand, ``cycles = k * N`` per engine as
    ``nki_mlir/perf/costs.py`` computes it (``N`` the main operand's free size).

    Attributes:
        roles: the main operand: the first of these roles present.
        k: inputs streamed per element.
        perf: VectorE perf-mode class: ``"copy"``, ``"other"`` (bf16 inputs) or None.
        gpsimd_k: ``k`` on GpSimd when it differs (None: ``k``).
        source: where the formula comes from: a documented source (docs/cost-model.md), or "analogue: <the documented
            instruction whose formula is used>".
    """

    roles: tuple[str, ...] | str
    k: float = 1.0
    perf: str | None = None
    gpsimd_k: float | None = None
    source: str = ""

    @property
    def row(self) -> tuple[tuple[str, ...], float, str | None, float | None]:
        """``(roles, k, perf, gpsimd_k)``, the form of the cost model's table."""
        roles = (self.roles,) if isinstance(self.roles, str) else tuple(self.roles)
        return roles, float(self.k), self.perf, self.gpsimd_k


@dataclass(frozen=True)
class Formula:
    """A cost-model row that is not one stream: ``kind`` names a formula of
    ``nki_mlir/perf/costs.py`` (``"matmul_mx"``, ``"two_input"``) over the operand ``roles``,
    with the perf-mode class ``perf`` (as for :class:`Stream`); ``source`` as for :class:`Stream`."""

    kind: str
    roles: tuple[str, ...] = ()
    perf: str | None = None
    source: str = ""

    @property
    def row(self) -> None:
        return None


@dataclass(frozen=True)
class InstructionDef:
    """One instruction, as its definition says (see the module docstring).

    Attributes:
        name: the API name without module (``"rng"``); the ops are ``nki.<name>`` and
            ``nisa.<name>``, the API function ``nki.isa.<name>``.
        doc: the public docstring of ``nki.isa.<name>``.
        params: the API parameters in signature order (an :class:`Engine` with
            ``param=False`` is not one, but is kept here).
        engine: the engines (default and by target).
        since: the oldest target the instruction exists on (None: every target).
        feature: what the error for an older target calls the instruction (None: its API
            name), e.g. ``"quantize_mx (MXFP8 quantization)"``.
        start_partitions: its tile operands obey the start-partition rule (a compute
            engine's access starts at partition 0, 32, 64 or 96; NKI architecture guide).
        state: engine state the instruction reads and writes besides its operands
            (``"prng"``: the engine's random-number generator), a memory effect of its ops.
        verify: ``verify(op)``, verifier rules beyond those the fields say (raises
            ``VerifyException``), run by both twins after the generated checks.
        interpret: ``interpret(decoder, op) -> closure``, the interpreter's closure builder.
        cost: the cost model's row for the instruction (a :class:`Stream` or a :class:`Formula`).
        beta1_result: the Beta 1 form (``nki.isa`` of NKI Beta 1, no ``dst``) returns a new
            tile shaped like the first tile argument (or by the rule ``beta1_result(cg, api,
            bound_args, dtype) -> (shape, dtype, buffer)``); False: the call has no result
            and is passed on unchanged.
        call: ``call(cg, api, args)``, the frontend's extra behaviour for a call: run on the
            bound arguments (a dict by parameter name) before they are converted, it raises
            the API's own argument errors (``cg.b.error``) and may replace arguments (None
            omits an optional operand); it returns ``ods_forms.EMITTED`` when it emitted
            the call itself (an indirect DMA), which then emits nothing more.
        isa: the ``nisa`` form when it differs from the ``nki`` op (AWS's op name, roles and
            spellings; an :class:`~.ods_forms.IsaForm`), None: the 1:1 twin ``nisa.<name>``.
        elementwise: element i of ``dst`` is computed from element i of each same-sized tile
            operand (the in-place rewrite and the interpreter's poison tracking rely on it).
        full_writes: the written roles the instruction writes wholly, without reading them.
        order: the IR order of the ``nki`` op's operands and properties when it differs from
            the signature's (the keyword syntax prints them in this order).
        module: the Python module holding the definition.

    Hooks, for what the fields above cannot say:

    Attributes:
        frontend: ``frontend(cg, args, operands, props, emit) -> value``, the last step of the
            generated handler, after the arguments are converted (unlike ``call``): checks
            and defaults that need the converted values, and the call's return value;
            ``emit(result_types=None)`` emits the op and returns it.
        results: the ops' results, as ``(name, type constraint)`` pairs (none by default).
        public: False for an op of ours that is no ``nki.isa`` API (no public function,
            handler or Beta 1 form; the frontend emits it itself).
    """

    name: str
    doc: str
    params: tuple[Param, ...]
    engine: Engine
    since: str | None = None
    feature: str | None = None
    start_partitions: bool = False
    state: str | None = None
    verify: Callable | None = None
    interpret: Callable | None = None
    cost: Stream | Formula | None = None
    beta1_result: bool = True
    call: Callable | None = None
    isa: Any = None
    elementwise: bool = False
    full_writes: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    module: str = ""
    frontend: Callable | None = None
    results: tuple[tuple[str, Any], ...] = ()
    public: bool = True

    @property
    def api(self) -> str:
        return f"nisa.{self.name}"

    @property
    def api_params(self) -> tuple[Param, ...]:
        """The parameters of the public signature, in order (without ``name``)."""
        return tuple(p for p in self.params
                     if p.in_api and not (isinstance(p, Engine) and not p.param))

    # (operands / properties / tiles are read by every op's verifier: computed once per
    # record, which is frozen; ``replace`` makes a new record, without the cached values)
    @cached_property
    def operands(self) -> tuple[Param, ...]:
        """The operand params (tiles and scalars), in IR order (``order``, else definition order)."""
        return self._ordered(p for p in self.params if isinstance(p, (Tile, Scalar)))

    @cached_property
    def properties(self) -> tuple[Property, ...]:
        """The compile-time parameters kept as op properties, in IR order."""
        return self._ordered(p for p in self.params if isinstance(p, Property))

    def _ordered(self, ps) -> tuple:
        ps = tuple(ps)
        if not self.order:
            return ps
        return tuple(sorted(ps, key=lambda p: self.order.index(p.role) if p.role in self.order
                            else len(self.order)))

    @cached_property
    def tiles(self) -> tuple[Tile, ...]:
        return tuple(p for p in self.params if isinstance(p, Tile))

    @property
    def writes(self) -> frozenset[str]:
        """The operand roles the instruction writes (every other tile operand is read)."""
        return frozenset(p.role for p in self.tiles if p.writes)

    def signature(self) -> inspect.Signature:
        """The public signature of ``nki.isa.<name>``."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        ps = [inspect.Parameter(p.role, kind, default=p.api_default) for p in self.api_params]
        return inspect.Signature([*ps, inspect.Parameter("name", kind, default=None)])


#: class attributes of a definition that are not parameters
_FIELDS = {"since", "feature", "start_partitions", "state", "verify", "interpret", "cost", "beta1_result",
           "call", "isa", "elementwise", "full_writes", "order"}
_FIELDS |= {"frontend", "results", "public"}  # the hooks


def record_of(cls: type) -> InstructionDef:
    """The :class:`InstructionDef` a definition class body declares (see module docstring).

    Raises:
        TypeError: an internal error in the definition (an unknown attribute, no docstring,
            no engine, a parameter order Python cannot call).
    """
    params: list[Param] = []
    extra: dict[str, Any] = {}
    for key, value in cls.__dict__.items():
        if isinstance(value, Param):
            params.append(value if isinstance(value, Engine) else replace(value, role=key))
        elif key in _FIELDS:
            extra[key] = value
        elif not (key.startswith("__") and key.endswith("__")):
            raise TypeError(f"internal error: instruction definition {cls.__name__} has an "
                            f"unknown attribute {key!r} (expected parameters or {sorted(_FIELDS)})")
    engines = [p for p in params if isinstance(p, Engine)]
    if len(engines) != 1 or engines[0].role != "engine":
        raise TypeError(f"internal error: instruction definition {cls.__name__} needs one "
                        f"'engine = Engine(...)'")
    doc = inspect.cleandoc(cls.__doc__ or "")
    if not doc:
        raise TypeError(f"internal error: instruction definition {cls.__name__} has no docstring")
    rec = InstructionDef(name=cls.__name__, doc=doc, params=tuple(params), engine=engines[0],
                         module=cls.__module__, **extra)
    rec.signature()  # a required parameter after a defaulted one raises ValueError here
    return rec


__all__ = ["REQUIRED", "Param", "Tile", "Scalar", "Property", "Flag", "Int", "IntList", "IntPair", "OpToken",
           "EnumProp", "Engine",
           "Stream", "Formula", "InstructionDef", "record_of"]
