"""bench/nkilib_report_plugin.py's per-test limits and bench/nkilib_timing.py's busy time
(no nki-library checkout needed): nki-mlir's own time and the suite's harness time are
bounded separately, each stop says where the test was, and nested or concurrent nki-mlir
calls are counted once."""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))
import nkilib_causes  # noqa: E402
import nkilib_sample  # noqa: E402
import nkilib_suite  # noqa: E402
import nkilib_timing  # noqa: E402


def test_busy_time_counts_nested_and_concurrent_calls_once():
    nkilib_timing.take()
    inner = nkilib_timing._timed("run", lambda: time.sleep(0.2))
    outer = nkilib_timing._timed("call", lambda: inner())
    threads = [threading.Thread(target=outer) for _ in range(2)]
    for th in threads:
        th.start()
    time.sleep(0.05)
    now, running = nkilib_timing.busy()[0], nkilib_timing.busy()
    assert running[2] and now > 0
    for th in threads:
        th.join()
    time.sleep(0.2)                      # harness time: not nki-mlir's
    t = nkilib_timing.take()
    assert 0.2 <= t["nki"][0] < 0.35     # one interval of ~0.2 s, not 4 x 0.2 s
    assert t["nki"][1] < 0.1             # sleeping: no CPU
    assert t["run"][0] >= 0.4 and t["call"][0] >= 0.4   # per-phase totals add up
    assert nkilib_timing.busy()[0] < 0.01 and not nkilib_timing.busy()[2]


_TESTS = '''
import time
import nkilib_timing

def test_harness_slow():
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 30:
        sum(range(1000))

def _spin(s):
    t0 = time.process_time()
    while time.process_time() - t0 < s:
        sum(range(1000))

def test_nki_slow():
    nkilib_timing._timed("run", lambda: _spin(30))()

def test_nki_waits():
    nkilib_timing._timed("run", lambda: time.sleep(30))()

def test_both_fast():
    nkilib_timing._timed("run", lambda: time.sleep(0.3))()
    time.sleep(0.3)
'''


def test_limits_stop_the_right_tests_and_say_where(tmp_path):
    (tmp_path / "test_limits_case.py").write_text(_TESTS)
    report = tmp_path / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), str(ROOT)]),
           "NKILIB_REPORT": str(report), "NKILIB_TEST_TIMEOUT": "1.5",
           "NKILIB_TEST_TIMEOUT_WALL": "6",
           "NKILIB_HARNESS_TIMEOUT": "1.5", "NKILIB_MAX_RSS_GB": "0"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nkilib_report_plugin",
                    "-p", "no:cacheprovider", str(tmp_path / "test_limits_case.py")],
                   cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    import json
    recs = [json.loads(ln) for ln in report.read_text().splitlines()]
    per = nkilib_sample.summarise(recs, [r["nodeid"] for r in recs])["per"]
    by = {k.rsplit("::", 1)[1]: v for k, v in per.items()}
    h, n, ok = by["test_harness_slow"], by["test_nki_slow"], by["test_both_fast"]
    assert ok["kind"] == "passed" and 0.25 < ok["nki"]["nki"][0] < ok["duration"]
    assert h["kind"] == "failed" and "HarnessTimeout" in h["message"]
    assert nkilib_causes.cause(h, nkilib_sample.cause_key) == nkilib_causes.HARNESS
    assert nkilib_causes.site(h).endswith(tuple(f"test_limits_case.py:{i}" for i in (6, 7, 8)))
    assert h["duration"] < 10 and h["nki"]["nki"][0] < 0.1
    assert n["kind"] == "failed" and "TestTimeout" in n["message"]
    assert nkilib_causes.cause(n, nkilib_sample.cause_key).startswith(
        "timeout: nki-mlir's own time")
    cpu, wall = n["nki"]["nki"][1], n["nki"]["nki"][0]
    if "NKILIB_TEST_TIMEOUT_WALL" in n["message"]:     # a machine too loaded to give it CPU
        assert wall >= 6
    else:
        assert 1.5 <= cpu < 10
    w = by["test_nki_waits"]        # no CPU: the wall-time backstop stops it
    assert w["kind"] == "failed" and "NKILIB_TEST_TIMEOUT_WALL" in w["message"]
    assert 6 <= w["nki"]["nki"][0] < 15 and w["nki"]["nki"][1] < 1


_MEMORY = '''
import os
import signal
import time
import numpy as np
import nkilib_report_plugin as rp

os.environ["NKILIB_MAX_RSS_GB"] = str(round(rp._rss_gb() + 0.25, 3))

def test_soft():
    a = np.ones(int(0.28 * 2 ** 30) // 8)     # over the limit, under 1.2 times it
    time.sleep(20)

def test_hard():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})   # as inside one long C call
    a = np.ones(int(0.6 * 2 ** 30) // 8)
    time.sleep(20)
'''


def test_memory_limit_raises_then_ends_the_process(tmp_path):
    (tmp_path / "test_memory_case.py").write_text(_MEMORY)
    report = tmp_path / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), str(ROOT)]),
           "NKILIB_REPORT": str(report), "NKILIB_TEST_TIMEOUT": "0",
           "NKILIB_HARNESS_TIMEOUT": "0", "NKILIB_MAX_RSS_GB": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nkilib_report_plugin",
                           "-p", "no:cacheprovider", str(tmp_path / "test_memory_case.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 70, proc.stdout[-2000:]
    import json
    recs = {r["nodeid"].rsplit("::", 1)[1]: r
            for r in map(json.loads, report.read_text().splitlines())}
    soft, hard = recs["test_soft"], recs["test_hard"]
    assert soft["outcome"] == "failed"
    assert "MemoryLimit: the test's process reached" in soft["message"]
    assert nkilib_causes.cause(soft, nkilib_sample.cause_key) == nkilib_causes.MEMORY_SUITE
    assert soft["duration"] < 10 and soft["rss_gb"] > 0.25
    assert "over 1.2 x NKILIB_MAX_RSS_GB" in hard["message"] and hard["duration"] < 10
    assert nkilib_causes.site(hard).endswith(("test_memory_case.py:16", "test_memory_case.py:17"))


def _rec(nodeid, kind, message="", duration=1.0, nki=None):
    r = {"nodeid": nodeid, "kind": kind, "when": "call", "message": message, "where": "",
         "duration": duration}
    if nki is not None:
        r["nki"] = nki
    return r


def test_harness_stops_are_failures_listed_with_their_site_and_slowest_is_nki_time():
    stop = ("nkilib_report_plugin.HarnessTimeout: the suite's own code exceeded 600 s "
            "(NKILIB_HARNESS_TIMEOUT; nki-mlir time 0.0 s) in the suite's code at "
            "/w/nki-library/test/utils/gen.py:42 (nki-mlir not running)")
    per = {"a": _rec("f.py::a", "passed", duration=130.0,
                     nki={"nki": [12.0, 10.0], "compile": [8.0, 7.0], "run": [3.0, 2.5]}),
           "b": _rec("f.py::b", "passed", duration=20.0,
                     nki={"nki": [70.0, 61.0], "compile": [50.0, 40.0], "run": [19.0, 18.0]}),
           "h": _rec("f.py::h", "failed", stop, duration=601.0, nki={"nki": [0.0, 0]})}
    t = nkilib_suite.tally(per, ["a", "b", "h"])
    assert t["counts"]["failed"] == 1 and t["counts"]["excluded"] == 0
    lines = nkilib_suite.report(t, 5, nkilib_sample.slowest_table(per, 20))
    listed = [ln for ln in lines if "test/utils/gen.py:42" in ln]
    assert len(listed) == 1 and listed[0].rstrip().endswith("h")
    rows = [ln for ln in lines if ln.startswith("   ") and ln.rstrip()[-1] in "ab"]
    assert [r.rstrip()[-1] for r in rows] == ["b", "a"]   # by nki-mlir time, not call phase
    goal = next(ln for ln in lines if ln.startswith("slowest nki-mlir time"))
    assert goal.startswith("slowest nki-mlir time 61.0s cpu / 70.0s wall against the 60 s goal:"
                           " ABOVE GOAL (1 tests above it by CPU time, 1 by wall time")
    assert lines[-1] == "2 passed, 1 failed, 0 skipped"


_UNLOCATED = '''
def _no_line():
    raise RuntimeError("raised where the code has no line number")

_no_line.__code__ = _no_line.__code__.replace(co_linetable=b"")   # as some 3.11 instructions

def _wrapped():
    try:
        _no_line()
    except RuntimeError as exc:
        raise ValueError("the harness wraps it") from exc

def test_unlocated_frame():
    _wrapped()

def test_after():
    pass
'''


def test_failure_through_a_frame_without_line_is_reported(tmp_path):
    """A limit's exception raised at an instruction with no line number (tb_lineno None)
    made pytest's failure report crash (INTERNALERROR) and end the worker with the rest of
    the sample unrun; the plugin unlinks those entries: the test fails normally."""
    (tmp_path / "test_unlocated_case.py").write_text(_UNLOCATED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), str(ROOT)]),
           "NKILIB_TEST_TIMEOUT": "0", "NKILIB_HARNESS_TIMEOUT": "0", "NKILIB_MAX_RSS_GB": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nkilib_report_plugin",
                           "-p", "no:cacheprovider", str(tmp_path / "test_unlocated_case.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert "INTERNALERROR" not in out, out[-2000:]
    assert "1 failed, 1 passed" in out, out[-2000:]
    assert "the harness wraps it" in out
