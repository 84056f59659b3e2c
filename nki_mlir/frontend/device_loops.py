"""Frontend of runtime (device) control flow: ``nl.dynamic_range``, ``nl.fori_loop``,
``nl.while_loop``, the ``while reg:`` statement and ``with nl.no_reorder():`` (NKI
language guide (nki/get-started/nki-language-guide); registers: :mod:`.isa_control`).

IR of the runtime loops (all carry ``nki.range = "dynamic"``)::

    for i in nl.dynamic_range(n):        %ub = nki.register_read(src=%n) : index
        body                             scf.for %i = %c0 to %ub step %c1 { body }

    while reg:                           scf.while : () -> () {
        body                               %v = nki.register_read(src=%reg) : index
                                           scf.condition(%v != 0)
                                         } do { body; scf.yield }

    nl.while_loop(init, body)            scf.while (%c = read(init)) : (index) -> index {
                                           scf.condition(%c != 0) %c
                                         } do { ^bb0(%r: index): body(r); scf.yield read(ret) }

``with nl.no_reorder():`` brackets its statements with ``nisa.no_reorder_begin`` /
``nisa.no_reorder_end`` (same block, so its tensors stay visible after it).

Rules (located errors): bounds are ints or registers, ``step`` a positive compile-time int;
tensors and registers made in a runtime-loop body are not visible after the loop; no
runtime loop inside ``no_reorder``; the body of ``while reg:`` must write ``reg``.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, Region

from ..dialects import isa_control as ctl
from ..errors import NKISyntaxError, NKITypeError
from .builtins import handles
from .isa_control import DYNAMIC, Register, _check_visible, _int32, _show, scalar_index
from .values import Index, is_int


@dataclass(frozen=True)
class DynamicRange:
    """``nl.dynamic_range(start, stop, step)``: a runtime loop (bounds ints or registers)."""

    start: Any
    stop: Any
    step: int


class NoReorder:
    """``nl.no_reorder()``: the context manager of ``with nl.no_reorder():``.

    The ``with`` statement runs :func:`no_reorder_region`.
    """

    def __init__(self, cg):
        self._cg, self._region = cg, None

    def __enter__(self) -> "NoReorder":
        self._region = no_reorder_region(self._cg)
        self._region.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        if self._region is not None:
            region, self._region = self._region, None
            return bool(region.__exit__(*exc))
        return False



def _bound(cg, api: str, role: str, v: Any) -> Any:
    if isinstance(v, Register):
        return v
    if is_int(v):
        return _int32(cg, api, role, v)
    hint = " (a loop index of nl.affine_range/sequential_range is not a register)" \
        if isinstance(v, Index) else ""
    raise cg.b.error(f"{api}: '{role}' must be an int or a register, got {_show(v)}{hint}",
                     NKITypeError)


def _step(cg, api: str, step: Any) -> int:
    if not is_int(step) or int(step) <= 0:
        raise cg.b.error(f"{api}: step must be a positive compile-time int, got {_show(step)}",
                         NKITypeError)
    return int(step)


@handles("nl.dynamic_range")
def dynamic_range(cg, start, stop=None, step=1):
    """A runtime loop over ``range(start, stop, step)``; bounds are ints or registers."""
    api = "nl.dynamic_range"
    if stop is None:
        start, stop = 0, start
    return DynamicRange(_bound(cg, api, "start", start), _bound(cg, api, "stop", stop),
                        _step(cg, api, step))


@handles("nl.no_reorder")
def no_reorder(cg):
    return NoReorder(cg)


def _check_not_in_no_reorder(cg, api: str) -> None:
    if getattr(cg.b, "no_reorder_depth", 0):
        raise cg.b.error(f"{api}: runtime (dynamic) loops are not allowed inside "
                         f"'with nl.no_reorder():'; static loops are", NKISyntaxError)


def _emit_for(cg, api: str, rng: DynamicRange, run_body, iv_name: str, what: str) -> None:
    with dynamic_for(cg, api, rng, iv_name, what) as iv:
        run_body(iv)


@contextmanager
def dynamic_for(cg, api: str, rng: DynamicRange, iv_name: str, what: str):
    """A dynamic ``scf.for`` whose body is built inside the ``with``; yields the induction
    register.  The loop is closed (and verified) only when the body finished normally."""
    _check_not_in_no_reorder(cg, api)
    lb = scalar_index(cg, rng.start, api, "start")
    ub = scalar_index(cg, rng.stop, api, "stop")
    step = cg.b.const_index(rng.step)
    body = Block(arg_types=[IndexType()])
    iv = body.args[0]
    if iv_name.isidentifier() and iv_name != "_":
        iv.name_hint = iv_name
    loop = scf.ForOp(lb, ub, step, [], Region([body]))
    loop.attributes["nki.range"] = StringAttr(DYNAMIC)
    cg.b.emit(loop, verify=False)
    loc = cg.b.loc
    cg.ir_loop_depth += 1
    try:
        with cg.b.at(body):
            yield Register(iv, body, iv_name, readonly=True, what=what)
            cg.b.loc = loc
            cg.b.emit(scf.YieldOp(), verify=False)
    finally:
        cg.ir_loop_depth -= 1
        cg.b.loc = loc
    loop.verify_()


def _function(cg, api: str, fn: Any) -> None:
    if not hasattr(fn, "__code__"):
        raise cg.b.error(f"{api}: body_fun must be a function defined in the kernel or its "
                         f"module, got {_show(fn)}", NKITypeError)


def _param_name(fn: Any, default: str) -> str:
    """The name of ``fn``'s first parameter (for the IR name of the induction value)."""
    code = fn.__code__
    return code.co_varnames[0] if code.co_argcount else default


@handles("nl.fori_loop")
def fori_loop(cg, lower, upper, body_fun, step=1):
    """``for i in range(lower, upper, step): body_fun(i)`` on the device; returns None."""
    api = "nl.fori_loop"
    rng = DynamicRange(_bound(cg, api, "lower", lower), _bound(cg, api, "upper", upper),
                       _step(cg, api, step))
    _function(cg, api, body_fun)
    loc = cg.b.loc

    def run_body(iv: Register) -> None:
        ret = cg.call(loc, body_fun, [iv], {})
        if ret is not None:
            raise cg.fail(loc, f"{api}: body_fun must return None, got {_show(ret)}", NKITypeError)

    _emit_for(cg, api, rng, run_body, _param_name(body_fun, "i"),
              "the induction register of nl.fori_loop")


@handles("nl.while_loop")
def while_loop(cg, init, body_fun):
    """``r = init; while r != 0: r = body_fun(r)`` on the device (checked before entry)."""
    api = "nl.while_loop"
    _check_not_in_no_reorder(cg, api)
    if not isinstance(init, Register):
        raise cg.b.error(f"{api}: init must be a register, got {_show(init)}", NKITypeError)
    _function(cg, api, body_fun)
    first = scalar_index(cg, init, api, "init")
    before = Block(arg_types=[IndexType()])
    after = Block(arg_types=[IndexType()])
    loop = scf.WhileOp([first], [IndexType()], Region([before]), Region([after]))
    loop.attributes["nki.range"] = StringAttr(DYNAMIC)
    cg.b.emit(loop, verify=False)
    loc = cg.b.loc
    with cg.b.at(before):
        cond = cg.b.emit(arith.CmpiOp(before.args[0], cg.b.const_index(0), "ne")).results[0]
        cg.b.emit(scf.ConditionOp(cond, before.args[0]), verify=False)
    cg.ir_loop_depth += 1
    try:
        with cg.b.at(after):
            name = _param_name(body_fun, "r")
            if name.isidentifier():
                after.args[0].name_hint = name
            r = Register(after.args[0], after, name, readonly=True,
                         what="the condition value passed to nl.while_loop's body (by value)")
            ret = cg.call(loc, body_fun, [r], {})
            cg.b.loc = loc
            if not isinstance(ret, Register):
                raise cg.fail(loc, f"{api}: body_fun must return the next condition register, "
                                    f"got {_show(ret)}", NKITypeError)
            cg.b.emit(scf.YieldOp(scalar_index(cg, ret, api, "body_fun's result")), verify=False)
    finally:
        cg.ir_loop_depth -= 1
        cg.b.loc = loc
    loop.verify_()


_REGISTER_WRITERS = ("nki.register_move", "nki.register_load")


@contextmanager
def register_while(cg, reg: Register):
    """The ``scf.while`` of ``while reg:``; the body is built inside the ``with``."""
    api = "while"
    _check_not_in_no_reorder(cg, "'while reg:'")
    _check_visible(cg, api, "condition", reg)
    if reg.readonly:
        raise cg.b.error(f"'while' on {reg.describe()}: it is read-only, so the body "
                         f"could never end the loop", NKITypeError)
    before, after = Block(), Block()
    loop = scf.WhileOp([], [], Region([before]), Region([after]))
    loop.attributes["nki.range"] = StringAttr(DYNAMIC)
    cg.b.emit(loop, verify=False)
    loc = cg.b.loc
    with cg.b.at(before):
        v = scalar_index(cg, reg, api, "condition")
        cond = cg.b.emit(arith.CmpiOp(v, cg.b.const_index(0), "ne")).results[0]
        cg.b.emit(scf.ConditionOp(cond), verify=False)
    cg.ir_loop_depth += 1
    try:
        with cg.b.at(after):
            yield
            cg.b.loc = loc
            cg.b.emit(scf.YieldOp(), verify=False)
    finally:
        cg.ir_loop_depth -= 1
        cg.b.loc = loc
    if not any(op.name in _REGISTER_WRITERS and op.operands[0] is reg.value for op in after.walk()):
        raise NKISyntaxError(f"the body of 'while {reg.name or 'reg'}:' never writes the register "
                             f"(nisa.register_load / nisa.register_move), so the loop could never "
                             f"end", loc)
    loop.verify_()


@contextmanager
def no_reorder_region(cg):
    """Ops emitted inside the ``with`` sit between ``nisa.no_reorder_begin`` and ``_end``."""
    b = cg.b
    loc = b.loc
    begin = b.emit(ctl.NoReorderBeginOp(), verify=False)
    b.no_reorder_depth = getattr(b, "no_reorder_depth", 0) + 1
    try:
        yield
    finally:
        b.no_reorder_depth -= 1
        b.loc = loc
    b.emit(ctl.NoReorderEndOp(), verify=False)
    begin.verify_()
