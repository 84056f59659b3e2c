"""@autotune across processes: the first process picks the config the cost model estimates
fastest and writes it to the cache directory; a new Python process (a subprocess, same
cache directory) reuses the pick without tuning; a key it has not seen is tuned there."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nki_mlir as nki

from autotune_kernels import tiled_add

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIGS = [{"TILE": 128}, {"TILE": 256}, {"TILE": 384}]

# The child process: decorate tiled_add, call it on the shapes given in argv, and print what
# happened as JSON.  NO_TUNE=1 makes any call of tune() fail the child.
CHILD = r"""
import json, os, sys
import numpy as np
sys.path.insert(0, {here!r})
import nki_mlir.autotune.sweep as sweep_mod
from nki_mlir.autotune import autotune
from autotune_kernels import tiled_add

calls = []
real_tune = sweep_mod.tune
def counting_tune(*a, **k):
    if os.environ.get("NO_TUNE") == "1":
        raise SystemExit("tune() called in a process that must reuse the pick")
    calls.append(1)
    return real_tune(*a, **k)
sweep_mod.tune = counting_tune

tuned = autotune(configs={configs!r}, key=["a.shape"], workers=1)(tiled_add)
out = {{"picks": {{}}, "tuned": 0, "max_err": 0.0}}
for cols in map(int, sys.argv[1:]):
    rng = np.random.default_rng(cols)
    a = rng.standard_normal((128, cols)).astype(np.float32)
    b = rng.standard_normal((128, cols)).astype(np.float32)
    got = tuned(a, b)
    out["max_err"] = max(out["max_err"], float(np.max(np.abs(got - (a + b)))))
out["picks"] = {{k: v["TILE"] for k, v in tuned.picks.items()}}
out["tuned"] = len(calls)
out["path"] = str(tuned.path())
print(json.dumps(out))
"""


def _child(tmp_path, cache_dir, cols, no_tune=False):
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(here=HERE, configs=CONFIGS))
    env = {**os.environ, "NKI_MLIR_CACHE_DIR": str(cache_dir), "NO_TUNE": "1" if no_tune else "0",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, str(script), *map(str, cols)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fastest(cols):
    """The config with the lowest estimated latency, computed here without @autotune."""
    a = np.zeros((128, cols), np.float32)
    lat = {c["TILE"]: nki.compile(tiled_add, a, a, **c).estimate().latency_ns for c in CONFIGS}
    assert len(set(lat.values())) == len(lat), f"ties make the pick ambiguous: {lat}"
    return min(lat, key=lat.get), lat


def test_pick_is_fastest_cached_and_reused_in_a_new_process(tmp_path):
    cache_dir = tmp_path / "cache"
    best, lat = _fastest(768)
    # the estimates really differ, so picking the first or any fixed config would fail
    assert best != CONFIGS[0]["TILE"], lat

    first = _child(tmp_path, cache_dir, [768])
    assert first["tuned"] == 1 and first["max_err"] < 1e-5
    assert first["picks"] == {"(128, 768)": best}
    with open(first["path"]) as f:
        on_disk = json.load(f)
    assert on_disk["(128, 768)"]["config"] == json.dumps({"TILE": best}, sort_keys=True)
    assert on_disk["(128, 768)"]["index"] == [c["TILE"] for c in CONFIGS].index(best)
    assert on_disk["(128, 768)"]["latency_ns"] == pytest.approx(lat[best])

    # a new process: the same pick, read from disk, tune() never called (NO_TUNE fails it)
    second = _child(tmp_path, cache_dir, [768], no_tune=True)
    assert second["tuned"] == 0 and second["picks"] == first["picks"]
    assert second["max_err"] < 1e-5 and second["path"] == first["path"]

    # a new key in a third process is tuned there; the known key is still reused
    best_wide, _ = _fastest(1536)
    third = _child(tmp_path, cache_dir, [768, 1536])
    assert third["tuned"] == 1
    assert third["picks"] == {"(128, 768)": best, "(128, 1536)": best_wide}

    # another cache directory knows nothing: it tunes again
    assert _child(tmp_path, tmp_path / "other", [768])["tuned"] == 1
