"""nki_mlir.autotune: sweeps ranked by the cost model, rejected variants reported with
their errors, the reference check, the results cache, the process pool, Optuna and the
decorator (the Ray path: test_autotune_ray.py)."""
import json
import os

import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.autotune import autotune, tune
from nki_mlir.errors import NKIError

from autotune_kernels import dying_copy, tiled_add

SPACE = {"P": [128, 256], "TILE": [128, 256, 512]}


def _args():
    rng = np.random.default_rng(1)
    return [rng.standard_normal((256, 768)).astype(np.float32),
            rng.standard_normal((256, 768)).astype(np.float32)]


def _by_params(res):
    return {(r.params["P"], r.params["TILE"]): r for r in res.rows}


def test_ranking_and_rejections():
    a, b = _args()
    res = tune(tiled_add, [a, b], SPACE, workers=1)
    rows = _by_params(res)
    assert len(res.rows) == 6 and res.space_size == 6 and res.evaluated == 6
    # P=256 is no partition tile: rejected with the compiler's located message, not raised
    for tile in (128, 256, 512):
        r = rows[(256, tile)]
        assert r.status == "compile error" and r.latency_ns is None
        assert "autotune_kernels.py:19:" in r.reason and "partition dimension 256" in r.reason
    # TILE=512 does not divide 768: the last 256 columns are never written
    bad = rows[(128, 512)]
    assert bad.status == "mismatch" and "65536 of 196608 elements differ" in bad.reason
    # the valid variants rank by the cost model's latency, which is compile().estimate()'s
    assert [r.params for r in res.ok] == [{"P": 128, "TILE": 256}, {"P": 128, "TILE": 128}]
    for r in res.ok:
        ck = nki.compile(tiled_add, a, b, **r.params)
        est = ck.estimate()
        assert r.latency_ns == pytest.approx(est.latency_ns)
        assert r.ratio == pytest.approx(est.ratio) and r.checked
        assert r.sbuf_peak_bytes == ck.manifest["memory"]["sbuf_peak_bytes"]
        assert r.sbuf_peak_bytes >= r.params["TILE"] * 4 * 3   # three [P, TILE] fp32 tiles
        assert r.utilisation["vector"] > 0
    assert res.best is res.rows[0] and res.best.params == {"P": 128, "TILE": 256}
    assert res.rejected == res.rows[2:]
    text = str(res)
    assert "2 ok, 4 rejected" in text and "the first valid variant (P=128, TILE=128)" in text
    assert "3 variants (P=256, TILE=128; ...): compile error: " in text
    assert "P=128, TILE=512: mismatch: output 0 ('out')" in text


def test_given_reference_array_and_callable():
    a, b = _args()
    res = tune(tiled_add, [a, b], {"TILE": [256, 512]}, reference=lambda x, y: x + y, workers=1)
    assert [r.status for r in res.rows] == ["ok", "mismatch"]
    assert res.reference == "the given reference"
    wrong = tune(tiled_add, [a, b], {"TILE": [128, 256]}, reference=a - b, workers=1)
    assert wrong.best is None and {r.status for r in wrong.rows} == {"mismatch"}
    assert "every" not in str(wrong) and "0 ok, 2 rejected" in str(wrong)


def test_no_check_only_compiles_and_estimates():
    res = tune(tiled_add, ["256x768xf32", ((256, 768), np.float32)], {"TILE": [256, 512]},
               check=False, workers=1)
    assert [r.status for r in res.rows] == ["ok", "ok"]    # the wrong TILE=512 is not run
    assert not any(r.checked for r in res.rows) and res.reference == ""


def test_results_cache_makes_a_repeat_instant(tmp_path):
    a, b = _args()
    first = tune(tiled_add, [a, b], SPACE, workers=1)
    files = [f for f in os.listdir(os.environ["NKI_MLIR_CACHE_DIR"]) if f.startswith("autotune.")]
    assert len(files) == 1
    again = tune(tiled_add, [a, b], SPACE, workers=1)
    assert again.evaluated == 0 and all(r.cached for r in again.rows)
    assert again.backend == "the results cache"
    assert [(r.params, r.status, r.latency_ns, r.reason) for r in again.rows] == \
           [(r.params, r.status, r.latency_ns, r.reason) for r in first.rows]
    # other data is another sweep; a sub-space reuses the cached variants and checks
    assert tune(tiled_add, [a, a], SPACE, workers=1).evaluated == 6
    sub = tune(tiled_add, [a, b], {"P": [128], "TILE": [128, 512]}, workers=1)
    assert sub.evaluated == 0 and [r.status for r in sub.rows] == ["ok", "mismatch"]
    assert tune(tiled_add, [a, b], SPACE, workers=1, use_cache=False).evaluated == 6


def test_process_pool_matches_inline():
    a, b = _args()
    inline = tune(tiled_add, [a, b], SPACE, workers=1, use_cache=False)
    pooled = tune(tiled_add, [a, b], SPACE, workers=2, use_cache=False)
    assert pooled.backend == "process pool (2 workers)" and inline.backend == "inline"
    assert [(r.params, r.status, r.latency_ns, r.sbuf_peak_bytes) for r in pooled.rows] == \
           [(r.params, r.status, r.latency_ns, r.sbuf_peak_bytes) for r in inline.rows]


def test_pool_runs_a_kernel_defined_in_a_function():
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl

    @nki.jit
    def local_copy(a, TILE=128):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        for j in nl.affine_range(a.shape[1] // TILE):
            t = nl.ndarray((128, TILE), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[0:128, j * TILE:(j + 1) * TILE])
            nisa.dma_copy(dst=out[0:128, j * TILE:(j + 1) * TILE], src=t)
        return out

    res = tune(local_copy, ["128x512xf32"], {"TILE": [128, 512]}, reference=lambda a: a,
               workers=2)
    assert [r.status for r in res.rows] == ["ok", "ok"] and res.backend.startswith("process pool")


def test_pool_survives_a_variant_that_kills_its_worker():
    res = tune(dying_copy, ["128x512xf32"], {"DIE": [False, True], "TILE": [128, 256, 512]},
               reference=lambda a: a, workers=2)
    assert [r.status for r in res.rows] == ["ok"] * 3 + ["worker died"] * 3
    assert all(not r.params["DIE"] for r in res.ok)
    assert "kills the process" in res.rejected[0].reason


def test_bad_space_is_a_located_error():
    with pytest.raises(NKIError) as e:
        tune(tiled_add, ["256x768xf32"] * 2, {"TILES": [128]})
    assert "'TILES' is not a keyword parameter of kernel tiled_add" in str(e.value)
    assert e.value.loc is not None and e.value.loc.file == __file__
    with pytest.raises(NKIError, match="space\\['TILE'\\] is empty"):
        tune(tiled_add, ["256x768xf32"] * 2, {"TILE": []})
    with pytest.raises(NKIError, match="search='grid'"):
        tune(tiled_add, ["256x768xf32"] * 2, {"TILE": [128]}, search="grid")


def test_optuna_samples_distinct_variants():
    pytest.importorskip("optuna")
    res = tune(tiled_add, ["256x768xf32"] * 2, {"TILE": [128, 256, 384, 768]}, search="optuna",
               n_trials=3, check=False, workers=1)
    assert len(res.rows) == 3 and res.space_size == 4 and res.search == "optuna"
    assert len({r.params["TILE"] for r in res.rows}) == 3
    lat = [r.latency_ns for r in res.ok]
    assert lat == sorted(lat)


def test_optuna_samples_a_space_too_large_to_expand():
    pytest.importorskip("optuna")
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl

    @nki.jit
    def copy_k(a, TILE=128, **unused):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        for j in nl.affine_range(a.shape[1] // TILE):
            t = nl.ndarray((128, TILE), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[0:128, j * TILE:(j + 1) * TILE])
            nisa.dma_copy(dst=out[0:128, j * TILE:(j + 1) * TILE], src=t)
        return out

    huge = {"TILE": [128, 256], **{f"P{i}": [1, 2, 3, 4, 5] for i in range(8)}}
    res = tune(copy_k, ["128x256xf32"], huge, search="optuna", n_trials=2, check=False, workers=1)
    assert res.space_size == 781250 and len(res.rows) == 2
    with pytest.raises(NKIError, match="781250 variants .* search='optuna'"):
        tune(copy_k, ["128x256xf32"], huge)


def test_decorator_picks_caches_and_calls(monkeypatch):
    a, b = _args()
    tuned = autotune(configs=[{"TILE": 128}, {"TILE": 256}], key=["a.shape", "a.dtype"])(tiled_add)
    np.testing.assert_allclose(tuned(a, b), a + b, rtol=1e-6)
    key = "((256, 768), float32)"
    assert tuned.picks == {key: {"TILE": 256}}
    res = tuned.results[key]
    assert res.best.params == {"TILE": 256} and len(res.rows) == 2
    with open(tuned.path()) as f:
        assert json.load(f)[key]["index"] == 1
    # another process (a fresh Autotuner) reads the pick from disk without tuning
    import nki_mlir.autotune.sweep as tune_mod
    monkeypatch.setattr(tune_mod, "tune", lambda *a, **k: pytest.fail("tuned again"))
    fresh = autotune(configs=[{"TILE": 128}, {"TILE": 256}], key=["a.shape", "a.dtype"])(tiled_add)
    np.testing.assert_allclose(fresh(a, b), a + b, rtol=1e-6)
    assert fresh.picks == {key: {"TILE": 256}} and fresh.results == {}
    with pytest.raises(NKIError, match="TILE is chosen by @autotune"):
        fresh(a, b, TILE=128)
    with pytest.raises(NKIError, match="autotune key 'x.shape'"):
        autotune(configs=[{"TILE": 128}], key=["x.shape"])(tiled_add)


def test_cli_tune(capsys, tmp_path):
    from nki_mlir.tools.cli import main
    here = os.path.dirname(os.path.abspath(__file__))
    out_json = tmp_path / "rows.json"
    status = main(["tune", f"{here}/autotune_kernels.py::tiled_add", "--arg", "256x768xf32",
                   "--arg", "256x768xf32", "--space", "TILE=128,256,512", "--space", "P=128,256",
                   "--workers", "1", "--json", str(out_json)])
    out = capsys.readouterr().out
    assert status == 0 and "best: TILE=256, P=128" in out and "compile error" in out
    rows = json.loads(out_json.read_text())["rows"]
    assert len(rows) == 6 and rows[0]["status"] == "ok"
    from nki_mlir.tools.tune_cmd import parse_space
    assert parse_space(["ORDER=mn,nm", "T=1,2", "S='a b',None"]) == \
        {"ORDER": ["mn", "nm"], "T": [1, 2], "S": ["a b", None]}
    with pytest.raises(SystemExit, match="bad --space"):
        main(["tune", f"{here}/autotune_kernels.py::tiled_add", "--space", "TILE"])


def test_sweep_bench_compares_rankings_row_by_row():
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    from autotune_sweep import SPACE, compare
    from nki_mlir.autotune import Row, TuneResult
    import math
    assert math.prod(len(v) for v in SPACE.values()) >= 200
    assert {"TN", "BM", "BN", "KT", "BUFS", "ORDER"} <= set(SPACE)

    def res(rows):
        return TuneResult("k", [Row(dict(p), "ok", latency_ns=lat) for p, lat in rows])

    a = res([({"T": 1}, 10.0), ({"T": 2}, 20.0)])
    assert compare(a, res([({"T": 1}, 10.0), ({"T": 2}, 20.0)]))[0]
    same, text = compare(a, res([({"T": 2}, 20.0), ({"T": 1}, 10.0)]))
    assert not same and "first difference at rank 1" in text
    assert not compare(a, res([({"T": 1}, 10.0), ({"T": 2}, 20.5)]))[0]     # latency differs
    assert not compare(a, res([({"T": 1}, 10.0)]))[0]
