"""The ``nki`` / ``nisa`` op twins of an instruction definition (:mod:`.ods`), built with IRDL.

:func:`define_ops` turns one :class:`~.ods.InstructionDef` into

- two IRDL op classes, ``nki.<name>`` (:class:`~.instruction.NkiInstruction`: the API call,
  engine optional) and ``nisa.<name>`` (:class:`~.instruction.NisaInstruction`: the
  hardware instruction, engine required), with the same operands (``operand_def`` per
  tile / scalar, ``opt_operand_def`` when optional), the keyword syntax of
  :class:`~.syntax.KeywordOp` and an :class:`~.instruction.OperandEffects` trait saying which
  operands the instruction writes and which engine state it touches;
- their verifier (:func:`verify_definition`), read from the record's fields and then its
  ``verify`` function;
- the 1:1 lowering ``nki.<name>`` -> ``nisa.<name>`` with the record's default engine
  (:func:`~.instruction.direct_lowering`), or, for a definition with an ``isa`` form
  (:mod:`.ods_forms`), the ``nisa`` op of the form and the lowering to it;
- their place in the dialects (:data:`~.instruction.DEFINED_OPS`, which ``NKI`` and ``NISA``
  are built around) and in :data:`OPS_BY_NAME`, where passes that emit an instruction find its
  class (``op_class("nki.rng")``) without importing the definitions.
"""
from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import (AttrSizedOperandSegments, irdl_op_definition, operand_def,
                       opt_operand_def, opt_prop_def, prop_def, result_def, traits_def,
                       var_operand_def)
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..targets import GENERATION, TARGETS
from . import rules
from .common import dtype_of, shape_of
from .instruction import (DEFINED_OPS, ELEMENTWISE_OPS, FULL_WRITES, NisaInstruction, NkiInstruction, OperandEffects,
                          direct_lowering)
from .ods_forms import FloatList, PairList, Tiles, form_record, lowering
from .ods import (REQUIRED, Engine, EnumProp, Flag, InstructionDef, Int, IntList, IntPair, OpToken,
                  Scalar, Tile)
from .ods_verify_memo import PASSED, TYPES_ONLY, generic_key, passed, verified_with
from .vector_rules import arith_only, start_partitions

#: the property constraint of each kind of :class:`~.ods.Property`
_PROPERTY_TYPES = {Flag: IntegerAttr, Int: IntegerAttr, IntList: ArrayAttr, IntPair: ArrayAttr,
                   OpToken: StringAttr,
                   EnumProp: StringAttr, FloatList: ArrayAttr, PairList: ArrayAttr}

#: op name (``"nki.rng"``, ``"nisa.rng"``) -> the op class generated from a definition
OPS_BY_NAME: dict[str, type[Operation]] = {}


def op_class(name: str) -> type[Operation]:
    """The op class of a defined instruction, by op name (``"nki.dropout"``).

    Raises:
        KeyError: an internal error: no definition registered that op.
    """
    try:
        return OPS_BY_NAME[name]
    except KeyError:
        raise KeyError(f"internal error: no instruction definition registered {name!r}") from None


def engine_of(op: Operation) -> str:
    """The engine ``op`` runs on: its ``engine`` property, or its definition's default engine
    when absent or ``unknown`` (an ``nki`` op before lowering)."""
    return rules.engine_of(op, type(op).DEFINITION.engine.default)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _body(rec: InstructionDef, shape: InstructionDef | None = None) -> dict:
    """The IRDL fields of a twin of ``rec``: its operands, properties, memory effects and
    verifier are those of ``shape`` (the ``nisa`` form's record, :mod:`.ods_forms`), by
    default ``rec``'s."""
    body: dict = {"__doc__": rec.doc.split("\n\n")[0], "__module__": rec.module,
                  "DEFINITION": rec, "__annotations__": {"DEFINITION": ClassVar[InstructionDef]}}
    rec = shape or rec
    for p in rec.operands:
        constr = p.constraint if isinstance(p, Tile) else None
        args = () if constr is None else (constr,)
        if isinstance(p, Tiles):
            body[p.role] = var_operand_def(*args)
            continue
        body[p.role] = opt_operand_def(*args) if p.optional else operand_def(*args)
    for p in rec.properties:
        required = (isinstance(p, OpToken) and not p.optional) or \
            (isinstance(p, Int) and p.default is REQUIRED) or (isinstance(p, IntList) and not p.optional) or \
            isinstance(p, PairList)
        body[p.role] = (prop_def if required else opt_prop_def)(_PROPERTY_TYPES[type(p)])
    if any(p.optional for p in rec.operands):  # as the hand-written ops: sizes in the generic form
        body["irdl_options"] = (AttrSizedOperandSegments(as_property=True),)
    for name, constr in rec.results:
        body[name] = result_def(constr)
    body["traits"] = traits_def(OperandEffects(rec.writes, rec.state))

    def verify_(self) -> None:
        verify_definition(self, rec)
    body["verify_"] = verify_
    return body


def define_ops(rec: InstructionDef) -> tuple[type[Operation], type[Operation]]:
    """Build, register and return the ``(nki op, nisa op)`` twins of ``rec`` (module docstring).

    Raises:
        ValueError: an internal error: an op of that name is already registered.
    """
    form = rec.isa
    twins = [(NkiInstruction, "nki", rec.name, f"{_camel(rec.name)}Op", None)]
    if form is None:
        twins.append((NisaInstruction, "nisa", rec.name, f"Nisa{_camel(rec.name)}Op", None))
    elif form.of is None:
        twins.append((NisaInstruction, "nisa", form.name, f"Nisa{_camel(form.name)}Op",
                      form_record(rec)))
    ops = []
    for base, prefix, short, cls_name, shape in twins:
        name = f"{prefix}.{short}"
        if name in OPS_BY_NAME:
            raise ValueError(f"internal error: {name} is defined twice")
        body = _body(rec, shape)
        body.update(name=name, __qualname__=cls_name)
        op = irdl_op_definition(type(cls_name, (base,), body))
        OPS_BY_NAME[name] = op
        DEFINED_OPS[prefix].append(op)
        ops.append(op)
    nki_op = ops[0]
    if len(ops) > 1:  # the nisa op is this definition's
        if rec.elementwise:
            ELEMENTWISE_OPS.add(ops[1].name)
        if rec.full_writes:
            FULL_WRITES[ops[1].name] = rec.full_writes
    if form is None:
        nisa_op = ops[1]
        direct_lowering(nki_op, nisa_op, rec.engine.default)
    else:
        nisa_op = ops[1] if form.of is None else op_class(f"nisa.{form.name}")
        direct_lowering(nki_op, nisa_op, rec.engine.default, build=lowering(rec, nisa_op))
    return nki_op, nisa_op


# ------------------------------------------------------------------------------ verifier


def verify_definition(op: Operation, rec: InstructionDef) -> None:
    """The checks the fields of ``rec`` say, in this order, then ``rec.verify(op)``:

    1. the target: ``since`` (the error names ``feature``);
    2. each tile operand: its memory (unless ``spaces`` is None), rank >= 2 and at most 128
       partitions (an operand kind without ``tile_checks``: its own ``check(op)``); with its
       ``like`` roles: equal partition counts, then elements per partition; with
       ``partitions_of``: equal partition counts;
    3. the engine (unless ``engine.checked`` is False): one of ``engine.names``, available on the target; on GpSimd no tile
       operand in PSUM (GpSimd cannot access PSUM);
    4. each scalar operand: a number or a ``[P, 1]`` tile, ``P`` the first tile's partitions
       (a number only when ``const``; any tile when ``tile``, which is checked as a tile in 2);
    5. each tile's ``dtypes`` and ``same_dtype_as``;
    6. each op token (an arithmetic one when ``arith``) and enum property: one of ``allowed``;

    and after ``rec.verify(op)``, with ``start_partitions``, the start-partition rule of the
    tile operands.

    Steps 1-6 depend only on ``op``'s class, target, operand types (their shapes, dtypes and
    memories) and properties: a combination that passed them is not checked again
    (:mod:`.ods_verify_memo`; not for a definition with an operand kind that checks itself),
    nor ``rec.verify`` when it is marked ``types_only`` (but for its ``also`` part); one
    marked ``types_and(extra)`` is not checked again for a combination and ``extra(op)``
    that passed it.

    Raises:
        VerifyException: the first rule ``op`` breaks, as ``nisa.<name>: ...``.
    """
    key = generic_key(op, rec)
    if key is not None and key in PASSED:
        if rec.verify is not None:
            if rec.verify not in TYPES_ONLY:
                verified_with(op, rec.verify, key)
            elif (also := TYPES_ONLY[rec.verify]) is not None:
                also(op)
    else:
        _generic_checks(op, rec)
        if rec.verify is not None:
            verified_with(op, rec.verify, key)
        if key is not None:
            passed(op, key)
    if rec.start_partitions:
        start_partitions(op, *(p.role for p in rec.operands))


def _generic_checks(op: Operation, rec: InstructionDef) -> None:
    """Steps 1-6 of :func:`verify_definition`."""
    api = rules.api(op)
    if rec.since is not None:
        rules.require_target(op, rec.since, rec.feature or api)
    tiles = [(p, getattr(op, p.role)) for p in rec.tiles
             if p.tile_checks and not isinstance(p, Tiles)]
    for p, v in tiles:
        if p.spaces is not None:
            rules.tile(op, p.role, v, spaces=p.spaces)
    for p in rec.tiles:
        if not p.tile_checks:  # a kind of operand that checks itself
            p.check(op)
    for p in rec.operands:
        v = getattr(op, p.role)
        if isinstance(p, Scalar) and p.tile and v is not None and isinstance(v.type, MemRefType):
            rules.tile(op, p.role, v)
    for p, v in tiles:
        if v is None:
            continue
        if p.likes:
            pairs = ((p.role, v), *((r, w) for r in p.likes if _is_tile(w := getattr(op, r))))
            rules.same_partitions(op, *pairs)
            rules.same_free_size(op, *pairs)
        if p.partition_peers:
            rules.same_partitions(op, (p.role, v), *((r, getattr(op, r)) for r in p.partition_peers))
    if rec.engine.checked:
        eng, there = _verify_engine(op, rec.engine, api)
        why = "" if "vector" in there else f" (its only engine on {rules.target_of(op)})"
        rules.gpsimd_no_psum(op, eng, *((p.role, v) for p, v in tiles), why=why)
    first = next((v for _, v in tiles if v is not None), None)
    for p in rec.operands:
        if not isinstance(p, Scalar):
            continue
        v = getattr(op, p.role)
        if p.const and v is not None and isinstance(v.type, MemRefType):
            raise VerifyException(f"{api}: '{p.role}' must be a compile-time float, not a tensor")
        if first is not None and not p.tile:
            rules.per_partition_vector(op, p.role, v, shape_of(first)[0])
    for p, v in tiles:
        if v is None:
            continue
        dt = dtype_of(v)
        if p.dtypes is not None and dt not in p.dtypes:
            allowed = p.allowed or f"allowed: {', '.join(dtypes.name_of(d) for d in p.dtypes)}"
            raise VerifyException(f"{api}: '{p.role}' dtype {dtypes.name_of(dt)} is not supported "
                                  f"({allowed})")
        if p.same_dtype_as is not None:
            other = dtype_of(getattr(op, p.same_dtype_as))
            if dt != other:
                raise VerifyException(f"{api}: '{p.role}' dtype {dtypes.name_of(dt)} must match "
                                      f"'{p.same_dtype_as}' dtype {dtypes.name_of(other)}")
    for p in rec.properties:
        if isinstance(p, OpToken) and p.arith:
            arith_only(op, p.role, p.allowed)
        elif isinstance(p, (OpToken, EnumProp)) and p.allowed:
            rules.enum(op, p.role, p.allowed)


def _is_tile(v) -> bool:
    """``v`` is absent or a memref (a number standing in a ``Scalar(tile=True)`` is no tile)."""
    return v is None or isinstance(v.type, MemRefType)


def _verify_engine(op: Operation, engine: Engine, api: str) -> tuple[str, list[str]]:
    """Check the engine property against ``engine``; return the engine ``op`` runs on and
    the engines it may run on on its target."""
    rules.engine(op, engine.names)
    eng = rules.engine_of(op, engine.default)
    target = rules.target_of(op)
    there = [e for e in engine.names if GENERATION[target] >= GENERATION[engine.since[e]]]
    since = engine.since.get(eng, TARGETS[0])
    if GENERATION[target] < GENERATION[since]:
        raise VerifyException(f"{api}: cannot run on the {eng} engine on {target} (allowed: "
                              f"{', '.join(there)}; {eng} needs {since} or newer)")
    return eng, there


__all__ = ["define_ops", "op_class", "engine_of", "verify_definition", "OPS_BY_NAME"]
