"""Trace a loop again in place when its body needs an unrolled loop (no retrace from the top).

A rolled loop whose body turns out to need a loop unrolled (:class:`~.context.Retrace`:
its index became a Python value, a tile made in a nested loop escaped it, ...) used to
restart the whole kernel's trace.  A kernel with many such loops was traced once per loop,
each trace as long as the kernel.  The rewritten ``for`` (:mod:`.loop_rewrite`) now catches
the ``Retrace`` itself and, when that is exact, traces the statement again at once with the
named loops unrolled:

1. :func:`may_retry`: the loop was rolled in this trace (a :class:`~.loops.RolledLoop`),
   and every loop the ``Retrace`` names is this one or a loop first entered inside this
   attempt (an enclosing loop must be unrolled by an enclosing ``for``);
2. the rewritten code puts back every local variable the body binds (saved before the
   ``for``: a variable the body rebinds, or first binds, has its value from before the loop);
3. :func:`retry`: every Python object reachable from the variables the body names (and the
   frame's cell and free variables) is as it was before the loop (the same structural
   fingerprint the rolled loop itself is checked with, see :mod:`.loops`).  Objects the
   attempt changed (a list it appended to, an allocator object whose counters it advanced
   -- nki-library's ``SbufManager``) are put back from the shallow copies of their
   contents taken when the loop was entered
   (:func:`~.loops.restore`); only when the fingerprint still differs after that does the
   ``Retrace`` go on to the enclosing ``for`` or to the whole-kernel retrace of
   :mod:`.trace_build` (which used to happen for every such loop: one trace of the whole
   kernel per loop whose body changes an object).  The attempt's ``scf.for`` is erased with everything
   traced into it, the trace state (insertion block, open loops, loop decisions) is put
   back and the named loops join the trace's unrolled set; the statement then runs again
   with the iterator :func:`~.loops.nki_loop` gives now.

So the Python state when the statement runs again is the one it first ran with, as in a
retrace from the top; the loops entered before the failing one keep the form they were
traced in (rolled loops that passed their checks: either form computes the same).
"""
from __future__ import annotations

from typing import Any

from .context import Retrace, active
from .loops import RolledLoop, _mutation, nki_loop, restore

#: a local variable unbound before the ``for`` (see loop_rewrite.py)
MISSING: Any = object()


def may_retry(it: Any, exc: BaseException | None) -> bool:
    """``exc`` (raised by the ``for`` over ``it``) is a ``Retrace`` this loop can handle;
    ``exc`` None: the ``for`` over ``it`` may be retried at all (a rolled loop, not started:
    the rewritten code then saves the variables its body binds)."""
    if exc is None:
        return type(it) is RolledLoop and it.step == 0
    if type(exc) is not Retrace or type(it) is not RolledLoop or it.step == 0:
        return False
    ctx = active()
    if ctx is None or ctx is not it.ctx:
        return False
    return all(k == it.key or ctx.entered.get(k, -1) > it.seq for k in exc.loops)


def retry(it: RolledLoop, exc: Retrace) -> Any:
    """The iterator to run the ``for`` again with (the local variables are already put
    back); raises ``exc`` again when a Python object the body reached was changed."""
    ctx = it.ctx
    if _mutation(it.fp_before, it.frame.f_locals, it.targets) is not None:
        restore(it.states)      # the objects the attempt changed, as they were
        if _mutation(it.fp_before, it.frame.f_locals, it.targets) is not None:
            raise exc

    b = ctx.b
    loop = it.loop
    if loop is not None:
        blocks = {id(blk) for op in loop.walk() for r in op.regions for blk in r.blocks}
        for key in [k for k in b._consts if k[0] in blocks]:
            del b._consts[key]
        loop.detach()
        loop.erase(safe_erase=False)
        ctx.erased.append(loop)
    b.block = it.saved
    del ctx.open_loops[it.open_depth:]
    ctx.ir_loop_depth = it.ir_depth
    ctx.decisions.clear()
    ctx.decisions.update(it.decisions)
    ctx.open_whiles.clear()
    ctx.open_whiles.update(it.whiles)
    for name, v in it.pending.items():
        if getattr(ctx, name, None) is not v:
            setattr(ctx, name, v)
    ctx.unroll.update({k: why for k, why in exc.loops.items() if k not in ctx.unroll})
    iterable, key, can_roll, carried, targets, names = it.args
    return nki_loop(iterable, key, can_roll, carried, targets, names, frame=it.frame)
