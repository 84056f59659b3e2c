"""A faster IRDL op builder for xDSL 0.74, same ops (issue 16).

``IRDLOperation.__init__`` / ``.build`` go through ``irdl_op_init``, which re-derives on every
call how the arguments map to the definition: it wraps every operand, tests each argument
against the abstract ``Sequence`` class (a slow ``isinstance``), builds the segment sizes
and scans the definition's options.  :func:`irdl_op_init` below does the same for the usual
call -- operands that are SSA values, ``None`` or lists of SSA values, result types that are
attributes, ``None`` or lists, no regions or successors, no same-size-variadic option --
from a plan computed once per op definition, and hands anything else to upstream (which
also raises upstream's errors).  The op it builds is the one upstream builds: the same
operands, result types, properties (``None`` values dropped, segment sizes added),
attributes, through the same ``Operation.__init__``.  Remove this override when the pinned
xDSL builds as fast by itself.
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, i32
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult
from xdsl.irdl import operations as irdl_ops
from xdsl.irdl.operations import (AttrSizedOperandSegments, AttrSizedResultSegments, OpDef,
                                  OptionalDef, VariadicDef)

_upstream = irdl_ops.irdl_op_init
_SINGLE, _OPTIONAL, _VARIADIC = 0, 1, 2


def _kinds(defs) -> tuple[int, ...]:
    return tuple(_OPTIONAL if isinstance(d, OptionalDef) else _VARIADIC if isinstance(d, VariadicDef)
                 else _SINGLE for _, d in defs)


#: id(op definition) -> (definition, plan or None); a plan is (operand kinds, result kinds,
#: where the operand segment sizes go, where the result segment sizes go) with a place
#: ``None`` (no such option), ``True`` (properties) or ``False`` (attributes)
_PLANS: dict[int, tuple] = {}


def _plan(op_def: OpDef):
    hit = _PLANS.get(id(op_def))
    if hit is not None and hit[0] is op_def:
        return hit[1]
    plan = None
    operand_seg = result_seg = None
    simple = not op_def.regions and not op_def.successors
    for option in op_def.options:
        if isinstance(option, AttrSizedOperandSegments):
            operand_seg = option.as_property
        elif isinstance(option, AttrSizedResultSegments):
            result_seg = option.as_property
        else:
            simple = False          # region / successor segments, same-size variadics, ...
    if simple:
        plan = (_kinds(op_def.operands), _kinds(op_def.results), operand_seg, result_seg)
    _PLANS[id(op_def)] = (op_def, plan)
    return plan


#: class -> whether its instances are single result types (attributes that are not sequences)
_TYPE_CLASSES: dict[type, bool] = {}


def _single(cls: type, operand: bool) -> bool:
    """An argument of class ``cls`` is one operand (an SSA value) / one result type."""
    if operand:
        return cls is OpResult or cls is BlockArgument
    ok = _TYPE_CLASSES.get(cls)
    if ok is None:
        ok = _TYPE_CLASSES[cls] = issubclass(cls, Attribute) and not issubclass(cls, Sequence)
    return ok


def _flatten(args, kinds, operand: bool):
    """``(flat list, sizes)`` of operands or result types, or None when upstream must decide
    (an argument of another form; upstream also raises on a bad call)."""
    if len(args) != len(kinds):
        return None
    flat: list = []
    sizes: list[int] = []
    for arg, kind in zip(args, kinds):
        if arg is None:
            if kind == _SINGLE:
                return None
            sizes.append(0)
        elif _single(arg.__class__, operand):
            flat.append(arg)
            sizes.append(1)
        elif isinstance(arg, (list, tuple)):
            n = len(arg)
            if (kind == _SINGLE and n != 1) or (kind == _OPTIONAL and n > 1):
                return None
            if not all(_single(a.__class__, operand) for a in arg):
                return None
            flat.extend(arg)
            sizes.append(n)
        else:
            return None
    return flat, sizes


def segment_sizes(sizes: list[int]) -> DenseArrayBase:
    """``DenseArrayBase.from_list(i32, sizes)``, one shared object per list of sizes
    (attributes are immutable; an op's segment sizes are one of a few lists)."""
    key = tuple(sizes)
    hit = _SEGMENTS.get(key)
    if hit is None:
        if len(_SEGMENTS) >= 1 << 12:
            _SEGMENTS.clear()
        hit = _SEGMENTS[key] = DenseArrayBase.from_list(i32, sizes)
    return hit


_SEGMENTS: dict[tuple[int, ...], DenseArrayBase] = {}


def irdl_op_init(self, op_def: OpDef, *, operands, result_types, properties, attributes,
                 successors, regions):
    """``irdl_op_init`` (see the module docstring)."""
    plan = _plan(op_def)
    if plan is None or regions or successors:
        return _upstream(self, op_def, operands=operands, result_types=result_types,
                         properties=properties, attributes=attributes, successors=successors,
                         regions=regions)
    operand_kinds, result_kinds, operand_seg, result_seg = plan
    ops = _flatten(operands, operand_kinds, True)
    res = _flatten(result_types, result_kinds, False) if ops is not None else None
    if ops is None or res is None:
        return _upstream(self, op_def, operands=operands, result_types=result_types,
                         properties=properties, attributes=attributes, successors=successors,
                         regions=regions)
    props = {k: v for k, v in properties.items() if v is not None}
    attrs = {k: v for k, v in attributes.items() if v is not None}
    if operand_seg is not None:
        (props if operand_seg else attrs)["operandSegmentSizes"] = segment_sizes(ops[1])
    if result_seg is not None:
        (props if result_seg else attrs)["resultSegmentSizes"] = segment_sizes(res[1])
    Operation.__init__(self, operands=ops[0], result_types=res[0], properties=props,
                       attributes=attrs, successors=[], regions=[])


irdl_ops.irdl_op_init = irdl_op_init
