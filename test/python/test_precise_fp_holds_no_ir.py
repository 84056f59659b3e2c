"""The program a run with ``NKI_PRECISE_FP=0`` executes (bf16 / fp8 tensors stored as float32,
nki_mlir/runtime/precise_fp.py) holds none of the compile's xDSL IR either
(nki_mlir/runtime/ir_release.py): it is decoded from the re-read artifact, not from a
function op the default program would keep (which keeps the whole module alive), only when
a run first asks for it, and once per compiled kernel -- a hazard-checked run's checks read
its own ops.  The reachability walk is test_program_holds_no_ir.py's."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import nki_mlir as nki
import precise_fp_kernels as pk
import shared_launch_kernels as sk
from nki_mlir.driver import compile as driver, warm, warm_plan
from nki_mlir.errors import NKIError
from nki_mlir.runtime import cache
from nki_mlir.runtime.interpreter import decode
from test_program_holds_no_ir import reachable_ir

EPS = 2.0 ** -10          # below bf16's precision at 1.0: kept only by float32 storage
X = np.full((128, 4), EPS, np.float32)


@pytest.fixture
def decodes(monkeypatch):
    """The ``wide`` flag of every decode of a re-read artifact (compile._decode_files)."""
    seen: list[bool] = []
    real = driver._decode_files

    def counted(ir, stage, name, wide=False):
        seen.append(wide)
        return real(ir, stage, name, wide)
    monkeypatch.setattr(driver, "_decode_files", counted)
    return seen


@pytest.mark.parametrize("hazards", [False, True])
def test_a_float32_storage_program_holds_no_ir(hazards, decodes, monkeypatch):
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    ck = pk.add_sub.compile(X, "bfloat16")
    (y,) = ck.run((X,), {}, hazards=hazards)
    assert np.all(y == np.float32(EPS))             # (the float32-storage program ran)
    run = ck.final() if hazards else ck
    assert run.program._wide is not None
    assert decodes == [True]    # (from the artifact; a hazard-checked run read its own ops)
    gc.collect()
    assert reachable_ir(ck) == {}


def test_it_is_decoded_only_when_a_run_asks_for_it(decodes, monkeypatch):
    ck = pk.add_sub.compile(X, "bfloat16")
    for hazards in (False, True, False):
        monkeypatch.setenv("NKI_PRECISE_FP", "1")
        (y,) = ck.run((X,), {}, hazards=hazards)
        assert np.all(y == 0.0)
    assert ck.program._wide is None and ck.final().program._wide is None
    assert True not in decodes
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    for _ in range(2):
        (y,) = ck.run((X,), {}, hazards=False)
        assert np.all(y == np.float32(EPS))
    assert decodes.count(True) == 1
    gc.collect()
    assert reachable_ir(ck) == {}


@pytest.mark.parametrize("hazards", ["0", "1"])
def test_the_cache_and_the_warm_paths_hold_no_ir(hazards, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", hazards)
    xs = np.random.default_rng(7).standard_normal((256, 64)).astype(np.float32)
    for mode in ("0", "1", "0"):        # (both programs; the last call takes the warm paths)
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        pk.add_sub(X, "bfloat16")
        pk.copy_chain(X)
        np.testing.assert_allclose(sk.named_halves[2](xs), xs * 3 + 1, rtol=1e-6)
    gc.collect()
    assert reachable_ir(cache._MEMORY, warm._GUARDS, warm.PLANS, warm_plan._PLANS) == {}


def test_its_run_time_errors_are_the_same_as_with_the_ir(monkeypatch):
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    x = np.ones((128, 4), np.float32)
    ck = pk.bitcast_bf16.compile(x)
    kept = decode(ck._nisa_module(), ck.spec.name, wide=True)     # (keeps its IR)
    errors = []
    for run in (lambda: ck.run((x,), {}), lambda: kept.run([x])):
        with pytest.raises(NKIError) as e:
            run()
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "precise_fp_kernels.py:" in errors[0]
    gc.collect()
    assert reachable_ir(ck) == {}
