"""The compile cache across processes and against damage: content-only keys (a second
process hits on disk), the LRU size bound, every kind of damaged entry reported and
rebuilt, concurrent writers, and no files left behind by uncached compiles."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import nki_mlir as nki
import kernels_for_tests as K
from nki_mlir.runtime import artifact, cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



@pytest.fixture
def script(tmp_path):
    import script_kernel
    return script_kernel.copy_to(tmp_path)


def _run(script, env_dir):
    env = {**os.environ, "NKI_MLIR_CACHE_DIR": str(env_dir),
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=300)


def test_second_process_hits_on_disk(script, tmp_path):
    d = tmp_path / "c"
    first, second = _run(script, d), _run(script, d)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.split() == ["None"] and second.stdout.split() == ["disk"]
    assert len(cache.entries(d)) == 1


def test_eight_concurrent_processes_leave_one_good_entry(script, tmp_path):
    d = tmp_path / "c"
    env = {**os.environ, "NKI_MLIR_CACHE_DIR": str(d),
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    es = cache.entries(d)
    assert len(es) == 1 and not [n for n in os.listdir(d) if n.startswith(".tmp-")]
    artifact.read_artifact(es[0].path)


@pytest.fixture
def xy():
    rng = np.random.default_rng(3)
    return rng.standard_normal((128, 64)).astype(np.float32), rng.standard_normal((128, 64)).astype(np.float32)


def _damage_manifest(path, edit):
    m = json.loads((path / "manifest.json").read_text())
    edit(m)
    (path / "manifest.json").write_text(json.dumps(m))


def _recheck(m):   # a damage that also recomputes the manifest checksum
    m["manifest_sha256"] = artifact._manifest_digest(m)


def _sha_list(p):
    _damage_manifest(p, lambda m: (m.__setitem__("sha256", ["x"]), _recheck(m)))


def _sha_str(p):
    _damage_manifest(p, lambda m: (m.__setitem__("sha256", "abc"), _recheck(m)))


def _returns_tuple(p):
    _damage_manifest(p, lambda m: m.__setitem__("returns_tuple", True))


def _output_shape(p):
    _damage_manifest(p, lambda m: m["outputs"][0].__setitem__("shape", [64, 64]))


def _ir_unparsable(p):
    text = b"module { this is not nisa }"
    (p / "kernel.nisa.mlir").write_bytes(text)

    def edit(m):
        m["sha256"]["kernel.nisa.mlir"] = artifact._sha256(text)
        _recheck(m)
    _damage_manifest(p, edit)


def _ir_garbage(p):
    (p / "kernel.nisa.mlir").write_bytes(b"\xff\xfe garbage")


def _missing_ir(p):
    (p / "kernel.nki.mlir").unlink()


def _empty_manifest(p):
    (p / "manifest.json").write_text("")


def _manifest_not_object(p):
    (p / "manifest.json").write_text("[1, 2]")


def _plain_file(p):
    import shutil
    shutil.rmtree(p)
    p.write_text("not a directory")


def _symlink_out(p):
    import shutil
    outside = p.parent.parent / "outside"
    shutil.copytree(p, outside)
    shutil.rmtree(p)
    p.symlink_to(outside, target_is_directory=True)


def _file_symlink(p):
    target = p.parent.parent / "elsewhere.mlir"
    target.write_bytes((p / "kernel.nisa.mlir").read_bytes())
    (p / "kernel.nisa.mlir").unlink()
    (p / "kernel.nisa.mlir").symlink_to(target)


DAMAGES = [_sha_list, _sha_str, _returns_tuple, _output_shape, _ir_unparsable, _ir_garbage,
           _missing_ir, _empty_manifest, _manifest_not_object, _plain_file, _symlink_out,
           _file_symlink]


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__.strip("_"))
def test_damaged_entry_is_reported_and_rebuilt(damage, xy):
    first = nki.compile(K.add, *xy)
    path = first.artifact
    damage(path)
    cache.memory_clear()
    with pytest.warns(UserWarning, match=f"damaged cache entry.*{path.name}"):
        again = nki.compile(K.add, *xy)
    assert again.cache_hit is None          # rebuilt, never trusted
    np.testing.assert_array_equal(again(*xy), xy[0] + xy[1])
    assert not again.artifact.is_symlink() and again.artifact.is_dir()
    artifact.read_artifact(again.artifact)  # the rebuilt entry is sound
    if damage is _symlink_out:              # the symlink's target outside the cache is untouched
        assert (path.parent.parent / "outside" / "manifest.json").exists()
    cache.memory_clear()
    assert nki.compile(K.add, *xy).cache_hit == "disk"


def test_disk_cache_is_bounded_least_recently_used_first(monkeypatch, xy):
    first = nki.compile(K.add, *xy)
    size = cache.entries()[0].bytes
    monkeypatch.setenv("NKI_MLIR_CACHE_MAX_BYTES", str(int(size * 2.5)))
    x = xy[0]
    kept = [first]
    for n in (32, 64, 96):
        kept.append(nki.compile(K.add, x[:n], x[:n]))
        os.utime(kept[0].artifact)        # the first entry stays the most recently used
    names = {e.path.name for e in cache.entries()}
    assert len(names) == 2 and kept[0].artifact.name in names and kept[-1].artifact.name in names
    assert sum(e.bytes for e in cache.entries()) <= size * 2.5


def test_memory_cache_is_bounded(monkeypatch, xy):
    monkeypatch.setenv("NKI_MLIR_MEMORY_CACHE_ENTRIES", "2")
    cache.memory_clear()
    a = [nki.compile(K.add, xy[0][:n], xy[1][:n]) for n in (16, 32, 48)]
    assert len(cache._MEMORY) == 2
    assert nki.compile(K.add, xy[0][:48], xy[1][:48]) is a[2]
    assert nki.compile(K.add, xy[0][:16], xy[1][:16]).cache_hit == "disk"


def test_memory_cache_bounds_the_decoded_instructions_it_keeps(monkeypatch, xy):
    # each add() program has 4 instructions: a budget of 6 keeps one decoded kernel, the
    # most recently used (checked again when a kernel is decoded, at its first run)
    monkeypatch.setenv("NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS", "6")
    cache.memory_clear()
    ran = []
    for n in (16, 32, 48):
        ck = nki.compile(K.add, xy[0][:n], xy[1][:n])
        np.testing.assert_array_equal(ck(xy[0][:n], xy[1][:n]), xy[0][:n] + xy[1][:n])
        ran.append(ck)
    assert [ck.weight() for ck in ran] == [4, 4, 4]
    assert list(cache._MEMORY.values()) == ran[2:]     # each went when the next one ran
    assert nki.compile(K.add, xy[0][:16], xy[1][:16]).cache_hit == "disk"


def test_an_evicted_kernel_is_not_kept_alive_by_its_warm_call_plan(monkeypatch, xy):
    import gc
    import weakref
    from nki_mlir.driver import warm
    monkeypatch.setenv("NKI_MLIR_MEMORY_CACHE_ENTRIES", "1")
    cache.memory_clear()
    a, b = xy[0][:16].copy(), xy[1][:16].copy()
    K.add(a, b)
    K.add(a, b)                             # a warm call: its plan holds the kernel
    (first,) = cache._MEMORY.values()
    assert any(p.ck is first for p in warm.PLANS.values())
    gone = weakref.ref(first)
    del first
    K.add(xy[0][:32].copy(), xy[1][:32].copy())     # evicts the first kernel
    gc.collect()
    assert gone() is None
    np.testing.assert_array_equal(K.add(a, b), a + b)   # and the call still works


def test_uncached_compile_leaves_no_files(xy, monkeypatch, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    ck = nki.compile(K.add, *xy, use_cache=False)
    np.testing.assert_array_equal(ck(*xy), xy[0] + xy[1])
    assert ck.artifact is None and os.listdir(tmp) == []
    assert "nisa.dma_copy" in ck.ir("nisa")
    saved = ck.save(tmp_path / "kept")
    manifest, ir = artifact.read_artifact(saved)
    assert ir["nisa"] == ck.ir("nisa") and manifest["kernel"] == "add"


def test_cache_command_info_and_clear(xy, capsys):
    from nki_mlir.tools.cli import main
    nki.compile(K.add, *xy)
    assert main(["cache", "info"]) == 0
    assert "entries: 1" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert cache.entries() == []


def test_ir_dump_after_every_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_DUMP_IR", str(tmp_path / "dump"))
    x = np.ones((256, 64), np.float32)
    ck = nki.compile(LOOPED, x, use_cache=False)
    (folder,) = (tmp_path / "dump").iterdir()
    assert folder.name.startswith("looped_scale-")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["00-frontend.nki.mlir", "01-nki-legalize.mlir", "02-lower-nki-to-nisa.mlir",
                     "03-nisa-allocate.mlir", "04-nisa-schedule.mlir"]
    assert "scf.for" in (folder / "00-frontend.nki.mlir").read_text()   # the loop stayed rolled
    assert (folder / "04-nisa-schedule.mlir").read_text() == ck.ir("nisa")


import nki_mlir.isa as _nisa  # noqa: E402
import nki_mlir.language as _nl  # noqa: E402


@nki.jit
def looped_scale(a):
    out = _nl.ndarray(a.shape, a.dtype, buffer=_nl.shared_hbm)
    for i in _nl.affine_range(a.shape[0] // 128):
        t = _nl.ndarray((128, a.shape[1]), a.dtype, buffer=_nl.sbuf)
        _nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        _nisa.tensor_scalar(dst=t, data=t, op0=_nl.multiply, operand0=3.0)
        _nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


LOOPED = looped_scale
