"""The timing plan: the control-flow skeleton of a decoded function, for timing-only walks.

A timing-only run of the cost model (:mod:`nki_mlir.perf.walk`: control flow never reads
machine state) needs, of the whole kernel, only the order in which instruction instances
are enqueued: which loops run how often, which ``scf.if`` branches are taken, and the
index arithmetic those depend on.  The decoder records that skeleton next to the closures,
one tuple per block (``Program.timing_plan``), with these steps:

- ``(INSTR, sid, closure)``: an instance of instruction ``sid`` (its
  :class:`~.queues.Info` in ``Schedule.infos``); ``closure`` is the instruction's own
  closure when it defines an SSA value (it runs after being timed), else None;
- ``(RUN, closure, out, ins)``: an ``arith`` closure computing slot ``out`` from the slots
  ``ins`` (kept only when a loop bound or a condition depends on it, :func:`finish`);
- ``(FOR, lb, ub, step, iv, loop, body, dynamic)``: an ``scf.for`` (bound slots, the
  induction slot, the loop's serial index, the body's plan, whether the bounds are not
  decode-time constants);
- ``(IF, cond, then, else)``: an ``scf.if`` (``cond`` None when folded: ``then`` is then
  the branch taken).

Views, ``nisa.alloc`` and ``nisa.release`` are left out (a timing-only run reads no memory);
a block holding any other op with a run-time closure (``scf.while``, ...) has no plan.
"""
from __future__ import annotations

from xdsl.ir import Operation

INSTR, RUN, FOR, IF = range(4)
#: :func:`step`'s answer for an op the plan cannot walk
UNSUPPORTED = object()
#: ops whose closures a timing-only walk skips (they only bind tensor slots)
SKIPPED = frozenset({"memref.subview", "memref.reinterpret_cast", "nisa.view_dtype",
                     "nisa.alloc", "nisa.release"})


def instruction(info, closure) -> tuple:
    """The step of an instruction (``info``: its :class:`.queues.Info`; ``closure``: the
    unwrapped one)."""
    return (INSTR, info.sid, closure if info.eager else None)


def step(dec, op: Operation, closure) -> tuple | object | None:
    """The step of non-instruction ``op`` (after its closure was built by the
    :class:`.decoder.Decoder` ``dec``), None for nothing
    to do, or :data:`UNSUPPORTED`."""
    name = op.name
    if name == "scf.for":
        body = dec.plans.get(op.body.block)
        if body is None:
            return UNSUPPORTED
        consts = dec.consts
        dynamic = not all(v in consts for v in (op.lb, op.ub, op.step))
        return (FOR, dec.slot_of[op.lb], dec.slot_of[op.ub], dec.slot_of[op.step],
                dec.slot_of[op.body.block.args[0]], dec.schedule.loops[op], body, dynamic)
    if name == "scf.if":
        then = dec.plans.get(op.true_region.block)
        other = dec.plans.get(op.false_region.block, ()) if op.false_region.blocks else ()
        if then is None or other is None:
            return UNSUPPORTED
        if op.cond in dec.consts:
            return (IF, None, then if dec.consts[op.cond] else other, ())
        return (IF, dec.slot_of[op.cond], then, other)
    if closure is None or name in SKIPPED:
        return None
    if name.startswith("arith.") and len(op.results) == 1:
        return (RUN, closure, dec.slot_of[op.results[0]],
                tuple(dec.slot_of[v] for v in op.operands if v in dec.slot_of))
    return UNSUPPORTED


def finish(plan: tuple | None) -> tuple | None:
    """``plan`` without the ``RUN`` steps no loop bound or ``scf.if`` condition depends on
    (the index arithmetic of views, which a timing-only walk skips)."""
    if plan is None:
        return None
    needed: set[int] = set()
    runs: list[tuple] = []

    def scan(p):
        for s in p:
            if s[0] == FOR:
                needed.update(s[1:4])
                scan(s[6])
            elif s[0] == IF:
                if s[1] is not None:
                    needed.add(s[1])
                scan(s[2])
                scan(s[3])
            elif s[0] == RUN:
                runs.append(s)
    scan(plan)
    grew = True
    while grew:
        grew = False
        for s in runs:
            if s[2] in needed and not needed.issuperset(s[3]):
                needed.update(s[3])
                grew = True

    def keep(p):
        out = []
        for s in p:
            if s[0] == FOR:
                s = s[:6] + (keep(s[6]),) + s[7:]
            elif s[0] == IF:
                s = (IF, s[1], keep(s[2]), keep(s[3]))
            elif s[0] == RUN and s[2] not in needed:
                continue
            out.append(s)
        return tuple(out)
    return keep(plan)
