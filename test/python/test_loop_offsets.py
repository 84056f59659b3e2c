"""iota / affine_select offsets that depend on loop indices (the loop stays rolled: the
offset's loop-index part is an ``index`` operand added at run time), a gather after an int
key (``data[b, idx_tile, i_f]``) and a mask on a gathered view.  Kernels of our own
(loop_offset_kernels.py), checked against NumPy."""
import re

import numpy as np

import loop_offset_kernels as K


def test_beta1_iota_offset_from_a_loop_index_keeps_the_loop():
    x = np.zeros((384, 40), np.float32)
    out = K.row_numbers(x)
    r, f = np.meshgrid(np.arange(384), np.arange(40), indexing="ij")
    np.testing.assert_array_equal(out, 3 * r + f + 7)
    ir = K.row_numbers.compile(x).ir("nisa")
    assert ir.count("nisa.iota(") == 1 and "scf.for" in ir
    assert re.search(r"nisa\.iota\(dst=[^)]*, offset_index=index %\w+, pattern=\[\[1, 40\]\], "
                     r"offset=7, channel_multiplier=3\)", ir), ir


def test_beta1_affine_select_predicate_from_a_loop_index():
    x = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)
    out = K.causal_tiles(x)
    r, c = np.meshgrid(np.arange(256), np.arange(128), indexing="ij")
    np.testing.assert_array_equal(out, np.where(r >= c, x, -1.0).astype(np.float32))
    ir = K.causal_tiles.compile(x).ir("nisa")
    assert ir.count("nisa.affine_select(") == 1 and "offset_index=index" in ir


def test_beta2_iota_offset_from_a_loop_index():
    x = np.zeros((256, 16), np.float32)
    out = K.ramp_beta2(x)
    r, f = np.meshgrid(np.arange(256), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(out, r + 2 * f)


def test_masked_gather_after_an_int_key():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 500, 24)).astype(np.float32)
    rows = rng.integers(0, 500, size=(200, 1)).astype(np.int32)
    out = K.gather_rows_of_batch(data, rows)
    np.testing.assert_array_equal(out, data[:, rows[:, 0], :])


def test_affine_select_predicate_from_two_loop_indices():
    x = np.random.default_rng(2).standard_normal((384, 384)).astype(np.float32)
    out = K.causal_blocks(x)
    r, c = np.meshgrid(np.arange(384), np.arange(384), indexing="ij")
    np.testing.assert_array_equal(out, np.where(r >= c, x, np.float32(-9984.0)))
