"""nisa-schedule without all-pairs tests (passes/reorder.py, conflict_index.py, straight_waits.py).

- the reorder graph built from the conflict scoreboard has the transitive closure of the
  all-pairs graph (so the list schedule is the same), checked against a direct all-pairs
  reference on kernels with shared placements, partial writes and loops;
- the straight-line waits equal the waits of the full dependence graph (list and in-order);
- the work grows linearly: pair tests per instruction stay flat as the kernel grows.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir import compiler
from nki_mlir.dialects import make_context
from nki_mlir.frontend import arg_specs, build_module
from nki_mlir.passes import dependence, reorder, schedule
from nki_mlir.passes.allocate import NisaAllocate
from nki_mlir.dialects.effects import RegionCache, enclosing_loops
from nki_mlir.passes.legalize import NkiLegalize
from nki_mlir.passes.lower_nki_to_nisa import LowerNkiToNisa


@nki.jit
def unrolled(x):
    """One tile per iteration of an unrolled loop; all tiles share one placement."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.activation(dst=t, op=nl.exp, data=t)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0 if i % 2 == 0 else 0.5)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def column_writes(x):
    """Partial writes of one tile (single and overlapping column pairs), then whole reads."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    for j in range(x.shape[1] - 1):
        w = 1 if j % 3 else 2
        nisa.tensor_scalar(dst=t[:, j:j + w], data=a[:, j:j + w], op0=nl.add, operand0=float(j))
        if j % 4 == 0:
            nisa.activation(dst=a[:, j:j + 1], op=nl.exp, data=t[:, j:j + 1])
    nisa.tensor_copy(dst=t[:, x.shape[1] - 1:x.shape[1]], src=a[:, 0:1])
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def row_rewrites(x):
    """One tile rewritten column by column in every unrolled batch, then stored whole (the
    partial writes of a later batch retire the same columns' entries of the earlier ones)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((x.shape[0], 8), x.dtype, buffer=nl.sbuf)
    for b in range(x.shape[1] // 8):
        for p in range(8):     # a constant depending on (b, p) keeps the loops unrolled
            nisa.dma_copy(dst=t[:, p:p + 1], src=x[:, b * 8 + p:b * 8 + p + 1])
            nisa.tensor_scalar(dst=t[:, p:p + 1], data=t[:, p:p + 1], op0=nl.multiply,
                               operand0=2.0 if (b + p) % 2 == 0 else 0.5)
        nisa.tensor_scalar(dst=t[0:4, 0:2], data=t[0:4, 0:2], op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[:, b * 8:(b + 1) * 8], src=t)
    return out


@nki.jit
def rolled(x):
    """A rolled affine loop (block inside a loop, general path for the waits)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        u = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.activation(dst=u, op=nl.exp, data=t)
        nisa.tensor_scalar(dst=t, data=u, op0=nl.multiply, operand0=3.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def allocated(kernel, x) -> FuncOp:
    """The function of ``kernel`` after nisa-allocate (ready for nisa-schedule)."""
    target = compiler.resolve_target(None)
    module, _ = build_module(kernel.fn, arg_specs(kernel.fn, (x,), {}), target)
    ctx = make_context()
    for p in (NkiLegalize(), LowerNkiToNisa(), NisaAllocate(target=target)):
        p.apply(ctx, module)
    return next(op for op in module.walk() if isinstance(op, FuncOp))


CASES = [(unrolled, (128 * 24, 4)), (column_writes, (128, 16)), (rolled, (128 * 4, 8))]


def _closure(preds: list[set[int]]) -> list[set[int]]:
    anc: list[set[int]] = []
    for j, ps in enumerate(preds):
        s = set()
        for p in ps:
            s |= {p} | anc[p]
        anc.append(s)
    return anc


def _all_pairs(nodes, common, regions) -> list[set[int]]:
    """The reference rule of nisa-schedule, every pair tested."""
    def conflict(a, b):
        return any((x.is_write or y.is_write) and (
            dependence.same_iteration_overlap(x.box, y.box, common) if x.base is y.base
            else regions.may_alias(x.base, y.base)) for x in a.accs for y in b.accs)
    owner = {op: n for n in nodes for op in n.op.walk()}
    out = []
    for j, n in enumerate(nodes):
        ps = {owner[v.op].index for inner in n.op.walk() for v in inner.operands
              if hasattr(v, "op") and v.op in owner and owner[v.op] is not n}
        ps |= {i for i, m in enumerate(nodes[:j])
               if n.barrier or m.barrier or (n.queues & m.queues) or (n.prints and m.prints)
               or conflict(m, n)}
        out.append(ps)
    return out


@pytest.mark.parametrize("kernel,shape", CASES + [(row_rewrites, (4, 8 * 6))])
def test_reorder_graph_has_the_all_pairs_closure(kernel, shape):
    func = allocated(kernel, np.zeros(shape, np.float32))
    queues = schedule.assign_queues(func)
    blocks = [b for op in func.walk() for r in op.regions for b in r.blocks]
    checked = 0
    for block in blocks:
        ops = [op for op in block.ops if not reorder._is_terminator(op)]
        if len(ops) < 2:
            continue
        common = list(reversed(enclosing_loops(ops[0])))
        regions = RegionCache()
        fast = [reorder._describe(op, i, queues) for i, op in enumerate(ops)]
        reorder._add_order_edges(fast, common, regions)
        ref = [reorder._describe(op, i, queues) for i, op in enumerate(ops)]
        want = _all_pairs(ref, common, regions)
        got = [n.preds for n in fast]
        assert all(p < j for j, ps in enumerate(got) for p in ps)
        assert _closure(got) == _closure(want)
        checked += 1
    assert checked


@pytest.mark.parametrize("mode", ["list", "in-order"])
@pytest.mark.parametrize("kernel,shape", CASES)
def test_fast_waits_equal_the_full_graph_waits(kernel, shape, mode):
    x = np.zeros(shape, np.float32)
    a, b = allocated(kernel, x), allocated(kernel, x)
    schedule.schedule_function(a, mode)
    schedule.schedule_function(b, mode, fast=False)
    assert compiler.print_module(a.parent_op()) == compiler.print_module(b.parent_op())


_ID = re.compile(r"nkim\.id = (\d+)")
_QUEUE = re.compile(r'nkim\.queue = "([^"]+)"')
_DEPS = re.compile(r"nkim\.deps = \[([^\]]*)\]")


def _waits_with_queue_order(text: str) -> dict[int, set[int]]:
    """Each scheduled instruction's ``nkim.id`` -> every instruction it waits for, directly
    (``nkim.deps``) or through the in-order execution of its queue, transitively."""
    direct, last = {}, {}
    for line in text.splitlines():
        m, q = _ID.search(line), _QUEUE.search(line)
        if m is None or q is None:
            continue
        n = int(m.group(1))
        d = _DEPS.search(line)
        direct[n] = {int(x.split(":")[0]) for x in d.group(1).split(",")} \
            if d and d.group(1).strip() else set()
        if q.group(1) in last:
            direct[n].add(last[q.group(1)])
        last[q.group(1)] = n
    closed: dict[int, set[int]] = {}
    for n in sorted(direct):          # deps and queue order point to earlier ids
        closed[n] = set().union(*({d} | closed.get(d, set()) for d in direct[n]))
    return closed


@pytest.mark.parametrize("mode", ["list", "in-order"])
def test_fast_waits_imply_the_full_graph_waits_on_row_rewrites(mode):
    """The straight-line fast path may leave out a wait the full graph states when another wait
    or the queue order already implies it (row_rewrites: 30 such waits); it must never miss one.
    Both schedules order the same instructions on the same queues."""
    x = np.zeros((4, 8 * 6), np.float32)
    a, b = allocated(row_rewrites, x), allocated(row_rewrites, x)
    schedule.schedule_function(a, mode)
    schedule.schedule_function(b, mode, fast=False)
    fast = _waits_with_queue_order(compiler.print_module(a.parent_op()))
    full = _waits_with_queue_order(compiler.print_module(b.parent_op()))
    assert fast.keys() == full.keys() and fast
    assert fast == full


def test_pair_tests_grow_linearly(monkeypatch):
    calls = {"n": 0}
    orig = dependence.boxes_may_overlap

    def counted(*a, **kw):
        calls["n"] += 1
        return orig(*a, **kw)
    monkeypatch.setattr(dependence, "boxes_may_overlap", counted)
    per_instruction = []
    for iters in (32, 256):
        func = allocated(unrolled, np.zeros((128 * iters, 4), np.float32))
        calls["n"] = 0
        schedule.schedule_function(func)
        per_instruction.append(calls["n"] / (4 * iters))
    assert per_instruction[1] <= 1.5 * per_instruction[0] + 1, per_instruction


def test_row_rewrites_compute():
    x = np.random.default_rng(1).standard_normal((4, 8 * 5)).astype(np.float32)
    scale = np.array([2.0 if (b + p) % 2 == 0 else 0.5 for b in range(5) for p in range(8)],
                     np.float32)
    want = x * scale
    for b in range(5):
        want[0:4, b * 8:b * 8 + 2] += 1.0
    np.testing.assert_allclose(row_rewrites(x), want, rtol=1e-6)


def test_unrolled_kernel_still_computes():
    x = np.random.default_rng(0).standard_normal((128 * 6, 4)).astype(np.float32)
    want = np.concatenate([np.exp(x[i * 128:(i + 1) * 128]) * (2.0 if i % 2 == 0 else 0.5)
                           for i in range(6)])
    np.testing.assert_allclose(unrolled(x), want, rtol=1e-5)


def test_interval_index_matches_brute_force():
    from nki_mlir.passes.interval_index import IntervalIndex
    rng = np.random.default_rng(1)
    idx, alive = IntervalIndex(), {}
    for step in range(3000):
        r = rng.random()
        if r < 0.5 or not alive:
            lo = int(rng.integers(-50, 1000))
            hi = None if rng.random() < 0.05 else lo + int(rng.integers(0, 2 ** int(rng.integers(0, 10))))
            lo = None if rng.random() < 0.03 else lo
            idx.insert(lo, hi, step, step)
            alive[step] = (lo, hi)
        elif r < 0.8:
            item = list(alive)[int(rng.integers(0, len(alive)))]
            idx.discard(item)
            del alive[item]
        else:
            qlo = int(rng.integers(-60, 1100))
            qhi = qlo + int(rng.integers(0, 300))
            qlo = None if rng.random() < 0.05 else qlo      # unbounded queries too
            qhi = None if rng.random() < 0.05 else qhi
            want = {k for k, (lo, hi) in alive.items()
                    if (lo is None or qhi is None or lo <= qhi) and (hi is None or qlo is None or hi >= qlo)}
            assert set(idx.query(qlo, qhi)) == want
        # insertion order (rank = step, nondecreasing): the newest alive item, and those
        # inserted at or after a step
        assert idx.last() == (max(alive) if alive else None)
        since = int(rng.integers(0, step + 2))
        assert idx.newer(since) == sorted(k for k in alive if k >= since)
    assert len(idx) == len(alive)
