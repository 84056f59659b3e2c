"""The compile cache key carries a digest of nki-mlir's own source, so an artifact written by
another version of the compiler (an edited checkout, an upgrade without a version bump) is
never reused: a stale artifact would run the old compiler's output."""
import numpy as np

import kernels_for_tests as K
from nki_mlir.runtime import cache


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


def test_an_entry_of_other_compiler_sources_is_rebuilt(monkeypatch):
    """The cache key stays the same (docs show the artifact path), the manifest records the
    digest, and a disk entry with another digest is rebuilt instead of run."""
    x = np.ones((128, 64), np.float32)
    ck = K.add.compile(x, x)
    assert ck.manifest["compiler_digest"] == cache.compiler_digest()
    cache.memory_clear()
    assert K.add.compile(x, x).cache_hit == "disk"          # same sources: a disk hit
    cache.memory_clear()
    monkeypatch.setattr(cache, "_COMPILER_DIGEST", ["0123456789abcdef"])  # "edited" sources
    again = K.add.compile(x, x)
    assert again.cache_hit is None and again.manifest["compiler_digest"] == "0123456789abcdef"
    np.testing.assert_array_equal(again(x, x), 2 * x)
