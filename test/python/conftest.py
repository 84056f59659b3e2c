"""Shared pytest setup: every test gets its own empty compile cache directory, and the
interpreter runs the schedule's engine queues with hazard checks (NKI_MLIR_HAZARDS=1,
read by Program.run at each run; a test that exercises a fault on purpose opts out with
``hazards=False`` or ``monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")``), and the compiler runs the
module verifier after the frontend and after every pass (NKI_MLIR_VERIFY_EACH_PASS=1)."""
import os

import pytest

os.environ.setdefault("NKI_MLIR_HAZARDS", "1")  # NKI_MLIR_HAZARDS=0 pytest ... for speed
os.environ.setdefault("NKI_MLIR_VERIFY_EACH_PASS", "1")  # verifier after the frontend and every pass


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    from nki_mlir.runtime import cache
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path / "nki-cache"))
    cache.memory_clear()
    yield
    cache.memory_clear()
