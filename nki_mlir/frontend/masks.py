"""NKI Beta 1 ``mask=`` predicates on ``nl`` / ``nisa`` calls.

A mask is a compile-time execution predicate (nki_spec.md section 4.3 "Masks"; NKI Beta 1
docs, ``general/nki/api/nki.api.shared.rst`` "NKI API Masking" and
``general/nki/programming_model.rst``): a conjunction with ``&`` of comparisons of affine
expressions of ``nl.arange`` / ``nl.mgrid`` grids, ``nl.affine_range`` loop indices and
program ids (a :class:`~.index_expr.Mask`).  It *shrinks or skips* the instruction: the
instruction runs only on the grid points where the predicate holds.

How a masked call is compiled (:func:`masked_call`):

1. Every constraint ``expr <op> 0`` must vary along at most one grid axis ``r``; it is
   solved to an interval ``lo <= k_r < hi`` of that axis (``k_r`` the grid coordinate,
   ``0 <= k_r < size_r``).  A constraint along no axis gates the whole instruction.  The
   intersection over the constraints is the instruction's *box*.
2. Grid axis ``r`` is dim ``r`` of the instruction's tiles (axes aligned from the left,
   the partition axis first).  Each tensor operand (inputs, ``dst``, the HBM view of a
   load / store) is narrowed along dim ``r`` when that dim has the grid's size there; a
   ``[P, 1]`` operand is not narrowed along a free axis.  A value-returning call gets a
   full-size result tile (uninitialised where the mask is false, as in NKI); the call runs
   on the narrowed operands and its result is written into the matching part of that tile.
   ``t[...] = call(..., mask=m)`` writes straight into ``t``'s view (only the masked part).
3. When the bounds depend on loop indices, the static loop ranges are enumerated, and one
   version of the instruction is emitted per distinct non-empty box, guarded by an
   ``scf.if`` on the loop indices (``arith.cmpi`` / ``andi`` / ``ori``); at most
   :data:`MAX_VERSIONS` versions.  An empty box skips the instruction.
4. Operand views are built inside the guarded region with the masked shape, because a
   full-size view of the last tile may cover rows past the end of the tensor (a run-time
   fault, or a compile-time ``err_tensor_access_out_of_bound`` for static indices):

   - a subscript by index expressions written in the call (``nl.load(x[t * 128 + i_p,
     i_f], mask=...)``, or the target of ``t[...] = call(..., mask=...)``) is kept
     unevaluated (:class:`PendingView`, :func:`eval_masked_call`) and built per version from
     the keys restricted to the box, so the views are the ones Beta 2 slicing of the
     partial tile would give;
   - a view already made (held in a variable) is rebuilt from its source (a narrowed
     ``memref.subview`` / ``memref.reinterpret_cast`` with the composed offsets); the
     original view op is erased once the kernel is built if nothing else uses it
     (:func:`drop_superseded_views`).

   The full-size result of a value-returning call is found by a dry run of the handler on
   stand-in operands of the full shapes (its IR is discarded).

Errors (located at the ``mask=`` expression, code ``err_unsupported_expression_in_mask``):
a mask that is not a conjunction of affine comparisons (a tile, ``|``, ``!=``), a
comparison mixing two grid axes, grids of different sizes on one axis, a bound depending
on a value with no static range, or a masked axis that no operand of the call has.
"""
from __future__ import annotations

import ast
import itertools
import operator
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects import memref as memref_d
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Block, OpResult, Region, SSAValue

from ..dialects import nki
from ..dialects.common import memref
from ..errors import NKIError, NKITypeError
from .index_expr import IndexExpr, Mask
from .values import Index, Tensor, as_index, is_int, simplify

#: most versions (distinct non-empty boxes) one masked call may compile to
MAX_VERSIONS = 16
#: most loop-index combinations enumerated to find the boxes of one masked call
MAX_POINTS = 1 << 16

_CODE = "err_unsupported_expression_in_mask"
_FNS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        "eq": operator.eq}
_SYM = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
#: attribute on the builder listing the views replaced by narrowed copies
_SUPERSEDED = "_mask_superseded_views"


@dataclass(frozen=True)
class _Constraint:
    """``coeff * k_axis + v <op> 0`` (``axis`` None: ``v <op> 0`` gates the instruction)."""

    axis: int | None
    coeff: int
    size: int
    v: Index | int
    op: str


Box = tuple[tuple[int, int], ...]   # per grid axis [lo, hi); hi <= lo on some axis: empty


# ====================================================================== entry points


def masked_call(cg, node: ast.Call, callee, handler: Callable, args: list, kwargs: dict,
                into: "Tensor | PendingView | None" = None) -> Any:
    """Compile ``callee(*args, **kwargs)`` whose ``kwargs["mask"]`` is a Beta 1 mask.

    ``into``: the destination view of ``into[...] = callee(...)``; the masked result is
    written into its masked part only and None is returned.

    Returns what the call returns (a full-size result tile for a value-returning call).

    Raises:
        NKITypeError: ``err_unsupported_expression_in_mask`` (see the module docstring).
        NKIError: the mask needs more than :data:`MAX_VERSIONS` versions.
    """
    drop_stale_consts(cg.b)
    kwargs = dict(kwargs)
    mask = kwargs.pop("mask")
    mnode = _mask_node(node)
    api = callee.name
    if isinstance(mask, (bool, np.bool_)):  # a predicate that folded at compile time
        sizes, combos, cons = (), {(): [()]}, []
        box_of = {(): () if mask else ((0, 0),)}
    else:
        sizes, cons = _parse(cg, mnode, mask)
        combos, box_of = _boxes(cg, mnode, sizes, cons)
    full: Box = tuple((0, s) for s in sizes)
    versions: dict[Box, list[tuple]] = {}
    for combo in combos:
        box = box_of[combo]
        if not _empty(box):
            versions.setdefault(box, []).append(combo)
    has_empty = any(_empty(box_of[c]) for c in combos)
    if len(versions) > MAX_VERSIONS:
        raise cg.fail(mnode, f"{api}: this mask gives {len(versions)} different shapes of the "
                             f"instruction over the loop iterations; at most {MAX_VERSIONS} are "
                             f"supported (make the bound depend on fewer loop indices)", NKIError,
                      category="limit")
    guarded = has_empty or len(versions) > 1
    if not guarded and versions and next(iter(versions)) == full:
        # the mask holds everywhere: the plain call
        result = handler(cg, *resolve_all(cg, args), **resolve_all(cg, kwargs))
        if into is not None:
            from .assign import assign_into
            assign_into(cg, resolve(cg, into), result)
            return None
        return result

    template = _dry_run(cg, handler, args, kwargs)
    results = list(template) if isinstance(template, (tuple, list)) else \
        ([] if template is None else [template])
    if any(not isinstance(r, Tensor) for r in results):
        raise cg.fail(mnode, f"{api}: mask= applies to instructions on tiles; this call returns "
                             f"{type(template).__name__}", NKITypeError, code=_CODE)
    _check_axes(cg, mnode, api, sizes, cons, list(args) + list(kwargs.values()) + results, into)
    dests: list[Tensor]
    if into is not None and len(results) == 1 and tuple(into.shape) == tuple(results[0].shape):
        dests, ret = [into], None
    else:
        from .lang_calls import new_tensor
        dests = [new_tensor(cg, nki.NdarrayOp, r.shape, r.dtype, r.buffer) for r in results]
        if into is not None:
            ret = None
        else:
            ret = type(template)(dests) if isinstance(template, (tuple, list)) else \
                (dests[0] if dests else None)

    def emit(box: Box) -> None:
        # the destination parts first, so nki-legalize can fold the copies into the producer
        parts = [_narrow_arg(cg, dst, sizes, box, True) for dst in dests]
        nargs = [_narrow_arg(cg, a, sizes, box, guarded) for a in args]
        nkw = {k: _narrow_arg(cg, v, sizes, box, guarded) for k, v in kwargs.items()}
        out = handler(cg, *nargs, **nkw)
        outs = list(out) if isinstance(out, (tuple, list)) else ([] if out is None else [out])
        from .assign import assign_into
        for dst, part, res in zip(dests, parts, outs):
            if isinstance(res, Tensor) and tuple(res.shape) == tuple(dst.shape) != tuple(part.shape):
                # no operand to narrow (nisa.memset(shape, ...)): computed whole, written masked
                res = narrow(cg, res, sizes, box, False)
            if not isinstance(res, Tensor) or tuple(res.shape) != tuple(part.shape):
                raise cg.fail(mnode, f"{api}: with this mask the instruction produces a "
                                     f"{list(getattr(res, 'shape', ()))} tile, which does not match "
                                     f"the masked part {list(part.shape)} of its "
                                     f"{list(dst.shape)} result; the mask's grid axes must be the "
                                     f"result's dims", NKITypeError, code=_CODE)
            assign_into(cg, part, res)

    order = list(versions.items())
    _emit_chain(cg, order, 0, not has_empty, cons, combos, emit)
    if into is not None and dests and dests[0] is not into:
        from .assign import assign_into
        assign_into(cg, resolve(cg, into), dests[0])
    return ret


def owns_mask(handler: Callable) -> bool:
    """Whether ``handler`` applies its ``mask=`` itself (it calls :func:`masked_call` on the
    instructions it emits, e.g. ``nl.loop_reduce``, whose accumulator is no argument of the
    call) rather than being compiled as one masked call."""
    return bool(getattr(handler, "owns_mask", False))


def eval_mask(cg, node: ast.expr) -> Any:
    """Evaluate a ``mask=`` argument; a type error in it (a non-affine index expression,
    ``i_p * i_p``, ``i_p // 2``) is reported as ``err_unsupported_expression_in_mask``."""
    try:
        return cg.eval(node)
    except NKITypeError as exc:
        if exc.code is None:
            exc.code = _CODE
            exc.args = (exc.format(),)
        raise


def _lazy_arguments(cg, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
    """A call's arguments with tensor subscripts kept lazy and ``mask=`` evaluated as a mask;
    sets the builder location to the call."""
    args: list[Any] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            args.extend(cg.eval(a.value))
        else:
            args.append(lazy_operand(cg, a))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            kwargs.update(cg.eval(kw.value))
        else:
            kwargs[kw.arg] = eval_mask(cg, kw.value) if kw.arg == "mask" else lazy_operand(cg, kw.value)
    cg.b.loc = cg.loc(node)
    return args, kwargs


def eval_masked_call(cg, node: ast.Call, callee) -> Any:
    """Evaluate the arguments of a builtin call that has a ``mask=`` keyword and compile it.

    Tensor subscripts with ``nl.arange`` / ``nl.mgrid`` keys (``x[t * 128 + i_p, i_f]``) are
    kept unevaluated (:class:`PendingView`): :func:`masked_call` builds each one already
    restricted to the masked shape, so a view of the last partial tile never covers rows past
    the end of the tensor (not even at compile time, for static indices).
    """
    args, kwargs = _lazy_arguments(cg, node)
    from .builtins import HANDLERS
    if kwargs.get("mask") is None or owns_mask(HANDLERS.get(callee.name)):
        args, kwargs = resolve_all(cg, args), resolve_all(cg, kwargs)
    return cg.call(node, callee, args, kwargs)


def assign_masked(cg, target: ast.Subscript, node: ast.Call) -> bool:
    """``t[...] = call(..., mask=m)``: compile the masked call writing into ``t[...]``, only
    where the mask holds.  Returns False (nothing evaluated but the callee and ``t``) when
    ``node`` is not a masked builtin call or ``t`` is not a tensor."""
    from .builtins import HANDLERS, Builtin
    if not any(kw.arg == "mask" for kw in node.keywords):
        return False
    callee = cg.eval(node.func)
    if not isinstance(callee, Builtin) or HANDLERS.get(callee.name) is None or \
            owns_mask(HANDLERS[callee.name]):
        return False
    container = cg.eval(target.value)
    if not isinstance(container, Tensor):
        return False
    cg.check_visible(target, container)
    into = _lazy_subscript(cg, target, container)
    args, kwargs = _lazy_arguments(cg, node)
    if kwargs.get("mask") is None:
        from .assign import assign_into
        value = cg.call(node, callee, resolve_all(cg, args), resolve_all(cg, kwargs))
        assign_into(cg, resolve(cg, into), value)
        return True
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, Tensor):
            cg.check_visible(node, v)
    try:
        masked_call(cg, node, callee, HANDLERS[callee.name], args, kwargs, into=into)
    except TypeError as exc:
        if "argument" in str(exc):
            raise cg.fail(node, f"{callee.name}(): {exc}", NKITypeError) from None
        raise
    return True


# ====================================================================== pending views


@dataclass(frozen=True)
class PendingView:
    """``tensor[keys]`` with Beta 1 index-expression keys, not yet emitted.

    Attributes:
        node: the subscript (errors are located there).
        tensor: the indexed tensor.
        keys: one key per dim: :class:`~.index_expr.IndexExpr`, int or loop index.
        shape: the view's shape (the keys' broadcast grid).
    """

    node: ast.AST
    tensor: Tensor
    keys: tuple
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)


def lazy_operand(cg, node: ast.expr) -> Any:
    """Evaluate a call argument, keeping a tensor subscript by index expressions pending."""
    if isinstance(node, ast.Subscript):
        container = cg.eval(node.value)
        if isinstance(container, Tensor):
            cg.check_visible(node, container)
            return _lazy_subscript(cg, node, container)
    return cg.eval(node)


def _lazy_subscript(cg, node: ast.Subscript, t: Tensor) -> Any:
    from .indexing import index_tensor
    key = cg.eval(node.slice)
    keys = list(key) if isinstance(key, tuple) else [key]
    exprs = [k for k in keys if isinstance(k, IndexExpr)]
    if exprs and len(keys) == t.ndim and all(
            isinstance(k, (IndexExpr, Index)) or is_int(k) for k in keys):
        rank = max(e.rank for e in exprs)
        if rank >= 2:
            shape = [1] * rank
            for e in exprs:
                for r, n in enumerate(e._grid(rank)[0]):
                    shape[r] = max(shape[r], n)
            return PendingView(node, t, tuple(keys), tuple(shape))
    saved = cg.b.loc
    cg.b.loc = cg.loc(node)
    try:
        return index_tensor(cg, node, t, key)  # anything else: emitted now, as usual
    finally:
        cg.b.loc = saved


def resolve(cg, v: Any, ranges: dict[int, tuple[int, int]] | None = None) -> Any:
    """A :class:`PendingView` emitted (restricted to ``ranges``: dim -> [lo, hi)); any other
    value unchanged."""
    if not isinstance(v, PendingView):
        return v
    from .indexing import index_tensor
    rank = len(v.shape)
    keys = []
    for k in v.keys:
        if isinstance(k, IndexExpr) and ranges:
            sizes, coeffs = (list(x) for x in k._grid(rank))
            const = k.const
            for r, (lo, hi) in ranges.items():
                if sizes[r] > 1:
                    sizes[r] = hi - lo
                    const = simplify(as_index(const).add(lo * coeffs[r]))
                    if sizes[r] == 1:
                        coeffs[r] = 0
            k = IndexExpr(tuple(sizes), tuple(coeffs), const)
        keys.append(k)
    return index_tensor(cg, v.node, v.tensor, tuple(keys))


def resolve_all(cg, vals):
    if isinstance(vals, dict):
        return {k: resolve_all(cg, v) for k, v in vals.items()}
    if isinstance(vals, (tuple, list)):
        return type(vals)(resolve_all(cg, v) for v in vals)
    return resolve(cg, vals)


def drop_superseded_views(b) -> None:
    """Erase the full-size operand views that masked calls replaced, once nothing uses
    them (they could fault at run time on the last partial tile), and then the index
    arithmetic only they used.  Called once the whole kernel is built."""
    values: list[SSAValue] = getattr(b, _SUPERSEDED, [])
    for v in reversed(values):
        _erase_dead(v)
    if values:
        setattr(b, _SUPERSEDED, [])


def drop_stale_consts(b) -> None:
    """Forget cached constants whose op is no longer in the block it was cached for (a
    re-emitted Beta 1 call erases the ops of its first emission, constants included), so
    the builder emits fresh ones instead of using erased values."""
    for key, v in list(b._consts.items()):
        parent = v.op.parent if isinstance(v, OpResult) else None
        if parent is None or id(parent) != key[0]:
            del b._consts[key]


def _erase_dead(v: SSAValue) -> None:
    if not isinstance(v, OpResult) or v.uses:
        return
    op = v.op
    if op.parent is None or any(r.uses for r in op.results):
        return
    if not (op.name in ("memref.subview", "memref.reinterpret_cast")
            or op.name in ("arith.addi", "arith.muli")):
        return
    operands = list(op.operands)
    op.detach()
    op.erase(safe_erase=False)
    for o in operands:
        if isinstance(o, OpResult) and o.op.name in ("arith.addi", "arith.muli"):
            _erase_dead(o)


# ====================================================================== the mask


def _mask_node(node: ast.AST) -> ast.AST:
    for kw in getattr(node, "keywords", ()):
        if kw.arg == "mask":
            return kw.value
    return node


def _parse(cg, mnode: ast.AST, mask: Any) -> tuple[tuple[int, ...], list[_Constraint]]:
    """The grid sizes (per axis) and the per-axis constraints of a mask."""
    if not isinstance(mask, Mask):
        what = "a tile" if isinstance(mask, Tensor) else f"{type(mask).__name__} {mask!r}"
        raise cg.fail(mnode, f"mask= must be a compile-time predicate: comparisons of nl.arange / "
                             f"nl.mgrid expressions (and loop indices) joined with '&', e.g. "
                             f"mask=(i_p < n); got {what} (for a data-dependent choice use "
                             f"nl.where)", NKITypeError, code=_CODE)
    rank = max(e.rank for e, _ in mask.constraints)
    sizes = [1] * rank
    for e, _ in mask.constraints:
        s, c = e._grid(rank)
        for r in range(rank):
            if s[r] > 1:
                if sizes[r] > 1 and sizes[r] != s[r]:
                    raise cg.fail(mnode, f"the comparisons of this mask use grids of different "
                                         f"sizes ({sizes[r]} and {s[r]}) on axis {r}",
                                  NKITypeError, code=_CODE)
                sizes[r] = s[r]
    cons = []
    for e, op in mask.constraints:
        if op not in _FNS:
            raise cg.fail(mnode, f"'{_SYM.get(op, op)}' is not supported in a mask: each comparison "
                                 f"must bound one grid axis (<, <=, >, >= or ==)", NKITypeError,
                          code=_CODE)
        s, c = e._grid(rank)
        axes = [r for r in range(rank) if s[r] > 1 and c[r] != 0]
        if len(axes) > 1:
            raise cg.fail(mnode, f"a mask comparison varies along grid axes {axes}; each comparison "
                                 f"must bound a single axis (e.g. (i_p < a) & (i_f < b))",
                          NKITypeError, code=_CODE)
        const = simplify(e.const)
        if axes:
            cons.append(_Constraint(axes[0], c[axes[0]], s[axes[0]], const, op))
        else:
            cons.append(_Constraint(None, 0, 1, const, op))
    return tuple(sizes), cons


def _solve(con: _Constraint, v: int) -> tuple[int, int]:
    """The interval of grid coordinates satisfying ``con`` for the constant part ``v``
    (a gate: (0, 1) if it holds, (0, 0) if not)."""
    fn = _FNS[con.op]
    if con.axis is None:
        return (0, 1) if fn(v, 0) else (0, 0)
    k = np.arange(con.size, dtype=np.int64)
    idx = np.nonzero(fn(con.coeff * k + v, 0))[0]
    if idx.size == 0:
        return (0, 0)
    return int(idx[0]), int(idx[-1]) + 1  # a monotone / single-point predicate: contiguous


def _box(sizes: tuple[int, ...], cons: list[_Constraint], combo: tuple) -> Box:
    box = [[0, s] for s in sizes]
    for con, (lo, hi) in zip(cons, combo):
        if con.axis is None:
            if hi <= lo:
                return ((0, 0),) * max(1, len(sizes))
            continue
        box[con.axis][0] = max(box[con.axis][0], lo)
        box[con.axis][1] = min(box[con.axis][1], hi)
    if any(hi <= lo for lo, hi in box):
        return ((0, 0),) * max(1, len(sizes))
    return tuple((lo, hi) for lo, hi in box)


def _empty(box: Box) -> bool:
    return any(hi <= lo for lo, hi in box)


def _symbols(cons: list[_Constraint]) -> list[SSAValue]:
    syms: list[SSAValue] = []
    for con in cons:
        if isinstance(con.v, Index):
            for s, _ in con.v.terms:
                if s not in syms:
                    syms.append(s)
    return syms


def _value(v: Index | int, env: dict[SSAValue, int]) -> int:
    if not isinstance(v, Index):
        return int(v)
    return v.const + sum(c * env[s] for s, c in v.terms)


def _boxes(cg, mnode, sizes, cons) -> tuple[dict[tuple, list[tuple]], dict[tuple, Box]]:
    """Enumerate the loop indices the mask depends on: every combination of per-constraint
    intervals that occurs (-> the loop-index points giving it) and its box."""
    syms = _symbols(cons)
    ranges = []
    for s in syms:
        rng = cg.b.loop_ranges.get(s)
        if rng is None:
            raise cg.fail(mnode, f"this mask depends on '{getattr(s, 'name_hint', None) or 'a value'}', "
                                 f"whose range is not known at compile time; masks may use "
                                 f"nl.affine_range / nl.sequential_range loop indices, program ids "
                                 f"and constants", NKITypeError, code=_CODE)
        ranges.append(range(*rng))
    total = int(np.prod([len(r) for r in ranges], dtype=np.int64)) if ranges else 1
    if total > MAX_POINTS:
        raise cg.fail(mnode, f"this mask depends on {total} loop-index combinations; at most "
                             f"{MAX_POINTS} are supported", NKIError, category="limit")
    memo: dict[tuple[int, int], tuple[int, int]] = {}
    combos: dict[tuple, list[tuple]] = {}
    for point in itertools.product(*ranges):
        env = dict(zip(syms, point))
        combo = []
        for j, con in enumerate(cons):
            v = _value(con.v, env)
            key = (j, v)
            if key not in memo:
                memo[key] = _solve(con, v)
            combo.append(memo[key])
        combos.setdefault(tuple(combo), []).append(point)
    return combos, {c: _box(sizes, cons, c) for c in combos}


# ====================================================================== guards


def _emit_chain(cg, versions, i: int, last_is_rest: bool, cons, combos, emit) -> None:
    """``if c_i {version i} else {chain i+1}``; the last version needs no condition when
    every point maps to a non-empty box (``last_is_rest``)."""
    if i >= len(versions):
        return
    box, vcombos = versions[i]
    if i == len(versions) - 1 and last_is_rest:
        emit(box)
        return
    cond = _condition(cg, cons, combos, vcombos)
    b = cg.b
    then_block = Block()
    else_block = Block() if i + 1 < len(versions) else None
    if_op = scf.IfOp(cond, [], Region([then_block]),
                     Region([else_block]) if else_block is not None else Region())
    b.emit(if_op, verify=False)
    with b.at(then_block):
        emit(box)
        b.emit(scf.YieldOp(), verify=False)
    if else_block is not None:
        with b.at(else_block):
            _emit_chain(cg, versions, i + 1, last_is_rest, cons, combos, emit)
            b.emit(scf.YieldOp(), verify=False)
    if_op.verify_()


def _condition(cg, cons, combos, vcombos) -> SSAValue:
    """An ``i1`` that is true exactly at the loop-index points whose combination of
    per-constraint intervals is one of ``vcombos``.

    Constraint ``j`` is tested on its key: the loop index itself when its bound depends on
    one loop index (``t < 2``), else the value of its constant part ``v_j``.  Its interval is
    monotone in the key (or a single point), so "the interval is I" is a union of runs of
    the sorted reachable keys; each run is ``key >= first`` / ``key < next reachable key``.
    """
    b = cg.b
    syms = _symbols(cons)
    keyed: list[tuple[Callable[[dict], int], Callable[[], SSAValue], dict[int, tuple]]] = []
    for j, con in enumerate(cons):
        if isinstance(con.v, Index) and len(con.v.terms) == 1:
            sym = con.v.terms[0][0]
            key, ssa = (lambda env, s=sym: env[s]), (lambda s=sym: s)
        else:
            cache: list[SSAValue] = []

            def ssa(v=con.v, cache=cache):
                if not cache:
                    cache.append(b.materialize(v))
                return cache[0]
            key = (lambda env, v=con.v: _value(v, env))
        vals: dict[int, tuple] = {}
        for combo, points in combos.items():
            for p in points:
                vals[key(dict(zip(syms, p)))] = combo[j]
        keyed.append((key, ssa, vals))
    cmps: dict[tuple, SSAValue] = {}
    ors: list[SSAValue] = []
    for combo in vcombos:
        ands: list[SSAValue] = []
        for j, (_, ssa, vals) in enumerate(keyed):
            if len(set(vals.values())) > 1:  # else: the same interval everywhere
                ands += _runs_cond(cg, ssa, vals, combo[j], cmps)
        if not ands:
            from xdsl.dialects.builtin import IntegerAttr, i1
            return b.emit(arith.ConstantOp(IntegerAttr(1, i1)), verify=False).results[0]
        ors.append(_reduce(cg, arith.AndIOp, ands))
    return _reduce(cg, arith.OrIOp, ors)


def _runs_cond(cg, ssa, vals: dict[int, tuple], want, cmps) -> list[SSAValue]:
    """The key lies in one of the runs of sorted reachable keys whose interval is ``want``."""
    order = sorted(vals)
    runs: list[tuple[int, int | None]] = []   # (first key, next reachable key after the run)
    start = None
    for k in order:
        if vals[k] == want:
            if start is None:
                start = k
        elif start is not None:
            runs.append((start, k))
            start = None
    if start is not None:
        runs.append((start, None))
    terms: list[SSAValue] = []
    for first, nxt in runs:
        parts = []
        if first > order[0]:
            parts.append(_cmp(cg, ssa(), "sge", first, cmps))
        if nxt is not None:
            parts.append(_cmp(cg, ssa(), "slt", nxt, cmps))
        if parts:
            terms.append(_reduce(cg, arith.AndIOp, parts))
    return [_reduce(cg, arith.OrIOp, terms)] if terms else []


def _cmp(cg, v: SSAValue, pred: str, k: int, cmps: dict) -> SSAValue:
    key = (v, pred, k)
    if key not in cmps:
        b = cg.b
        cmps[key] = b.emit(arith.CmpiOp(v, b.const_index(k), pred), verify=False).results[0]
    return cmps[key]


def _reduce(cg, cls, vals: list[SSAValue]) -> SSAValue:
    acc = vals[0]
    for v in vals[1:]:
        acc = cg.b.emit(cls(acc, v), verify=False).results[0]
    return acc


# ====================================================================== operands


def _check_axes(cg, mnode, api, sizes, cons, operands: list, into) -> None:
    """Every masked grid axis must be a dim of some tile operand or result."""
    tensors = list(_tensors(operands))
    if into is not None:
        tensors.append(into)
    for con in cons:
        if con.axis is None:
            continue
        r, s = con.axis, sizes[con.axis]
        if not any(t.ndim > r and t.shape[r] == s for t in tensors):
            shapes = ", ".join(str(list(t.shape)) for t in tensors) or "none"
            raise cg.fail(mnode, f"{api}: the mask bounds grid axis {r} (size {s}), but no tile "
                                 f"operand has size {s} on dim {r} (operand shapes: {shapes}); "
                                 f"the mask's grid must match the instruction's tiles",
                          NKITypeError, code=_CODE)


def _tensors(vals):
    for v in vals:
        if isinstance(v, (Tensor, PendingView)):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from _tensors(v)


def _narrow_arg(cg, v: Any, sizes, box: Box, rebuild: bool) -> Any:
    if isinstance(v, Tensor):
        return narrow(cg, v, sizes, box, rebuild)
    if isinstance(v, PendingView):
        return resolve(cg, v, _ranges(v, sizes, box))
    if isinstance(v, (tuple, list)) and any(isinstance(x, (Tensor, PendingView)) for x in v):
        return type(v)(_narrow_arg(cg, x, sizes, box, rebuild) for x in v)
    return v


def narrow(cg, t: Tensor, sizes, box: Box, rebuild: bool) -> Tensor:
    """``t`` restricted to ``box`` along the dims whose size is the grid's (see the module
    docstring).  A view is rebuilt from its source (``rebuild`` or when narrowed) so the
    new view never covers more than the box."""
    ranges = _ranges(t, sizes, box)
    owner = t.value.op if isinstance(t.value, OpResult) else None
    is_view = owner is not None and owner.name in ("memref.subview", "memref.reinterpret_cast")
    if not ranges and not (rebuild and is_view):
        return t
    if t.indirect is not None:
        raise cg.b.error("mask= on an indirect (gathered / scattered) view is not supported",
                         NKITypeError, code=_CODE)
    shape = list(t.shape)
    extra = 0
    for d, (lo, hi) in ranges.items():
        shape[d] = hi - lo
        extra += lo * t.strides[d]
    if is_view:
        _supersede(cg, t.value)
        if owner.name == "memref.subview":
            return _resubview(cg, t, owner, ranges, tuple(shape), extra)
        src = replace(t, value=owner.operands[0])
        return cg.b.reinterpret(src, shape, t.strides, simplify(as_index(t.offset_index).add(extra)))
    offsets = [ranges.get(d, (0, 0))[0] for d in range(t.ndim)]
    return cg.b.subview(t, offsets, shape, [1] * t.ndim, [True] * t.ndim)


def _ranges(t, sizes, box: Box) -> dict[int, tuple[int, int]]:
    """dim -> [lo, hi) for the dims of ``t`` the box restricts (the grid's size there)."""
    return {d: box[d] for d in range(min(len(sizes), t.ndim))
            if sizes[d] > 1 and t.shape[d] == sizes[d] and box[d] != (0, sizes[d])}


def _supersede(cg, v: SSAValue) -> None:
    lst = getattr(cg.b, _SUPERSEDED, None)
    if lst is None:
        lst = []
        setattr(cg.b, _SUPERSEDED, lst)
    if v not in lst:
        lst.append(v)


def _resubview(cg, t: Tensor, op: memref_d.SubviewOp, ranges, shape: tuple[int, ...],
               extra: int) -> Tensor:
    """A copy of the subview ``op`` (whose result is ``t``) narrowed along ``ranges``."""
    b = cg.b
    offsets = list(op.static_offsets.get_values())
    sizes = list(op.static_sizes.get_values())
    strides = list(op.static_strides.get_values())
    dyn_in = list(op.offsets)
    # result dim -> source dim (a dropped source dim has size 1 and is not in the result)
    src_dim, r = {}, 0
    for d, size in enumerate(sizes):
        if r < len(t.shape) and size == t.shape[r]:
            src_dim[r] = d
            r += 1
    shift = {src_dim[r]: lo * strides[src_dim[r]] for r, (lo, hi) in ranges.items()}
    for r, (lo, hi) in ranges.items():
        sizes[src_dim[r]] = hi - lo
    dyn: list[SSAValue] = []
    it = iter(dyn_in)
    for d, off in enumerate(offsets):
        k = shift.get(d, 0)
        if off == DYNAMIC_INDEX:
            v = next(it)
            if k:
                v = b.emit(arith.AddiOp(v, b.const_index(k)), verify=False).results[0]
            dyn.append(v)
        else:
            offsets[d] = off + k
    offset = None if t.offset is None else t.offset + extra
    rtype = memref(shape, t.dtype, t.buffer, strides=t.strides, offset=offset)
    new = memref_d.SubviewOp(op.source, dyn, [], [], offsets, sizes, strides, rtype)
    b.emit(new)
    return Tensor(new.results[0], shape, t.dtype, t.buffer, t.strides, offset, b.block, t.name,
                  is_base=False, storage=t.storage_shape,
                  dyn_offset=None if offset is not None else as_index(t.offset_index).add(extra))


# ====================================================================== dry run


def _dry_run(cg, handler: Callable, args: list, kwargs: dict) -> Any:
    """Run ``handler`` on the full-size operands into a scratch block and discard the IR:
    what it returns gives the result tiles' shapes, dtypes and buffers (and checks the call
    is valid unmasked, as NKI requires)."""
    b = cg.b
    scratch = Block()
    before = set(b._consts)
    try:
        with b.at(scratch):
            from .lang_calls import new_tensor

            def stand_in(v):
                if isinstance(v, PendingView):  # a fresh tensor of the view's shape
                    return new_tensor(cg, nki.NdarrayOp, v.shape, v.tensor.dtype, v.tensor.buffer)
                if isinstance(v, (tuple, list)):
                    return type(v)(stand_in(x) for x in v)
                return v
            return handler(cg, *[stand_in(a) for a in args],
                           **{k: stand_in(v) for k, v in kwargs.items()})
    finally:
        for op in reversed(list(scratch.ops)):
            op.detach()
            op.erase(safe_erase=False)
        for key in set(b._consts) - before:
            del b._consts[key]


__all__ = ["masked_call", "owns_mask", "assign_masked", "eval_mask", "eval_masked_call", "PendingView",
           "resolve", "drop_superseded_views", "narrow", "MAX_VERSIONS", "MAX_POINTS"]
