"""Sentinel fills skipped before a loop (issue 20): a tile allocated just before an
``scf.for`` that runs at least once is not filled when the first iteration writes it whole
before anything can read it, and is filled otherwise (the sentinels stay observable)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import blocks
from nki_mlir.runtime.isa_memory import written_first


@nki.jit
def loop_writes_first(x):
    """t is loaded whole in the loop's first iteration, then summed into acc."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    acc = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for _ in nl.sequential_range(2):
        nisa.dma_copy(dst=t, src=x)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def loop_reads_first(x):
    """u is read in the loop before the loop writes it: its sentinels reach the output."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for _ in nl.sequential_range(1):
        v = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=v, data1=u, data2=u, op=nl.add)
        nisa.dma_copy(dst=u, src=x)
        nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def loop_writes_part(x):
    """w's first iteration writes only its first half: the second half keeps sentinels."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    w = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for _ in nl.sequential_range(1):
        nisa.dma_copy(dst=w[:, 0:32], src=x[:, 0:32])
    nisa.dma_copy(dst=out, src=w)
    return out


def _alloc(ck, name):
    from nki_mlir.compiler import parse_module
    m = parse_module(ck.ir("nisa"))
    fop = next(op for op in m.walk() if op.name == "func.func")
    a = next(op for op in m.walk() if op.name == "nisa.alloc"
             and getattr(op.attributes.get("nkim.name"), "data", None) == name)
    return a, blocks.plan(fop)


def _plain(ck, *args):
    return ck.run(args, {}, mode="program-order", hazards=False)[0]


def test_fill_skipped_when_the_loop_writes_the_tile_first():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck = nki.compile(loop_writes_first, x, use_cache=False)
    a, plan = _alloc(ck, "t")
    assert written_first(a, plan) == "nisa.dma_copy"
    np.testing.assert_array_equal(_plain(ck, x), 2 * x)
    np.testing.assert_array_equal(ck.run((x,), {}, mode="queues", hazards=True)[0], 2 * x)


def test_fill_kept_when_the_loop_reads_or_writes_part_first():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck = nki.compile(loop_reads_first, x, use_cache=False)
    a, plan = _alloc(ck, "u")
    assert written_first(a, plan) is None
    assert np.isnan(_plain(ck, x)).all()     # v: u's sentinels
    ck = nki.compile(loop_writes_part, x, use_cache=False)
    a, plan = _alloc(ck, "w")
    assert written_first(a, plan) is None
    y = _plain(ck, x)
    np.testing.assert_array_equal(y[:, :32], x[:, :32])
    assert np.isnan(y[:, 32:]).all()
