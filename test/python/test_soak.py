"""The soak bench in small (bench/soak.py, 200 kernels in one process): nothing left in the
temp folder, located errors for the kernels that fail on purpose, and bounded memory."""
import importlib.util
import os
import tempfile

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "soak.py")


@pytest.fixture
def soak_module():
    spec = importlib.util.spec_from_file_location("nki_soak_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_soak_200_kernels_leaves_nothing_behind(soak_module, tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")
    r = soak_module.soak(200, 50, verbose=False)
    assert r["temp_entries"] == []
    assert r["failed"] == len([i for i in range(200) if i % 11 == 0])
    assert r["growth_bytes"] < 50 * 2**20


def test_idle_interpreter_states_are_released():
    import numpy as np

    import kernels_for_tests as K
    from nki_mlir.runtime import program
    x = np.ones((128, 64), np.float32)
    K.add(x, x)
    assert 1 <= len(program._POOL) <= program.POOL_MAX
    assert program.release_idle_states(0) >= 1 and program._POOL == []
