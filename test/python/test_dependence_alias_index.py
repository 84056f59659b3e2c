"""The nested-pair search of the dependence analysis finds aliasing bases through an interval
index of the placements (dependence_graph._alias_finder), not a may_alias test of every pair
of bases: the edges are those of the all-pairs search, on our own kernel with placed tiles
that partly overlap, used inside and outside a loop."""
import numpy as np
from xdsl.dialects.func import FuncOp

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.compiler import parse_module
from nki_mlir.dialects.effects import RegionCache
from nki_mlir.passes import dependence_graph
from nki_mlir.passes.dependence_graph import analyze


@nki.jit
def overlapping_tiles(x):
    """128x64 fp32 tiles (256 B a partition): a, b, c disjoint, used in a loop; after it d
    straddles a and b, e sits on c (placements that share bytes at different times)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8192))
    b = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8448))
    c = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8704))
    far = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 65536))
    nisa.dma_copy(dst=far, src=x[:, 0:64])
    for i in nl.sequential_range(3):
        nisa.dma_copy(dst=a, src=x[:, i * 64:(i + 1) * 64])
        nisa.tensor_scalar(dst=b, data=a, op0=nl.multiply, operand0=2.0)
        nisa.tensor_tensor(dst=c, data1=b, data2=far, op=nl.add)
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=c)
    d = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8320))
    e = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8704))
    nisa.tensor_copy(dst=d, src=far)
    nisa.tensor_scalar(dst=e, data=d, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out[:, 192:256], src=e)
    return out


def _all_pairs(bases, regions):
    return lambda b1: [b2 for b2 in bases if regions.may_alias(b1, b2)]


def _edges(func):
    return [(e.src.index, e.dst.index, e.kind, e.role, e.level, e.distance, e.reason)
            for e in analyze(func).edges]


def test_indexed_alias_search_gives_the_all_pairs_edges(monkeypatch):
    x = np.ones((128, 256), np.float32)
    ck = nki.compile(overlapping_tiles, x, use_cache=False)
    func = next(op for op in parse_module(ck.ir("nisa")).walk() if isinstance(op, FuncOp))
    fast = _edges(func)
    monkeypatch.setattr(dependence_graph, "_alias_finder", _all_pairs)
    slow = _edges(func)
    assert fast == slow and fast


def test_alias_finder_lists_overlapping_placements_in_order():
    x = np.ones((128, 256), np.float32)
    ck = nki.compile(overlapping_tiles, x, use_cache=False)
    func = next(op for op in parse_module(ck.ir("nisa")).walk() if isinstance(op, FuncOp))
    allocs = [op.result for op in func.walk() if op.name == "nisa.alloc"]
    bases = list(func.body.blocks[0].args) + allocs
    regions = RegionCache()
    fast = dependence_graph._alias_finder(bases, regions)
    slow = _all_pairs(bases, regions)
    for b in bases:
        assert fast(b) == slow(b)
    placed = [b for b in allocs if regions.region(b) is not None]
    assert any(len(fast(b)) > 1 for b in placed)     # some placements do overlap
