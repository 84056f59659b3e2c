"""bench/nkilib_report_plugin.py's memory bookkeeping between tests (no nki-library checkout
needed): a failed test's frames are not kept alive into the next test, and ``NKILIB_RSS_LOG``
records each test's settled resident memory at its start and end and each kernel call's."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

_CASE = '''
import gc
import weakref
import pytest
import nki_mlir  # noqa: F401  (NKILIB_RSS_DROP then makes nki-mlir forget its caches)

REFS = []


class Big:
    pass


def test_fails():
    big = Big()             # a local of the failing test's frame (the suite's inputs)
    REFS.append(weakref.ref(big))
    assert big is None


@pytest.fixture
def freed_before_setup():
    gc.collect()
    return REFS[0]() is None


def test_next(freed_before_setup):
    assert freed_before_setup


def test_call():
    import numpy as np
    import kernels_for_tests as K
    from nki_cpu_simulator import nki as cs
    x = np.ones((128, 64), np.float32)
    assert (cs.cpu_simulate(K.add)[1](a=x, b=x) == 2).all()
'''


def test_a_failed_test_is_not_kept_alive_and_rss_is_logged(tmp_path):
    (tmp_path / "test_rss_case.py").write_text(_CASE)
    log, report = tmp_path / "rss.jsonl", tmp_path / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), str(ROOT),
                                                        str(ROOT / "test" / "python")]),
           "NKILIB_REPORT": str(report), "NKILIB_RSS_LOG": str(log), "NKILIB_RSS_DROP": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nkilib_report_plugin",
                           "-p", "no:cacheprovider", str(tmp_path / "test_rss_case.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 failed, 2 passed" in proc.stdout, proc.stdout[-2000:]
    recs = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [r["nodeid"].rsplit("::", 1)[1] for r in recs] == ["test_fails", "test_next",
                                                               "test_call"]
    for r in recs:
        assert r["pid"] == recs[0]["pid"] and r["worker"] == ""
        assert all(r[k] > 0 for k in ("start", "end", "trimmed", "dropped"))
    assert recs[0]["calls"] == recs[1]["calls"] == []
    (before, peak, after), = recs[2]["calls"]       # one kernel call: [before, peak, after]
    assert 0 < before <= peak and after <= peak
