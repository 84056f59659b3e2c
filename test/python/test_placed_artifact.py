"""A placed compile's artifact holds its nki and nisa modules in the compact form only; their
texts are printed when asked for (nki_mlir.runtime.artifact.required; the suite runs with
NKI_MLIR_HAZARDS=1, so these tests turn the hazard checks off to get a placed compile)."""
import json

import numpy as np
import pytest

import nki_mlir as nki
import kernels_for_tests as K
import spmd_kernels as SK
from nki_mlir.driver.pipeline import print_module
from nki_mlir.errors import ArtifactError
from nki_mlir.runtime import artifact, cache, ir_compact


@pytest.fixture
def xy():
    rng = np.random.default_rng(5)
    return tuple(rng.standard_normal((128, 512)).astype(np.float32) for _ in range(2))


@pytest.fixture(autouse=True)
def program_order(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")


def _placed(kernel, *args):
    out, compiled = kernel.run(args, {})
    assert compiled[0].stage == "placed"
    return out, compiled[0]


def test_the_placed_artifact_has_no_ir_text_and_prints_it_when_asked(xy):
    _, ck = _placed(nki.jit(K.add), *xy)
    files = sorted(p.name for p in ck.artifact.iterdir())
    assert files == ["kernel.nisa.compact.json", "kernel.nki.compact.json", "manifest.json"]
    assert "nisa" not in ck._ir and "nki" not in ck._ir          # not printed by the compile
    manifest, ir = artifact.read_artifact(ck.artifact)
    assert set(ir) == {"nki_compact", "compact"}
    assert json.loads(ir["compact"])["text_sha256"] is None
    text = ck.own_ir("nisa")                                     # printed now, from the form
    assert text == print_module(ir_compact.decode(ir["compact"]))
    assert "nisa.alloc" in text and "nkim.deps" not in text


def test_the_nki_text_printed_from_the_form_is_the_frontends(xy, monkeypatch):
    _, ck = _placed(nki.jit(K.add), *xy)
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")                  # a final compile prints it
    final = nki.compile(K.add, *xy)
    assert final.stage == "final" and "nki" in final._ir
    assert ck.own_ir("nki") == final.own_ir("nki") and "nki.dma_copy" in final.own_ir("nki")
    assert ck.ir("nki") == final.ir("nki")


def test_a_placed_disk_hit_runs_and_prints_the_same_text(xy):
    out, ck = _placed(nki.jit(K.add), *xy)
    text = ck.own_ir("nisa")
    cache.memory_clear()
    again, hit = _placed(nki.jit(K.add), *xy)
    assert hit.cache_hit == "disk"
    np.testing.assert_array_equal(again, out)
    assert hit.own_ir("nisa") == text
    assert hit.final().own_ir("nisa") == ck.final().own_ir("nisa")


def _drop(fname):
    def damage(p):
        (p / fname).unlink()
    return damage


def _garbage(fname):
    def damage(p):
        (p / fname).write_text('{"format": "nki-mlir-compact-ir"')
    return damage


def _unlisted(stage):
    def damage(p):
        m = json.loads((p / "manifest.json").read_text())
        del m["files"][stage]
        m["manifest_sha256"] = artifact._manifest_digest(m)
        (p / "manifest.json").write_text(json.dumps(m))
    return damage


NISA, NKI = "kernel.nisa.compact.json", "kernel.nki.compact.json"
DAMAGES = {"drop-nisa": (_drop(NISA), None), "garbage-nisa": (_garbage(NISA), None),
           "unlisted-nisa": (_unlisted("compact"), "no kernel.nisa.compact.json or kernel.nisa.mlir"),
           "drop-nki": (_drop(NKI), None), "garbage-nki": (_garbage(NKI), None),
           "unlisted-nki": (_unlisted("nki_compact"), "no kernel.nki.compact.json or kernel.nki.mlir")}


@pytest.mark.parametrize("name", DAMAGES)
def test_a_damaged_placed_entry_is_reported_and_rebuilt(name, xy):
    damage, unlisted = DAMAGES[name]
    _, ck = _placed(nki.jit(K.add), *xy)
    damage(ck.artifact)
    if unlisted:        # a placed manifest listing no form of one module at all
        with pytest.raises(ArtifactError, match=unlisted):
            artifact.read_artifact(ck.artifact)
    cache.memory_clear()
    with pytest.warns(UserWarning, match="damaged cache entry"):
        out, again = _placed(nki.jit(K.add), *xy)
    assert again.cache_hit is None
    np.testing.assert_array_equal(out, xy[0] + xy[1])


def test_a_final_artifact_must_hold_the_nisa_text(xy, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")
    ck = nki.compile(K.add, *xy)
    with pytest.raises(ValueError, match="internal error: an artifact with no kernel.nisa.mlir"):
        artifact.encode(ck.manifest, {"nki": ck.own_ir("nki"), "compact": ck.own_ir("compact")})


def test_a_form_made_without_its_text_matches_no_text(xy):
    _, ck = _placed(nki.jit(K.add), *xy)
    data = ck.own_ir("compact")
    with pytest.raises(ir_compact.CompactError, match="not made from this module's text"):
        ir_compact.decode(data, ck.own_ir("nisa"))


def test_the_manifest_names_the_cross_core_instructions(xy):
    x = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
    _, compiled = SK.lnc_exchange[2].run((x,), {})
    assert compiled[0].manifest["cross_core_ops"] == ["nisa.core_barrier", "nisa.sendrecv"]
    _, ck = _placed(nki.jit(K.add), *xy)
    assert ck.manifest["cross_core_ops"] == []
