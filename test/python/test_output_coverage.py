"""Outputs written only in part (nki_mlir/passes/output_coverage.py, written_region.py): a
located NKIKernelWarning naming the region never written, an error under
``output_check="error"`` / ``NKI_MLIR_OUTPUT_CHECK=error``, and nothing when every element is
written or the written rows are data (indirect DMA) or registers (dynamic loops).

The reported region is checked against a run: the interpreter fills never-written float
elements with NaN, so the NaN positions of the result (inputs without NaN) must be exactly
the region the analysis computed."""
import os
import warnings

import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.errors import NKIError, NKIKernelWarning
from nki_mlir.passes.output_coverage import unwritten_outputs
from nki_mlir.compiler import parse_module

import output_coverage_beta1_kernels as B
import output_coverage_kernels as K

HERE_K = os.path.abspath(K.__file__)
HERE_B = os.path.abspath(B.__file__)


def _line(marker: str, path: str) -> int:
    with open(path) as f:
        return next(i for i, text in enumerate(f, 1) if marker in text)


def f32(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _coverage_warnings(fn, *args, **kwargs):
    """Call fn; return the NKIKernelWarnings about partly written outputs and the result."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return [w for w in rec if issubclass(w.category, NKIKernelWarning)
            and "partly written" in str(w.message)], result


def _mask(region, shape) -> np.ndarray:
    """The boolean array of the points of an islpy set over indices of ``shape``."""
    m = np.zeros(shape, bool)
    region.foreach_point(lambda p: m.__setitem__(
        tuple(p.get_coordinate_val(__import__("islpy").dim_type.set, j).to_python()
              for j in range(len(shape))), True))
    return m


def _unwritten(kernel, *args):
    ck = kernel.compile_with(args, {}, use_cache=False, output_check="off")
    return unwritten_outputs(parse_module(ck.ir("nki")))


# ------------------------------------------------------------------ no warning


@pytest.mark.parametrize("kernel, args", [
    (K.full_tiles, (f32(512, 64),)),
    (K.reshaped_full, (f32(64, 128),)),
    (K.in_place, (f32(128, 64),)),
    (B.ragged_store, (f32(300, 64), 0)),
])
def test_fully_written_outputs_get_no_warning(kernel, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NKIKernelWarning)
        kernel(*args)
    assert _unwritten(kernel, *args) == []


def test_indirect_scatter_is_not_reported():
    """The rows a scatter writes are data: the analysis cannot decide, so it says nothing
    (even though, with these indices, rows 128..255 do stay unwritten)."""
    table = f32(256, 64)
    idx = np.arange(128, dtype=np.int32).reshape(128, 1)
    found, out = _coverage_warnings(K.scatter_only, table, f32(128, 64), idx)
    assert found == [] and np.isnan(out[128:]).all()
    nki.compile(K.scatter_only, table, f32(128, 64), idx, output_check="error", use_cache=False)


def test_register_bound_loop_is_not_reported():
    """A loop whose trip count is a register: undecided, no warning, no error (with count 3,
    block 3 does stay unwritten at run time)."""
    count = np.array([[3]], np.int32)
    found, out = _coverage_warnings(K.register_tiles, f32(4, 128, 64), count)
    assert found == [] and np.isnan(out[3]).all() and not np.isnan(out[:3]).any()
    nki.compile(K.register_tiles, f32(4, 128, 64), count, output_check="error", use_cache=False)


def test_one_program_of_a_launch_grid_is_not_reported():
    found, out = _coverage_warnings(K.per_program[2], f32(256, 64))
    assert found == [] and not np.isnan(out).any()


# ------------------------------------------------------------------ warnings


@pytest.mark.parametrize("kernel, args, marker, path, expected", [
    (K.misses_last_tile, (f32(512, 64),), "# ALLOC_MISSES_LAST", HERE_K,
     "kernel output 0 ('out') is only partly written: rows 384..511 of out[512, 64] are never "
     "written (out[384:512, :], 8192 of 32768 elements)"),
    (K.misses_columns, (f32(128, 512),), "# ALLOC_MISSES_COLUMNS", HERE_K,
     "kernel output 0 ('out') is only partly written: 32768 of 65536 elements of out[128, 512] "
     "are never written, within out[:, 128:512]"),
    (K.two_outputs, (f32(128, 128),), "# ALLOC_HALF", HERE_K,
     "kernel output 1 ('half') is only partly written: columns 64..127 of half[128, 128] are "
     "never written (half[:, 64:128], 8192 of 16384 elements)"),
    (K.through_ap, (f32(128, 64),), "# ALLOC_AP", HERE_K,
     "columns 32..63 of out[128, 64] are never written (out[:, 32:64], 4096 of 8192 elements)"),
    (K.dynamic_tiles, (f32(4, 128, 64),), "# ALLOC_DYNAMIC", HERE_K,
     "index 3 of dim 0 of out[4, 128, 64] is never written (out[3:4, :, :], 8192 of 32768 elements)"),
    (B.ragged_store, (f32(300, 64), 10), "# ALLOC_RAGGED", HERE_B,
     "rows 290..299 of out[300, 64] are never written (out[290:300, :], 640 of 19200 elements)"),
    (B.lower_triangle, (f32(128, 128),), "# ALLOC_TRIANGLE", HERE_B,
     "8128 of 16384 elements of out[128, 128] are never written, within out[0:127, 1:128]: "
     "{ out[i0, i1] : i1 > i0 }"),
])
def test_partly_written_output_is_a_located_warning(kernel, args, marker, path, expected):
    found, result = _coverage_warnings(kernel, *args)
    assert len(found) == 1, [str(w.message) for w in found]
    w = found[0]
    line = _line(marker, path)
    assert w.lineno == line and os.path.samefile(w.filename, path)
    msg = str(w.message)
    assert msg.startswith(f"{path}:{line}:") and ": warning: " in msg
    assert expected in msg
    assert "the ISA interpreter fills them with NaN" in msg
    # the region is exact: it is where the run left the interpreter's NaN sentinel
    (u,) = _unwritten(kernel, *args)
    out = result[u.index] if isinstance(result, tuple) else result
    np.testing.assert_array_equal(np.isnan(out), _mask(u.region, u.shape))


def test_strided_loop_region_is_every_other_tile():
    """misses_columns writes column tiles 0 and 2 of 4 (step 2): tiles 1 and 3 are unwritten."""
    (u,) = _unwritten(K.misses_columns, f32(128, 512))
    m = _mask(u.region, u.shape)
    assert m[:, 128:256].all() and m[:, 384:].all() and not m[:, :128].any() and not m[:, 256:384].any()


# ------------------------------------------------------------------ strict


def test_strict_option_raises_with_location_and_caret():
    with pytest.raises(NKIError) as info:
        nki.compile(K.misses_last_tile, f32(512, 64), output_check="error", use_cache=False)
    e = info.value
    line = _line("# ALLOC_MISSES_LAST", HERE_K)
    assert e.category == "invalid kernel" and e.loc.line == line and os.path.samefile(e.loc.file, HERE_K)
    text = str(e)
    assert text.startswith(f"{e.loc}: invalid kernel: kernel output 0 ('out') is only partly written")
    src, caret = text.split("\n")[1:3]
    assert "nl.ndarray(a.shape" in src and caret == " " * (e.loc.col - 1) + "^"
    assert src[e.loc.col - 1:].startswith("nl.ndarray")


def test_strict_jit_option_and_env_var(monkeypatch):
    strict = nki.jit(K.misses_last_tile, output_check="error")
    with pytest.raises(NKIError, match="rows 384..511 of out"):
        strict(f32(512, 64))
    monkeypatch.setenv("NKI_MLIR_OUTPUT_CHECK", "error")
    with pytest.raises(NKIError, match=r"columns 64\.\.127 of half\[128, 128\]"):
        K.two_outputs(f32(128, 128))
    K.full_tiles(f32(512, 64))             # a complete kernel still compiles
    monkeypatch.setenv("NKI_MLIR_OUTPUT_CHECK", "off")
    found, _ = _coverage_warnings(B.ragged_store, f32(300, 64), 10)
    assert found == []


def test_strict_is_part_of_the_cache_key():
    """A warn-mode compile in the cache must not let a strict compile of the same kernel pass."""
    a = f32(512, 64)
    _coverage_warnings(K.misses_last_tile, a)                 # cached, with its warning
    with pytest.raises(NKIError, match="only partly written"):
        K.misses_last_tile.compile_with((a,), {}, output_check="error")


def test_strict_mode_reports_an_output_never_written():
    @nki.jit
    def nothing(a):
        out = nki.language.ndarray(a.shape, a.dtype, buffer=nki.language.shared_hbm)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NKIKernelWarning)   # the frontend's own warning
        with pytest.raises(NKIError, match=r"is never written: no instruction that runs writes an element of out\[8, 8\]"):
            nki.compile(nothing, f32(8, 8), output_check="error", use_cache=False)


def test_bad_option_value_is_a_located_bad_option():
    with pytest.raises(NKIError) as info:
        nki.compile(K.full_tiles, f32(512, 64), output_check="strict")  # BAD_OPTION
    assert info.value.category == "bad option" and "'warn', 'error', 'off'" in str(info.value)
    assert info.value.loc is not None and info.value.loc.line == _line("# BAD_" + "OPTION", __file__)


# ------------------------------------------------------------------ guards (IR level)

GUARDED = """
builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @k(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) -> memref<256x64xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %out = nki.ndarray(name=out) : memref<256x64xf32, #nisa.mem<shared_hbm>>
    %t = nki.ndarray(name=t) : memref<64x64xf32, #nisa.mem<sbuf>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %true = arith.constant true
    scf.for %i = %c0 to %c4 step %c1 {
      %r = arith.muli %i, %c64 : index
      %lt = arith.cmpi PRED, %i, %c1 : index
      %gt = arith.cmpi sgt, %i, %c2 : index
      %either = arith.ori %lt, %gt : i1
      %neither = arith.xori %either, %true : i1
      scf.if COND {
        THEN
      } else {
        ELSE
      }
    }
    func.return %out : memref<256x64xf32, #nisa.mem<shared_hbm>>
  }
}
"""
WRITE = """%v = memref.subview %out[%r, 0] [64, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<64x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
        nki.dma_copy(dst=memref<64x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %v, src=memref<64x64xf32, #nisa.mem<sbuf>> %t)"""


@pytest.mark.parametrize("pred, cond, branch, rows", [
    ("slt", "%neither", "THEN", [0, 3]),     # written for 1 <= i <= 2 (xori true of an ori)
    ("slt", "%either", "ELSE", [0, 3]),      # the else-region of the ori: its negation
    ("slt", "%either", "THEN", [1, 2]),      # i < 1 or i > 2
    ("slt", "%lt", "ELSE", [0]),             # i >= 1
    ("ult", "%neither", "THEN", [3]),        # not (unknown or i > 2): at least i <= 2
    ("ult", "%either", "THEN", []),          # unknown or i > 2: no claim
    ("ult", "%lt", "ELSE", []),              # an unsigned compare is not modelled
])
def test_guards_of_masked_versions(pred, cond, branch, rows):
    """scf.if guards (what masked instructions compile to): the then-region gets the
    condition, the else-region its negation, through arith.andi / ori / xori; a condition
    that is not modelled constrains nothing (the region is over-approximated)."""
    text = GUARDED.replace("PRED", pred).replace("COND", cond)
    text = text.replace(branch, WRITE).replace("THEN", "").replace("ELSE", "")
    found = unwritten_outputs(parse_module(text))
    expected = np.zeros((256, 64), bool)
    for r in rows:
        expected[r * 64:(r + 1) * 64] = True
    if not rows:
        assert found == []
    else:
        (u,) = found
        np.testing.assert_array_equal(_mask(u.region, u.shape), expected)
