"""The frontend emits one view op per (source, offsets, sizes, strides, type, source location)
in a block: a kernel that re-derives a tile's view (an unrolled loop, a helper called again)
shares the earlier op (nki_mlir.frontend.builder.IRBuilder._view)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def _copy_twice_one_line(a):
    out = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for _ in (0, 1, 2):         # a tuple: traced three times, the same line each time
        nisa.dma_copy(dst=t[0:64, 0:32], src=a[64:128, 32:64])
    nisa.dma_copy(dst=out, src=t[0:64, 0:32])
    return out


def _copy_twice_two_lines(a):
    out = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[0:64, 0:32], src=a[64:128, 32:64])
    nisa.dma_copy(dst=t[0:64, 0:32], src=a[64:128, 32:64])
    nisa.dma_copy(dst=out, src=t[0:64, 0:32])
    return out


def _views(ck) -> int:
    text = ck.own_ir("nki")
    return text.count("memref.subview") + text.count("memref.reinterpret_cast")


def test_a_view_made_again_at_the_same_line_is_the_same_op():
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    one = nki.compile(nki.jit(_copy_twice_one_line), a, use_cache=False)
    two = nki.compile(nki.jit(_copy_twice_two_lines), a, use_cache=False)
    assert one.own_ir("nki").count("nki.dma_copy") == 4 and "scf.for" not in one.own_ir("nki")
    # one line: t's view and a's view once each, plus the last copy's view of t (its line)
    assert _views(one) == 3
    # two lines: each line's two views, plus the last copy's
    assert _views(two) == 5
    for ck in (one, two):
        np.testing.assert_array_equal(ck(a), a[64:128, 32:64])
