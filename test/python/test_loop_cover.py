"""The geometric half of the loop-written-tile proof (nki_mlir/runtime/loop_cover.py): boxes
written over a loop's iterations cover a tile exactly when proved here; a gap, a box out of
bounds or two partial dimensions is never answered True; offsets are evaluated with the
interpreter's integer semantics, and anything not a function of the loop variable and
constants is unknown."""
import pytest
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region

from nki_mlir.runtime.loop_cover import covers, index_values


@pytest.mark.parametrize("shape, sizes, offsets, want", [
    ((128, 512), (128, 128), [[0] * 4, [0, 128, 256, 384]], True),      # column blocks
    ((128, 512), (128, 128), [[0] * 4, [384, 0, 256, 128]], True),      # any order
    ((128, 128), (128, 64), [[0] * 3, [0, 32, 64]], True),              # overlapping
    ((128, 128), (128, 128), [[0], [0]], True),                         # whole each time
    ((128, 512), (128, 128), [[0] * 3, [0, 128, 256]], False),          # the end missing
    ((128, 512), (128, 128), [[0] * 3, [128, 256, 384]], False),        # the start missing
    ((128, 512), (128, 128), [[0] * 2, [0, 256]], False),               # a gap
    ((128, 512), (128, 128), [[0] * 4, [0, 128, 256, 448]], False),     # out of bounds
    ((128, 512), (128, 128), [[0] * 4, [-128, 0, 128, 256]], False),    # negative
    ((128, 128), (64, 64), [[0, 0, 64, 64], [0, 64, 0, 64]], False),    # two partial dims
    ((128, 128), (64, 128), [[0, 64], [0, 0]], True),                   # partition blocks
    ((4, 8, 16), (4, 1, 16), [[0] * 8, list(range(8)), [0] * 8], True),  # rank-reduced
    ((128, 128), (128, 128), [[], []], False),                          # no iteration
])
def test_covers(shape, sizes, offsets, want):
    assert covers(shape, sizes, offsets) is want


def _loop():
    """An scf.for over index with its induction variable, and a block to add ops to."""
    c = [arith.ConstantOp(IntegerAttr(v, IndexType())) for v in (0, 4, 1)]
    body = Block(arg_types=[IndexType()])
    loop = scf.ForOp(c[0].result, c[1].result, c[2].result, [], Region(body))
    return loop, body.args[0], c


def _const(v):
    return arith.ConstantOp(IntegerAttr(v, IndexType())).result


def test_index_values_follows_the_interpreter_arithmetic():
    loop, iv, _ = _loop()
    ivs = range(1, 9, 3)
    off = arith.AddiOp(arith.MuliOp(iv, _const(128)).result, _const(-5)).result
    assert index_values(off, iv, ivs) == [128 * i - 5 for i in ivs]
    q = arith.FloorDivSIOp(arith.SubiOp(_const(-7), iv).result, _const(2)).result
    assert index_values(q, iv, ivs) == [(-7 - i) // 2 for i in ivs]
    assert index_values(_const(3), iv, ivs) == [3, 3, 3]


def test_index_values_is_unknown_for_other_variables_and_faults():
    loop, iv, _ = _loop()
    other, iv2, _ = _loop()
    assert index_values(arith.AddiOp(iv, iv2).result, iv, range(4)) is None
    assert index_values(arith.DivSIOp(_const(1), iv).result, iv, range(2)) is None  # 1 / 0
    assert index_values(arith.DivSIOp(_const(8), iv).result, iv, range(1, 3)) == [8, 4]
