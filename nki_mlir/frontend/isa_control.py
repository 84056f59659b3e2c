"""Frontend of engine registers and runtime (device) control flow.

``nki.isa``: ``register_alloc(x=None)``, ``register_move(dst, src)``,
``register_load(dst, src)``, ``register_store(dst, src)`` (nki.isa API reference (nki/api/nki/isa)).
``nki.language``: ``dynamic_range``, ``fori_loop``, ``while_loop``, ``no_reorder`` and the
``while reg:`` statement (NKI language guide (nki/get-started/nki-language-guide)).

Values: a register is a :class:`Register` -- an SSA ``memref<1xi32, #nisa.mem<reg>>``
(``dialects/isa_control.py``), or, read-only, the ``index`` induction value of a runtime
loop (``nl.dynamic_range`` / ``fori_loop`` induction register, ``while_loop``'s condition
value, which NKI passes by value).

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
the induction register is read-only and takes no Python arithmetic; ``if reg:`` /
``int(reg)`` are type errors (NKI raises ``TypeError`` under the tracer); tensors and
registers made in a runtime-loop body are not visible after the loop; no runtime loop
inside ``no_reorder``; the body of ``while reg:`` must write ``reg``.
"""
from __future__ import annotations

from contextlib import contextmanager

import ast
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, Region, SSAValue

from .. import dtypes
from ..dialects import isa_control as ctl
from ..errors import NKISyntaxError, NKITypeError
from . import args as A
from .builtins import handles
from .values import Index, Tensor, is_int

#: the ``nki.range`` of every runtime loop
DYNAMIC = "dynamic"
#: integer dtypes a (1, 1) tensor used as a runtime index may have
_INDEX_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


@dataclass(frozen=True)
class Register:
    """An engine register (``nki.isa.VirtualRegister``) seen by the frontend.

    Attributes:
        value: ``memref<1xi32, #nisa.mem<reg>>``, or an ``index`` when read-only.
        block: the IR block it was made in (for the loop-scope rule).
        name: the variable it was first bound to ("" if none yet).
        readonly: True for an induction register / a value passed by value.
        what: what a read-only register is, for messages.
    """

    value: SSAValue
    block: Block | None
    name: str = ""
    readonly: bool = False
    what: str = ""

    @property
    def is_index(self) -> bool:
        return isinstance(self.value.type, IndexType)

    def describe(self) -> str:
        return self.what or f"register '{self.name or '?'}'"

    def __repr__(self) -> str:
        return f"<register {self.name or '?'}>"

    # A traced kernel's Python meets registers directly: arithmetic, comparisons and
    # truth values need the device value, so each is a located error (NKI's tracer raises
    # TypeError).  The Beta 1 AST front checks these before Python ever sees them.
    def _misuse(self, truth: bool, *_: Any) -> Any:
        from .frames import user_loc
        from .tracer import active
        loc = user_loc(2)
        raise (register_truth_error if truth else register_operator_error)(active(), loc)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = \
        __rfloordiv__ = __mod__ = __truediv__ = __lt__ = __le__ = __gt__ = __ge__ = \
        lambda self, other: self._misuse(False)
    __bool__ = __int__ = __index__ = __float__ = lambda self: self._misuse(True)


@dataclass(frozen=True)
class DynamicRange:
    """``nl.dynamic_range(start, stop, step)``: a runtime loop (bounds ints or registers)."""

    start: Any
    stop: Any
    step: int


class NoReorder:
    """``nl.no_reorder()``: the context manager of ``with nl.no_reorder():``.

    In a traced kernel the ``with`` statement runs :func:`no_reorder_region` itself; the
    Beta 1 AST front recognises the object and emits the region around the body.
    """

    def __init__(self, cg=None):
        self._cg, self._region = cg, None

    def __enter__(self) -> "NoReorder":
        if self._cg is not None:
            self._region = no_reorder_region(self._cg)
            self._region.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        if self._region is not None:
            region, self._region = self._region, None
            return bool(region.__exit__(*exc))
        return False


# ----------------------------------------------------------------------- diagnostics


def _show(v: Any) -> str:
    return v.describe() if isinstance(v, Register) else A._show(v)


def register_operator_error(cg, node: ast.AST) -> Exception:
    """Python arithmetic / comparison on a register (its value exists only on the device)."""
    return cg.fail(node, "Python arithmetic or comparison on a register is not allowed: its value "
                         "is only known on the device; use the induction register only as "
                         ".ap(scalar_offset=...) or with nisa.register_* instructions",
                   NKITypeError)


def register_truth_error(cg, node: ast.AST) -> Exception:
    """``if reg:`` / ``bool(reg)``: NKI's tracer raises TypeError here."""
    return cg.fail(node, "a register's value is only known on the device, so it cannot be used "
                         "as an if/elif condition or converted with bool()/int(); the only runtime "
                         "control flow is 'while reg:', nl.while_loop and nl.fori_loop",
                   NKITypeError)


def _check_visible(cg, api: str, role: str, r: Register) -> None:
    """A register made in a runtime-loop body cannot be used after that loop."""
    target = r.block
    cur = cg.b.block
    while cur is not None:
        if cur is target:
            return
        parent = cur.parent_op()
        cur = parent.parent_block() if parent is not None else None
    raise cg.b.error(f"{api}: '{role}' is {r.describe()}, which was created inside a loop body "
                     f"and cannot be used outside it; allocate it before the loop",
                     NKISyntaxError, code="err_local_variable_used_out_of_scope")


def _register(cg, api: str, role: str, v: Any, *, write: bool = False) -> Register:
    if not isinstance(v, Register):
        raise cg.b.error(f"{api}: '{role}' must be a register (nisa.register_alloc()), got "
                         f"{_show(v)}", NKITypeError)
    _check_visible(cg, api, role, v)
    if write and v.readonly:
        raise cg.b.error(f"{api}: '{role}' is {v.describe()}, which is read-only; copy it into a "
                         f"register from nisa.register_alloc() with nisa.register_move first",
                         NKITypeError)
    return v


def _int32(cg, api: str, role: str, v: Any) -> int:
    if not is_int(v):
        raise cg.b.error(f"{api}: '{role}' must be an int or a register, got {_show(v)}",
                         NKITypeError)
    if not -(2 ** 31) <= int(v) < 2 ** 32:
        raise cg.b.error(f"{api}: '{role}'={int(v)} does not fit in a 32-bit register", NKITypeError)
    return int(v)


def _one_element(cg, api: str, role: str, v: Any) -> Tensor:
    t = A.tensor(cg, api, role, v)
    if t.size != 1:
        raise cg.b.error(f"{api}: '{role}' must be a 1-element tensor (e.g. shape (1, 1)), got "
                         f"{t.describe()}", NKITypeError)
    if t.buffer not in ctl.REGISTER_TENSOR_SPACES:
        raise cg.b.error(f"{api}: '{role}' must be in SBUF or HBM, got {t.describe()}", NKITypeError)
    return t


# ------------------------------------------------------------------------- registers


def new_register(cg, init: int | None = None, name: str = "") -> Register:
    op = A.emit(cg, ctl.RegisterAllocOp, {}, {"init": init}, [ctl.register_type()])
    return Register(op.results[0], cg.b.block, name)


def register_value(cg, api: str, role: str, v: Any) -> SSAValue:
    """The SSA operand for a register-or-int source: a register, an index, or an i32 constant."""
    if isinstance(v, Register):
        return _register(cg, api, role, v).value
    return cg.b.const_scalar(_int32(cg, api, role, v), dtypes.int32)


@handles("nisa.register_alloc")
def register_alloc(cg, x=None):
    """A new 32-bit register, set to the int ``x`` if given (NKI ``nki.isa.register_alloc``)."""
    return new_register(cg, None if x is None else _int32(cg, "nisa.register_alloc", "x", x))


@handles("nisa.register_move")
def register_move(cg, dst, src):
    """``dst = src``; ``src`` is an int or a register (0.2 allowed an int only)."""
    api = "nisa.register_move"
    d = _register(cg, api, "dst", dst, write=True)
    A.emit(cg, ctl.RegisterMoveOp, {"dst": d.value, "src": register_value(cg, api, "src", src)})


@handles("nisa.register_load")
def register_load(cg, dst, src):
    """Load the one element of an SBUF/HBM tensor into register ``dst``."""
    api = "nisa.register_load"
    d = _register(cg, api, "dst", dst, write=True)
    s = _one_element(cg, api, "src", src)
    A.emit(cg, ctl.RegisterLoadOp, {"dst": d.value, "src": s.value})


@handles("nisa.register_store")
def register_store(cg, dst, src):
    """Store register ``src`` into the 1-element SBUF/HBM tensor ``dst``."""
    api = "nisa.register_store"
    d = _one_element(cg, api, "dst", dst)
    s = _register(cg, api, "src", src)
    A.emit(cg, ctl.RegisterStoreOp, {"dst": d.value, "src": s.value})


def scalar_index(cg, value: Any, api: str = "scalar_offset", role: str = "scalar_offset") -> SSAValue:
    """An ``index`` SSA value holding ``value``'s run-time value.

    ``value`` is a register (read when the emitted ``register_read`` executes; an
    induction register is used directly), a 1-element int SBUF/HBM tensor (loaded through a
    fresh register: ``register_alloc`` + ``register_load`` + ``register_read``) or a
    compile-time int (a constant).  Other values are an NKITypeError naming ``api``/``role``.
    """
    if is_int(value):
        return cg.b.const_index(int(value))
    if isinstance(value, Tensor):
        t = _one_element(cg, api, role, value)
        if dtypes.name_of(t.dtype) not in _INDEX_DTYPES:
            raise cg.b.error(f"{api}: '{role}' must have an integer dtype "
                             f"({', '.join(_INDEX_DTYPES)}), got {t.describe()}", NKITypeError)
        reg = new_register(cg)
        A.emit(cg, ctl.RegisterLoadOp, {"dst": reg.value, "src": t.value})
        value = reg
    if not isinstance(value, Register):
        raise cg.b.error(f"{api}: '{role}' must be a register, a 1-element int tensor or an int, "
                         f"got {_show(value)}", NKITypeError)
    _check_visible(cg, api, role, value)
    if value.is_index:
        return value.value
    return A.emit(cg, ctl.RegisterReadOp, {"src": value.value}, {}, [IndexType()]).results[0]


# ----------------------------------------------------------------------------- loops


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


def emit_dynamic_for(cg, node: ast.For, rng: DynamicRange) -> None:
    """``for i in nl.dynamic_range(...): body`` -> a dynamic ``scf.for`` (see module doc)."""
    if not isinstance(node.target, ast.Name):
        raise cg.fail(node.target, "the target of an nl.dynamic_range loop must be a single name")
    name = node.target.id

    def run_body(iv: Register) -> None:
        cg.scope[name] = iv
        cg.run_body(node.body)

    _emit_for(cg, "nl.dynamic_range", rng, run_body, name,
              f"'{name}', the induction register of nl.dynamic_range")


def _call_site(cg) -> ast.AST:
    """A stand-in AST node at the current call's location (for cg.call diagnostics)."""
    node = ast.Pass()
    node.lineno = cg.b.loc.line - cg.src.line_offset if cg.b.loc else cg.src.node.lineno
    node.col_offset = cg.b.loc.col - cg.src.col_offset - 1 if cg.b.loc else 0
    return node


def _function(cg, api: str, fn: Any) -> None:
    from .codegen import InlineFunction
    if not (isinstance(fn, InlineFunction) or hasattr(fn, "__code__")):
        raise cg.b.error(f"{api}: body_fun must be a function defined in the kernel or its "
                         f"module, got {_show(fn)}", NKITypeError)


def _param_name(fn: Any, default: str) -> str:
    """The name of ``fn``'s first parameter (for the IR name of the induction value)."""
    node = getattr(fn, "node", None)
    if node is None and hasattr(fn, "__code__") and fn.__code__.co_argcount:
        return fn.__code__.co_varnames[0]
    args = getattr(getattr(node, "args", None), "args", None)
    return args[0].arg if args else default


@handles("nl.fori_loop")
def fori_loop(cg, lower, upper, body_fun, step=1):
    """``for i in range(lower, upper, step): body_fun(i)`` on the device; returns None."""
    api = "nl.fori_loop"
    rng = DynamicRange(_bound(cg, api, "lower", lower), _bound(cg, api, "upper", upper),
                       _step(cg, api, step))
    _function(cg, api, body_fun)
    site = _call_site(cg)

    def run_body(iv: Register) -> None:
        ret = cg.call(site, body_fun, [iv], {})
        if ret is not None:
            raise cg.fail(site, f"{api}: body_fun must return None, got {_show(ret)}",
                          NKITypeError)

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
    site = _call_site(cg)
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
            ret = cg.call(site, body_fun, [r], {})
            cg.b.loc = loc
            if not isinstance(ret, Register):
                raise cg.fail(site, f"{api}: body_fun must return the next condition register, "
                                    f"got {_show(ret)}", NKITypeError)
            cg.b.emit(scf.YieldOp(scalar_index(cg, ret, api, "body_fun's result")), verify=False)
    finally:
        cg.ir_loop_depth -= 1
        cg.b.loc = loc
    loop.verify_()


_REGISTER_WRITERS = (ctl.RegisterMoveOp.name, ctl.RegisterLoadOp.name)


def emit_register_while(cg, node: ast.While, reg: Register) -> None:
    """``while reg: body`` -> ``scf.while`` re-reading ``reg`` before every iteration."""
    if node.orelse:
        raise cg.fail(node, "while ... else is not supported")
    cg.b.loc = cg.loc(node)
    _check_not_in_no_reorder(cg, "'while reg:'")
    _check_visible(cg, "while", "condition", reg)
    if reg.readonly:
        raise cg.fail(node.test, f"'while' on {reg.describe()}: it is read-only, so the body "
                                 f"could never end the loop", NKITypeError)
    with register_while(cg, reg):
        cg.run_body(node.body)


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


def emit_no_reorder(cg, node: ast.With) -> None:
    """``with nl.no_reorder(): body`` -> ``nisa.no_reorder_begin``, body, ``nisa.no_reorder_end``."""
    with no_reorder_region(cg):
        cg.run_body(node.body)


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
