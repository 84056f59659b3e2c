"""Artifacts and the compile cache: round trip, hits, damaged entries, foreign artifacts."""
import json
import warnings

import numpy as np
import pytest

import nki_mlir as nki
import kernels_for_tests as K
from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up
from nki_mlir.errors import ArtifactError
from nki_mlir.runtime import artifact, cache


@pytest.fixture
def xy():
    rng = np.random.default_rng(7)
    return rng.standard_normal((128, 256)).astype(np.float32), rng.standard_normal((128, 256)).astype(np.float32)


def test_artifact_round_trip(xy):
    ck = nki.compile(K.add, *xy)
    manifest, ir = artifact.read_artifact(ck.artifact)
    assert manifest["format"] == "nki-mlir-artifact" and manifest["format_version"] == 1
    assert manifest["kernel"] == "add" and manifest["target"] == "trn2"
    assert manifest["args"][0]["shape"] == [128, 256] and manifest["outputs"][0]["dtype"] == "float32"
    assert manifest["pipeline"] == ["nki-legalize", "lower-nki-to-nisa", "nisa-allocate", "nisa-schedule"]
    assert ir["nisa"] == ck.ir("nisa")
    module = compiler.parse_module(ir["nisa"])  # the artifact text parses and verifies
    from nki_mlir.runtime.interpreter import decode
    out = decode(module, "add").run(list(xy))
    np.testing.assert_array_equal(out[0], xy[0] + xy[1])


def test_memory_cache_hit_returns_the_same_kernel(xy):
    first = nki.compile(K.add, *xy)
    assert first.cache_hit is None
    assert nki.compile(K.add, *xy) is first
    other = nki.compile(K.add, xy[0][:64], xy[1][:64])  # new shapes: new compile
    assert other is not first and other.artifact != first.artifact


def test_disk_cache_hit_skips_the_pipeline(xy, monkeypatch):
    first = nki.compile(K.add, *xy)
    cache.memory_clear()

    def boom(*a, **k):
        raise AssertionError("the pipeline ran on a cache hit")

    monkeypatch.setattr(compiler, "run_pipeline", boom)
    monkeypatch.setattr(compiler, "build_module", boom)
    again = nki.compile(K.add, *xy)
    assert again.cache_hit == "disk" and again.artifact == first.artifact
    np.testing.assert_array_equal(again(*xy), xy[0] + xy[1])


def test_damaged_cache_entry_is_reported_and_rebuilt(xy):
    first = nki.compile(K.add, *xy)
    (first.artifact / "kernel.nisa.mlir").write_text("this is not MLIR")
    cache.memory_clear()
    with pytest.warns(UserWarning, match="damaged cache entry"):
        again = nki.compile(K.add, *xy)
    assert again.cache_hit is None  # rebuilt, not trusted
    np.testing.assert_array_equal(again(*xy), xy[0] + xy[1])
    artifact.read_artifact(again.artifact)  # and the rebuilt entry is sound


def test_foreign_and_future_artifacts_are_rejected(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ArtifactError, match="not an nki-mlir artifact"):
        artifact.read_artifact(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "nki-mlir-artifact", "format_version": 99}))
    with pytest.raises(ArtifactError, match="format version"):
        artifact.read_artifact(tmp_path)
    (tmp_path / "manifest.json").write_text("{ not json")
    with pytest.raises(ArtifactError, match="unreadable"):
        artifact.read_artifact(tmp_path)


def test_artifact_write_is_atomic_and_keeps_the_first_writer(tmp_path):
    dest = tmp_path / "k-0123"
    ir = {"nisa": "module {}\n", "nki": "module {}\n"}
    artifact.write_artifact(dest, {"kernel": "k", "n": 1}, ir)
    artifact.write_artifact(dest, {"kernel": "k", "n": 2}, ir)  # loser of a race
    manifest, _ = artifact.read_artifact(dest)
    assert manifest["n"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["k-0123"]  # no temp dirs left behind


def test_cache_key_depends_on_constants_and_target(xy):
    a = nki.compile(K.scaled_rows, np.zeros((128, 512), np.float32), 2.0, 1)
    b = nki.compile(K.scaled_rows, np.zeros((128, 512), np.float32), 3.0, 1)
    c = nki.compile(K.scaled_rows, np.zeros((128, 512), np.float32), 2.0, 1, target="trn1")
    assert len({a.artifact, b.artifact, c.artifact}) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nki.compile(K.scaled_rows, np.zeros((128, 512), np.float32), 2.0, 1) is a


def test_cache_key_follows_global_data_the_kernel_reads(monkeypatch):
    import cache_kernels as C
    x = np.ones((4, 3), np.float32)
    first = C.add_table(x)
    np.testing.assert_array_equal(first, x + C.TABLE)
    monkeypatch.setattr(C, "TABLE", C.TABLE * 10)  # same source file, different data
    second = C.add_table(x)
    np.testing.assert_array_equal(second, x + C.TABLE)
    assert not np.array_equal(first, second)
