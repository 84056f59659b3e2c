"""A faster IRDL verifier for xDSL 0.74 operations, same verdicts and messages (issue 16).

``OpDef.verify`` (the constraint part of every IRDL op's ``verify_``) re-derives on every
call which operand / result belongs to which definition: it scans the op definition's
options, reads each named operand through its descriptor (which, for an op with
``AttrSizedOperandSegments``, unpacks the segment sizes again per operand) and counts
variadic definitions.  On large kernels the module verifier and the frontend's per-op check
spend most of their time there.

:func:`verify` does the same checks from a plan computed once per op definition: the
operand and result constraints, in definition order, each on the types of its slice of the
op's operands / results (segment sizes read once per op, or the same-size split of
variadic definitions without them), then regions, successors and properties as upstream
does.  A constraint without variables has one verdict per type, so
the types it accepted are remembered (per constraint and type object: types are immutable
and shared) and not checked again.  Any failure goes to the upstream verifier, which raises
the upstream message; so an op passes here exactly when it passes upstream.  The verdict
on an op without regions and successors depends only on its definition, operand / result
types and properties (and a segment-size attribute): a combination that passed is
remembered by identity (:data:`_OPS_OK`, as the view ops below) and not checked again.  Remove this
override when the pinned xDSL verifies as fast by itself.

The own verifiers (``verify_``) of ``memref.reinterpret_cast`` and ``memref.subview`` (the
frontend makes one per access pattern / view) are checked the same way: their rules
(dynamic-position counts, memref types, result sizes) read once from the op's tuples and
the memoized integer lists, and upstream's ``verify_`` raises the message of any failure.
Their verdict depends only on the op's class, the types of its operands and results, and its
properties and attributes (all immutable, and shared: a large kernel has tens of thousands
of view ops but about a thousand distinct such combinations), so a combination that passed
is remembered (:func:`_view_ok`) and not checked again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, MemRefType, i32
from xdsl.dialects.memref import ReinterpretCastOp, SubviewOp
from xdsl.irdl.constraints import InferenceContext, VerificationContext
from xdsl.irdl.operations import (AttrSizedOperandSegments, AttrSizedRegionSegments,
                                  AttrSizedResultSegments, AttrSizedSuccessorSegments, OpDef,
                                  OptionalDef, OptPropertyDef, VarIRConstruct, VariadicDef,
                                  irdl_op_verify_regions, verify_variadic_size)
from xdsl.ir import ErasedSSAValue, Operation, OpTrait
from xdsl.utils.exceptions import VerifyException

_upstream_verify = OpDef.verify
_item = tuple.__getitem__      # operand / result tuples (SSAValues) without their Python __getitem__


@dataclass(frozen=True)
class _ListPlan:
    """How to check one operand / result list: the constraints in definition order, and
    the segment-size attribute (``None``: one value per definition, no variadics)."""

    constrs: tuple
    segments: str | None = None         # the segment-size attribute's name
    as_property: bool = False
    kinds: tuple = ()                   # per definition: "single" | "optional" | "variadic"
    pure: tuple = ()                    # per constraint: no variables (verdict per type)
    same_size: bool = False             # variadics without segment sizes: all the same size


def _pure(constr) -> bool:
    """The constraint's verdict on one value depends on its type only (no variables)."""
    try:
        from_length = getattr(constr, "variables_from_length", None)   # range constraints only
        return not constr.variables() and not (from_length is not None and from_length())
    except Exception:  # noqa: BLE001 -- a constraint that cannot tell: checked every time
        return False


#: (id(constraint), id(type)) -> (constraint, type) it accepted; both kept alive, so ids stay
#: unique while remembered
_ACCEPTED: dict[tuple[int, int], tuple] = {}


def _check_one(constr, pure: bool, t, ctx: VerificationContext) -> None:
    """``constr.verify((t,), ctx)``, skipped when the pure ``constr`` accepted ``t`` before."""
    if not pure:
        constr.verify((t,), ctx)
        return
    key = (id(constr), id(t))
    hit = _ACCEPTED.get(key)
    if hit is not None and hit[0] is constr and hit[1] is t:
        return
    constr.verify((t,), ctx)
    if len(_ACCEPTED) >= 1 << 16:
        _ACCEPTED.clear()
    _ACCEPTED[key] = (constr, t)


def _list_plan(defs: list, options: list, option_cls) -> _ListPlan | None:
    constrs = tuple(d.constr for _, d in defs)
    pure = tuple(_pure(c) for c in constrs)
    option = next((o for o in options if isinstance(o, option_cls)), None)
    kinds = tuple("optional" if isinstance(d, OptionalDef) else
                  "variadic" if isinstance(d, VariadicDef) else "single" for _, d in defs)
    if option is None:
        if any(k != "single" for k in kinds):   # same-size variadics (upstream's default)
            return _ListPlan(constrs, kinds=kinds, pure=pure, same_size=True)
        return _ListPlan(constrs, pure=pure)
    return _ListPlan(constrs, option.attribute_name, option.as_property, kinds, pure)


def _same_sizes(plan: _ListPlan, length: int) -> list[int] | None:
    """Per definition, its number of values when every variadic has the same size (as
    upstream's ``verify_variadic_same_size`` and same-size accessors split ``length``
    values); None when upstream rejects ``length``."""
    kinds = plan.kinds
    n_var = sum(1 for k in kinds if k != "single")
    fixed = len(kinds) - n_var
    if "optional" in kinds:             # all empty or all singletons
        if length == len(kinds):
            k = 1
        elif length == fixed:
            k = 0
        else:
            return None
    else:
        if length < fixed or (length - fixed) % n_var:
            return None
        k = (length - fixed) // n_var
    return [1 if kind == "single" else k for kind in kinds]


def _check_list(plan: _ListPlan, op: Operation, values, ctx: VerificationContext) -> bool:
    """Whether every constraint of ``plan`` holds on ``values``; False when upstream would
    reject the list's sizes (upstream then raises its message)."""
    constrs = plan.constrs
    if plan.same_size:
        sizes = _same_sizes(plan, len(values))
        return sizes is not None and _check_slices(plan, values, sizes, ctx)
    if plan.segments is None:
        if len(values) != len(constrs):
            return False
        for c, p, v in zip(constrs, plan.pure, values):
            _check_one(c, p, v.type, ctx)
        return True
    container = op.properties if plan.as_property else op.attributes
    attr = container.get(plan.segments)
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i32:
        return False
    sizes = attr.get_values()
    if len(sizes) != len(constrs):
        return False
    start = 0
    for n, kind in zip(sizes, plan.kinds):
        if n < 0 or (kind == "single" and n != 1) or (kind == "optional" and n > 1):
            return False
        start += n
    if start != len(values):
        return False
    return _check_slices(plan, values, sizes, ctx)


def _check_slices(plan: _ListPlan, values, sizes, ctx: VerificationContext) -> bool:
    """Every constraint of ``plan`` on its slice of ``values`` (``sizes`` per definition)."""
    start = 0
    for c, p, n in zip(plan.constrs, plan.pure, sizes):
        if n == 1:
            _check_one(c, p, _item(values, start).type, ctx)
        else:
            c.verify(tuple(v.type for v in values[start:start + n]), ctx)
        start += n
    return True


@dataclass(frozen=True)
class _Plan:
    operands: _ListPlan
    results: _ListPlan
    regions: bool           # regions to check (else: none defined, none allowed)
    successors: bool
    props: tuple = ()       # (name, constraint, optional, pure) per property definition
    traits: tuple = ()      # the definition's traits with a verifier of their own


def _check_attr(constr, pure: bool, attr, ctx: VerificationContext) -> None:
    """``constr.verify(attr, ctx)``, skipped when the pure ``constr`` accepted ``attr`` (the
    same object) before."""
    if not pure:
        constr.verify(attr, ctx)
        return
    key = (id(constr), id(attr))
    hit = _ACCEPTED.get(key)
    if hit is not None and hit[0] is constr and hit[1] is attr:
        return
    constr.verify(attr, ctx)
    if len(_ACCEPTED) >= 1 << 16:
        _ACCEPTED.clear()
    _ACCEPTED[key] = (constr, attr)


_PLANS: dict[int, tuple[OpDef, _Plan | None]] = {}


def _plan(op_def: OpDef) -> _Plan | None:
    hit = _PLANS.get(id(op_def))
    if hit is None or hit[0] is not op_def:
        operands = _list_plan(op_def.operands, op_def.options, AttrSizedOperandSegments)
        results = _list_plan(op_def.results, op_def.options, AttrSizedResultSegments)
        regions = bool(op_def.regions) or any(isinstance(o, AttrSizedRegionSegments)
                                              for o in op_def.options)
        successors = bool(op_def.successors) or any(isinstance(o, AttrSizedSuccessorSegments)
                                                    for o in op_def.options)
        props = tuple((name, d.constr, isinstance(d, OptPropertyDef), _pure(d.constr))
                      for name, d in op_def.properties.items())
        traits = tuple(t for t in op_def.traits if type(t).verify is not OpTrait.verify)
        plan = None if operands is None or results is None or op_def.attributes else \
            _Plan(operands, results, regions, successors, props, traits)
        hit = _PLANS[id(op_def)] = (op_def, plan)
    return hit[1]


#: :func:`_op_key` -> the objects whose ids it holds, for the ops that passed :func:`verify`;
#: the objects are kept alive, so the ids stay theirs while remembered
_OPS_OK: dict[tuple, tuple] = {}


def _op_key(op_def: OpDef, plan: _Plan, op: Operation) -> tuple:
    """What :func:`verify`'s verdict on ``op`` (no regions, no successors) depends on: the
    definition, the operand and result types (their number gives the segment split of
    same-size variadics), the properties and, when a segment-size list is an attribute,
    that attribute -- by object identity (attributes are immutable)."""
    key = (id(op_def), tuple([id(v.type) for v in op._operands]),   # noqa: SLF001 -- the tuple
           tuple([id(r.type) for r in op.results]),
           tuple([(k, id(v)) for k, v in op.properties.items()]))
    for lp in (plan.operands, plan.results):
        if lp.segments is not None and not lp.as_property:
            key += (id(op.attributes.get(lp.segments)),)
    return key


def _remember(op_def: OpDef, plan: _Plan, op: Operation, key: tuple) -> None:
    if len(_OPS_OK) >= 1 << 16:
        _OPS_OK.clear()
    _OPS_OK[key] = (op_def, tuple([v.type for v in op._operands]),   # noqa: SLF001
                    tuple([r.type for r in op.results]), tuple(op.properties.values()),
                    tuple([op.attributes.get(lp.segments) for lp in (plan.operands, plan.results)
                           if lp.segments is not None and not lp.as_property]))


def verify(self: OpDef, op: Operation) -> None:
    """``OpDef.verify``: the op satisfies the definition's invariants (else the upstream
    ``VerifyException``).  An op without regions and successors whose key (:func:`_op_key`)
    passed before is not checked again, except by the definition's traits, which run on
    every op as upstream's do (last).  A definition with attribute definitions (IRDL
    ``attr_def``, not properties) is verified by upstream."""
    plan = _plan(self)
    if plan is None:
        return _upstream_verify(self, op)
    if plan.regions or plan.successors or op.regions or op.successors:
        _checks(self, plan, op)
    else:
        key = _op_key(self, plan, op)
        if key not in _OPS_OK:
            _checks(self, plan, op)
            _remember(self, plan, op, key)
    for trait in plan.traits:     # (they read the op's place in the IR: never remembered)
        trait.verify(op)
    return None


def _checks(self: OpDef, plan: _Plan, op: Operation) -> None:
    """:func:`verify` without the memo."""
    ctx = VerificationContext()
    try:
        ok = (_check_list(plan.operands, op, op._operands, ctx)    # noqa: SLF001 -- the tuple
              and _check_list(plan.results, op, op.results, ctx))
    except Exception:               # noqa: BLE001 -- upstream raises the proper message
        ok = False
    if not ok:
        return _upstream_verify(self, op)
    if plan.regions or op.regions:
        irdl_op_verify_regions(op, self, ctx)
    if plan.successors or op.successors:
        verify_variadic_size(op, self, VarIRConstruct.SUCCESSOR)
    props = op.properties
    for name, constr, optional, pure in plan.props:
        if name not in props:
            if optional:
                continue
            return _upstream_verify(self, op)
        _check_attr(constr, pure, props[name], ctx)
    if any(name not in self.properties for name in props):
        return _upstream_verify(self, op)
    return None


OpDef.verify = verify  # type: ignore[method-assign]


# ------------------------------------------------------------ memref view ops' verify_


def _index_lists_ok(op: Operation) -> tuple | None:
    """The static sizes of a view op whose three static lists each mark as many dynamic
    positions as it has dynamic operands; None otherwise (or when a list is missing)."""
    props = op.properties
    try:
        lists = (props["static_offsets"].get_values(), props["static_sizes"].get_values(),
                 props["static_strides"].get_values())
        dynamic = (op.offsets, op.sizes, op.strides)
    except Exception:  # noqa: BLE001 -- upstream raises the proper message
        return None
    for values, dyn in zip(lists, dynamic):
        if values.count(DYNAMIC_INDEX) != len(dyn):
            return None
    return lists[1]


#: upstream's ``verify_`` of the two ops: their definition's checks, then their own rules
_upstream_reinterpret = ReinterpretCastOp.verify_
_upstream_subview = SubviewOp.verify_
_REINTERPRET_DEF = ReinterpretCastOp.get_irdl_definition()
_SUBVIEW_DEF = SubviewOp.get_irdl_definition()


#: view-op key (see :func:`_view_key`) -> the objects whose ids it holds, for the view ops
#: that passed; the objects are kept alive, so the ids stay theirs while remembered
_VIEWS_OK: dict[tuple, tuple] = {}


def _view_key(op: Operation) -> tuple:
    """What a view op's verdict depends on: its class, operand and result types (their
    number gives the segment split with ``operandSegmentSizes``), properties and attributes,
    by object identity (attributes are immutable)."""
    return (op.__class__, tuple([id(v.type) for v in op._operands]),  # noqa: SLF001 -- the tuple
            tuple([id(r.type) for r in op.results]),
            tuple([(k, id(v)) for k, v in op.properties.items()]),
            tuple([(k, id(v)) for k, v in op.attributes.items()]))


def _view_ok(check):
    """``check`` (a view op's ``verify_``) skipped for an op whose key passed before."""
    def verify_(self: Operation) -> None:
        key = _view_key(self)
        if key in _VIEWS_OK:
            return
        check(self)
        if len(_VIEWS_OK) >= 1 << 16:
            _VIEWS_OK.clear()
        _VIEWS_OK[key] = (tuple([v.type for v in self._operands]),  # noqa: SLF001
                          tuple([r.type for r in self.results]),
                          tuple(self.properties.values()), tuple(self.attributes.values()))
    verify_.__doc__ = check.__doc__
    return verify_


def _reinterpret_verify(self: ReinterpretCastOp) -> None:
    """``ReinterpretCastOp.verify_``: the definition's checks (:func:`verify`), then a fast
    pass of its own rules, or upstream's verdict and message."""
    _REINTERPRET_DEF.verify(self)
    sizes = _index_lists_ok(self)
    src, res = self.source.type, self.result.type
    if sizes is not None and type(src) is MemRefType and type(res) is MemRefType:
        shape = res.get_shape()
        if len(shape) == len(sizes) and all(a == DYNAMIC_INDEX if e == DYNAMIC_INDEX else a == e
                                            for a, e in zip(shape, sizes)):
            return
    _upstream_reinterpret(self)


def _subview_verify(self: SubviewOp) -> None:
    """``SubviewOp.verify_``: as :func:`_reinterpret_verify`."""
    _SUBVIEW_DEF.verify(self)
    if _index_lists_ok(self) is None:
        _upstream_subview(self)


ReinterpretCastOp.verify_ = _view_ok(_reinterpret_verify)  # type: ignore[method-assign]
SubviewOp.verify_ = _view_ok(_subview_verify)  # type: ignore[method-assign]


# ------------------------------------------------------------ constraint variable contexts
#
# ``VerificationContext()`` (one per op verified) fills its three variable tables through
# ``default_factory=dict[str, Attribute]``: calling the parametrised alias builds the dict and
# then tries, and fails, to set ``__orig_class__`` on it (an exception raised and caught per
# table).  The same plain empty dicts are made directly; arguments given are kept as given.

_NO_ARG: Any = object()


def _context_init(self, _variables=_NO_ARG, _range_variables=_NO_ARG, _int_variables=_NO_ARG):
    self._variables = {} if _variables is _NO_ARG else _variables
    self._range_variables = {} if _range_variables is _NO_ARG else _range_variables
    self._int_variables = {} if _int_variables is _NO_ARG else _int_variables


def _check_context_fields() -> bool:
    """The context classes have exactly the three variable tables (else keep upstream's)."""
    from dataclasses import fields
    return all([f.name for f in fields(c)] == ["_variables", "_range_variables", "_int_variables"]
               and not hasattr(c, "__post_init__") for c in (VerificationContext, InferenceContext))


if _check_context_fields():
    VerificationContext.__init__ = _context_init  # type: ignore[method-assign]
    InferenceContext.__init__ = _context_init     # type: ignore[method-assign]


# ------------------------------------------------------------ the per-op structural checks
#
# ``Operation.verify`` checks every op's operands (none erased), its successors and, for the
# last op of a block, the terminator rules, then verifies its regions and calls its
# ``verify_``.  For an op without successors that is not the last op of its block (nearly
# every op of a large kernel) the successor and terminator checks have nothing to look at:
# :func:`_op_verify` makes the remaining checks in the same order with the same messages,
# reading the op's tuples directly; any other op gets upstream's method.

_upstream_op_verify = Operation.verify


def _op_verify(self: Operation, verify_nested_ops: bool = True) -> None:
    """``Operation.verify`` (see above)."""
    block = self.parent
    if self._successors or block is None or block._last_op is self:   # noqa: SLF001
        return _upstream_op_verify(self, verify_nested_ops)
    for operand in self._operands:                                      # noqa: SLF001
        if isinstance(operand, ErasedSSAValue):
            raise ValueError("Erased SSA value is used by the operation")
    if verify_nested_ops:
        for region in self.regions:
            region.verify()
    try:
        self.verify_()
    except VerifyException as err:
        self.emit_error(f"Operation does not verify: {err}", err)
    return None


Operation.verify = _op_verify  # type: ignore[method-assign]
