"""The interpreter's hazard checks (runtime/hazards.py), one hand-scheduled kernel per kind.

Each faulty kernel has a fixed twin (the right edge, placement or initialisation) that runs
clean; every report is an NKIHazardError located at the later instruction whose message
names the other one with file:line and its source text.
"""
from __future__ import annotations

import numpy as np
import pytest

from nki_mlir.errors import NKIHazardError, NKIRuntimeError
from test_queues import X, Sched, line_of, raw_kernel


def where(tmp_path, needle, nth=0) -> str:
    return f"kernel.mlir:{line_of(tmp_path, needle, nth)}"


def test_race_names_both_instructions_and_their_source(tmp_path):
    prog = raw_kernel(edge=False).build(tmp_path)
    with pytest.raises(NKIHazardError) as exc:
        prog.run([X.copy()], hazards=True)
    e = exc.value
    assert e.loc.line == line_of(tmp_path, "nisa.tensor_scalar_arith")  # the later instruction
    msg = str(e)
    assert "race" in msg and "queue 'vector'" in msg and "queue 'dma0'" in msg
    assert where(tmp_path, "nisa.dma_copy") in msg            # the other one, file:line
    assert "(`nisa.dma_copy(dst=" in msg                       # ... and its source text
    raw_kernel(edge=True).build(tmp_path).run([X.copy()], hazards=True)


def test_transitive_ordering_is_not_a_race(tmp_path):
    """vector waits on dma0; dma1 waits on vector only: dma1 is still ordered after dma0."""
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 64))
    k.dma(a, x)
    k.at(0, "dma0")
    k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(1.0), op0="add")
    k.at(1, "vector", deps=[0])
    k.ins("tensor_tensor_arith", engine="gpsimd", dst=a, lhs=a, rhs=b, op="add")
    k.at(2, "gpsimd", deps=[1])   # reads/writes a (dma0) and b (vector): one wait suffices
    k.dma(o, a)
    k.at(3, "dma1", deps=[2])
    (out,) = k.build(tmp_path).run([X.copy()], hazards=True)
    np.testing.assert_array_equal(out, 2 * X + 1)


def disjoint_columns_kernel(overlap: bool):
    """Two queues write columns [0,2) and [2,4) (or [1,4) if ``overlap``) of one tile, unordered."""
    k = Sched()
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    lo = k.subview(a, [0, 0], [128, 2])
    hi = k.subview(a, [0, 1 if overlap else 2], [128, 3 if overlap else 2])
    k.ins("memset", engine="vector", dst=lo, value=k.const(1.0))
    k.at(0, "vector")
    k.ins("memset", engine="gpsimd", dst=hi, value=k.const(2.0))
    k.at(1, "gpsimd")
    k.dma(o, a)
    k.at(2, "dma0", deps=[0, 1])
    return k


def test_unordered_writes_to_disjoint_bytes_are_fine_overlapping_ones_race(tmp_path):
    (out,) = disjoint_columns_kernel(False).build(tmp_path).run([], hazards=True)
    np.testing.assert_array_equal(out[0], [1, 1, 2, 2])
    with pytest.raises(NKIHazardError, match="race: it writes 'dst'"):
        disjoint_columns_kernel(True).build(tmp_path).run([], hazards=True)


def test_strided_views_interleaving_bytes_do_not_race(tmp_path):
    """Even and odd columns (stepped views: bounding boxes overlap, bytes do not)."""
    k = Sched()
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    even = k.subview(a, [0, 0], [128, 2], strides=[1, 2])
    odd = k.subview(a, [0, 1], [128, 2], strides=[1, 2])
    k.ins("memset", engine="vector", dst=even, value=k.const(1.0))
    k.at(0, "vector")
    k.ins("memset", engine="gpsimd", dst=odd, value=k.const(2.0))
    k.at(1, "gpsimd")
    k.dma(o, a)
    k.at(2, "dma0", deps=[0, 1])
    (out,) = k.build(tmp_path).run([], hazards=True)
    np.testing.assert_array_equal(out[0], [1, 2, 1, 2])


def overlap_kernel(offset_b: int):
    """a (bytes [0,16)) is loaded and used after b is placed at ``offset_b``."""
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    k.dma(a, x)
    k.at(0, "dma0")
    b = k.alloc("b", (128, 4), at=(0, offset_b))
    k.ins("memset", engine="vector", dst=b, value=k.const(5.0))
    k.at(1, "vector", deps=[0])  # ordered: no race, only the placement is wrong
    k.ins("tensor_tensor_arith", engine="vector", dst=b, lhs=a, rhs=b, op="add")
    k.at(2, "vector", deps=[0])
    k.dma(o, b)
    k.at(3, "dma1", deps=[2])
    return k


def test_overlap_of_live_buffers(tmp_path):
    (out,) = overlap_kernel(64).build(tmp_path).run([X.copy()], hazards=True)
    np.testing.assert_array_equal(out, X + 5)
    prog = overlap_kernel(8).build(tmp_path)
    with pytest.raises(NKIHazardError, match="overlap of live buffers") as exc:
        prog.run([X.copy()], hazards=True)
    msg = str(exc.value)
    assert exc.value.loc.line == line_of(tmp_path, "nisa.tensor_tensor_arith")
    assert where(tmp_path, "%b = nisa.alloc") in msg and where(tmp_path, "%a = nisa.alloc") in msg
    assert "'%a'" in msg


def uninit_kernel(init: bool, store_rows: int = 128):
    """a: columns [0, 3) (or all) set; b = a * 2; dst <- b[:store_rows]; then a reduction of b."""
    k = Sched()
    o = k.out("out", (store_rows, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 64))
    part = k.subview(a, [0, 0], [128, 4 if init else 3])
    k.ins("memset", engine="gpsimd", dst=part, value=k.const(1.0))
    k.at(0, "gpsimd")
    k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(2.0), op0="multiply")
    k.at(1, "vector", deps=[0])
    k.dma(o, k.subview(b, [0, 0], [store_rows, 4]) if store_rows < 128 else b)
    k.at(2, "dma0", deps=[1])
    return k


def test_read_of_never_written_sbuf(tmp_path):
    (out,) = uninit_kernel(True).build(tmp_path).run([], hazards=True)
    np.testing.assert_array_equal(out, np.full((128, 4), 2.0, np.float32))
    with pytest.raises(NKIHazardError, match="never written") as exc:
        uninit_kernel(False).build(tmp_path).run([], hazards=True)  # column 3 is never written
    # the multiply carries the garbage column into b; storing it to HBM is the fault
    assert exc.value.loc.line == line_of(tmp_path, "nisa.dma_copy")
    assert where(tmp_path, "%b = nisa.alloc") in str(exc.value)


def test_garbage_computed_but_never_stored_is_fine(tmp_path):
    """Like a ragged tile: rows never loaded go through elementwise ops but are not stored."""
    k = Sched()
    x = k.arg("x", (100, 4))
    o = k.out("out", (100, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 64))
    k.dma(k.subview(a, [0, 0], [100, 4]), x)
    k.at(0, "dma0")
    k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(1.0), op0="add")
    k.at(1, "vector", deps=[0])
    k.dma(o, k.subview(b, [0, 0], [100, 4]))
    k.at(2, "dma1", deps=[1])
    prog = k.build(tmp_path)
    (out,) = prog.run([X[:100].copy()], hazards=True)
    np.testing.assert_array_equal(out, X[:100] + 1)


def test_alloc_clears_written_bytes_of_the_previous_occupant(tmp_path):
    """The second alloc of the same bytes starts unwritten, even though they hold data."""
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    k.dma(a, x)
    k.at(0, "dma0")
    k.dma(o, a)
    k.at(1, "dma1", deps=[0])
    c = k.alloc("c", (128, 4), at=(0, 0))
    k.dma(o, c)
    k.at(2, "dma1", deps=[1])
    with pytest.raises(NKIHazardError, match="never written") as exc:
        k.build(tmp_path).run([X.copy()], hazards=True)
    assert where(tmp_path, "%c = nisa.alloc") in str(exc.value)


def psum_kernel(mode: str):
    """bias copied into the PSUM accumulator (vector), then a matmul with ``mode``."""
    k = Sched()
    xa, ya, bias = k.arg("xT", (4, 8)), k.arg("y", (4, 16)), k.arg("bias", (8, 16))
    o = k.out("out", (8, 16))
    sx, sy = k.alloc("sx", (4, 8), at=(0, 0)), k.alloc("sy", (4, 16), at=(0, 64))
    sb = k.alloc("sb", (8, 16), at=(0, 256))
    ps = k.alloc("ps", (8, 16), space="psum", at=(0, 0))
    k.dma(sx, xa)
    k.at(0, "dma0")
    k.dma(sy, ya)
    k.at(1, "dma1")
    k.dma(sb, bias)
    k.at(2, "dma2")
    k.ins("tensor_copy", engine="vector", dst=ps, src=sb)
    k.at(3, "vector", deps=[2])
    k.ins("matmul", engine="tensor", dst=ps, stationary=sx, moving=sy, is_transpose="false",
          psum_accumulate_flags=mode)
    k.at(4, "tensor", deps=[0, 1, 3])
    k.ins("tensor_copy", engine="vector", dst=sb, src=ps)
    k.at(5, "vector", deps=[4])
    k.dma(o, sb)
    k.at(6, "dma0", deps=[5])
    return k


def test_matmul_accumulating_onto_psum_a_non_matmul_initialised(tmp_path):
    rng = np.random.default_rng(5)
    x, y, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (4, 16), (8, 16)))
    (out,) = psum_kernel("accumulate").build(tmp_path).run([x, y, b], hazards=True)
    np.testing.assert_allclose(out, b + x.T @ y, rtol=1e-5, atol=1e-5)
    with pytest.raises(NKIHazardError, match="non-matmul instruction") as exc:
        psum_kernel("auto").build(tmp_path).run([x, y, b], hazards=True)
    assert exc.value.loc.line == line_of(tmp_path, "nisa.matmul")
    assert where(tmp_path, "nisa.tensor_copy") in str(exc.value)


def test_out_of_bounds_hbm_stays_a_located_runtime_error(tmp_path):
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%zero = arith.constant 0 : index")
    k.raw("scf.for %i = %zero to %c1 step %c1 {")  # a runtime offset: checked when it runs
    k.dma(a, k.subview(x, ["%i", 2], [128, 4]))
    k.at(0, "dma0")
    k.raw("}")
    k.dma(o, a)
    k.at(1, "dma1", deps=[0])
    with pytest.raises(NKIRuntimeError, match="out-of-bounds") as exc:
        k.build(tmp_path).run([X.copy()], hazards=True)
    assert exc.value.loc is not None


def hbm_rows_kernel(overlap: bool):
    """Two DMA queues copy two tiles into rows [0, 64) and [64, 128) (or [32, 96) if
    ``overlap``) of the argument ``x``, unordered; then ``x`` rows go out."""
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (64, 4), at=(0, 0))
    b = k.alloc("b", (64, 4), at=(0, 64))
    k.ins("memset", engine="vector", dst=a, value=k.const(1.0))
    k.at(0, "vector")
    k.ins("memset", engine="gpsimd", dst=b, value=k.const(2.0))
    k.at(1, "gpsimd")
    k.dma(k.subview(x, [0, 0], [64, 4]), a)
    k.at(2, "dma0", deps=[0])
    k.dma(k.subview(x, [32 if overlap else 64, 0], [64, 4]), b)
    k.at(3, "dma1", deps=[1])
    c = k.alloc("c", (128, 4), at=(0, 128))
    k.dma(c, x)
    k.at(4, "dma2", deps=[2, 3])
    k.dma(o, c)
    k.at(5, "dma0", deps=[4])
    return k


def test_checks_kept_across_runs_follow_the_caller_arrays(tmp_path):
    """The hazard state kept across runs (runtime/hazards.py: the footprints of views of the
    state's memories, and while they live the geometry of views of the caller's arrays and
    their roots' addresses) gives each run the verdict of a fresh check: the same array passed
    again, a new one, a new one at a dead one's address."""
    ok = hbm_rows_kernel(False).build(tmp_path)
    (tmp_path / "bad").mkdir()
    bad = hbm_rows_kernel(True).build(tmp_path / "bad")
    x = X.copy()
    want = np.concatenate([np.ones((64, 4), np.float32), 2 * np.ones((64, 4), np.float32)])
    for arr in (x, x, X.copy(), x, X.copy(), X.copy()):
        (out,) = ok.run([arr], hazards=True)
        np.testing.assert_array_equal(out, want)
        with pytest.raises(NKIHazardError, match="race: it writes 'dst'"):
            bad.run([arr], hazards=True)
