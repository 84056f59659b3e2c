"""The timing-only walk: the timeline of a kernel from its timing plan, without running it.

When control flow never reads machine state (:func:`~.walk.needs_execution` is False), the
estimate depends only on the order in which instruction instances are enqueued.  This
walk replays that order from the decoded program's timing plan
(:mod:`nki_mlir.runtime.timing_plan`: loops, taken ``scf.if`` branches and the index
arithmetic they read) and resolves each instance's waits exactly as queue mode does
(:class:`~nki_mlir.runtime.queues.QueueRun`: ``nkim.deps`` on the latest instance,
``nkim.deps_carried`` by loop serial over the same bounded history, the in-order
predecessor), then times it with :meth:`.timeline.Timeline.place`.  Nothing is allocated
or executed and waits are record indices, not instance objects; the records are those a
queue-mode run makes.

The plan is first resolved against the target's cost rows (:class:`Resolved`: each
instruction step carries its static cost and its waits as indices), once per program,
target model and cost function, and kept with the program.
"""
from __future__ import annotations

import weakref
from bisect import bisect_right

from ..runtime import control
from ..runtime.queues import CARRIED_HISTORY
from ..runtime.timing_plan import FOR, IF, INSTR, RUN
from .costs import FALLBACK_LABEL
from .timeline import Timeline
from .unwalkable import Unwalkable

#: resolved plans per program, by (target model, cost function)
_RESOLVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Resolved:
    """A timing plan with its instruction steps resolved for one target model.

    Instruction steps become ``(INSTR, static, qi, fence, deps, carried, nid, track,
    closure)``: the :class:`~.timeline._Static` cost row, the queue index, the fence flag,
    the ``nkim.deps`` ids, ``(history index, loop, distance)`` per carried wait, the
    instruction's ``nkim.id`` (-1 if none), the history indices it records into as
    ``(history index, loop)``, and the closure of an instruction defining an SSA value.

    Attributes:
        plan: the resolved steps.
        rows: the cost rows by sid (shared with every :class:`~.timeline.Timeline` of this
            program and model).
        histories: how many ``(producer id, loop)`` histories carried waits use.
        ids: one more than the largest ``nkim.id`` referred to.
    """

    def __init__(self, program, tl: Timeline):
        sched = program.schedule
        self.rows = tl.rows
        keys: dict[tuple[int, int], int] = {}
        infos = sched.infos
        ids = [0]
        for info in infos:
            ids.extend(info.deps)
            ids.extend(c[0] for c in info.carried)
            if info.nid is not None:
                ids.append(info.nid)

        def hist(pid: int, li: int) -> int:
            return keys.setdefault((pid, li), len(keys))

        labels = set()

        def resolve(plan: tuple) -> tuple:
            out = []
            for step in plan:
                kind = step[0]
                if kind == INSTR:
                    info = infos[step[1]]
                    labels.add(tl.row(info).label)
                    carried = tuple((hist(p, li), li, d) for p, li, d in info.carried)
                    nid = info.nid if info.nid is not None else -1
                    track = tuple((hist(nid, li), li) for li in info.track) if nid >= 0 else ()
                    out.append((INSTR, tl.row(info), info.qi, info.fence, info.deps, carried,
                                nid, track, step[2]))
                elif kind == FOR:
                    out.append(step[:6] + (resolve(step[6]),) + step[7:])
                elif kind == IF:
                    out.append((IF, step[1], resolve(step[2]), resolve(step[3])))
                else:
                    out.append(step)
            return tuple(out)
        self.plan = resolve(program.timing_plan)
        #: no instruction of the plan is costed with the fallback
        self.no_fallback = FALLBACK_LABEL not in labels
        self.histories = len(keys)
        self.ids = max(ids) + 1
        #: instruction steps, and instances a walk makes when every loop with bounds known
        #: at decode time runs its trips (other loops once, the larger branch of an ``if``)
        self.static, self.dynamic = _counts(self.plan, program._template)
        self._walkers: dict[bool, object] = {}
        self._walks: dict[bool, int] = {}

    def walker(self, tl: Timeline, in_order: bool):
        """The generated walk of this plan for ``tl``'s throttle flag (:mod:`.plan_codegen`),
        or None: the plan is then interpreted.  Writing and compiling the function costs
        about as much as interpreting a few instances per instruction step, so it is made
        at the first walk when each step runs :data:`GENERATE_AT_FIRST` times or more (a
        loop-heavy kernel), else at the second walk of this plan (it is walked again)."""
        key = tl.throttle
        fn = self._walkers.get(key, False)
        if fn is not False:
            return fn
        n = self._walks[key] = self._walks.get(key, 0) + 1
        if n < 2 and self.dynamic < GENERATE_AT_FIRST * max(self.static, 1):
            return None
        from .plan_codegen import generate
        fn = self._walkers[key] = generate(self, tl, in_order, tl.throttle)
        return fn


#: dynamic instances per instruction step from which a plan's first walk is generated
GENERATE_AT_FIRST = 1000


def _counts(plan: tuple, template: list) -> tuple[int, int]:
    """``(instruction steps, estimated instances)`` of a resolved plan (see
    :attr:`Resolved.dynamic`)."""
    static = dynamic = 0
    for step in plan:
        kind = step[0]
        if kind == INSTR:
            static += 1
            dynamic += 1
        elif kind == FOR:
            s, d = _counts(step[6], template)
            trips = 1
            if not step[7]:
                lo, hi, inc = (template[i] for i in step[1:4])
                if isinstance(lo, int) and isinstance(hi, int) and isinstance(inc, int) and inc > 0:
                    trips = len(range(lo, hi, inc))
            static += s
            dynamic += trips * d
        elif kind == IF:
            s1, d1 = _counts(step[2], template)
            s2, d2 = _counts(step[3], template)
            static += s1 + s2
            dynamic += max(d1, d2)
    return static, dynamic


def resolved(program, tl: Timeline) -> Resolved:
    """The :class:`Resolved` plan of ``program`` for ``tl``'s model and cost function (made
    once, then kept with the program)."""
    per = _RESOLVED.setdefault(program, {})
    last = per.get(None)          # the last one asked for, by identity (hashing a
    if last is not None and last[0] is tl.model and last[1] is tl.costs:   # model costs more)
        r = last[2]
        tl.rows = r.rows
        return r
    key = (tl.model, tl.costs)
    r = per.get(key)
    if r is None:
        r = per[key] = Resolved(program, tl)
    else:
        tl.rows = r.rows
    per[None] = (tl.model, tl.costs, r)
    return r


def walk_plan(program, tl: Timeline, env: list, generated: bool = True) -> None:
    """Enqueue-order replay of ``program``'s timing plan into ``tl`` (module docstring).

    ``env`` is a fresh slot environment holding the scalar arguments (tensor slots are not
    read).  ``generated``: run the plan's generated walk (:mod:`.plan_codegen`) when it has
    one; False interprets the plan (the reference the generated walk is tested against).
    Raises :class:`Unwalkable` for a loop the walk does not model; errors of the index
    arithmetic propagate located at their op.
    """
    res = resolved(program, tl)
    sched = program.schedule
    fn = res.walker(tl, sched.in_order) if generated else None
    if fn is not None:
        fn(tl, env)       # fresh loop serials and carried-wait histories
        tl.statics_from_records()
        tl.no_fallback = res.no_fallback
        return
    in_order = sched.in_order
    serial = [-1] * sched.nloops
    latest = [-1] * res.ids                              # nkim.id -> its latest record
    # per (producer id, loop): the loop serials of its latest instances and their records
    history: list[tuple[list, list]] = [([], []) for _ in range(res.histories)]
    end = tl.end
    place = tl.place
    last = -1

    def walk(plan: tuple) -> None:
        nonlocal last
        for step in plan:
            kind = step[0]
            if kind == INSTR:
                _, st, qi, fence, deps, carried, nid, track, closure = step
                ready, pred = -1.0, -1
                for d in deps:
                    w = latest[d]
                    if w >= 0 and end[w] > ready:
                        ready, pred = end[w], w
                for hi, li, dist in carried:
                    hs, hr = history[hi]
                    if not hs:
                        continue
                    # the latest instance whose serial is <= the target (serials increase)
                    j = bisect_right(hs, serial[li] - dist)
                    if j:
                        w = hr[j - 1]
                    elif len(hs) >= CARRIED_HISTORY:
                        w = hr[0]   # older ones were dropped: waiting on a later one is stricter
                    else:
                        continue
                    if end[w] > ready:
                        ready, pred = end[w], w
                if in_order and last >= 0 and end[last] > ready:
                    ready, pred = end[last], last
                rec = place(st, qi, fence, ready, pred)
                if nid >= 0:
                    latest[nid] = rec
                    for hi, li in track:
                        hs, hr = history[hi]
                        s = serial[li]
                        if hs and hs[-1] == s:
                            hr[-1] = rec
                        else:
                            hs.append(s)
                            hr.append(rec)
                            if len(hs) > CARRIED_HISTORY:
                                del hs[0], hr[0]
                last = rec
                if closure is not None:
                    closure(env)
            elif kind == FOR:
                _, lb, ub, inc_slot, iv, li, body, dynamic = step
                lo, hi, inc = env[lb], env[ub], env[inc_slot]
                if inc <= 0 or (dynamic and
                                len(range(lo, hi, inc)) > control.MAX_LOOP_ITERATIONS):
                    raise Unwalkable
                for i in range(lo, hi, inc):
                    env[iv] = i
                    serial[li] += 1
                    walk(body)
            elif kind == RUN:
                step[1](env)
            else:  # IF
                walk(step[2] if step[1] is None or env[step[1]] else step[3])

    walk(res.plan)
    tl.statics_from_records()
    tl.no_fallback = res.no_fallback
