"""Loops of a traced kernel: rolled into one ``scf.for`` body when Python allows.

The kernel's ``for`` statements are rewritten (:mod:`.loop_rewrite`) to iterate over
:func:`nki_loop` ``(iterable, key, ...)``.  For ``range``, ``nl.affine_range`` and
``nl.sequential_range`` it returns a one-shot generator that opens an ``scf.for``, gives
the body a symbolic :class:`~.proxies.LoopIndex`, and closes the loop when the body
finished.  The loop stays rolled only if one symbolic iteration is indistinguishable from
running every iteration:

- the index never became a Python value (:func:`.tracer.concretize`);
- no tile or index made in the body is used after the loop (``check_visible``);
- the body rebinds no variable that it read before writing (a loop-carried Python value,
  ``total += 1``), compared after the iteration;
- the body changed no Python object reachable from the variables it names (a list it
  appends to, an object's attribute, the object of a bound method it calls), nor from the
  function's cell and free variables, compared by a structural fingerprint.

A loop of one iteration is always traced as its body, once (the index is the range's
start): rolling it buys nothing, and it would keep a function with one-iteration loops from
being straight-line code, which ``nisa-schedule`` handles in O(n log n) instead of comparing
every pair of accesses (:mod:`nki_mlir.passes.straight_waits`).

Otherwise :class:`~.context.Retrace` names the loop and it is traced again unrolled: plain
Python iteration, exactly Python's result -- in place by its rewritten ``for`` statement
when that is exact (:mod:`.loop_retry`), else the whole kernel (:mod:`.trace_build`).
What the check cannot see: mutations of module globals or of objects the body reaches
only through them; Python side effects of the body run once per trace rather than once
per iteration (as in any tracing compiler, e.g. ``jax.jit``).  ``nl.static_range`` is
always unrolled; ``NKI_MLIR_LOOPS=unroll`` unrolls every loop, ``=roll`` makes a loop that
cannot stay rolled an error that says why.
"""
from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, Region

from ..errors import NKIError, NKISyntaxError, NKITypeError, SourceLoc
from .device_loops import DynamicRange, dynamic_for
from .isa_control import Register
from .proxies import LoopIndex, NkiTensor
from .reachable import closure_values
from .context import _ACTIVE, Retrace, active
from .values import Index, LoopRange

_MISSING = object()


class StaticRange:
    """``nl.static_range(...)``: a Python range the tracer always unrolls."""

    def __init__(self, rng: range):
        self.range = rng

    def __iter__(self):
        return iter(self.range)

    def __len__(self) -> int:
        return len(self.range)

    def __repr__(self) -> str:
        return f"nl.static_range({self.range.start}, {self.range.stop}, {self.range.step})"


def nki_loop(iterable: Any, key: str, can_roll: bool, carried: tuple[str, ...],
             targets: tuple[str, ...], names: tuple[str, ...] | None = None,
             frame: Any = None) -> Any:
    """The iterable a rewritten ``for`` statement runs over (see module docstring).

    Args:
        iterable: what the kernel's ``for`` iterates over.
        key: the loop's source position ``file:line:col`` (one decision per source loop).
        can_roll: False when the body has ``break``, ``return`` or ``yield`` at this level.
        carried: names the body reads before it rebinds them.
        targets: the names bound by the ``for`` target.
        names: every name the body mentions (:func:`watched`); None: every local variable.
        frame: the frame running the ``for`` (default: the caller's).
    """
    ctx = _ACTIVE[-1] if _ACTIVE else None     # active(), inlined: ~10^6 calls a trace
    if ctx is None:
        return iterable
    if type(iterable) is range:     # the common case first (a plain ``range``): same checks
        if not (-_BOUND < iterable.start < _BOUND and -_BOUND < iterable.stop < _BOUND
                and -_BOUND < iterable.step < _BOUND):
            raise _too_large(iterable, key)
        why = ctx.unroll.get(key)   # _why_unrolled's first answer, without the call
        if why is not None:
            ctx.decisions[key] = ("unrolled", why)      # ctx.decide, inlined
            return iter(iterable)
        return _traced(ctx, iterable, "sequential", key, can_roll, carried, targets, names,
                       frame, iterable)
    if isinstance(iterable, DynamicRange):
        return _dynamic(ctx, iterable, key, can_roll, targets)
    if isinstance(iterable, StaticRange):
        ctx.decide(key, "unrolled", "nl.static_range")
        return iter(iterable)
    if isinstance(iterable, LoopRange):
        kind, rng = iterable.kind, range(iterable.start, iterable.stop, iterable.step)
    else:
        return iterable
    if any(abs(v) >= _BOUND for v in (rng.start, rng.stop, rng.step)):
        raise _too_large(rng, key)
    return _traced(ctx, rng, kind, key, can_roll, carried, targets, names, frame, iterable)


#: a loop bound's magnitude must stay below this (a loop index is a 64-bit integer)
_BOUND = 1 << 62


def _too_large(rng: range, key: str) -> NKITypeError:
    return NKITypeError(f"loop bounds {rng.start}, {rng.stop}, {rng.step} are too large: a loop "
                        f"index is a 64-bit integer (|bound| < 2**62)", key_loc(key))


def _traced(ctx, rng: range, kind: str, key: str, can_roll: bool, carried, targets, names,
            frame, iterable) -> Any:
    """The rest of :func:`nki_loop` for a range with valid bounds: unrolled (plain Python
    iteration) or a :class:`RolledLoop`; ``frame`` None: :func:`nki_loop`'s caller."""
    why = _why_unrolled(ctx, key, can_roll, targets, len(rng))
    if why is not None:
        ctx.decide(key, "unrolled", why)
        return iter(rng)
    return RolledLoop(ctx, rng, kind, key, carried, targets, frame or sys._getframe(2),
                      (iterable, key, can_roll, carried, targets, names))


def _why_unrolled(ctx, key: str, can_roll: bool, targets, trips: int) -> str | None:
    if key in ctx.unroll:
        return ctx.unroll[key]
    if ctx.mode == "unroll":
        return "NKI_MLIR_LOOPS=unroll"
    if trips == 0:
        return "it runs no iteration"
    if trips == 1:      # the body once, index = start: nothing a rolled loop would keep small,
        return "it runs one iteration"  # and the code stays straight-line for nisa-schedule
    if not can_roll:
        return "its body has break, return or yield"
    if len(targets) != 1:
        return "its target is not a single name"
    return None


def key_loc(key: str) -> SourceLoc:
    """The ``SourceLoc`` of a loop key ``file:line:col``."""
    file, line, col = key.rsplit(":", 2)
    return SourceLoc(file, int(line), int(col))


class RolledLoop:
    """One rolled loop being traced: the iterator a rewritten ``for`` runs over.

    It yields one symbolic :class:`~.proxies.LoopIndex` (the body traced once into an
    ``scf.for``), then checks that the iteration left no Python-visible change.  It also
    keeps what :mod:`.loop_retry` needs to trace the loop again in place when the body
    turns out to need an unrolled loop: the ``scf.for`` op, the frame and its locals'
    fingerprint, and the trace state from before the loop.
    """

    def __init__(self, ctx, rng: range, kind: str, key: str, carried, targets, frame, args):
        self.ctx, self.rng, self.kind, self.key = ctx, rng, kind, key
        self.carried, self.targets, self.frame = carried, targets, frame
        self.args = args    # nki_loop's (iterable, key, can_roll, carried, targets, names)
        self.step = 0               # 0: not started, 1: body running, 2: done (or failed)
        self.loop: scf.ForOp | None = None

    def __iter__(self) -> "RolledLoop":
        return self

    def __next__(self) -> LoopIndex:
        self.step += 1
        if self.step == 1:
            return self._open()
        if self.step == 2:
            self._close()
        raise StopIteration

    def _open(self) -> LoopIndex:
        ctx, rng, key = self.ctx, self.rng, self.key
        b = ctx.b
        loc = key_loc(key)
        f_locals = self.frame.f_locals
        self.before = {n: f_locals[n] for n in self.carried if n in f_locals}
        self.states: list = []    # the objects' contents, which a retry puts back
        self.fp_before = _fingerprint_locals(f_locals, self.targets, self.states,
                                             watched(self.frame, self.args[5]))
        # the trace state a retry (loop_retry.py) puts back
        ctx.loop_seq += 1
        self.seq = ctx.loop_seq
        ctx.entered[key] = self.seq
        self.saved = b.block
        self.open_depth, self.ir_depth = len(ctx.open_loops), ctx.ir_loop_depth
        self.decisions, self.whiles = dict(ctx.decisions), dict(ctx.open_whiles)
        self.pending = {n: getattr(ctx, n, None) for n in ("last_call", "accumulated")}
        b.loc = loc
        if rng.step < 0:  # a descending range: count up, index = start + step * k
            start, rng = rng, range(0, len(rng), 1)
        else:
            start = None
        lb, ub, step = (b.const_index(v) for v in (rng.start, rng.stop, rng.step))
        body = Block(arg_types=[IndexType()])
        iv = body.args[0]
        if self.targets[0].isidentifier() and self.targets[0] != "_":
            iv.name_hint = self.targets[0]
        loop = self.loop = scf.ForOp(lb, ub, step, [], Region([body]))
        loop.attributes["nki.range"] = StringAttr(self.kind)
        b.loop_ranges[iv] = (rng.start, rng.stop, rng.step)
        b.emit(loop, verify=False)
        ctx.block_loop[body] = key
        ctx.open_loops.append(key)
        ctx.ir_loop_depth += 1
        b.block = body
        index = Index.of(iv) if start is None else Index.of(iv).scale(start.step).add(start.start)
        return LoopIndex(index, frozenset((key,)))

    def _close(self) -> None:
        """The body finished one (symbolic) iteration: check it, terminate the body."""
        ctx, key = self.ctx, self.key
        b = ctx.b
        body = self.loop.body.block
        b.block = self.saved
        ctx.ir_loop_depth -= 1
        ctx.open_loops.pop()
        loc = key_loc(key)
        after = self.frame.f_locals
        why = _carried_change(self.before, after, self.carried) or \
            _mutation(self.fp_before, after, self.targets)
        if why is not None:
            if ctx.mode == "roll":
                raise NKISyntaxError(f"this loop cannot stay rolled: {why} (loops are forced "
                                     f"rolled by NKI_MLIR_LOOPS=roll)", loc)
            raise Retrace({key: why})
        b.loc = loc
        with b.at(body):
            b.emit(scf.YieldOp(), verify=False)
        self.loop.verify_()
        ctx.decide(key, "rolled", f"{self.kind} loop, {len(self.rng)} iterations in one body")
        self._release()

    def _release(self) -> None:
        """Drop what only a retry of this loop reads (:mod:`.loop_retry`: the frame, the
        locals and their fingerprint, the trace state from before the loop): once the body
        passed its check, the ``for`` over this loop ends and can no longer be retried.
        Kept, they held every earlier loop's state alive through the locals copies (each
        copy holds the iterators of the loops before it): an nki-library QKV trace's
        20 k loops kept 7.6 M objects, freed only by a full collection after the call."""
        self.before = self.fp_before = self.states = self.frame = None
        self.decisions = self.whiles = self.pending = None


def _dynamic(ctx, rng: DynamicRange, key: str, can_roll: bool, targets):
    if not can_roll:
        raise NKISyntaxError("break / return are not allowed in device loops (nl.dynamic_range)",
                             ctx.b.loc)
    name = targets[0] if len(targets) == 1 else "i"
    with dynamic_for(ctx, "nl.dynamic_range", rng, name,
                     f"'{name}', the induction register of nl.dynamic_range") as iv:
        yield iv
    ctx.decide(key, "rolled", "nl.dynamic_range (a device loop)")


# ------------------------------------------------------------------ while loops
def nki_while(value: Any, key: str, can_roll: bool) -> bool:
    """The condition of a rewritten ``while``: a Python truth value, or on a register
    (``while reg:``) a device ``scf.while`` whose body is the statement's body."""
    ctx = active()
    if ctx is None:
        return bool(value)
    ctx.b.loc = key_loc(key)
    state = ctx.open_whiles.get(key)
    if state is not None:  # second evaluation: the body has run once, close the loop
        del ctx.open_whiles[key]
        state.__exit__(None, None, None)
        return False
    if not isinstance(value, Register):
        return bool(value)
    if not can_roll:
        raise NKISyntaxError("break / return are not allowed in a device 'while' loop", ctx.b.loc)
    from .device_loops import register_while
    state = register_while(ctx, value)
    state.__enter__()
    ctx.open_whiles[key] = state
    return True


# ------------------------------------------------------------ change detection
def _plain_equal(a: Any, b: Any) -> bool:
    """``a == b`` for values whose equality is plain data (no tensors, no user __eq__)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (int, float, complex, str, bytes, bool, type(None), np.dtype, np.generic)):
        return bool(a == b)
    if isinstance(a, tuple) and len(a) == len(b):
        return all(x is y or _plain_equal(x, y) for x, y in zip(a, b))
    return False


def _carried_change(before: dict, after: dict, carried) -> str | None:
    for name in carried:
        old, new = before.get(name, _MISSING), after.get(name, _MISSING)
        if old is _MISSING or old is new or _plain_equal(old, new):
            continue
        return (f"the body rebinds '{name}', which the next iteration reads (a loop-carried "
                f"Python value)")
    return None


_LEAF_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
               type, NkiTensor, LoopIndex, np.dtype, np.ndarray, Register)


#: what :func:`_fingerprint` does with a value, by the first of these ``isinstance`` tests
#: that holds (the order of the original chain): a scalar, a leaf, a list / tuple, a dict, a
#: set, anything else
_SCALAR, _LEAF, _SEQ, _DICT, _SET, _OTHER = range(6)
_SCALARS = (int, float, complex, str, bytes, bool, type(None), np.generic)
#: exact built-in scalar types: their instances cannot reassign ``__class__``
_EXACT_SCALARS = frozenset((int, float, complex, str, bytes, bool, type(None)))
#: exact types of the tracer's own proxies (leaves; they define no ``__class__``): the most
#: frequent values of a kernel's variables after scalars
_EXACT_LEAVES = frozenset((NkiTensor, LoopIndex))
#: type -> (its ``__mro__`` when classified, kind): a kernel's state is mostly a few types
_KINDS: dict[type, tuple[tuple, int]] = {}


def _kind_of(obj: Any) -> int:
    """The kind of ``obj`` by ``isinstance`` (what ``__class__`` claims counts too)."""
    return (_SCALAR if isinstance(obj, _SCALARS) else _LEAF if isinstance(obj, _LEAF_TYPES)
            else _SEQ if isinstance(obj, (list, tuple)) else _DICT if isinstance(obj, dict)
            else _SET if isinstance(obj, (set, frozenset)) else _OTHER)


def _kind(obj: Any, t: type) -> int:
    """:func:`_kind_of` ``(obj)``, remembered per type: when ``obj.__class__`` is its type,
    every ``isinstance(obj, C)`` above is ``issubclass(t, C)`` (none of those classes has a
    metaclass of its own), a function of ``t`` and its bases (the entry is dropped when
    ``__bases__`` is reassigned: a new ``__mro__``)."""
    try:
        same = obj.__class__ is t
    except Exception:   # noqa: BLE001 -- an object whose __class__ cannot be read: as before
        same = False
    if not same:
        return _kind_of(obj)
    hit = _KINDS.get(t)
    mro = t.__mro__
    if hit is not None and hit[0] is mro:
        return hit[1]
    kind = _kind_of(obj)
    if len(_KINDS) >= 4096:
        _KINDS.clear()
    _KINDS[t] = (mro, kind)
    return kind


def _fingerprint(obj: Any, depth: int, memo: dict, states: list | None = None) -> Any:
    """A structural snapshot of the mutable Python state reachable from ``obj``.  With
    ``states``, each mutable object met is also appended with a shallow copy of its contents
    (what :func:`restore` puts back).  (The kind of a value is looked up per type,
    :func:`_kind`: a loop's entry and exit fingerprint every variable of the frame, ~10^6
    values per trace of a large kernel.)"""
    t = type(obj)
    if t in _EXACT_SCALARS:
        return obj
    if t in _EXACT_LEAVES:
        return ("leaf", id(obj))
    kind = _kind(obj, t)
    if kind == _SCALAR:
        return obj
    if kind == _LEAF or depth > 8:
        return ("leaf", id(obj))
    if id(obj) in memo:
        return ("ref", id(obj))
    memo[id(obj)] = obj  # keep alive: ids stay unique while fingerprinting
    d = depth + 1
    scalars = _EXACT_SCALARS    # (what the call would return at once: the value itself)
    if kind == _SEQ:
        if states is not None and isinstance(obj, list):
            states.append((obj, list, list(obj)))
        return (t.__name__, id(obj), tuple([v if type(v) in scalars else _fingerprint(v, d, memo, states) for v in obj]))
    if kind == _DICT:
        if states is not None:
            states.append((obj, dict, dict(obj)))
        return ("dict", id(obj), tuple([(k if type(k) in scalars else _fingerprint(k, d, memo, states),
                                         v if type(v) in scalars else _fingerprint(v, d, memo, states))
                                        for k, v in obj.items()]))
    if kind == _SET:
        if states is not None and isinstance(obj, set):
            states.append((obj, set, set(obj)))
        return ("set", id(obj), len(obj), frozenset(id(v) for v in obj))
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        return ("obj", id(obj), _fingerprint(state, d, memo, states))
    slots = getattr(t, "__slots__", None)
    if slots:
        names = (slots,) if isinstance(slots, str) else tuple(slots)
        if states is not None:
            states.append((obj, "slots", {n: getattr(obj, n, _MISSING) for n in names}))
        return ("slots", id(obj), tuple([_fingerprint(getattr(obj, n, None), d, memo, states)
                                         for n in names]))
    return ("leaf", id(obj))


def watched(frame: Any, names: tuple[str, ...] | None) -> frozenset[str] | None:
    """The local variables of ``frame`` a loop body can reach objects through: the
    ``names`` the body mentions, and the frame's cell and free variables (an inner
    function the body calls may change what they hold); None (every local) without
    ``names``.  Any other local holds objects the body reaches only through these or
    through globals, which the check does not see (module docstring)."""
    if names is None:
        return None
    code = frame.f_code
    return frozenset(names).union(code.co_cellvars, code.co_freevars)


def _reach(v: Any) -> tuple | None:
    """What a callable variable changes when called, for :func:`_fingerprint_locals`: a bound
    method's object (``append = acc.append``), a function's closure cells (a closure
    made elsewhere over a list the frame also holds); None for any other value."""
    t = type(v)
    if t is types.MethodType or (t is types.BuiltinMethodType and
                                 not isinstance(v.__self__, types.ModuleType)):
        return (v.__self__,)
    if t is types.FunctionType and v.__closure__:
        return closure_values(v)
    return None


def _fp_value(v: Any, memo: dict, states: list | None) -> Any:
    """A variable's fingerprint: :func:`_fingerprint`, a callable by its :func:`_reach`."""
    if type(v) in _EXACT_SCALARS:
        return v
    reach = _reach(v)
    if reach is None:
        return _fingerprint(v, 0, memo, states)
    return ("callable", id(v), tuple([_fingerprint(x, 1, memo, states) for x in reach]))


def _fingerprint_locals(frame_locals: dict, targets, states: list | None = None,
                        names: frozenset[str] | None = None) -> dict:
    """The fingerprint of every local variable (of those in ``names`` when given) but the
    loop's targets and the rewrite's own ``__nki_*`` variables (not the kernel's state)."""
    memo: dict = {}
    if names is not None:       # (few names of a large frame: look them up)
        items = [(n, frame_locals[n]) for n in names if n in frame_locals]
    else:
        items = frame_locals.items()
    return {n: _fp_value(v, memo, states) for n, v in items
            if n not in targets and not n.startswith("__nki_")}


def _mutation(fp_before: dict, after: dict, targets) -> str | None:
    memo: dict = {}
    for name, fp in fp_before.items():
        v = after.get(name, _MISSING)
        if v is _MISSING or not (isinstance(fp, tuple) and len(fp) >= 3 and fp[1] == id(v)):
            continue
        if _fp_value(v, memo, None) != fp:
            return (f"the body changes the Python object in '{name}' (a list append, an "
                    f"attribute or item assignment), which outlives the iteration")
    return None


def restore(states: list) -> None:
    """Put back the contents the objects of ``states`` (from :func:`_fingerprint`) had:
    lists, dicts (attribute dicts included), sets and ``__slots__`` values, in place, so
    that every reference to them sees the state from before the loop."""
    for obj, kind, saved in states:     # (subclasses -- OrderedDict, ... -- by their methods)
        if kind is list:
            obj[:] = saved
        elif kind is dict:
            if len(obj) != len(saved) or any(obj.get(k, _MISSING) is not v for k, v in saved.items()):
                obj.clear()
                obj.update(saved)
        elif kind is set:
            obj.clear()
            obj.update(saved)
        else:
            for n, v in saved.items():
                if v is _MISSING:
                    try:
                        object.__delattr__(obj, n)
                    except AttributeError:
                        pass
                elif getattr(obj, n, _MISSING) is not v:
                    object.__setattr__(obj, n, v)


def explain(decisions: dict[str, tuple[str, str]]) -> str:
    """The loop report: one line per source loop, ``file:line:col: rolled|unrolled: why``."""
    return "\n".join(f"{key}: {what}: {why}" for key, (what, why) in sorted(decisions.items()))


__all__ = ["nki_loop", "nki_while", "StaticRange", "explain", "NKIError"]
