"""NKI Beta 1 ``mask=`` predicates end to end (frontend/beta1/masks.py, scf.if in the interpreter).

Kernels of our own (mask_kernels.py); every result is compared with a NumPy reference
computed independently, and rows / columns outside the mask are checked to keep what the
kernel wrote there before (or to stay unwritten).
"""
import inspect
import os
import re

import numpy as np
import pytest

import mask_kernels as K
from nki_mlir.errors import NKIError, NKITypeError

RNG = np.random.default_rng(7)
FILE = inspect.getsourcefile(K)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def nki_ir(kernel, *args):
    return kernel.compile(*args).ir("nki")


# ============================================================================ numbers


def test_ragged_last_partition_tile():
    """300 rows = 128 + 128 + 44: load, exp, multiply, add, store all masked."""
    x, y = rand(300, 256), rand(300, 256)
    close(K.ragged_rows(x, y), np.exp(x) * y + 2.0)


def test_ragged_rows_with_beta2_slices():
    x = rand(300, 96)
    close(K.ragged_rows_slices(x), 3.0 * x)


def test_free_axis_mask():
    """700 columns = 512 + 188 (i_f < 700)."""
    x = rand(128, 700)
    close(K.ragged_cols(x), x + 1.0)


def test_both_axes_ragged_in_nested_loops():
    x = rand(300, 600)
    close(K.ragged_2d(x), x * x)


def test_static_two_constraint_mask():
    """(i_p < a) & (i_f >= b) outside loops: one narrowed instruction, no guard."""
    x = rand(128, 64)
    out = K.static_masks(x, 100, 20)
    ref = 2.0 * x
    ref[:100, 20:] = np.exp(x[:100, 20:])
    close(out, ref)
    ir = nki_ir(K.static_masks, x, 100, 20)
    assert "scf.if" not in ir
    assert "memref<100x44xf32" in ir  # the masked exp and store work on rows 0..99, cols 20..63


def test_mask_that_skips_the_instruction():
    x = rand(384, 64)
    out = K.skipped(x)
    ref = 2.0 * x
    ref[:128] = np.exp(x[:128])
    close(out, ref)
    ir = nki_ir(K.skipped, x)
    # the statically empty store is gone; the exp and its store run only when t < 1
    assert ir.count("nki.store(") == 2
    assert len(re.findall(r"arith\.cmpi slt, %t, %c1(_\d+)? :", ir)) == 2
    assert "} else {" not in ir


def test_reductions_with_partition_and_free_masks():
    x = rand(300, 256)
    out = K.masked_reductions(x, 100)
    np.testing.assert_allclose(out[:, 0], x.sum(axis=1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out[:, 1], x[:, :100].max(axis=1))


def test_value_returning_isa_calls_and_dma_copy_with_dst():
    x = rand(300, 128)
    np.testing.assert_allclose(K.masked_isa(x), np.exp(2.0 * x), rtol=1e-5, atol=1e-5)


def test_assignment_writes_only_the_masked_rows():
    x = rand(128, 64)
    out = K.masked_assign(x, 50)
    ref = np.full_like(x, 5.0)
    ref[:50] = np.exp(x[:50])
    close(out, ref)


def test_indices_padded_to_pmax_on_a_small_tensor():
    """x has 100 rows, the index grid 128: the views are built with 100 rows."""
    x = rand(100, 64)
    close(K.padded_single_tile(x), np.exp(x))


def test_unrolled_python_range_with_static_out_of_range_rows():
    """range() is unrolled, so the last tile's rows 256..383 are compile-time out of range:
    the mask makes the views 44 rows instead of an out-of-bounds error."""
    x = rand(300, 32)
    close(K.unrolled_tiles(x), x - 1.0)


def test_program_id_in_the_mask():
    x = rand(300, 32)
    close(K.spmd_tiles[3](x), 4.0 * x)


def test_views_held_in_variables_are_rebuilt_inside_the_guard():
    x = rand(300, 64)
    close(K.held_views(x), -x)
    ir = nki_ir(K.held_views, x)
    # no full-size 128-row view of the tensors outside the guards any more
    body = ir.split("scf.if")[0]
    assert "memref.subview %x" not in body and "memref.subview %out" not in body


def test_permuted_views_held_in_variables():
    x = rand(300, 64)
    out = K.held_permuted_views(x)
    np.testing.assert_array_equal(out, x.reshape(300, 8, 8).transpose(0, 2, 1).reshape(300, 64))
    ir = nki_ir(K.held_permuted_views, x)
    casts = [l for l in ir.splitlines() if "memref.reinterpret_cast" in l]
    assert len(casts) == 4 and sum("sizes: [44, 8, 8]" in l for l in casts) == 2


def test_instruction_without_tile_operands():
    x = rand(128, 64)
    out = K.masked_memset(x, 40)
    ref = x.copy()
    ref[:40] = 7.0
    close(out, ref)


def test_comparison_coupling_both_grid_axes_is_a_staircase():
    """t * 8192 + 64 * i_p + i_f < n: full rows, one partial row, nothing (per tile t)."""
    a, b = rand(3, 128, 64), rand(3, 128, 64)
    n = 2 * 8192 + 50 * 64 + 17
    out = K.flat_bound(a, b, n)
    ref = np.zeros(a.size, np.float32)
    ref[:n] = (a + b).reshape(-1)[:n]
    close(out, ref.reshape(a.shape))
    ir = nki_ir(K.flat_bound, a, b, n)
    # tile t == 2: rows 0..50 on columns 0..16, rows 0..49 on columns 17..63 (both from
    # partition 0); tiles 0, 1 whole
    for shape in ("128x64", "51x17", "50x47"):
        assert re.search(rf"nki\.dma_copy\(dst=memref<{shape}xf32", ir), shape


def test_triangular_mask_is_one_box_per_column():
    x = rand(128, 48)
    out = K.upper_triangle(x)
    keep = np.arange(48)[None, :] >= np.arange(128)[:, None]
    close(out, np.where(keep, np.exp(x), x))
    ir = nki_ir(K.upper_triangle, x)
    assert ir.count("nki.unary(") == 48  # column f: rows [0, f + 1)


def test_not_equal_gives_two_boxes():
    x = rand(128, 40)
    out = K.skip_column(x, 7)
    ref = 2.0 * x
    ref[:, 7] = x[:, 7]
    close(out, ref)
    ir = nki_ir(K.skip_column, x, 7)
    assert "memref<128x7xf32" in ir and "memref<128x32xf32" in ir


def test_not_equal_on_partitions_for_dma():
    x = rand(128, 16)
    out = K.skip_row_dma(x, 5)
    ref = x.copy()
    ref[5] = 0.0
    close(out, ref)


# ============================================================================ IR shape


def test_loop_dependent_mask_gives_one_guarded_version_per_tile_shape():
    x = rand(300, 600)
    ir = nki_ir(K.ragged_2d, x)
    # 3 masked instructions x 4 tile shapes (128|44 rows x 256|88 cols), 3 guards each
    for shape in ("128x256", "44x256", "128x88", "44x88"):
        assert re.search(rf"nki\.dma_copy\(dst=memref<{shape}xf32", ir), shape
    assert ir.count("scf.if") == 9
    assert re.search(r"arith\.cmpi slt, %t, %c2", ir) and re.search(r"arith\.cmpi slt, %j, %c2", ir)


def test_ragged_rows_ir_has_no_full_size_view_of_the_last_tile():
    x, y = rand(300, 256), rand(300, 256)
    ir = nki_ir(K.ragged_rows, x, y)
    for line in ir.splitlines():
        if "memref.subview %x" in line or "memref.subview %y" in line or "memref.subview %out" in line:
            assert re.search(r"\[(128|44), 256\]", line), line
    assert ir.count("scf.if") == 6


# ============================================================================ interpreter


def test_interpreter_scf_if_with_logic_and_folded_conditions():
    """scf.if (with and without else, i1 andi / ori, a decode-time constant condition)."""
    from test_interpreter import Kernel
    k = Kernel()
    x = k.arg("x", (4, 8))
    o = k.out("out", (4, 8))
    k.raw("%c0 = arith.constant 0 : index")
    k.raw("%c1 = arith.constant 1 : index")
    k.raw("%c2 = arith.constant 2 : index")
    k.raw("%c3 = arith.constant 3 : index")
    k.raw("%c4 = arith.constant 4 : index")
    k.raw("%never = arith.cmpi sgt, %c0, %c1 : index")
    k.raw("scf.for %i = %c0 to %c4 step %c1 {")
    k.raw("%ge1 = arith.cmpi sge, %i, %c1 : index")
    k.raw("%lt3 = arith.cmpi slt, %i, %c3 : index")
    k.raw("%mid = arith.andi %ge1, %lt3 : i1")          # i in {1, 2}
    k.raw("%is0 = arith.cmpi eq, %i, %c0 : index")
    k.raw("%pick = arith.ori %mid, %is0 : i1")           # i in {0, 1, 2}
    src = k.subview(x, ["%i", 0], [1, 8])
    dst = k.subview(o, ["%i", 0], [1, 8])
    half = k.subview(x, ["%i", 0], [1, 4])
    dhalf = k.subview(o, ["%i", 4], [1, 4])
    k.raw("scf.if %pick {")
    k.dma(dst, src)
    k.raw("} else {")
    k.dma(dhalf, half)                                   # i == 3: columns 4..7 only
    k.raw("}")
    k.raw("scf.if %never {")
    k.dma(dst, dst)
    k.raw("}")
    k.raw("}")
    xs = np.arange(32, dtype=np.float32).reshape(4, 8)
    (out,) = k.run(xs)
    np.testing.assert_array_equal(out[:3], xs[:3])
    np.testing.assert_array_equal(out[3, 4:], xs[3, :4])
    assert np.isnan(out[3, :4]).all()  # never written


# ============================================================================ errors


def _line(text: str) -> int:
    lines = [i for i, l in enumerate(open(FILE).read().splitlines(), 1) if text in l]
    assert len(lines) == 1, text
    return lines[0]


ERRORS = [
    # kernel, error class, message fragment, code, text on the reported line
    (K.err_non_affine, NKITypeError, "can only be multiplied by a compile-time int",
     "err_unsupported_expression_in_mask", "mask=(i_p * i_p < 100)"),
    (K.err_or, NKITypeError, "'|' is not supported in a mask",
     "err_unsupported_expression_in_mask", "mask=(i_p < 10) | (i_f < 10)"),
    (K.err_and, NKITypeError, "'and' needs a single truth value",
     "err_ambiguous_tensor_truth_value", "mask=(i_p < 10) and (i_f < 10)"),
    (K.err_not_equal, NKITypeError, "covers partitions [4, 128), but a compute instruction on "
     "124 partitions must start at partition 0", "err_unsupported_expression_in_mask",
     "mask=(i_p != 3)"),
    (K.err_too_many_boxes, NKIError, "rectangular parts (the region where it holds is not a "
     "box); at most 256", None, "mask=(i_p - i_f != 0) & (i_p - i_f != 2) & (i_p - i_f != 4)"),
    (K.err_tile_mask, NKITypeError, "got a tile",
     "err_unsupported_expression_in_mask", "mask=(a > 0.0)"),
    (K.err_axis_size, NKITypeError, "no tile operand has size 32 on dim 1",
     "err_unsupported_expression_in_mask", "mask=(nl.arange(32)[None, :] < 10)"),
    (K.err_too_many_versions, NKIError, "at most 16 are supported", None,
     "mask=(i_p < t)"),
]


@pytest.mark.parametrize("kernel,cls,fragment,code,source", ERRORS,
                         ids=[e[0].fn.__name__ if hasattr(e[0], "fn") else str(i)
                              for i, e in enumerate(ERRORS)])
def test_mask_errors_are_located(kernel, cls, fragment, code, source):
    with pytest.raises(cls) as info:
        kernel(rand(128, 64))
    err = info.value
    text = str(err)
    assert fragment in text
    assert err.code == code
    if code:
        assert f"[{code}]" in text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    assert err.loc.line == _line(source)
    src_line, caret = text.splitlines()[-2], text.splitlines()[-1]
    assert source in src_line and caret.strip() == "^"
    assert "Traceback" not in text


# ============================================================================ regions


def test_region_is_the_exact_disjoint_union_of_boxes():
    """frontend/mask_regions.region against a brute-force evaluation of random affine
    predicates on small grids: the boxes are disjoint, non-empty and cover exactly the
    points where every comparison holds."""
    from nki_mlir.frontend.beta1.mask_regions import FNS, Constraint, region
    rng = np.random.default_rng(3)
    for _ in range(300):
        rank = int(rng.integers(1, 4))
        sizes = tuple(int(rng.integers(1, 7)) for _ in range(rank))
        cons, vs = [], []
        for _ in range(int(rng.integers(1, 4))):
            coeffs = tuple(int(rng.integers(-3, 4)) if n > 1 else 0 for n in sizes)
            cons.append(Constraint(coeffs, 0, str(rng.choice(list(FNS)))))
            vs.append(int(rng.integers(-8, 9)))
        grid = np.indices(sizes).reshape(rank, -1).T
        want = np.ones(len(grid), bool)
        for con, v in zip(cons, vs):
            want &= FNS[con.op](grid @ np.array(con.coeffs) + v, 0)
        got = np.zeros(sizes, np.int64)
        for box in region(sizes, cons, vs):
            assert all(lo < hi for lo, hi in box), box
            got[tuple(slice(lo, hi) for lo, hi in box)] += 1
        assert got.max(initial=0) <= 1  # disjoint
        np.testing.assert_array_equal(got.reshape(-1).astype(bool), want)
