"""The cost model's discrete-event timeline (nki_mlir/perf/timeline.py) and the figures
built from it: hand-computed toy schedules, DMA-engine booking, loops, monotonicity,
schedule comparison, critical path and warnings."""
import os
import sys
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.perf.costs import DmaShape, InstrCost
from nki_mlir.targets import target_model
from nki_mlir.perf.summary import summarize
from nki_mlir.perf.timeline import EngineBook, Timeline

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from kernels import row_softmax, tiled_matmul  # noqa: E402

TRN2 = target_model("trn2")
BF16 = ml_dtypes.bfloat16


# ------------------------------------------------------------------ engine booking


def test_engine_book_fills_gaps_in_order():
    b = EngineBook()
    assert b.place(100.0, 50.0) == 100.0          # [100, 150)
    assert b.place(0.0, 60.0) == 0.0              # fits before: [0, 60)
    assert b.place(40.0, 30.0) == 60.0            # [60, 90): after the first, before 100
    assert b.place(70.0, 20.0) == 150.0           # the 10 ns gap [90, 100) is too small
    assert b.place(90.0, 10.0) == 90.0            # exactly fills it
    assert (b.starts, b.ends) == ([0.0], [170.0])  # touching intervals merged
    assert b.busy == pytest.approx(170.0)
    b.prune(170.0)
    assert b.starts == [] and b.place(0.0, 5.0) == 0.0


# ------------------------------------------------------- a toy schedule by hand

class _Op:
    """A stand-in op: a name and no source location."""

    def __init__(self, name):
        self.name = name
        self.location = None


def _cost(engine, ns, dma=None, flops=0.0):
    return InstrCost(engine=engine, cycles=0.0, ns=ns, flops=flops,
                     peak_flops_per_ns=(2 * 128 * 128 * 2.4 if flops else 0.0),
                     dma=dma, label="", moving_free=None)


class _Toy:
    """Drives a Timeline the way runtime.queues does: instances in enqueue order with waits."""

    def __init__(self, queues, costs):
        self.queues = queues
        self.costs = costs  # op name -> InstrCost
        self.tl = Timeline(TRN2, queues, costs=lambda op, model: self.costs[op.name])
        self.ops: dict[str, int] = {}

    def run(self, name, queue, waits=(), fence=False):
        sid = self.ops.setdefault(name, len(self.ops))
        info = SimpleNamespace(sid=sid, op=_Op(name), qi=self.queues.index(queue), fence=fence)
        inst = SimpleNamespace(info=info, t=0.0, rec=-1)
        self.tl.add(inst, list(waits))
        return inst


def test_two_engine_toy_schedule_by_hand():
    # vector: a(100) -> b(100, waits s1) ; scalar: s1(250, waits a) -> s2(50)
    toy = _Toy(["vector", "scalar"], {"a": _cost("vector", 100.0), "b": _cost("vector", 100.0),
                                      "s1": _cost("scalar", 250.0), "s2": _cost("scalar", 50.0),
                                      "c": _cost("vector", 30.0)})
    a = toy.run("a", "vector")
    s1 = toy.run("s1", "scalar", [a])
    b = toy.run("b", "vector", [s1])
    s2 = toy.run("s2", "scalar")
    c = toy.run("c", "vector")
    tl = toy.tl
    # a [0,100); s1 waits a: [100,350); b waits s1: [350,450); s2 follows s1: [350,400);
    # c follows b on the vector queue: [450,480)
    assert list(zip(tl.start, tl.end)) == [(0, 100), (100, 350), (350, 450), (350, 400), (450, 480)]
    assert (a.t, s1.t, b.t, s2.t, c.t) == (100, 350, 450, 400, 480)
    est = summarize(tl, "toy", "list")
    assert est.latency_ns == 480
    vec, sca = est.track("vector"), est.track("scalar")
    assert (vec.busy_ns, vec.instructions, sca.busy_ns) == (230, 3, 300)
    assert vec.busy_pct == pytest.approx(100 * 230 / 480)
    # critical path: c <- b (queue) <- s1 (wait) <- a (wait)
    assert {r.name: r.time_ns for r in est.critical_path} == {"s1": 250, "a": 100, "b": 100, "c": 30}
    assert est.critical_path[0].name == "s1" and est.critical_path[0].pct == pytest.approx(100 * 250 / 480)
    sl = est.slices
    assert sl[2].waited_on is not None and sl[2].waited_on.startswith("s1 @ ? (scalar)")
    assert sl[3].waited_on is None and sl[4].waited_on is None
    # roofline terms: each engine's total work; the max is the bound
    assert est.bounds["vector"] == 230 and est.bounds["scalar"] == 300
    assert est.bound_kind == "scalar" and est.ratio == pytest.approx(480 / 300)


def test_toy_fence_orders_everything():
    toy = _Toy(["vector", "scalar"], {"a": _cost("vector", 100.0), "s": _cost("scalar", 300.0),
                                      "f": _cost("vector", 10.0), "b": _cost("scalar", 5.0)})
    toy.run("a", "vector")
    toy.run("s", "scalar")
    f = toy.run("f", "vector", fence=True)   # after everything before it: starts at 300
    b = toy.run("b", "scalar")               # after the fence
    assert (f.t, b.t) == (310, 315)


def test_toy_dma_fixed_latency_and_engine_sharing():
    fixed = TRN2.dma_fixed_ns
    # one row per engine 0..15 (128 partitions, 8 per engine): 16 shares
    big = DmaShape(total_bytes=128 * 2048, hbm_bytes=128 * 2048, rows=128, row_bytes=2048,
                   run_bytes=2048, start_partition=0, transpose=False, sbuf_to_sbuf=False)
    toy = _Toy(["dma0", "dma1", "vector"], {"ld": _cost("dma", 0.0, big), "ld2": _cost("dma", 0.0, big),
                                             "v": _cost("vector", 100.0)})
    from nki_mlir.perf.costs import dma_engine_shares
    share = max(ns for _, ns in dma_engine_shares(TRN2, big))
    ld = toy.run("ld", "dma0")
    ld_b = toy.run("ld", "dma0")          # same queue, no waits: streams right after
    ld2 = toy.run("ld2", "dma1")          # another queue: its shares wait for the engines
    v = toy.run("v", "vector", [ld])
    tl = toy.tl
    assert tl.start[0] == pytest.approx(fixed) and ld.t == pytest.approx(fixed + share)
    assert tl.start[1] == pytest.approx(fixed + share) and ld_b.t == pytest.approx(fixed + 2 * share)
    assert tl.start[2] == pytest.approx(fixed + 2 * share) and ld2.t == pytest.approx(fixed + 3 * share)
    assert v.t == pytest.approx(fixed + share + 100)
    est = summarize(tl, "toy", "list")
    assert est.dma_count == 3 and est.dma_bytes == 3 * 128 * 2048
    assert est.bounds["dma"] == pytest.approx(3 * share)
    assert est.track("vector").wait_dma_ns == pytest.approx(fixed + share)


# ------------------------------------------------------------------- real kernels


def test_matmul_estimate_figures_are_consistent():
    a = np.zeros((512, 512), BF16)
    b = np.zeros((512, 512), BF16)
    est = nki.compile(tiled_matmul, a, b, use_cache=False).estimate()
    # m: 4 tiles, n: 1, k: 4 -> 16 x (2 loads + matmul), 4 x (copy + store)
    assert est.instructions == len(est.slices) == 16 * 3 + 4 * 2
    assert est.matmul_flops == 2 * 512 ** 3
    assert est.dma_count == 16 * 2 + 4
    assert est.dma_bytes == est.hbm_bytes == 16 * (128 * 128 * 2 + 128 * 512 * 2) + 4 * 128 * 512 * 4
    assert est.latency_ns >= est.bound_ns > 0 and est.ratio >= 1.0
    assert est.mfu_pct == pytest.approx(100 * est.bounds["matmul"] / est.latency_ns)
    assert est.mbu_pct == pytest.approx(100 * est.hbm_bytes / (est.latency_ns * TRN2.hbm_bytes_per_ns))
    per_track = {}
    for s in est.slices:
        per_track.setdefault(s.track, []).append(s)
        assert s.end_ns >= s.start_ns >= 0 and s.end_ns <= est.latency_ns + 1e-6
    for track, sl in per_track.items():   # one queue runs one instruction at a time
        sl.sort(key=lambda s: s.start_ns)
        assert all(x.end_ns <= y.start_ns + 1e-6 for x, y in zip(sl, sl[1:])), track
    assert {t.track for t in est.tracks} == set(per_track)
    assert est.critical_path and est.critical_path[0].loc.endswith(tuple(f"kernels.py:{n}" for n in range(20, 40)))
    kinds = {w.kind for w in est.warnings}
    assert "small_dma" in kinds  # the [128,128] bf16 lhs tiles move 256 bytes per partition


@pytest.mark.parametrize("target", ["trn1", "trn2", "trn3"])
def test_latency_is_monotone_in_problem_size(target):
    lat = []
    for m in (128, 256, 512, 1024):
        a = np.zeros((256, m), BF16)
        b = np.zeros((256, 512), BF16)
        lat.append(nki.compile(tiled_matmul, a, b, use_cache=False, target=target)
                   .estimate(keep_slices=False).latency_ns)
    assert all(x < y for x, y in zip(lat, lat[1:])), lat
    sm = [nki.compile(row_softmax, np.zeros((r, 512), np.float32), use_cache=False, target=target)
          .estimate(keep_slices=False).latency_ns for r in (128, 256, 512, 1024)]
    assert all(x < y for x, y in zip(sm, sm[1:])), sm


def test_list_schedule_beats_in_order_and_targets_differ():
    x = np.zeros((1024, 1024), np.float32)
    ours = nki.compile(row_softmax, x, use_cache=False).estimate(keep_slices=False)
    base = nki.compile(row_softmax, x, use_cache=False, schedule="in-order").estimate(keep_slices=False)
    assert base.schedule == "in-order" and ours.schedule == "list"
    assert base.latency_ns > 1.2 * ours.latency_ns
    assert base.bound_ns == pytest.approx(ours.bound_ns)  # same work, other order
    trn1 = nki.compile(row_softmax, x, use_cache=False, target="trn1").estimate(keep_slices=False)
    assert trn1.target == "trn1" and trn1.latency_ns != ours.latency_ns


def test_throttle_slows_a_cold_tensor_engine():
    a = np.zeros((256, 256), BF16)
    b = np.zeros((256, 512), BF16)
    ck = nki.compile(tiled_matmul, a, b, use_cache=False)
    cool = ck.estimate()
    hot = ck.estimate(throttle=True)
    ramp = TRN2.throttle_ramp_ns
    mm_cool = [s for s in cool.slices if s.name == "nisa.matmul"]
    mm_hot = [s for s in hot.slices if s.name == "nisa.matmul"]
    first = mm_hot[0].start_ns
    for c, h in zip(mm_cool, mm_hot):  # half rate during the ramp after an idle TensorE, then full
        assert h.dur_ns == pytest.approx(c.dur_ns * (2 if h.start_ns < first + ramp else 1))
    assert mm_hot[-1].start_ns >= first + ramp  # both regimes are exercised
    assert hot.latency_ns > cool.latency_ns
    assert "throttling" in " ".join(hot.notes) and not cool.notes
    assert ck.estimate() is cool  # cached: the estimate does not depend on the data


@nki.jit
def _dynamic_trip(x, n):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    r = nisa.register_alloc(n)
    for _ in nl.dynamic_range(r):
        nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_data_dependent_control_flow_is_executed_and_said():
    x = np.zeros((128, 512), np.float32)
    ck = nki.compile(_dynamic_trip, x, 3, use_cache=False)
    est = ck.estimate(keep_slices=False)
    assert est.track("scalar").instructions == 3
    assert any("synthetic" in n for n in est.notes)


@nki.jit
def _narrow_matmul(a_t, b):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    lhs = nl.ndarray((128, 128), dtype=a_t.dtype, buffer=nl.sbuf)
    rhs = nl.ndarray((128, 64), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lhs, src=a_t)
    nisa.dma_copy(dst=rhs, src=b)
    acc = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
    res = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_warnings_name_the_source_line():
    est = nki.compile(_narrow_matmul, np.zeros((128, 128), BF16), np.zeros((128, 64), BF16),
                      use_cache=False).estimate()
    by_kind = {}
    for w in est.warnings:
        by_kind.setdefault(w.kind, []).append(w)
    [mm] = by_kind["small_moving"]
    assert "moving free size of 64 (< 128)" in mm.message and "nc_matmul" in mm.message
    assert mm.loc.endswith(f"test_perf_timeline.py:{_narrow_matmul.fn.__code__.co_firstlineno + 8}")
    # 128 B (rhs) and 256 B (lhs) per partition loads, 256 B store: all small
    assert len(by_kind["small_dma"]) == 3
    assert all("bytes per partition (< 2048" in w.message for w in by_kind["small_dma"])


def test_cross_core_kernels_are_timed_per_core(recwarn):
    sys.path.insert(0, os.path.dirname(__file__))
    import spmd_kernels as K
    x = np.random.default_rng(0).random((256, 512)).astype(np.float32)
    fn = nki.benchmark(K.lnc_exchange)
    fn[2](x)   # two program instances on two cores, with a core_barrier between them
    lat = fn.benchmark_result.nc_latency.get_latency_percentile(50)
    compiled = K.lnc_exchange[2].compile_with((x,), {})[0]
    ests = [c.estimate(keep_slices=False) for c in compiled]
    assert lat == pytest.approx(max(e.latency_us for e in ests))  # the cores run in parallel
    assert all(any("local fences" in n for n in e.notes) for e in ests)


def test_shared_engine_books_book_exactly_as_one_book_per_engine():
    """Engines share a book while their bookings are equal (timeline.EngineBook): random DMAs
    over random partition ranges and queues give every engine exactly the intervals of an
    engine booked on its own."""
    from nki_mlir.perf.costs import dma_engine_shares
    rng = np.random.default_rng(7)
    queues = ["dma0", "dma1", "dma2"]
    costs, shapes = {}, []
    for i in range(12):
        rows = int(rng.choice([128, 64, 8, 24, 1]))
        start = int(rng.integers(0, 128 - rows + 1))
        rb = int(rng.choice([512, 2048, 8192]))
        shapes.append(DmaShape(rows * rb, rows * rb, rows, rb, rb, start, False, False))
        costs[f"d{i}"] = _cost("dma", 0.0, shapes[-1])
    toy = _Toy(queues, costs)
    alone = [EngineBook() for _ in range(TRN2.dma_engines)]
    qfree = {q: 0.0 for q in queues}
    prev = []
    for _ in range(300):
        i = int(rng.integers(0, len(shapes)))
        q = queues[int(rng.integers(0, 3))]
        waits = [prev[int(rng.integers(0, len(prev)))]] if prev and rng.random() < 0.3 else []
        inst = toy.run(f"d{i}", q, waits)
        ready = max([w.t for w in waits], default=0.0) + TRN2.dma_fixed_ns
        t0 = max(qfree[q], ready)
        start = end = None
        for eng, ns in dma_engine_shares(TRN2, shapes[i]):
            s = alone[eng].place(t0, ns)
            start = s if start is None else min(start, s)
            end = s + ns if end is None else max(end, s + ns)
        qfree[q] = end if end is not None else t0
        assert inst.t == pytest.approx(qfree[q], abs=0) and toy.tl.end[-1] == qfree[q]
        prev.append(inst)
    for eng in range(TRN2.dma_engines):
        book, own = toy.tl.books[eng], alone[eng]
        n = len(book.starts)     # the timeline forgets intervals before every queue's end
        assert book.busy == own.busy and n > 0
        assert (book.starts, book.ends) == (own.starts[len(own.starts) - n:], own.ends[len(own.ends) - n:])
    assert len({id(b) for b in toy.tl.books}) > 1      # the books did split
