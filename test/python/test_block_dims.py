"""Beta 1 block dims (``nl.ndarray((B, nl.par_dim(P), F))``): numerics against NumPy, the
storage layout (block slots in the free dims, modulo allocation), loops staying rolled, the
dependence check seeing the block index, and located errors.  Kernels: block_dims_kernels.py."""
from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest

import block_dims_kernels as K
from nki_mlir.errors import NKIError, NKITypeError
from nki_mlir.frontend.trace_build import last_loop_report

RNG = np.random.default_rng(11)
FILE = inspect.getsourcefile(K)
SRC = inspect.getsource(K).splitlines()


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _line(marker: str) -> int:
    return next(i + 1 for i, s in enumerate(SRC) if s.rstrip().endswith(f"# {marker}"))


def _raises(fn, *args, cls=NKIError, fragment="", marker=None, code=None):
    with pytest.raises(cls) as info:
        fn(*args)
    err, text = info.value, str(info.value)
    assert fragment in text, text
    if code is not None:
        assert err.code == code, text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE), text
    assert err.loc.line == _line(marker), (err.loc, text)
    assert "Traceback" not in text
    return err


def _rolled() -> list[str]:
    return [k for k, (how, _) in last_loop_report().items() if how != "rolled"]


def test_blocks_all_alive_roundtrip():
    a = f32(512, 256)
    np.testing.assert_allclose(K.blocks_roundtrip(a), a * 2, rtol=1e-6)
    ir = K.blocks_roundtrip.compile(a).ir("nki")
    assert _rolled() == [], last_loop_report()
    # one tensor, the 4 blocks as a free dim: 4 x 256 x 4 bytes per partition
    assert re.search(r"nki\.ndarray.*memref<128x4x256xf32, #nisa\.mem<sbuf>>", ir), ir
    assert ir.count("scf.for") == 2, ir


def test_block_written_and_other_block_read_stay_ordered():
    a = f32(512, 128)
    want = np.concatenate([a[i * 128:(i + 1) * 128] for i in reversed(range(4))])
    want[:128] += 1
    np.testing.assert_allclose(K.blocks_reverse(a), want, rtol=1e-6)
    assert _rolled() == [], last_loop_report()


def test_two_block_dims_and_partial_block_index_through_a_helper():
    a = f32(512, 64)
    np.testing.assert_allclose(K.blocks_two_dims(a), a.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    ir = K.blocks_two_dims.compile(a).ir("nki")
    assert "memref<128x2x2x64xf32, #nisa.mem<sbuf>>" in ir, ir


def test_psum_blocks_accumulate_per_block():
    lt, r = f32(256, 256), f32(256, 384)
    np.testing.assert_allclose(K.psum_blocks(lt, r), lt.T @ r, rtol=1e-4, atol=1e-3)
    ir = K.psum_blocks.compile(lt, r).ir("nki")
    # a 1536-byte block is padded to a 2 KiB slot so no block straddles a PSUM bank
    assert "memref<128x2x512xf32, #nisa.mem<psum>>" in ir, ir
    assert "memref<128x2x384xf32, strided<[1024, 512, 1]>, #nisa.mem<psum>>" in ir, ir


def test_mod_alloc_blocks_share_slots():
    a = f32(512, 256)
    np.testing.assert_allclose(K.mod_alloc_blocks(a), a * 3, rtol=1e-6)
    ir = K.mod_alloc_blocks.compile(a).ir("nki")
    assert re.search(r"address=\[0, 0\].*memref<128x2x256xf32", ir), ir  # 2 slots, not 4
    assert "arith.remsi" in ir, ir  # block i lives in slot i % 2


def test_the_kernel_sees_block_dims_first():
    a = f32(128, 64)
    np.testing.assert_allclose(K.blocks_shape(a), a)


def test_same_block_every_iteration_is_an_output_dependence():
    _raises(K.same_block_every_iteration, f32(512, 64), marker="SAME",
            code="err_unexpected_output_dependencies")


def test_block_index_out_of_bounds():
    _raises(K.block_out_of_bounds, f32(128, 64), cls=NKITypeError, marker="OOB",
            fragment="block index 2 is out of bounds for block dim 0 of size 2")


def test_index_expression_on_a_block_dim():
    _raises(K.arange_on_block_dim, f32(128, 64), cls=NKITypeError, marker="ARANGE",
            fragment="block dim 0 (a dim left of nl.par_dim) is indexed by an int, a loop index")


def test_whole_block_tensor_as_an_operand():
    _raises(K.block_operand, f32(128, 64), cls=NKITypeError, marker="WHOLE",
            fragment="still has block dims [2]")


def test_num_par_tiles_is_not_implemented():
    err = _raises(K.par_tiles, f32(128, 64), marker="PAR_TILES", fragment="num_par_tiles")
    assert err.category == "not implemented"
