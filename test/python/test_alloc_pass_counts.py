"""nisa-allocate's work per tensor and per op: a pinned tensor is checked once (the coldest
pass after best fit only sets its region again), and the function's ops are walked once
for its allocs (clearing, sinking and live ranges share the list and the numbering)."""
from __future__ import annotations

import sys

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

import nki_mlir.passes.allocate as allocate
from nki_mlir.passes.allocate import NisaAllocate

from test_passes_alloc_schedule import SB, allocs, parse, placement, run

TEXT = f"""func.func @f() {{
  %a = nisa.alloc {{nkim.address = [32, 100]}} : memref<32x8xf32, {SB}>
  %b = nisa.alloc : memref<128x8xf32, {SB}>
  %c = nisa.alloc {{nkim.address = [64, 0]}} : memref<64x8xf32, {SB}>
  %d = nisa.alloc : memref<128x8xf32, {SB}>
  nisa.release %a : memref<32x8xf32, {SB}>
  nisa.release %b : memref<128x8xf32, {SB}>
  nisa.release %c : memref<64x8xf32, {SB}>
  nisa.release %d : memref<128x8xf32, {SB}>
  func.return }}"""


def test_pinned_tensors_checked_once(monkeypatch):
    calls = []
    real = allocate._place_pinned
    monkeypatch.setattr(allocate, "_place_pinned",
                        lambda t, *a: calls.append(t.op.result.name_hint) or real(t, *a))
    by_name = allocs(run(parse(TEXT), NisaAllocate()))
    assert sorted(calls) == ["a", "c"]
    assert placement(by_name["a"]) == (32, 100) and placement(by_name["c"]) == (64, 0)
    assert placement(by_name["b"]) == (0, 64) and placement(by_name["d"]) == (0, 192)


def test_function_walked_once(monkeypatch):
    """(Walks of the function by the placement; the pass's search for functions walks the
    module, the module verifier is no part of it.)"""
    walks = []
    real = Operation.walk

    def walk(self, **kw):
        if isinstance(self, FuncOp):
            walks.append(sys._getframe(1).f_globals["__name__"])
        return real(self, **kw)
    monkeypatch.setattr(Operation, "walk", walk)
    run(parse(TEXT), NisaAllocate())
    assert [w for w in walks if w.startswith("nki_mlir.passes")] == ["nki_mlir.passes.allocate"]


MOVES = f"""func.func @f(%x: memref<128x8xf32, #nisa.mem<shared_hbm>>) {{
  %a = nisa.alloc : memref<128x8xf32, {SB}>
  %b = nisa.alloc : memref<128x8xf32, {SB}>
  nisa.dma_copy(dst=memref<128x8xf32, {SB}> %b, src=memref<128x8xf32, #nisa.mem<shared_hbm>> %x) engine=dma
  nisa.dma_copy(dst=memref<128x8xf32, {SB}> %a, src=memref<128x8xf32, {SB}> %b) engine=dma
  nisa.dma_copy(dst=memref<128x8xf32, #nisa.mem<shared_hbm>> %x, src=memref<128x8xf32, {SB}> %a) engine=dma
  func.return }}"""


def _numberings(monkeypatch):
    import nki_mlir.passes.alloc_sinking as sinking
    from nki_mlir.passes.liveness import ProgramOrder
    made, positions = [], []
    real_of, real_pos = ProgramOrder.of.__func__, sinking._positions
    monkeypatch.setattr(ProgramOrder, "of", classmethod(lambda c, f: made.append(f) or real_of(c, f)))
    monkeypatch.setattr(sinking, "_positions", lambda b: positions.append(b) or real_pos(b))
    return made, positions


def test_one_numbering_when_no_alloc_moves(monkeypatch):
    """Sinking orders first uses by the function's numbering, which live ranges reuse."""
    made, positions = _numberings(monkeypatch)
    run(parse(TEXT), NisaAllocate())
    assert len(made) == 1 and positions == []


def test_numbered_again_after_an_alloc_moved(monkeypatch):
    made, positions = _numberings(monkeypatch)
    module = run(parse(MOVES), NisaAllocate())
    assert len(made) == 2 and positions == []
    names = [o.result.name_hint for o in module.walk() if o.name == "nisa.alloc"]
    assert names == ["b", "a"]          # %a sunk below the copy into %b


PINNED = f"""func.func @f() {{
  %a = nisa.alloc {{nkim.address = [0, 0]}} : memref<128x8xf32, {SB}>
  %c = nisa.alloc {{nkim.address = [0, 64]}} : memref<128x8xf32, {SB}>
  nisa.release %a : memref<128x8xf32, {SB}>
  nisa.release %c : memref<128x8xf32, {SB}>
  func.return }}"""


def test_no_coldest_pass_when_every_tensor_is_pinned(monkeypatch):
    passes = []
    real = allocate._try_place
    monkeypatch.setattr(allocate, "_try_place", lambda ts, arena, target, spread=False, **kw: (
        passes.append((arena.space, kw.get("coldest", False)))) or real(ts, arena, target, spread, **kw))
    by_name = allocs(run(parse(PINNED), NisaAllocate()))
    assert passes == [("sbuf", False), ("psum", False)]
    assert placement(by_name["a"]) == (0, 0) and placement(by_name["c"]) == (0, 64)
    passes.clear()
    run(parse(TEXT), NisaAllocate())        # automatic tensors too: best fit, then coldest
    assert ("sbuf", True) in passes
