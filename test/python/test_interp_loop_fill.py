"""Sentinel fills skipped before a loop (issue 20): a tile allocated just before an
``scf.for`` that runs at least once is not filled when the first iteration writes it whole
before anything can read it, and is filled otherwise (the sentinels stay observable)."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import blocks
from nki_mlir.runtime.isa_memory import written_first
from test_dma_oob_skip import load_unset as load_skippable  # t loaded by a DMA that may skip


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


# ----------------------------------------------------------------- written box by box


@nki.jit
def blocks_cover(x):
    """t [128, 128] written in 4 column blocks of 32, then copied out whole."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(4):
        nisa.dma_copy(dst=t[:, nl.ds(j * 32, 32)], src=x[:, nl.ds(j * 32, 32)])
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def blocks_overlap(x):
    """t [128, 128] written in 3 overlapping column blocks of 64 at 0, 32, 64 (a tile
    copied from x on VectorE; a sequential_range: the boxes overlap), whose union is the
    whole tile."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.sequential_range(3):
        nisa.tensor_copy(dst=t[:, nl.ds(j * 32, 64)], src=xs[:, nl.ds(j * 32, 64)])
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def blocks_gap(x):
    """t [128, 128]: the loop writes column blocks 0, 2 of 4 (step 2): blocks 1, 3 keep
    their sentinels."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        nisa.dma_copy(dst=t[:, nl.ds(j * 64, 32)], src=x[:, nl.ds(j * 64, 32)])
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def blocks_short(x):
    """t [128, 128]: the loop writes 3 column blocks of 32 of 4: the last keeps its
    sentinels."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(3):
        nisa.dma_copy(dst=t[:, nl.ds(j * 32, 32)], src=x[:, nl.ds(j * 32, 32)])
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def blocks_read_in_loop(x):
    """t [128, 128] written block by block, but each iteration first copies all of t into
    u (block j of u is then t's earlier blocks and sentinels): the fill must stay."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(4):
        nisa.tensor_copy(dst=u[:, nl.ds(j * 32, 32)], src=t[:, nl.ds(j * 32, 32)])
        nisa.dma_copy(dst=t[:, nl.ds(j * 32, 32)], src=x[:, nl.ds(j * 32, 32)])
    nisa.dma_copy(dst=out, src=u)
    return out


@nki.jit
def blocks_outer_offset(x):
    """t [128, 128] allocated in an outer loop over i, then written at column
    i * 64 + j * 32 for j in range(2): each execution of the alloc sees half of t written;
    the offset depends on the outer loop's variable, so nothing is proved (filled)."""
    out = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        for j in nl.affine_range(2):
            nisa.dma_copy(dst=t[:, nl.ds(i * 64 + j * 32, 32)],
                          src=x[:, nl.ds(i * 64 + j * 32, 32)])
        nisa.dma_copy(dst=out[:, nl.ds(i * 128, 128)], src=t)
    return out


X = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)


@pytest.mark.parametrize("kernel, name, writer", [(blocks_cover, "t", "nisa.dma_copy"),
                                                  (blocks_overlap, "t", "nisa.tensor_copy")])
def test_fill_skipped_when_the_loop_writes_the_tile_box_by_box(kernel, name, writer):
    ck = nki.compile(kernel, X, use_cache=False)
    a, plan = _alloc(ck, name)
    assert written_first(a, plan) == writer
    assert written_first(a) is None          # without the blocks: nothing proved apart
    np.testing.assert_array_equal(_plain(ck, X), X)
    np.testing.assert_array_equal(ck.run((X,), {}, mode="queues", hazards=True)[0], X)


@pytest.mark.parametrize("kernel, name, written", [
    (blocks_gap, "t", [(0, 32), (64, 96)]),
    (blocks_short, "t", [(0, 96)]),
    (blocks_read_in_loop, "t", []),
    (blocks_outer_offset, "t", [(0, 64), (192, 256)]),
])
def test_fill_kept_when_the_loop_leaves_a_gap_or_reads_first(kernel, name, written):
    ck = nki.compile(kernel, X, use_cache=False)
    a, plan = _alloc(ck, name)
    assert written_first(a, plan) is None
    y = _plain(ck, X)
    mask = np.zeros(y.shape[1], bool)
    for lo, hi in written:
        mask[lo:hi] = True
    np.testing.assert_array_equal(y[:, mask], np.tile(X, (1, y.shape[1] // 128))[:, mask])
    assert np.isnan(y[:, ~mask]).all()       # the sentinels, observable


def test_blocks_read_in_loop_still_reads_sentinels_in_every_run():
    """The fill is not skipped on a reused machine state either (a second run)."""
    ck = nki.compile(blocks_read_in_loop, X, use_cache=False)
    for _ in range(2):
        assert np.isnan(_plain(ck, X)).all()


def test_a_dma_skipping_out_of_bounds_addresses_keeps_the_fill():
    x = np.arange(8 * 4 * 16, dtype=np.float32).reshape(8, 4, 16)
    ck = nki.compile(load_skippable, x, np.array([[3]], np.int32), use_cache=False)
    a, plan = _alloc(ck, "t")
    assert written_first(a, plan) is None
    np.testing.assert_array_equal(_plain(ck, x, np.array([[3]], np.int32)), x[3])
    assert np.isnan(_plain(ck, x, np.array([[8]], np.int32))).all()   # after a load: still NaN


def _loop_over_alias(at_c):
    """c [4, 8] placed at ``at_c`` is loaded from x[:, 0:8]; t [4, 16] placed at (0, 0) is
    allocated, then a loop writes t[:, 8j:8j+8] = x[:, 8j:8j+8] and oc[:, 8j:8j+8] = c for
    j = 0, 1.  With c over t's bytes 32..63 the first iteration reads t's sentinels
    through c."""
    from test_interpreter import Kernel
    k = Kernel()
    x = k.arg("x", (4, 16))
    ot, oc = k.out("ot", (4, 16)), k.out("oc", (4, 16))
    c = k.alloc("c", (4, 8), at=at_c)
    k.dma(c, k.subview(x, [0, 0], [4, 8]))
    t = k.alloc("t", (4, 16), at=(0, 0))
    for name, value in (("c0", 0), ("c1", 1), ("c2", 2), ("c8", 8)):
        k.raw(f"%{name} = arith.constant {value} : index")
    k.raw("scf.for %j = %c0 to %c2 step %c1 {")
    k.raw("%off = arith.muli %j, %c8 : index")
    k.types["off"] = "index"
    k.dma(k.subview(t, [0, "%off"], [4, 8]), k.subview(x, [0, "%off"], [4, 8]))
    k.dma(k.subview(oc, [0, "%off"], [4, 8]), c)
    k.raw("}")
    k.dma(ot, t)
    return k.module()


def test_fill_kept_when_another_tile_in_the_loop_shares_the_bytes():
    from nki_mlir.runtime.interpreter import decode
    x = np.arange(64, dtype=np.float32).reshape(4, 16)
    for at_c, apart in (((0, 4096), True), ((0, 32), False)):
        m = _loop_over_alias(at_c)
        fop = next(op for op in m.walk() if op.name == "func.func")
        a = next(op for op in m.walk() if op.name == "nisa.alloc" and op.result.name_hint == "t")
        assert (written_first(a, blocks.plan(fop)) == "nisa.dma_copy") is apart
        ot, oc = decode(m).run([x], mode="program-order", hazards=False)
        np.testing.assert_array_equal(ot, x)
        if apart:
            np.testing.assert_array_equal(oc, np.concatenate([x[:, :8]] * 2, axis=1))
        else:       # iteration 0 reads t's sentinels through c; iteration 1 t's block 0
            assert np.isnan(oc[:, :8]).all()
            np.testing.assert_array_equal(oc[:, 8:], x[:, 8:])
