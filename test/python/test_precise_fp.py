"""``NKI_PRECISE_FP`` (nki_mlir/runtime/precise_fp.py): with ``0`` the interpreter stores the
bf16 / fp8 tensors a kernel allocates as float32, without rounding (AWS's NKI simulator
guide, "Precise Floating-Point Mode"); ``1`` (the default) rounds every store to the declared
dtype.  Integers, placements, capacity and the caller's arrays are the same in both modes;
the variable is read at every run, so one kernel called in both modes in one process gives
each call its mode's numerics (no cache mixes them)."""
from __future__ import annotations

import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir import dtypes
from nki_mlir.errors import NKIError

import precise_fp_kernels as pk

EPS = 2.0 ** -10          # below bf16's (2^-7) and fp8's precision at 1.0


def _x(value=EPS, shape=(128, 4)):
    return np.full(shape, value, np.float32)


@pytest.mark.parametrize("dt", ["bfloat16", "float8_e4m3", "float8_e5m2"])
def test_low_precision_intermediate_rounds_by_default_and_not_with_0(monkeypatch, dt):
    monkeypatch.delenv("NKI_PRECISE_FP", raising=False)
    assert np.all(pk.add_sub(_x(), dt) == 0.0)             # 1 + 2^-10 rounds to 1
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert np.all(pk.add_sub(_x(), dt) == 0.0)
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    assert np.all(pk.add_sub(_x(), dt) == np.float32(EPS))  # exact in float32


def test_integer_intermediate_is_unaffected(monkeypatch):
    got = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        got[mode] = pk.add_sub(_x(0.75), "int32")       # 1.75 truncates to 1
    assert np.all(got["1"] == 0.0) and np.all(got["0"] == 0.0)


def test_every_bf16_hop_rounds_only_by_default(monkeypatch):
    """tensor_copy to bf16, DMA to a private HBM bf16 tensor and back: one rounding by
    default (to nearest even), none with 0."""
    x = _x(1.0 + EPS)
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert np.all(pk.copy_chain(x) == 1.0)
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    assert np.all(pk.copy_chain(x) == np.float32(1.0 + EPS))


def test_outputs_keep_their_declared_dtype(monkeypatch):
    """A bf16 output is returned as bf16 in both modes (rounded where the kernel writes
    it); its bf16 intermediate is not rounded with 0."""
    x = _x(0.5 + EPS / 2)
    got = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        got[mode] = pk.add_sub(x, "bfloat16", "bfloat16")
        assert got[mode].dtype == dtypes.bfloat16
    # default: 1.5 + 2^-11 rounds to 1.5 in the tile, then 0.5; with 0 the tile keeps it and
    # the output rounds 0.5 + 2^-11 to bf16 (spacing 2^-8 at 0.5): 0.5 as well, but through
    # one rounding, not two -- a value one bf16 ulp away shows the difference
    assert np.all(got["1"].astype(np.float32) == 0.5)
    assert np.all(got["0"].astype(np.float32) == 0.5)
    x = _x(0.5 + 3 * 2.0 ** -10)      # tile: 1.5 + 3*2^-10 -> 1.5 (bf16 spacing 2^-7)
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert np.all(pk.add_sub(x, "bfloat16", "bfloat16").astype(np.float32) == 0.5)
    monkeypatch.setenv("NKI_PRECISE_FP", "0")   # 0.5 + 3*2^-10 -> 0.5 + 2^-8 (to even)
    assert np.all(pk.add_sub(x, "bfloat16", "bfloat16").astype(np.float32) == 0.5 + 2.0 ** -8)


def test_switching_modes_between_calls_never_mixes_them(monkeypatch):
    """The same kernel and arguments, alternating modes: repeated calls take the warm path
    (the same compiled kernel and decoded program), each call has its mode's result."""
    x = _x()
    for mode in ("1", "0", "0", "1", "1", "0", "1"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        want = 0.0 if mode == "1" else np.float32(EPS)
        assert np.all(pk.add_sub(x, "bfloat16") == want), mode


def test_compiled_kernel_and_program_serve_both_modes(monkeypatch):
    """One compile: the program runs either mode, and its float32-storage variant is
    decoded once, on the first run that asks for it."""
    x = _x()
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    ck = pk.add_sub.compile(x, "bfloat16")
    ir0 = ck.ir("nisa")
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert pk.add_sub.compile(x, "bfloat16").ir("nisa") == ir0
    prog = ck.program
    assert prog._wide is None
    (a,) = prog.run([x])
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    (b,) = prog.run([x])
    wide = prog._wide
    (c,) = prog.run([x])
    assert prog._wide is wide is not None
    assert np.all(a == 0.0) and np.all(b == np.float32(EPS)) and np.all(c == b)


def test_capacity_is_that_of_the_declared_dtype(monkeypatch):
    """A bf16 tile whose float32 values would not fit SBUF runs with 0: placement and
    capacity stay those of the declared bf16 bytes."""
    x = _x(shape=(128, 32000))
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert np.all(pk.big_bf16_tile(x) == 0.0)
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    assert np.all(pk.big_bf16_tile(x) == np.float32(EPS))


def test_hazard_checks_run_in_both_modes(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")
    for mode, want in (("1", 0.0), ("0", np.float32(EPS))):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        assert np.all(pk.add_sub(_x(), "bfloat16") == want)


def test_bit_reinterpretation_of_a_widened_tile_is_a_located_error(monkeypatch):
    x = _x(1.0)
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    assert np.all(pk.bitcast_bf16(x) == 0x3F80)          # bf16 1.0
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    with pytest.raises(NKIError, match=r"reinterprets the bits of a bfloat16 tensor as int16; "
                                       r"with NKI_PRECISE_FP=0") as ei:
        pk.bitcast_bf16(x)
    assert ei.value.loc is not None and ei.value.loc.file.endswith("precise_fp_kernels.py")


@pytest.mark.parametrize("value", ["maybe", "2", "true", " 0"])
def test_invalid_value_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("NKI_PRECISE_FP", value)
    with pytest.raises(NKIError, match=r"NKI_PRECISE_FP=.*expected 1 .* or 0 "):
        pk.add_sub(_x(), "bfloat16")


def test_empty_value_is_the_default(monkeypatch):
    monkeypatch.setenv("NKI_PRECISE_FP", "")
    assert np.all(pk.add_sub(_x(), "bfloat16") == 0.0)


def test_moves_between_the_caller_s_bf16_and_float32_stored_tiles(monkeypatch):
    """A DMA transpose from a bf16 argument (the caller's bf16 array) into a bf16 tile stored
    as float32, and its ``same dtype`` check, compare declared dtypes: the values move
    exactly in both modes."""
    from test_isa_movement import k_dma_transpose
    a = (np.arange(64 * 96, dtype=np.float32).reshape(64, 96) / 7).astype(dtypes.bfloat16)
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        y = k_dma_transpose(a, False, False)
        assert y.dtype == dtypes.bfloat16
        assert np.array_equal(y.view(np.uint16), a.T.view(np.uint16)), mode


def test_cost_model_is_that_of_the_declared_dtypes(monkeypatch):
    """``ck.estimate()`` (a queue-mode run with the cost model's timer) is the same in both
    modes: the bf16 tiles still move bf16 bytes."""
    x = _x(shape=(128, 512))
    got = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        e = nki.compile(pk.copy_chain, x, use_cache=False).estimate()
        got[mode] = (e.latency_ns, e.dma_bytes, [(s.name, s.start_ns, s.end_ns, s.bytes)
                                                 for s in e.slices])
    assert got["0"] == got["1"] and got["1"][1] == 128 * 512 * (4 + 2 + 2 + 4)


@pytest.mark.parametrize("n,k", [(64, 2), (5, 5)])
def test_a_reshaped_float32_stored_psum_tile(monkeypatch, n, k):
    """A view of a bf16 PSUM tile (values and matmul-written flags) stored as float32:
    the flags are laid out as a float32 tile's (nki-library's attention_block_tkg.py reads
    ``psum.reshape(...)`` after an ``nc_transpose`` into bf16 PSUM; with 5 elements per
    partition, 10 bytes of bf16 flags are no whole number of float32 flags)."""
    x = np.arange(n * 128, dtype=np.float32).reshape(n, 128).astype(dtypes.bfloat16)
    want = x.astype(np.float32).T.reshape(128, k, n // k)
    monkeypatch.setenv("NKI_PRECISE_FP", "1")
    got = pk.psum_reshape(x, k)
    assert np.array_equal(got, (want + EPS).astype(dtypes.bfloat16).astype(np.float32))
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    assert np.array_equal(pk.psum_reshape(x, k), want + np.float32(EPS))


def test_an_output_returned_through_a_view_keeps_its_dtype(monkeypatch):
    x = _x(1.0 + EPS, shape=(128, 8))
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        got = pk.returns_a_view(x)
        assert got.dtype == dtypes.bfloat16 and got.shape == (128, 2, 4)
        assert np.all(got.astype(np.float32) == 1.0), mode
