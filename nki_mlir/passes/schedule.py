"""``nisa-schedule``: engine queues and cross-queue dependencies (design.md section 5, step 5).

A first schedule keeps program order.  Every ``nisa`` instruction gets

- ``nkim.id`` (i64): its position in program pre-order over the whole function, loop
  bodies included (one id per static instruction; ids restart at 0 in each function);
- ``nkim.queue`` (string): the engine queue that runs it -- ``dma`` for every
  ``nisa.dma_copy``, else its ``engine`` (``tensor``, ``vector``, ``scalar``,
  ``gpsimd``; an ``unknown`` engine gets the instruction's natural engine);
- ``nkim.deps`` (array of i64): ids of instructions on *other* queues it must wait for
  (a semaphore wait in hardware), because of a RAW, WAR or WAW dependence on memory
  that may overlap (:func:`~.effects.may_alias`: the same base buffer, or placed
  on-chip regions that overlap).  Instructions of one queue run in order, so
  same-queue dependences need no edge.

Loops are handled conservatively: an instruction also depends on the conflicting
instructions that follow it in any loop body around it (they ran in the previous
iteration).  Edge lists stay small because, per queue, only the nearest conflicting
instruction is kept: the latest one before it, plus for each enclosing loop level the
latest one after it in that level -- dropped when the one before it runs inside that
loop anyway (it then runs after the previous iteration's).  Semantics of an edge on an
instruction in a loop: wait for the *most recent* execution of that instruction, if
any.  Loops are assumed to run at least once.

``with nl.no_reorder():`` (the ``nisa.no_reorder_begin`` / ``nisa.no_reorder_end`` markers,
``dialects/isa_control.py``): the instructions between the markers keep program order
across queues too -- each one also waits for the instruction before it in the span when
that one runs on another queue (an ordering edge, no data needed).  Any future reordering
mode must not move instructions into, out of or within a span.

Registers (``memref<1xi32, #nisa.mem<reg>>``) are memory like any other buffer here:
``register_move`` / ``register_load`` write them, ``register_read`` / ``register_store``
read them, so runtime-loop bounds read from registers are ordered after the writes.
Runtime loops (``scf.for`` with ``nki.range = "dynamic"``, ``scf.while``) are loops like the
others; a loop that runs zero times leaves its instructions unexecuted, and an edge on
one of them waits for its most recent execution, if any.

The module gets ``nkim.schedule = "program-order"``.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ..dialects import nisa
from ..dialects.isa_control import no_reorder_groups
from .effects import Access, accesses, enclosing_loops, is_instruction, may_alias

MODES = ("program-order",)

#: the engine an instruction runs on when its ``engine`` is ``unknown``
NATURAL_ENGINE = {
    nisa.MatmulOp: "tensor", nisa.NcTransposeOp: "tensor", nisa.ActivationOp: "scalar",
    nisa.IotaOp: "gpsimd", nisa.AffineSelectOp: "gpsimd",
}


def queue_of(op: Operation) -> str:
    """The engine queue of an instruction: ``dma`` for DMA, else its engine."""
    if isinstance(op, nisa.DmaCopyOp):
        return "dma"
    engine = op.properties.get("engine")
    name = engine.data if isinstance(engine, StringAttr) else "unknown"
    return NATURAL_ENGINE.get(type(op), "vector") if name == "unknown" else name


@dataclass
class Instr:
    """One instruction in program order: its id, queue, memory accesses and loops."""

    op: Operation
    id: int
    queue: str
    accesses: list[Access]
    loops: list[Operation]          # enclosing loops, innermost first


@dataclass
class Program:
    """The instructions of a function and the per-buffer index of who touches what."""

    instrs: list[Instr] = field(default_factory=list)
    touches: dict[SSAValue, list[tuple[Instr, bool]]] = field(default_factory=lambda: defaultdict(list))
    span: dict[Operation, tuple[int, int]] = field(default_factory=dict)   # loop -> (first, last) id
    aliases: dict[SSAValue, list[SSAValue]] = field(default_factory=dict)
    groups: dict[Operation, Operation] = field(default_factory=dict)    # op -> no_reorder span
    previous: dict[int, Instr] = field(default_factory=dict)            # id -> previous in span

    @classmethod
    def of(cls, func: FuncOp) -> Program:
        prog = cls()
        prog.groups = no_reorder_groups(func)
        last: dict[Operation, Instr] = {}
        for op in func.walk():
            if is_instruction(op):
                prog._add(op)
                group = prog.groups.get(op)
                if group is not None:
                    if group in last:
                        prog.previous[prog.instrs[-1].id] = last[group]
                    last[group] = prog.instrs[-1]
        bases = list(prog.touches)
        prog.aliases = {a: [b for b in bases if may_alias(a, b)] for a in bases}
        return prog

    def _add(self, op: Operation) -> None:
        instr = Instr(op, len(self.instrs), queue_of(op), list(accesses(op)), enclosing_loops(op))
        self.instrs.append(instr)
        for a in instr.accesses:
            self.touches[a.base].append((instr, a.is_write))
        for loop in instr.loops:
            first, _ = self.span.get(loop, (instr.id, instr.id))
            self.span[loop] = (first, instr.id)


def conflicting(prog: Program, instr: Instr) -> list[Instr]:
    """Instructions on other queues that touch memory ``instr`` touches, one of them writing."""
    found: dict[int, Instr] = {}
    for acc in instr.accesses:
        for base in prog.aliases[acc.base]:
            for other, writes in prog.touches[base]:
                if other.queue != instr.queue and (writes or acc.is_write):
                    found[other.id] = other
    return list(found.values())


def dependencies(prog: Program, instr: Instr) -> list[int]:
    """The ids ``instr`` waits for: per queue the nearest conflict before it and, per loop
    level around it, the nearest loop-carried conflict after it (see the module docstring)."""
    before: dict[str, int] = {}
    after: dict[tuple[str, int], int] = {}
    for other in conflicting(prog, instr):
        if other.id < instr.id:
            before[other.queue] = max(before.get(other.queue, -1), other.id)
            continue
        level = _loop_level(prog, instr, other.id)
        if level is not None:
            key = (other.queue, level)
            after[key] = max(after.get(key, -1), other.id)
    deps = set(before.values())
    prev = prog.previous.get(instr.id)  # no_reorder: program order across queues
    if prev is not None and prev.queue != instr.queue:
        deps.add(prev.id)
    for (queue, level), jid in after.items():
        first, _ = prog.span[instr.loops[level]]
        if before.get(queue, -1) < first:
            deps.add(jid)
    return sorted(deps)


def _loop_level(prog: Program, instr: Instr, later_id: int) -> int | None:
    """The innermost enclosing loop of ``instr`` that also holds ``later_id`` (its index)."""
    for level, loop in enumerate(instr.loops):
        if later_id <= prog.span[loop][1]:
            return level
    return None


def schedule_function(func: FuncOp) -> None:
    """Annotate the instructions of ``func`` with ``nkim.id/queue/deps``."""
    prog = Program.of(func)
    for instr in prog.instrs:
        instr.op.attributes["nkim.id"] = IntegerAttr(instr.id, i64)
        instr.op.attributes["nkim.queue"] = StringAttr(instr.queue)
        instr.op.attributes["nkim.deps"] = ArrayAttr([IntegerAttr(d, i64)
                                                      for d in dependencies(prog, instr)])


@dataclass(frozen=True)
class NisaSchedule(ModulePass):
    """Assign engine queues and cross-queue dependency edges.  Option: ``mode=program-order``."""

    name = "nisa-schedule"
    mode: str = "program-order"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in MODES:
            raise ValueError(f"nisa-schedule: unknown mode '{self.mode}' "
                             f"(expected one of: {', '.join(MODES)})")
        for func in op.walk():
            if isinstance(func, FuncOp):
                schedule_function(func)
        op.attributes["nkim.schedule"] = StringAttr(self.mode)
