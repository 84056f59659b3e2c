"""Tensor lifetimes and tight SBUF packing in ``nisa-allocate`` (issue 14):

- an on-chip tensor is live from its first use, not from the ``nl.ndarray`` call (the
  alloc is sunk, passes/alloc_sinking.py);
- when SBUF overflows, an elementwise result is written into its dying input of the same
  type (passes/inplace.py) and tensors of <= 64 partitions are spread over their legal
  start partitions (allocate.spread_fit), before the overflow is reported;
- explicitly placed tensors (``address=``) may share bytes when their lifetimes do not
  overlap (a modular ring of tiles made up front), and are rejected when they do.

Every kernel runs with the interpreter's hazard checks on and is compared with NumPy.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import alloc_kernels as K
from nki_mlir.dialects.nisa import AllocOp
from nki_mlir.errors import NKIAllocationError
from nki_mlir.passes import allocate as A
from nki_mlir.passes.alloc_sinking import sink_allocs
from nki_mlir.passes.inplace import reuse_dying_inputs
from test_passes_alloc_schedule import allocs, parse, placement, run

SB = "#nisa.mem<sbuf>"


@pytest.fixture(autouse=True)
def hazards_on(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def tile(rng, rows=128, cols=K.F):
    return rng.standard_normal((rows, cols)).astype(np.float32)


def nisa_allocs(ck) -> dict[str, tuple[int, int]]:
    """name -> (partition, offset) of the SBUF allocs in the compiled IR."""
    out = {}
    for m in re.finditer(r'nkim.name = "(\w+)"[^}]*nkim.partition = (\d+) : i64, '
                         r'nkim.offset = (\d+) : i64', ck.ir("nisa")):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


# ------------------------------------------------------------------ first-use lifetimes


def test_tensor_made_early_is_live_from_its_first_use(rng):
    x = tile(rng)
    np.testing.assert_allclose(K.output_made_early(x), (2 * x + x) * 3, rtol=1e-6)
    ck = K.output_made_early.compile(x)
    lines = ck.ir("nisa").splitlines()
    at = next(i for i, line in enumerate(lines) if 'nkim.name = "res"' in line)
    # res is now allocated after the instructions before its first use (t2 = t1 + xs)
    assert any("tensor_tensor_arith" in line for line in lines[:at])
    assert "tensor_scalar_arith" in lines[at + 2] and "op0=multiply" in lines[at + 2]
    assert ck.manifest["memory"]["sbuf_max_live_bytes"] == 3 * 65536


def test_sinking_moves_only_past_memory_ops():
    text = f"""func.func @f(%in: memref<128x64xf32, #nisa.mem<shared_hbm>>) {{
      %zero = arith.constant 0.0 : f32
      %a = nisa.alloc {{nkim.name = "a"}} : memref<128x64xf32, {SB}>
      %b = nisa.alloc {{nkim.name = "b"}} : memref<128x64xf32, {SB}>
      %c = nisa.alloc {{nkim.name = "c"}} : memref<128x64xf32, {SB}>
      nisa.dma_copy(dst=memref<128x64xf32, {SB}> %a, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %in) engine=dma
      %one = arith.constant 1.0 : f32
      nisa.memset(dst=memref<128x64xf32, {SB}> %b, value=f32 %one) engine=vector
      nisa.release %c : memref<128x64xf32, {SB}>
      func.return }}"""
    module = parse(text)
    func = next(op for op in module.walk() if op.name == "func.func")
    assert sink_allocs(func) == 1
    names = [op.attributes["nkim.name"].data if isinstance(op, AllocOp) else op.name
             for op in func.body.block.ops]
    # a stays (its first use follows it across allocs only), b moves below the dma but
    # above the constant (pure), c (only released) keeps its place
    assert names[:7] == ["arith.constant", "a", "c", "nisa.dma_copy", "b", "arith.constant",
                         "nisa.memset"]


# ------------------------------------------------------------ spread over partitions


def test_half_partition_tiles_share_bytes_when_sbuf_is_short(rng):
    x, y = tile(rng), tile(rng)
    got = K.half_tiles(x, y)
    want = x.copy()
    want[:64] = (x[:64] + y[:64]) - x[64:] * y[64:]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    placed = nisa_allocs(K.half_tiles.compile(x, y))
    (pa, oa), (pb, ob) = placed["a"], placed["b"]
    assert {pa, pb} == {0, 64} and oa == ob      # side by side over the same bytes


def test_spread_fit_levels_the_halves():
    arena = A.arenas("trn2")["sbuf"]
    text = f"""func.func @f() {{
      %a = nisa.alloc {{nkim.name = "a"}} : memref<64x1024xf32, {SB}>
      %b = nisa.alloc {{nkim.name = "b"}} : memref<64x1024xf32, {SB}>
      %c = nisa.alloc {{nkim.name = "c"}} : memref<32x1024xf32, {SB}>
      %d = nisa.alloc {{nkim.name = "d"}} : memref<128x1024xf32, {SB}>
      nisa.release %a : memref<64x1024xf32, {SB}>
      nisa.release %b : memref<64x1024xf32, {SB}>
      nisa.release %c : memref<32x1024xf32, {SB}>
      nisa.release %d : memref<128x1024xf32, {SB}>
      func.return }}"""
    module = parse(text)
    func = next(op for op in module.walk() if op.name == "func.func")
    tensors = A._tensors(func, A.arenas("trn2"), 1)
    A.place_space(tensors, arena, "trn2", spread=True)
    got = {A.tensor_name(t): (t.region.partition, t.region.offset) for t in tensors}
    # a at partitions 0..63, b beside it, c (32 partitions) on the next free quadrant at
    # the lowest offset, d (all partitions) above all of them
    assert got == {"a": (0, 0), "b": (64, 0), "c": (0, 4096), "d": (0, 8192)}


# ---------------------------------------------------------------- in-place results


def test_result_written_into_its_dying_input_when_sbuf_is_short(rng):
    x, y, w = tile(rng), tile(rng), tile(rng)
    np.testing.assert_allclose(K.dying_input(x, y, w), 2 * x + y + w, rtol=1e-6, atol=1e-6)
    ir = K.dying_input.compile(x, y, w).ir("nisa")
    assert 'nkim.name = "u"' not in ir           # u became xs: 2x is written over x
    m = re.search(r"tensor_scalar_arith\(dst=memref<\w+, #nisa.mem<sbuf>> (%\w+), "
                  r"src=memref<\w+, #nisa.mem<sbuf>> (%\w+),", ir)
    assert m and m.group(1) == m.group(2)


def test_in_place_only_when_the_input_dies_there():
    text = f"""func.func @f(%in: memref<128x64xf32, #nisa.mem<shared_hbm>>) {{
      %two = arith.constant 2.0 : f32
      %a = nisa.alloc {{nkim.name = "a"}} : memref<128x64xf32, {SB}>
      nisa.dma_copy(dst=memref<128x64xf32, {SB}> %a, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %in) engine=dma
      %b = nisa.alloc {{nkim.name = "b"}} : memref<128x64xf32, {SB}>
      nisa.tensor_scalar_arith(dst=memref<128x64xf32, {SB}> %b, src=memref<128x64xf32, {SB}> %a, operand0=f32 %two, op0=multiply) engine=vector
      %c = nisa.alloc {{nkim.name = "c"}} : memref<128x64xf32, {SB}>
      nisa.tensor_scalar_arith(dst=memref<128x64xf32, {SB}> %c, src=memref<128x64xf32, {SB}> %b, operand0=f32 %two, op0=multiply) engine=vector
      nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %in, src=memref<128x64xf32, {SB}> %b) engine=dma
      nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %in, src=memref<128x64xf32, {SB}> %c) engine=dma
      func.return }}"""
    module = parse(text)
    func = next(op for op in module.walk() if op.name == "func.func")
    # b = 2a is a's last use: b becomes a; c = 2b is not b's last use: c keeps its alloc
    assert reuse_dying_inputs(func, "sbuf") == 1
    assert sorted(allocs(module)) == ["a", "c"]
    assert reuse_dying_inputs(func, "psum") == 0


# ------------------------------------------------------------ explicit addresses


def test_ring_of_explicit_addresses_shares_slots_over_disjoint_lifetimes(rng):
    x = tile(rng, cols=2048)
    np.testing.assert_array_equal(K.ring_of_tiles(x), x + 1)


def test_explicit_addresses_overlapping_while_live_are_rejected(rng):
    x = tile(rng, cols=2048)
    with pytest.raises(NKIAllocationError, match=r"address=\(0, 4096\) overlaps tensor") as info:
        K.ring_of_tiles_reused_late(x)
    assert "alloc_kernels.py" in str(info.value)


def test_memory_report_sweeps_match_a_per_partition_reference():
    """max_live / partition_peaks (NumPy partition ranges) give what a plain per-partition
    loop gives, for random placements, live ranges and partition ranges (also past 128)."""
    from types import SimpleNamespace as NS

    from nki_mlir.passes.effects import Region
    from nki_mlir.passes.memory_report import PARTITIONS, max_live, partition_peaks

    def reference(tensors):
        events, peak = {}, [0] * PARTITIONS
        for t in tensors:
            events.setdefault(t.live.start, []).append((+1, t))
            events.setdefault(t.live.end + 1, []).append((-1, t))
        load, best = [0] * PARTITIONS, 0
        for point in sorted(events):
            for sign, t in events[point]:
                r = t.region
                for p in range(r.partition, min(PARTITIONS, r.partition + r.partitions)):
                    load[p] += sign * r.size
            best = max(best, max(load))
        for t in tensors:
            r = t.region
            for p in range(r.partition, min(PARTITIONS, r.partition + r.partitions)):
                peak[p] = max(peak[p], r.offset + r.size)
        return best, peak

    rng = np.random.default_rng(3)
    for _ in range(50):
        tensors = []
        for _ in range(int(rng.integers(0, 40))):
            start = int(rng.integers(0, 100))
            part = int(rng.integers(0, 140))
            tensors.append(NS(live=NS(start=start, end=start + int(rng.integers(0, 30))),
                              region=Region("sbuf", part, int(rng.integers(1, 129)),
                                            int(rng.integers(0, 4096)), int(rng.integers(1, 2048)))))
        best, peak = reference(tensors)
        assert max_live(tensors) == best and partition_peaks(tensors) == peak
