"""The cost model's timing-only walk (nki_mlir/perf/plan_walk.py over the decoder's
runtime/timing_plan.py), interpreted and as its generated function (perf/plan_codegen.py),
gives exactly the records and the Estimate of a queue-mode run with a timeline attached, on
loops, masks (scf.if), scalar arguments, both schedules, both targets, TensorE throttling
and cross-core fences."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.perf import plan_codegen, plan_walk
from nki_mlir.perf.targets import target_model
from nki_mlir.perf.walk import needs_execution, timed_run
from nki_mlir.runtime import timing_plan

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
sys.path.insert(0, os.path.dirname(__file__))
import kernels as EX  # noqa: E402
import kernels_for_tests as KT  # noqa: E402
import mask_kernels as MK  # noqa: E402

BF16 = ml_dtypes.bfloat16
RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "tiled_matmul": (EX.tiled_matmul, (_f32(512, 256).astype(BF16), _f32(512, 1024).astype(BF16))),
    # 272 DMAs: the DMA-engine books are pruned (every 256 DMAs) during the walk
    "tiled_matmul_big": (EX.tiled_matmul, (_f32(1024, 1024).astype(BF16),
                                           _f32(1024, 1024).astype(BF16))),
    "row_softmax": (EX.row_softmax, (_f32(512, 512),)),
    "layernorm": (EX.layernorm, (_f32(256, 512), _f32(1, 512), _f32(1, 512))),
    "attention": (EX.attention, (_f32(256, 128), _f32(256, 128), _f32(256, 128))),
    "scaled_rows": (KT.scaled_rows, (_f32(128, 1024), 3.0, 2)),
    "ragged_2d": (MK.ragged_2d, (_f32(300, 600),)),
    "ragged_rows": (MK.ragged_rows, (_f32(300, 256), _f32(300, 256))),
}


def _resolved(prog) -> list:
    """The resolved plans of ``prog`` (plan_walk._RESOLVED; key None: the last one used)."""
    return [r for k, r in plan_walk._RESOLVED[prog].items() if k is not None]


def _same(ck, **kw):
    prog = ck.program
    model = target_model(ck.target)
    first = timed_run(prog, model, plan=True, **kw)    # interpreted unless loop-heavy
    fast = timed_run(prog, model, plan=True, **kw)     # generated from the second walk on
    assert first == fast
    walked = timed_run(prog, model, plan=True, generated=False, **kw)
    slow = timed_run(prog, model, plan=False, **kw)
    assert fast == walked == slow    # every figure, slice, critical-path row and warning
    walkers = [w for r in _resolved(prog) for w in r._walkers.values()]
    assert walkers and None not in walkers          # the generated walk was the one timed
    return fast


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("schedule", ["list", "in-order"])
def test_plan_walk_equals_queue_mode(name, schedule):
    kernel, args = CASES[name]
    for target in ("trn1", "trn2"):
        ck = nki.compile(kernel, *args, target=target, schedule=schedule, use_cache=False)
        assert ck.program.timing_plan is not None and not needs_execution(ck.program)
        est = _same(ck)
        assert est.instructions > 0
        _same(ck, throttle=True)
        _same(ck, keep_slices=False)


def test_plan_keeps_only_the_arithmetic_control_flow_reads():
    """Index arithmetic feeding views is dropped; a guard's condition is kept (ragged_2d's
    masks are scf.if on the loop indices)."""
    ck = nki.compile(MK.ragged_2d, _f32(300, 600), use_cache=False)
    kinds = []

    def scan(plan):
        for s in plan:
            kinds.append(s[0])
            if s[0] == timing_plan.FOR:
                scan(s[6])
            elif s[0] == timing_plan.IF:
                scan(s[2])
                scan(s[3])
    scan(ck.program.timing_plan)
    assert timing_plan.IF in kinds and timing_plan.RUN in kinds
    ck2 = nki.compile(EX.layernorm, _f32(256, 512), _f32(1, 512), _f32(1, 512), use_cache=False)
    kinds.clear()
    scan(ck2.program.timing_plan)
    assert timing_plan.RUN not in kinds      # only the views' offsets used arithmetic


def test_arguments_given_are_checked():
    """Arguments passed to a timing-only walk are checked as a run checks them."""
    x = _f32(512, 512)
    ck = nki.compile(EX.row_softmax, x, use_cache=False)
    model = target_model(ck.target)
    assert timed_run(ck.program, model, [x]) == timed_run(ck.program, model, [x], plan=False)
    with pytest.raises(nki.NKIError, match="shape"):
        timed_run(ck.program, model, [x[:128]])


def test_cross_core_fences_walk_as_queue_mode():
    import spmd_kernels as SK
    x = RNG.random((256, 512)).astype(np.float32)
    for ck in SK.lnc_exchange[2].compile_with((x,), {})[0]:   # (one program: both instances)
        assert ck.program.timing_plan is not None
        est = _same(ck, program_ids=(0,))
        assert any("local fences" in n for n in est.notes)


def test_data_dependent_kernels_still_execute():
    """Control flow reading a register: no timing-only walk (the kernel runs)."""
    import test_perf_timeline as T
    ck = nki.compile(T._dynamic_trip, np.zeros((128, 512), np.float32), 3, use_cache=False)
    assert needs_execution(ck.program)
    assert ck.estimate(keep_slices=False).track("scalar").instructions == 3


def test_plans_too_big_to_generate_are_interpreted(monkeypatch):
    """A plan past plan_codegen.MAX_STEPS has no generated walk: the interpreted walk times
    it, with the same result."""
    kernel, args = CASES["ragged_2d"]
    ck = nki.compile(kernel, *args, use_cache=False)
    model = target_model(ck.target)
    want = timed_run(ck.program, model, plan=False)
    monkeypatch.setattr(plan_codegen, "MAX_STEPS", 3)
    ck2 = nki.compile(kernel, *args, use_cache=False)
    assert timed_run(ck2.program, model) == want
    assert timed_run(ck2.program, model) == want
    assert _resolved(ck2.program)[0]._walkers == {False: None}


@pytest.mark.parametrize("name", sorted(CASES))
def test_per_track_loop_equals_numpy(name, monkeypatch):
    """Small timelines are summed per track by a Python loop (summary._per_track_loop): the
    same busy times, counts and DMA waits, bit for bit, as the NumPy path."""
    from nki_mlir.perf import summary
    from nki_mlir.perf.timeline import Timeline
    from nki_mlir.perf.walk import plan_env
    kernel, args = CASES[name]
    ck = nki.compile(kernel, *args, schedule="in-order", use_cache=False)
    tl = Timeline(target_model(ck.target), ck.program.schedule.queues)
    plan_walk.walk_plan(ck.program, tl, plan_env(ck.program, None))
    loop = summary._per_track_loop(tl)
    monkeypatch.setattr(summary, "SMALL_TIMELINE", -1)
    assert summary._per_track(tl) == loop
    assert loop[0] and (name != "tiled_matmul" or loop[2])   # some DMA waits are summed


def _critical_reference(tl, latency):
    """summary._critical_path as first written (dicts in chain order): the reference."""
    from nki_mlir.perf.summary import CRITICAL_ROWS
    time, hits = {}, {}
    rec = tl.maxend_rec
    while rec >= 0:
        s = tl.sid[rec]
        time[s] = time.get(s, 0.0) + (tl.end[rec] - tl.start[rec])
        hits[s] = hits.get(s, 0) + 1
        rec = tl.pred[rec]
    return [(s, t, hits[s]) for s, t in sorted(time.items(), key=lambda kv: -kv[1])[:CRITICAL_ROWS]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_critical_path_equals_reference(name):
    from nki_mlir.perf import summary
    from nki_mlir.perf.timeline import Timeline
    from nki_mlir.perf.walk import plan_env
    kernel, args = CASES[name]
    ck = nki.compile(kernel, *args, use_cache=False)
    tl = Timeline(target_model(ck.target), ck.program.schedule.queues)
    plan_walk.walk_plan(ck.program, tl, plan_env(ck.program, None))
    rows = summary._critical_path(tl, tl.maxend)
    want = _critical_reference(tl, tl.maxend)
    assert rows and [(r.time_ns, r.instances) for r in rows] == [(t, n) for _, t, n in want]
    assert [r.loc for r in rows] == [tl.statics[s].loc for s, _, _ in want]
