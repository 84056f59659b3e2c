"""Write-only HBM outputs get their sentinels after the run, only where no DMA wrote
(nki_mlir/runtime/hbm_fill.py): the returned arrays are those of a fill at the alloc."""
import numpy as np
import pytest

from nki_mlir.runtime import hbm_fill
from nki_mlir.runtime.interpreter import decode
from test_interpreter import Kernel, rand


def _tiles_kernel(boxes, read_back=False):
    """out[8, 16] written by one DMA per (row, col, rows, cols) box from x; with
    ``read_back`` the output is also read (DMA'd to a second output), so not write-only."""
    k = Kernel()
    x = k.arg("x", (8, 16))
    o = k.out("out", (8, 16))
    o2 = k.out("copy", (8, 16)) if read_back else None
    for i, (r, c, nr, nc) in enumerate(boxes):
        t = k.alloc(f"t{i}", (nr, nc))
        k.dma(t, k.subview(x, [r, c], [nr, nc]))
        k.dma(k.subview(o, [r, c], [nr, nc]), t)
    if read_back:
        k.dma(o2, o)
    return k


def _expected(x, boxes):
    ref = np.full(x.shape, np.nan, np.float32)
    for r, c, nr, nc in boxes:
        ref[r:r + nr, c:c + nc] = x[r:r + nr, c:c + nc]
    return ref


CASES = {
    "whole tiles": [(0, 0, 4, 16), (4, 0, 4, 16)],
    "grid": [(r, c, 4, 8) for r in (0, 4) for c in (0, 8)],
    "one tile missing": [(0, 0, 4, 8), (0, 8, 4, 8), (4, 0, 4, 8)],
    "overlapping": [(0, 0, 5, 16), (3, 0, 5, 16)],
    "misaligned": [(0, 0, 3, 16), (3, 0, 5, 16)],
    "partial overlap gap": [(0, 0, 3, 16), (2, 0, 3, 16), (6, 2, 2, 14)],
    "repeated": [(0, 0, 4, 16), (0, 0, 4, 16)],
    "none": [],
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["program-order", "queues"])
def test_unwritten_elements_hold_the_sentinel(name, mode):
    boxes = CASES[name]
    x = rand((8, 16))
    prog = decode(_tiles_kernel(boxes).module())
    for _ in range(2):                 # a second run starts from a fresh array again
        (out,) = prog.run([x], mode=mode)
        np.testing.assert_array_equal(out, _expected(x, boxes))


@pytest.mark.parametrize("name", ["one tile missing", "overlapping"])
def test_an_output_that_is_read_is_filled_at_the_alloc(name):
    boxes = CASES[name]
    x = rand((8, 16))
    k = _tiles_kernel(boxes, read_back=True)
    assert hbm_fill.write_only(_alloc_result(k.module(), "out")) is None
    out, copy = k.run(x)
    np.testing.assert_array_equal(out, _expected(x, boxes))
    np.testing.assert_array_equal(copy, _expected(x, boxes))


def _alloc_result(module, name):
    for op in module.walk():
        if op.name == "nisa.alloc" and op.results[0].name_hint == name:
            return op.results[0]
    raise AssertionError(name)


def test_write_only_lists_the_dmas_through_subviews():
    k = _tiles_kernel(CASES["grid"])
    dmas = hbm_fill.write_only(_alloc_result(k.module(), "out"))
    assert dmas is not None and len(dmas) == 4


def test_covered_and_fill_unwritten_on_integer_and_bool_arrays():
    a = np.zeros((4, 6), np.int32)
    assert hbm_fill.covered(a, [a])
    assert hbm_fill.covered(a, [a[1:3], a[0:4, 0:6]])
    assert hbm_fill.covered(a, [a[:2], a[2:]])
    assert not hbm_fill.covered(a, [a[:2], a[1:3], a[3:]])    # covered, but not shown: masked
    assert not hbm_fill.covered(a, [a[:2, :3], a[2:, :3]])
    a[...] = 7
    hbm_fill.fill_unwritten(a, [a[:2, :3], a[2:, :3], a[::2, 3:]], a.dtype)
    ref = np.full((4, 6), 4, np.int32)
    ref[:, :3] = 7
    ref[::2, 3:] = 7
    np.testing.assert_array_equal(a, ref)
    b = np.ones((3, 2), np.bool_)
    hbm_fill.fill_unwritten(b, [b[1:]], b.dtype)
    assert (b[0].view(np.uint8) == 4).all() and b[1:].all()


def test_covered_reads_kept_subview_starts_and_ignores_stale_ones():
    """``Memory.origins`` gives the start of a kept subview of the array itself; an entry
    for another array (or another object at a reused id) is not trusted."""
    a = np.zeros((4, 6), np.float32)
    other = np.zeros((4, 6), np.float32)
    top, bottom = a[:2], a[2:]
    good = {id(top): (top, a, (0, 0)), id(bottom): (bottom, a, (2, 0))}
    assert hbm_fill.covered(a, [top, bottom], good)
    lying = {id(top): (top, a, (0, 0)), id(bottom): (bottom, a, (0, 0))}
    assert not hbm_fill.covered(a, [top, bottom], lying)      # the starts as recorded
    stale = {id(top): (top, other, (0, 0)), id(bottom): (a[2:], a, (0, 0))}
    assert hbm_fill.covered(a, [top, bottom], stale)          # addresses used instead
    x = rand((8, 16))
    prog = decode(_tiles_kernel(CASES["grid"]).module())
    (out,) = prog.run([x], mode="program-order")
    np.testing.assert_array_equal(out, x)
