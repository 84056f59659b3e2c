"""The shortcuts of the repeated timing-only estimate (issue 20) give exactly what the plain
statements give: the generated walk's booking of a DMA at the end of its engine book, the
shared book kept in locals, the latest finish found after a long fence-free walk, the
statics made from the records when first read, and the fallback note of a plan whose
instructions the summary no longer scans when none is fallback-costed."""
import random

import pytest

import nki_mlir as nki
from nki_mlir.perf import plan_codegen, plan_walk
from nki_mlir.perf.costs import FALLBACK_LABEL, _fallback, instruction_cost
from nki_mlir.perf.summary import summarize
from nki_mlir.perf.targets import target_model
from nki_mlir.perf.timeline import EngineBook, Timeline
from nki_mlir.perf.walk import plan_env

from test_perf_plan_walk import CASES


class _Lines(plan_codegen._Gen):
    """Only the statement writers of the generator."""

    def __init__(self):     # noqa: D107 -- no plan, no timeline
        self.lines = []


def _booker(ns: float):
    """The generated booking of ``ns`` ns at ``t0`` on a book held in locals, as a function
    ``(starts, ends, busy, t0) -> (start, end, busy)``."""
    g = _Lines()
    g.place_at_end(1, repr(ns), "BS", "BE", "BZ")
    src = "def book(BS, BE, BZ, t0):\n" + "\n".join(g.lines) + "\n    return start, end_v, BZ\n"
    from bisect import bisect_right
    ns_ = {"bisect_right": bisect_right}
    exec(compile(src, "<book>", "exec"), ns_)   # noqa: S102 -- the generator's own text
    return ns_["book"]


def _random_book(rng: random.Random) -> tuple[list, list]:
    """Sorted intervals that neither overlap nor touch (what EngineBook keeps)."""
    starts, ends, t = [], [], rng.choice([0.0, 5.0])
    for _ in range(rng.randrange(0, 6)):
        s = t + rng.choice([0.5, 1.0, 3.0, 10.0])
        e = s + rng.choice([0.25, 1.0, 2.0, 7.5])
        starts.append(s)
        ends.append(e)
        t = e
    return starts, ends


def test_booking_at_the_end_equals_engine_book():
    """Every start time against every kind of book: before, at and inside each interval,
    at each end, in each gap and after the last one -- the same start, end, intervals and
    busy time as EngineBook.place."""
    rng = random.Random(7)
    fast_cases = 0
    for ns in (0.25, 1.0, 2.5, 12.0):
        book = _booker(ns)
        for _ in range(200):
            starts, ends = _random_book(rng)
            times = {0.0, 100.0}
            for s, e in zip(starts, ends):
                times |= {s, e, (s + e) / 2, s - 0.1, e + 0.1, e - 0.1}
            for t0 in sorted(times):
                ref = EngineBook()
                ref.starts, ref.ends, ref.busy = list(starts), list(ends), 3.0
                want = ref.place(t0, ns)
                bs, be = list(starts), list(ends)
                got, end, busy = book(bs, be, 3.0, t0)
                assert (got, end, busy, bs, be) == (want, want + ns, ref.busy, ref.starts, ref.ends)
                fast_cases += bool(starts) and t0 >= starts[-1]
    assert fast_cases > 500


def _state(tl: Timeline) -> tuple:
    books = [(b.engines, b.starts, b.ends, b.busy) for b in tl.books]
    return (tl.start, tl.end, tl.sid, tl.pred, tl.waited, tl.qfree, tl.qlast, tl._mark,
            tl._ndma, books, tl._ramp_start, tl._tensor_end)


@pytest.mark.parametrize("latest_after", [0, 10 ** 9])
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_walk_leaves_the_interpreted_state(name, latest_after, monkeypatch):
    """The generated walk (latest finish found after the walk, or kept at every instance)
    leaves the timeline exactly as the interpreted walk does: records, queues, marks, every
    engine's book and busy time -- also where the engines stop sharing one book."""
    monkeypatch.setattr(plan_codegen, "LATEST_AFTER", latest_after)
    kernel, args = CASES[name]
    for target, schedule, throttle in (("trn2", "list", False), ("trn1", "in-order", True)):
        ck = nki.compile(kernel, *args, target=target, schedule=schedule, use_cache=False)
        prog, model = ck.program, target_model(target)
        states = []
        for generated in (False, True):
            tl = Timeline(model, prog.schedule.queues, throttle=throttle)
            res = plan_walk.resolved(prog, tl)
            fn = plan_codegen.generate(res, tl, prog.schedule.in_order, tl.throttle)
            assert fn is not None
            if generated:
                fn(tl, plan_env(prog, None), [-1] * prog.schedule.nloops,
                   [([], []) for _ in range(res.histories)])
                tl.statics_from_records()       # as walk_plan does after it
            else:
                plan_walk.walk_plan(prog, tl, plan_env(prog, None), generated=False)
            states.append((_state(tl), list(tl.statics.items())))
        assert states[0] == states[1]


def test_some_cases_split_the_shared_book():
    """The cases above include DMAs over fewer engines (the shared book splits) and plans
    without fences (LATEST_AFTER = 0: their latest finish is found after the walk)."""
    split = fence_free = False
    for kernel, args in CASES.values():
        prog = nki.compile(kernel, *args, use_cache=False).program
        tl = Timeline(target_model("trn2"), prog.schedule.queues)
        plan_walk.walk_plan(prog, tl, plan_env(prog, None), generated=False)
        split |= len({id(b) for b in tl.books}) > 1
        res = plan_walk.resolved(prog, tl)
        fence_free |= not plan_codegen._has_fence(res.plan)
    assert split and fence_free


def test_statics_from_records_in_order_of_first_timing():
    kernel, args = CASES["attention"]
    prog = nki.compile(kernel, *args, use_cache=False).program
    tl = Timeline(target_model("trn2"), prog.schedule.queues)
    plan_walk.walk_plan(prog, tl, plan_env(prog, None))
    assert list(tl.statics) == list(dict.fromkeys(tl.sid))
    assert all(tl.statics[s] is tl.rows[s] for s in tl.statics)


@pytest.mark.parametrize("generated", [False, True])
def test_fallback_note_of_a_walked_plan(generated):
    """A plan with a fallback-costed instruction still gets the note (the summary skips the
    scan only for plans with none), as the queue-mode run of the same costs does."""
    kernel, args = CASES["layernorm"]
    prog = nki.compile(kernel, *args, use_cache=False).program
    model = target_model("trn2")

    def costs(op, m):     # every matmul-free compute op of the vector queue: fallback
        c = instruction_cost(op, m)
        return _fallback(op, m, c.engine) if c.engine == "vector" else c
    notes = []
    for walk in (True, False):
        tl = Timeline(model, prog.schedule.queues, costs=costs)
        if walk:
            for _ in range(2):      # the second walk is the generated one
                tl = Timeline(model, prog.schedule.queues, costs=costs)
                plan_walk.walk_plan(prog, tl, plan_env(prog, None), generated=generated)
            assert not tl.no_fallback
        else:
            prog.run(list(args), mode="queues", hazards=False, timer=tl, execute=False)
        notes.append(summarize(tl, prog.func_name, "list", False, True).notes)
    assert notes[0] == notes[1] and FALLBACK_LABEL not in notes[0][0]
    assert notes[0][0].startswith("costed with a conservative fallback")
    tl = Timeline(model, prog.schedule.queues)
    plan_walk.walk_plan(prog, tl, plan_env(prog, None))
    assert tl.no_fallback and summarize(tl, prog.func_name, "list", False, True).notes == []


# ------------------------------------------------------------------ carried waits found once
class _Program:
    """The parts of a decoded program the walks read (a hand-made plan)."""

    def __init__(self, loops: int):
        self.schedule = type("Sched", (), {"in_order": False, "nloops": loops})()


def _op(sid: int, ns: float):
    from types import SimpleNamespace
    return SimpleNamespace(sid=sid, ns=ns, is_dma=False, tensor_mm=False)


def _walks(plan: tuple, loops: int, histories: int, env: list) -> list:
    """The timeline state of the interpreted and of the generated walk of ``plan``."""
    from nki_mlir.runtime.timing_plan import INSTR
    model = target_model("trn2")
    prog = _Program(loops)
    res = object.__new__(plan_walk.Resolved)
    res.plan, res.rows, res.histories, res.ids = plan, {}, histories, 8
    res.static, res.dynamic, res.no_fallback = 0, 0, True
    assert all(step[0] != INSTR or step[1].sid >= 0 for step in plan)
    out = []
    for generated in (False, True):
        tl = Timeline(model, ["tensor", "vector", "scalar"])
        plan_walk._RESOLVED[prog] = {None: (tl.model, tl.costs, res)}
        if generated:
            fn = plan_codegen.generate(res, tl, False, False)
            fn(tl, list(env))
        else:
            plan_walk.walk_plan(prog, tl, list(env), generated=False)
        out.append(_state(tl))
    return out


def test_carried_wait_looked_up_again_after_its_history_changes():
    """Two instructions waiting on the same history entry in one straight-line stretch
    share one lookup, unless an instruction between them records into that history: with
    a distance beyond the kept history the wait is on the oldest kept instance, which the
    recording drops."""
    from nki_mlir.runtime.timing_plan import FOR, INSTR
    slow, fast = _op(0, 100.0), _op(1, 1.0)
    far = ((0, 0, 20),)                            # (history, loop, distance)
    body = ((INSTR, fast, 1, False, (), far, -1, (), None),
            (INSTR, slow, 0, False, (), (), 0, ((0, 0),), None),   # records: drops the oldest
            (INSTR, _op(2, 1.0), 2, False, (), far, -1, (), None))
    plan = ((FOR, 0, 1, 2, 3, 0, body, False),)
    interpreted, generated = _walks(plan, 1, 1, [0, 40, 1, None])
    assert interpreted == generated
    src = plan_codegen._Gen(type("R", (), {"plan": plan, "dynamic": 0})(),
                            Timeline(target_model("trn2"), ["tensor"]), False, False).source()
    assert src.count("bisect_right(HS0") == 2


def test_carried_wait_looked_up_again_after_a_loop():
    """A wait after a loop (here never entered) is looked up again, not taken from the
    loop body's lookup."""
    from nki_mlir.runtime.timing_plan import FOR, INSTR
    near = ((0, 0, 1),)
    inner = ((INSTR, _op(0, 50.0), 0, False, (), (), 0, ((0, 0),), None),
             (INSTR, _op(1, 1.0), 1, False, (), near, -1, (), None))
    outer = ((FOR, 4, 5, 2, 6, 0, inner, False),             # range(0, 0): no trips
             (INSTR, _op(2, 1.0), 1, False, (), near, -1, (), None),
             (INSTR, _op(3, 50.0), 0, False, (), (), 0, ((0, 0),), None))
    plan = ((FOR, 0, 1, 2, 3, 1, outer, False),)
    interpreted, generated = _walks(plan, 2, 1, [0, 5, 1, None, 0, 0, None])
    assert interpreted == generated and len(interpreted[0]) == 10   # 5 trips, 2 records
