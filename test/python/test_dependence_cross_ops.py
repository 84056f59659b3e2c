"""Pairs of a nested instruction with an instruction of another entry-block op come from a
scoreboard of the entry-block ops (dependence_graph._nested_pairs), not from testing every
pair: on our own kernel unrolled over its batches (an inner loop per batch, tiles sharing
their placement across batches) the pair tests grow linearly with the batches instead of
with their square, and the edges keep the transitive closure of the all-pairs edges."""
from collections import defaultdict

import numpy as np
from xdsl.dialects.func import FuncOp

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.compiler import parse_module
from nki_mlir.passes import dependence_graph
from nki_mlir.passes.dependence_graph import analyze


@nki.jit
def batches(a, w):
    """Per 128-row batch (the loop is unrolled: its body appends to ``done``) a weight tile
    loaded whole, then an inner affine loop over four column tiles."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    f = a.shape[1] // 4
    done = []
    for b in range(a.shape[0] // 128):
        wt = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=wt, src=w)
        for j in nl.affine_range(4):
            t = nl.ndarray((128, f), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[b * 128:(b + 1) * 128, j * f:(j + 1) * f])
            nisa.tensor_tensor(dst=t, data1=t, data2=wt[:, j * f:(j + 1) * f], op=nl.add)
            nisa.dma_copy(dst=out[b * 128:(b + 1) * 128, j * f:(j + 1) * f], src=t)
        done.append(b)
    return out


def _func(nb):
    a = np.arange(128 * nb * 256, dtype=np.float32).reshape(128 * nb, 256)
    w = np.ones((128, 256), np.float32)
    ck = nki.compile(batches, a, w, use_cache=False)
    np.testing.assert_array_equal(ck(a, w), a + 1.0)
    return next(op for op in parse_module(ck.ir("nisa")).walk() if isinstance(op, FuncOp))


def _count_pairs(monkeypatch, func, exhaustive):
    calls = []
    real = dependence_graph._pair

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)
    monkeypatch.setattr(dependence_graph, "_pair", counting)
    g = analyze(func, exhaustive=exhaustive)
    monkeypatch.setattr(dependence_graph, "_pair", real)
    return len(calls), g


def test_pair_tests_grow_linearly_with_unrolled_batches(monkeypatch):
    small, _ = _count_pairs(monkeypatch, _func(4), False)
    large, _ = _count_pairs(monkeypatch, _func(16), False)
    all_small, _ = _count_pairs(monkeypatch, _func(4), True)
    all_large, _ = _count_pairs(monkeypatch, _func(16), True)
    assert all_large > 12 * all_small       # every pair: the square of the batches
    assert large < 5 * small                # the scoreboard: linear (4x the batches)
    assert large < all_large / 2


def _reach(edges, n):
    succ = defaultdict(set)
    for s, d in edges:
        succ[s].add(d)
    out = [set() for _ in range(n)]
    for s in reversed(range(n)):        # edges go forward in program order
        for d in succ[s]:
            out[s] |= {d} | out[d]
    return out


def test_edges_keep_the_closure_of_all_pairs(monkeypatch):
    func = _func(6)
    _, fast = _count_pairs(monkeypatch, func, False)
    _, full = _count_pairs(monkeypatch, func, True)
    carried = lambda g: {(e.src.index, e.dst.index, e.kind, e.level, e.distance, e.reason)  # noqa: E731
                         for e in g.edges if e.level is not None}
    assert carried(fast) == carried(full)
    indep = lambda g: {(e.src.index, e.dst.index) for e in g.edges if e.level is None}  # noqa: E731
    assert indep(fast) <= indep(full) and len(indep(fast)) < len(indep(full))
    reach = _reach(indep(fast), len(fast.nodes))
    missing = [(s, d) for s, d in indep(full) if d not in reach[s]]
    assert not missing
