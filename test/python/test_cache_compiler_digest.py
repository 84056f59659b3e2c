"""The compile cache key carries a digest of nki-mlir's own source, so an artifact written by
another version of the compiler (an edited checkout, an upgrade without a version bump) is
never reused: a stale artifact would run the old compiler's output."""
import numpy as np

import kernels_for_tests as K
from nki_mlir.runtime import cache
from nki_mlir.version import __version__


def test_digest_follows_the_source(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "b.py").write_text("y = 2\n")
    d1 = cache.compiler_digest(tmp_path / "pkg")
    assert d1 == cache.compiler_digest(tmp_path / "pkg") and len(d1) == 16
    (tmp_path / "pkg" / "b.py").write_text("y = 3\n")
    assert cache.compiler_digest(tmp_path / "pkg") != d1
    (tmp_path / "pkg" / "b.py").rename(tmp_path / "pkg" / "c.py")
    assert cache.compiler_digest(tmp_path / "pkg") not in (d1,)


def test_the_key_names_version_and_digest(monkeypatch):
    from nki_mlir.driver import compile as drv
    seen = []
    real = cache.cache_key
    monkeypatch.setattr(cache, "cache_key", lambda parts: seen.append(parts) or real(parts))
    x = np.ones((128, 64), np.float32)
    drv.compile_kernel(K.add.fn, (x, x), {})
    assert seen and seen[0]["compiler"] == f"{__version__}+{cache.compiler_digest()}"
