"""The tracer: a kernel's Python runs, and NKI API calls emit ``nki`` ops as it goes.

While a kernel is traced, one :class:`TraceContext` is active.  ``nl.*`` / ``nisa.*``
calls (:class:`~nki_mlir.frontend.builtins.Builtin`), tensor subscripts, methods and
operators (:mod:`.proxies`) reach :func:`dispatch`, which stamps the current kernel line
(:mod:`.frames`), unwraps proxies into the frontend's values, runs the instruction's
handler and wraps what it returns.

Loops stay loops when Python allows (:mod:`.loops`): a loop body traced once with a
symbolic index must be indistinguishable from running it per iteration.  When it is not
(the index becomes a Python value, a tile made in the body escapes it, the body changes a
Python object that outlives the iteration) the tracer raises :class:`Retrace` naming the
loop, and :mod:`.trace_build` runs the kernel again with that loop unrolled.
"""
from __future__ import annotations

import inspect
from typing import Any

import sys

from ..errors import NKIAttributeError, NKIError, NKISyntaxError, NKITypeError, SourceLoc
from .beta1.trace import (  # noqa: F401  (grid_*: entry points of the Beta 1 index expressions)
    PendingTensor, grid_compare, grid_operator, grid_subscript, grid_truth,
)
from .builtins import HANDLERS
from .context import _ACTIVE, LAUNCH_KEY, Retrace, TraceContext, active, register_tracer  # noqa: F401
from .context import require as _require
from .frames import call_chain, frame_loc, truth_context, user_frame, user_loc
from .indexing import index_tensor
from .isa_control import Register
from .naming import binding_name, name_tensor
from .proxies import AST_OPS, LoopCondition, LoopIndex, NkiTensor
from .symbolic_str import SymbolicName
from .values import Index, Tensor

# --------------------------------------------------------------- wrap / unwrap
def unwrap(x: Any) -> Any:
    """Proxies -> the frontend's values (recursively through tuples, lists, dicts, slices)."""
    t = type(x)
    if t is NkiTensor or t is PendingTensor:
        return x._t
    if t is LoopIndex:
        _check_open(x)
        return x._i
    if t is SymbolicName:   # (an NKI call's name= is rendered by dispatch)
        x.concretize("an argument of an NKI call")
    if t is LoopCondition:
        _check_open(x.index)
        return x.mask
    if t is tuple:      # (items a tensor proxy or left as they are: without a call each)
        return tuple([v._t if type(v) is NkiTensor else v if type(v) not in _UNWRAPS else unwrap(v)
                      for v in x])
    if t is list:
        return [v._t if type(v) is NkiTensor else v if type(v) not in _UNWRAPS else unwrap(v)
                for v in x]
    if t is slice:
        if type(x.start) not in _UNWRAPS and type(x.stop) not in _UNWRAPS and \
                type(x.step) not in _UNWRAPS:
            return x        # (slices are immutable: the same bounds, the same slice)
        return slice(unwrap(x.start), unwrap(x.stop), unwrap(x.step))
    if t is dict:
        return {k: unwrap(v) for k, v in x.items()}
    return x


def wrap(x: Any, keys: frozenset = frozenset()) -> Any:
    """The frontend's values -> proxies for the kernel's Python."""
    if isinstance(x, Tensor):
        return NkiTensor._of(x)
    if isinstance(x, Index):
        return LoopIndex(x, keys) if x.terms else x.const
    if type(x) is tuple:
        return tuple(wrap(v, keys) for v in x)
    if type(x) is list:
        return [wrap(v, keys) for v in x]
    return x


def _keys_of(values) -> frozenset:
    keys: frozenset = frozenset()
    for v in values:
        if type(v) is LoopIndex:
            keys |= v.keys
        elif type(v) in (tuple, list):
            keys |= _keys_of(v)
        elif type(v) is slice:
            keys |= _keys_of((v.start, v.stop, v.step))
    return keys


#: the launch over program instances encloses the whole trace
_ALWAYS_OPEN = (LAUNCH_KEY,)
_LAUNCH_ONLY = frozenset(_ALWAYS_OPEN)


def _check_open(i: LoopIndex) -> None:
    ctx = active()
    if ctx is None:
        return
    closed = i.keys.difference(ctx.open_loops, _ALWAYS_OPEN)
    if closed:
        raise Retrace({k: f"its index is used after the loop, at {user_loc(2)}" for k in closed})


# ----------------------------------------------------------------- dispatch
def dispatch(name: str, args: tuple, kwargs: dict, method_of: NkiTensor | None = None) -> Any:
    """Run the handler of API ``name`` (``"nl.add"``, ``"tensor.reshape"``) on traced values."""
    ctx = _ACTIVE[-1] if _ACTIVE else _require(f"{name}()")   # (require's message only when none)
    frame = user_frame(2)
    loc = frame_loc(frame) if frame is not None else None
    b = ctx.b
    b.loc = loc
    handler = HANDLERS.get(name)
    if handler is None:
        raise NKIError(f"{name} is not supported by nki-mlir yet", loc, category="not implemented")
    if type(kwargs.get("name")) is SymbolicName:  # an instruction's label: its template text
        kwargs = {**kwargs, "name": kwargs["name"].render()}
    call_args, call_kwargs = args, kwargs   # (their loop keys: _call_keys, when asked)
    masked = False
    if kwargs.get("mask") is not None:
        from .beta1.masks import owns_mask
        masked = not owns_mask(handler)
    if masked:  # Beta 1 mask=: pending views are built per masked shape
        args, kwargs = tuple(_pending(a) for a in args), {k: _pending(v) for k, v in kwargs.items()}
    # unwrap(), inlined for a tensor proxy and a value unwrap() returns as it is
    uargs = [a._t if type(a) is NkiTensor else a if type(a) not in _UNWRAPS else unwrap(a)
             for a in args]
    ukw = {k: v._t if type(v) is NkiTensor else v if type(v) not in _UNWRAPS else unwrap(v)
           for k, v in kwargs.items()}
    first = b.block.last_op
    if method_of is not None:
        uargs.insert(0, method_of._t)
    block = b.block
    for vals in (uargs, ukw.values()):
        for v in vals:
            if type(v) is Tensor:    # check_visible's first answers, inlined (one call per operand)
                if v.poison is not None or (v.block is not None and v.block is not block):
                    ctx.check_visible(loc, v)
            elif isinstance(v, Tensor):
                ctx.check_visible(loc, v)
            else:
                continue
            if v.blocks:
                from .beta1.block_dims import check_operand
                check_operand(ctx, name, v)
    try:
        if masked:
            from .beta1.masks import masked_call
            result = masked_call(ctx, loc, _Callee(name), handler, uargs, ukw)
        else:
            result = handler(ctx, *uargs, **ukw)
    except Exception as exc:
        _unroll_on_failure(ctx, name, _call_keys(call_args, call_kwargs), exc, loc)
        if isinstance(exc, NKIError):
            raise exc.relocate(loc, call_chain(frame, getattr(ctx, "kernel_code", None))) from None
        if isinstance(exc, TypeError) and not _binds(handler, (ctx, *uargs), ukw):
            msg = str(exc)  # the call did not bind to the API's signature: "f() got ..." -> "got ..."
            raise NKITypeError(f"{name}(): {msg.split('() ', 1)[1] if '() ' in msg else msg}", loc) from None
        raise
    if result is None:          # (most instructions: wrap and naming leave None as it is)
        return None
    if isinstance(result, Tensor) and b.beta1:
        from .beta1.trace import LastCall
        start = first.next_op if first is not None else b.block.first_op
        ctx.last_call = LastCall(name, uargs, ukw if masked else {k: v for k, v in ukw.items() if k != "mask"},
                                 result, start, b.block.last_op)
    result = _wrap_result(result, call_args, call_kwargs)
    _name_from_source(ctx, result._t if isinstance(result, NkiTensor) else result, loc)
    return result


def _wrap_result(result: Any, args: tuple, kwargs: dict) -> Any:
    """``wrap(result, _call_keys(args, kwargs))``; the keys are looked up only for a result
    that can hold a loop index (``wrap`` gives them to the indices it wraps, and to nothing
    else)."""
    t = type(result)
    if t is Tensor:
        return NkiTensor._of(result)
    if t is tuple or t is list or isinstance(result, Index):
        return wrap(result, _call_keys(args, kwargs))
    return wrap(result, _NO_KEYS)


#: types :func:`unwrap` changes (any other value is passed to a handler as it is)
_UNWRAPS = frozenset({NkiTensor, PendingTensor, LoopIndex, LoopCondition, SymbolicName, tuple,
                      list, slice, dict})
#: types :func:`_keys_of` looks into (only they can carry a loop index's keys)
_KEYED = frozenset({LoopIndex, tuple, list, slice})
_NO_KEYS: frozenset = frozenset()


def _call_keys(args: tuple, kwargs: dict) -> frozenset:
    """``_keys_of(args) | _keys_of(kwargs values)``: the rolled loops a call's arguments
    depend on; the empty set without a look into each argument when none can carry one."""
    for a in args:
        if type(a) in _KEYED:
            return _keys_of(args) | _keys_of(tuple(kwargs.values()))
    for a in kwargs.values():
        if type(a) in _KEYED:
            return _keys_of(args) | _keys_of(tuple(kwargs.values()))
    return _NO_KEYS


def _binds(handler, args: tuple, kwargs: dict) -> bool:
    """``handler(*args, **kwargs)`` binds to the handler's signature (the API's)."""
    try:
        inspect.signature(handler).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:  # no signature to check against
        return True
    return True


def _pending(v: Any) -> Any:
    """A Beta 1 pending view passed to a masked call stays pending (beta1/masks.py builds it)."""
    if type(v) is PendingTensor and v._view is None:
        return v.pending
    return v


class _Callee:
    def __init__(self, name: str):
        self.name = name


def _unroll_on_failure(ctx: TraceContext, name: str, keys: frozenset, exc: BaseException,
                       loc: SourceLoc | None) -> None:
    """An instruction rejected an argument that depends on a rolled loop's index (it needs a
    compile-time int there, or a per-iteration check failed): unroll those loops, which
    never changes what the kernel means, and let the unrolled trace decide."""
    live = [k for k in keys if k not in ctx.unroll]
    if live and (ctx.mode != "roll" or live == [LAUNCH_KEY]):  # (the launch is no loop)
        msg = str(getattr(exc, "message", exc)).split("\n")[0][:120]
        raise Retrace({k: f"{name} at {loc} needs a per-iteration value ({msg})" for k in live}) \
            from None


def _name_from_source(ctx: TraceContext, t: Any, loc: SourceLoc | None) -> None:
    """Name a fresh allocation after the variable its line binds (``x = nl.ndarray(...)``)."""
    if loc is None or getattr(t, "name", "x"):
        return
    if not (isinstance(t, Register) or (isinstance(t, Tensor) and t.is_base)):
        return
    hit = ctx.binding_names.get(id(loc))    # (per trace: the kernel's lines do not change)
    if hit is not None and hit[0] is loc:
        name = hit[1]
    else:
        name = binding_name(loc)
        ctx.binding_names[id(loc)] = (loc, name)
    if name:
        name_tensor(t, name)


def tensor_method(t: NkiTensor, name: str) -> Any:
    if "tensor." + name not in HANDLERS:
        raise NKIAttributeError(f"a tensor has no attribute or method '{name}'", user_loc())

    def method(*args: Any, **kwargs: Any) -> Any:
        return dispatch("tensor." + name, args, kwargs, method_of=t)

    method.__name__ = name
    return method


def subscript(t: NkiTensor, key: Any) -> NkiTensor:
    ctx = _require("tensor indexing")
    loc = ctx.b.loc = user_loc(2)
    ctx.check_visible(loc, t._t)
    try:
        if ctx.b.beta1:
            from .beta1.trace import pending_subscript
            pending = pending_subscript(ctx, loc, t._t, unwrap(key))
            if pending is not None:
                return pending
        view = index_tensor(ctx, loc, t._t, unwrap(key))
        # (wrap() of a tensor carries no loop keys: they are looked up only on a failure)
        return NkiTensor._of(view) if type(view) is Tensor else wrap(view, _keys_of((key,)))
    except Exception as exc:
        _unroll_on_failure(ctx, "tensor indexing", _keys_of((key,)), exc, loc)
        raise


def store_subscript(t: NkiTensor, key: Any, value: Any) -> None:
    """``t[key] = value``: a copy into the view (NKI 0.3 ``NkiTensor.__setitem__``)."""
    ctx = _require("tensor assignment")
    loc = ctx.b.loc = user_loc(2)
    from .assign import assign_into
    from .indexing import index_tensor
    ctx.check_visible(loc, t._t)
    if value is getattr(ctx, "accumulated", None):  # psum[...] += matmul: already accumulated
        ctx.accumulated = None
        return
    from .beta1.lang import PendingReduce
    if type(value) is not PendingReduce and _masked_into(ctx, loc, t, key, value):
        return
    v = unwrap(value)
    if isinstance(v, Tensor):
        ctx.check_visible(loc, v)
    try:
        view = index_tensor(ctx, loc, t._t, unwrap(key))
        ctx.b.loc = loc
        if view.blocks or (isinstance(v, Tensor) and v.blocks):
            from .beta1.block_dims import check_operand
            check_operand(ctx, "tensor assignment", view if view.blocks else v)
        if type(v) is PendingReduce:  # acc[...] = nl.loop_reduce(x, ...): accumulate into the view
            from .beta1.lang import reduce_into
            reduce_into(ctx, view, v)
        else:
            assign_into(ctx, view, v)
    except Exception as exc:
        _unroll_on_failure(ctx, "tensor assignment", _keys_of((key, value)), exc, loc)
        raise


def operator(op: str, a: Any, b: Any) -> Any:
    """A Python operator with a tensor operand (Beta 1 tile arithmetic and comparisons)."""
    ctx = _require("tensor operators")
    loc = ctx.b.loc = user_loc(2)
    from .beta1.tile_ops import compare_operator, tile_operator
    ua, ub = unwrap(a), unwrap(b)
    for v in (ua, ub):
        if isinstance(v, Tensor):
            ctx.check_visible(loc, v)
            if v.blocks:
                from .beta1.block_dims import check_operand
                check_operand(ctx, f"operator {op}", v)
    if op in ("lt", "le", "gt", "ge", "eq", "ne"):
        return wrap(compare_operator(ctx, loc, AST_OPS[op], ua, ub))
    return wrap(tile_operator(ctx, loc, AST_OPS[op], ua, ub))


def _masked_into(ctx: TraceContext, loc, t: NkiTensor, key: Any, value: Any) -> bool:
    """``t[key] = call(..., mask=m)`` (Beta 1): the masked call just emitted into a temporary
    is re-emitted writing straight into ``t[key]``, only where the mask holds."""
    last = getattr(ctx, "last_call", None)
    if last is None or last.kwargs.get("mask") is None or not isinstance(value, NkiTensor) or \
            value._t is not last.result or ctx.b.block.last_op is not last.last_op:
        return False
    from .beta1.trace import erase_last_call, pending_subscript
    from .indexing import index_tensor
    from .beta1.masks import masked_call
    erase_last_call(ctx, last)
    into = pending_subscript(ctx, loc, t._t, unwrap(key)) if ctx.b.beta1 else None
    into = into.pending if into is not None else index_tensor(ctx, loc, t._t, unwrap(key))
    ctx.b.loc = loc
    masked_call(ctx, loc, _Callee(last.name), HANDLERS[last.name], last.args, last.kwargs, into=into)
    return True


def inplace_add(view: NkiTensor, value: Any) -> Any:
    """``view += value``: an accumulating matmul when ``value`` is one (Beta 1), else
    NotImplemented (Python falls back to ``view = view + value``)."""
    ctx = _require("tensor operators")
    if not ctx.b.beta1:
        return NotImplemented
    from .beta1.trace import accumulate
    return accumulate(ctx, view, value)


def unary(op: str, a: NkiTensor) -> Any:
    import ast
    ctx = _require("tensor operators")
    ctx.b.loc = loc = user_loc(2)
    from .beta1.tile_ops import unary_operator
    if a._t.blocks:
        from .beta1.block_dims import check_operand
        check_operand(ctx, f"operator {op}", a._t)
    return wrap(unary_operator(ctx, loc, ast.USub() if op == "neg" else ast.Invert(), a._t))


def tensor_truth(t: NkiTensor) -> bool:
    """``bool(t)`` of a tensor.  NKI 0.x: Python's default truth of an object, ``True`` (AWS's
    ``NkiTensor`` defines no ``__bool__``; kernels write ``if bias:`` for ``bias is not
    None``, as their compiler rejects ``is``).  Beta 1 (tiles with Python operators): a
    located error, as a tile's value exists only on the device."""
    ctx = active()
    if ctx is not None and not ctx.b.beta1:
        return True
    tensor_as_value(t, "a truth value (if / while / and / or / not)")
    return True  # not reached: tensor_as_value raises


def tensor_as_value(t: NkiTensor, what: str) -> None:
    """A tensor used where Python needs a value (a condition, an int): located error."""
    loc = user_loc()
    if "truth" in what and (kind := truth_context()) in ("and", "or", "not"):
        raise NKITypeError(f"'{kind}' needs a single truth value, but a tile (or index expression) "
                           f"has many; use the element-wise forms & | ~ (nl.logical_and / "
                           f"logical_or / logical_not)", loc, code="err_ambiguous_tensor_truth_value")
    if "truth" in what:
        raise NKISyntaxError("a tensor's value is not known at compile time, so it cannot be used "
                             "as a condition; if/while conditions must be compile-time values",
                             loc, code="err_dynamic_control_flow_not_supported")
    raise NKITypeError(f"a tensor's value is not known at compile time, so it cannot be used as "
                       f"{what}; only tensor operations apply to '{t._t.name or 'tensor'}'", loc)


# ----------------------------------------------------------- loop indices
def index_arith(op: str, a: Any, b: Any) -> Any:
    ctx = _require("loop index arithmetic")
    ctx.b.loc = user_loc(2)
    keys = _keys_of((a, b))
    ua, ub = unwrap(a), unwrap(b)
    from .values import is_int
    for v in (ua, ub):
        if not (isinstance(v, Index) or is_int(v)):
            if isinstance(v, float):
                concretize(a if type(a) is LoopIndex else b, "combined with a float")
            return NotImplemented
    return wrap(ctx.b.index_arith(op, ua, ub), keys)


_CMP_NAMES = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def index_compare(op: str, a: LoopIndex, other: Any) -> Any:
    from .values import as_index, is_int
    from .beta1.index_expr import IndexExpr, Mask
    u = unwrap(other)
    if not (isinstance(u, Index) or is_int(u)):
        if op in ("eq", "ne"):
            return op == "ne"  # a loop index never equals a non-number (None, a string, ...)
        return NotImplemented
    keys = a.keys | _keys_of((other,))
    diff = as_index(a._i).sub(u)
    ops = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
    mask = Mask(((IndexExpr((), (), diff), ops[op]),))
    return LoopCondition(mask, LoopIndex(a._i, keys), f"index {_CMP_NAMES[op]} {other!r}")


def concretize(i: LoopIndex, what: str) -> None:
    """The kernel needs a loop index as a Python value: unroll the loops it depends on."""
    ctx = active()
    loc = user_loc(2)
    if ctx is None:
        raise NKIError("a loop index escaped its kernel", loc)
    if ctx.mode == "roll" and i.keys != _LAUNCH_ONLY:   # (the launch is no loop)
        raise NKITypeError(f"the loop index is {what}, which needs the loop unrolled, but loops "
                           f"are forced rolled (NKI_MLIR_LOOPS=roll)", loc,
                           code="err_dynamic_control_flow_not_supported")
    raise Retrace({k: f"its index is {what} at {loc}" if k != LAUNCH_KEY else
                   f"nl.program_id is {what} at {loc}" for k in i.keys})


register_tracer(sys.modules[__name__])   # the entry points the proxies and markers call
