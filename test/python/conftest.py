"""Shared pytest setup: every test gets its own empty compile cache directory."""
import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    from nki_mlir.runtime import cache
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path / "nki-cache"))
    cache.memory_clear()
    yield
    cache.memory_clear()
