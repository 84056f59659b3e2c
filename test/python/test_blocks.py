"""Blocks of placed SBUF / PSUM tensors (nki_mlir/runtime/blocks.py): the allocs that may share
bytes share one array (aliasing as in the whole memory), the others get contiguous storage."""
from __future__ import annotations

import numpy as np
import pytest

from nki_mlir.dialects import make_context
from nki_mlir.errors import NKIHazardError
from nki_mlir.runtime import blocks
from nki_mlir.runtime.interpreter import decode
from nki_mlir.runtime.memory import Memory
from test_interpreter import Kernel

X = np.arange(512, dtype=np.float32).reshape(128, 4)


def _allocs_and_plan(k: Kernel):
    module = k.module()
    prog = decode(module)
    fop = next(op for op in module.ops if op.name == "func.func")
    allocs = {op.result.name_hint: op for op in fop.walk() if op.name == "nisa.alloc"}
    return prog, allocs, blocks.plan(fop)


def overlap_kernel():
    """a = x at bytes [0, 16) of each partition; b placed at bytes [8, 24): b's first two
    columns are a's last two; c apart at [64, 80)."""
    k = Kernel()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    o2 = k.out("out2", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 8))
    c = k.alloc("c", (128, 4), at=(0, 64))
    k.dma(a, x)
    k.dma(c, x)
    k.dma(o, b)
    k.dma(o2, c)
    return k


def test_overlapping_allocs_share_a_block_and_their_bytes():
    prog, allocs, plan = _allocs_and_plan(overlap_kernel())
    assert plan[(allocs["a"], 0)] == plan[(allocs["b"], 0)] == (0, 24)
    assert plan[(allocs["c"], 0)] == (64, 80)
    out, out2 = prog.run([X.copy()], mode="program-order")
    np.testing.assert_array_equal(out[:, :2], X[:, 2:])    # written through a, read through b
    assert np.isnan(out[:, 2:]).all()                      # b's own bytes: the sentinel
    np.testing.assert_array_equal(out2, X)
    with pytest.raises(NKIHazardError, match="overlap of live buffers"):
        prog.run([X.copy()], hazards=True)      # b placed on a's bytes while a is in use


def test_copies_of_a_rotating_alloc_get_separate_blocks():
    from xdsl.parser import Parser
    text = """builtin.module {
  func.func @f(%i: index) {
    %t = nisa.alloc copy(%i) {nkim.partition = 0 : i64, nkim.offset = 4096 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 2048 : i64} : memref<128x512xf32, #nisa.mem<sbuf>>
    %u = nisa.alloc {nkim.partition = 0 : i64, nkim.offset = 7000 : i64} : memref<128x4xf32, #nisa.mem<sbuf>>
    func.return
  }
}"""
    m = Parser(make_context(), text).parse_module()
    fop = next(op for op in m.walk() if op.name == "func.func")
    t, u = [op for op in fop.walk() if op.name == "nisa.alloc"]
    plan = blocks.plan(fop)
    assert plan[(t, 0)] == (4096, 6144)                  # alone: the tile's own width
    assert plan[(t, 1)] == plan[(u, 0)] == (6144, 8192)  # u lies inside copy 1


def test_block_views_are_contiguous_and_checked():
    mem = Memory("trn2")
    a, _ = mem.block_region("sbuf", 0, 4096, (128, 512), np.dtype(np.float32), (4096, 6144))
    assert a.flags.c_contiguous
    b, fb = mem.block_region("psum", 0, 2048, (128, 512), np.dtype(np.float32), (2048, 4096))
    assert b.flags.c_contiguous and fb.shape == (128, 512) and fb.dtype == np.uint32
    from nki_mlir.runtime.footprint import root_of
    assert mem.owns(root_of(a)) and mem.owns(root_of(fb)) and not mem.owns(np.zeros(3))
    assert mem.peek("sbuf", slice(0, 1), 4096, 4100).shape == (1, 4)
    a[0, 0] = 1.5
    assert mem.peek("sbuf", slice(0, 1), 4096, 4100).view(np.float32)[0, 0] == 1.5
