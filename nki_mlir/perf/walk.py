"""The timed run: one pass of a decoded kernel over its engine queues with a
:class:`~.timeline.Timeline` attached.

Every loop iteration is enqueued and timed.  When control flow never reads machine state
the instructions themselves are not executed (a *timing-only* run: no NumPy work, inputs
need not be real), and the instances are replayed from the decoded program's timing plan
(:mod:`.plan_walk`: loops, branches and their index arithmetic only).  A kernel whose control flow reads a register (``register_read``,
dynamic loop bounds, ``while`` conditions) is executed for real while it is timed: its
estimate then depends on the inputs, which are the caller's or, if none are given,
synthetic standard-normal arrays (said in ``Estimate.notes``).

One program instance is timed at a time: a cross-core ``core_barrier`` / ``sendrecv`` is
timed as a local fence (everything before it finishes first); the other core's progress is
not simulated (said in ``Estimate.notes``).
"""
from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from .. import dtypes
from ..dialects.instruction import is_cross_core
from .estimate import Estimate
from ..targets import TargetModel
from .plan_walk import Unwalkable, walk_plan
from .summary import summarize
from .timeline import Timeline

#: instructions that define an SSA value without reading machine state (a shared
#: program's id: only addresses depend on it, never control flow, frontend/spmd.py)
PURE_EAGER = frozenset({"nisa.register_alloc", "nisa.program_id"})


def needs_execution(program) -> bool:
    """Whether timing ``program`` needs its instructions executed (module docstring)."""
    for info in program.schedule.infos:
        if info.eager and info.op is not None and info.op.name not in PURE_EAGER:
            return True
    return False


def synthetic_inputs(program, real: bool) -> list:
    """Arguments for ``program``: standard-normal arrays (``real``) or lazily zeroed ones
    (timing-only runs read nothing), and 1 for scalar arguments."""
    rng = np.random.default_rng(0)
    out = []
    for shape, dt, space in program.arg_types:
        if space is None:
            out.append(1.0 if dt is not None and dtypes.is_float(dt) else 1)
        elif not real:
            out.append(np.zeros(shape, dtype=dt))
        elif dt.kind == "b":
            out.append(rng.standard_normal(shape) > 0)
        else:
            out.append(rng.standard_normal(shape).astype(np.float32).astype(dt))
    return out


def plan_env(program, args: Sequence | None) -> list:
    """The slot environment of a timing-only walk: the decoded constants and the scalar
    arguments (``args`` checked as :meth:`~nki_mlir.runtime.program.Program.run` does; 1
    for a scalar when no ``args`` are given); tensor slots stay empty."""
    if args is None:
        return list(_facts(program)[3])
    env = list(program._template)
    for slot, v in zip(program._arg_slots, program._check_args(list(args))):
        env[slot] = v
    return env


def _default_env(program) -> list:
    """The slot environment of a timing-only walk without arguments (:func:`plan_env`),
    made once per program: each walk gets a shallow copy (the scalars put in are immutable)."""
    env = list(program._template)
    for slot, (_, dt, space) in zip(program._arg_slots, program.arg_types):
        env[slot] = None if space is not None else \
            (np.float32(1.0) if dt is not None and dtypes.is_float(dt) else 1)
    return env


#: per program: (needs execution, has cross-core fences, schedule name, the slot environment
#: of a walk without arguments) -- static facts
_FACTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _facts(program) -> tuple[bool, bool, str, list]:
    facts = _FACTS.get(program)
    if facts is None:
        sched = program.schedule
        fences = any(info.op is not None and is_cross_core(info.op) for info in sched.infos)
        name = "in-order" if sched.in_order else "list"
        if not any(q.startswith(("tensor", "vector", "scalar", "gpsimd", "dma")) for q in sched.queues):
            name = "none (unscheduled IR: one program-order queue)"
        facts = _FACTS[program] = (needs_execution(program), fences, name, _default_env(program))
    return facts


def timed_run(program, model: TargetModel, args: Sequence | None = None, *,
              keep_slices: bool = True, throttle: bool = False, plan: bool = True,
              generated: bool = True, lazy: bool = True,
              program_ids: tuple | None = None) -> Estimate:
    """Run ``program`` once with a timeline attached and return its :class:`Estimate`.

    Args:
        program: a decoded :class:`~nki_mlir.runtime.program.Program`.
        model: the target's constants.
        args: one array per tensor argument (numbers for scalars), or None.
        keep_slices: keep every instance as a :class:`~.estimate.Slice` (for traces).
        throttle: model TensorE power throttling.
        plan: time a kernel whose control flow reads no machine state by walking its
            timing plan (:mod:`.plan_walk`); False runs its queue mode instead (the same
            records, slower; for tests).
        generated: walk the plan with its generated function (:mod:`.plan_codegen`);
            False interprets it (the same records, slower; for tests).
        lazy: compute the figures beyond the latency, instruction count and notes on
            first access (a :class:`~.estimate.LazyEstimate`, equal to the eager result).
        program_ids: the instance a program shared by its launch's instances runs as.

    Raises:
        NKITypeError / NKIRuntimeError: as :meth:`Program.run` for bad arguments or a
            faulting kernel (executed runs only).
    """
    execute, fences, schedule, env = _facts(program)
    notes = []
    if args is None and execute:
        notes.append("control flow reads machine state: timed on synthetic standard-normal "
                     "inputs (pass arrays for a data-specific estimate)")
    if fences:
        notes.append("cross-core barriers / sendrecv are timed as local fences; the other "
                     "core's progress is not simulated")
    tl = None
    if plan and not execute and program.timing_plan is not None:
        tl = Timeline(model, program.schedule.queues, throttle=throttle)
        try:
            walk_plan(program, tl, list(env) if args is None else plan_env(program, args),
                      generated)
        except Unwalkable:
            tl = None
    if tl is None:
        if args is None:
            args = synthetic_inputs(program, real=execute)
        tl = Timeline(model, program.schedule.queues, throttle=throttle)
        program.run(list(args), mode="queues", hazards=False, timer=tl, execute=execute,
                    program_ids=program_ids)
    est = summarize(tl, program.func_name, schedule, keep_slices, lazy)
    if throttle:
        notes.append("TensorE power throttling modelled")
    est.notes.extend(notes)
    return est
