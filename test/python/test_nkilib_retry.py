"""bench/nkilib_retry.py: tests the memory limit stopped in the suite's code are run again
alone, and the report says which passed and which still exceeded the machine (no
nki-library checkout needed: the runs are stand-ins that return the plugin's records)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import nkilib_retry  # noqa: E402
import nkilib_suite  # noqa: E402

SUITE_STOP = ("nkilib_report_plugin.MemoryLimit: the test's process reached 7.9 GiB resident "
              "(NKILIB_MAX_RSS_GB = 7) in the suite's code at /c/nki-library/test/integration/"
              "t.py:613 (nki-mlir not running)")
OURS_STOP = ("nkilib_report_plugin.MemoryLimit: the test's process reached 7.9 GiB resident "
             "(NKILIB_MAX_RSS_GB = 7) in nki-mlir at /w/nki_mlir/runtime/program.py:333")


def _rec(nodeid, outcome, message="", rss=0.0):
    return {"nodeid": nodeid, "when": "call", "outcome": outcome, "message": message,
            "where": "", "duration": 1.0, "rss_gb": rss}


def _per(*recs):
    return {r["nodeid"]: {**r, "kind": r["outcome"]} for r in recs}


def test_only_memory_stops_in_the_suite_code_are_retried():
    per = _per(_rec("a", "failed", SUITE_STOP), _rec("b", "failed", OURS_STOP),
               _rec("c", "passed"), _rec("d", "failed", "AssertionError: x"))
    assert nkilib_retry.memory_stopped(per, ["a", "b", "c", "d", "e"]) == ["a"]


def test_a_retry_run_ended_by_the_limit_runs_the_rest_again():
    calls = []

    def run(ids):
        calls.append(list(ids))
        if len(calls) == 1:     # the process was ended at "b": "c" has no record
            return [_rec("a", "passed"), _rec("b", "failed", SUITE_STOP.replace("7.9", "19.5"),
                                               19.5)], 1.0, False
        return [_rec("c", "failed", "AssertionError: golden")], 2.0, False

    again, dt = nkilib_retry.retry(run, ["a", "b", "c"])
    assert calls == [["a", "b", "c"], ["c"]] and dt == 3.0
    assert {i: r["kind"] for i, r in again.items()} == {"a": "passed", "b": "failed",
                                                        "c": "failed"}
    lines = nkilib_retry.report(["a", "b", "c"], again, 16.6, 7.0, dt)
    assert "1 passed, 1 still exceeded the machine, 1 other outcomes" in lines[0]
    assert lines[1].startswith("  passed on retry") and lines[1].endswith("  a")
    assert "19.5 GiB at test/integration/t.py:613" in lines[2]
    assert "failed on retry" in lines[3] and "AssertionError: golden" in lines[3]


def test_a_run_that_records_nothing_ends_the_retries():
    again, _ = nkilib_retry.retry(lambda ids: ([], 0.5, False), ["a"])
    assert again == {}
    lines = nkilib_retry.report(["a"], again, 16.6, 7.0, 0.5)
    assert "not run on retry" in lines[1]


def test_the_retry_outcome_replaces_the_first_in_the_counts():
    per = _per(_rec("a", "failed", SUITE_STOP, 7.9), _rec("b", "failed", SUITE_STOP, 7.9))
    again = _per(_rec("a", "passed", rss=9.1), _rec("b", "failed", SUITE_STOP, 19.0))
    merged = nkilib_retry.merge(per, again)
    assert merged["a"]["first"] == {"message": SUITE_STOP, "rss_gb": 7.9}
    c = nkilib_suite.tally(merged, ["a", "b"])["counts"]
    assert (c["passed"], c["failed"], c["excluded"]) == (1, 1, 0)   # nki-mlir's share unknown


def _nki(compiles, runs):
    return {"nki": [0.0, 0.0], "compiles": compiles, "runs": runs}


def test_inputs_alone_over_the_machine_are_excluded_only_before_nki_mlir_ran():
    per = _per(*(_rec(i, "failed", SUITE_STOP, 7.9) for i in "abcd"))
    again = _per(_rec("a", "failed", SUITE_STOP, 19.0), _rec("b", "failed", SUITE_STOP, 19.0),
                 _rec("c", "failed", SUITE_STOP, 19.0))
    again["a"]["nki"] = _nki(0, 0)     # stopped in the suite's input generation
    again["b"]["nki"] = _nki(1, 1)     # stopped in the golden, after nki-mlir ran
    # "c": a record without nki-mlir's calls (an old plugin's ended process): a failure
    per["d"]["nki"] = _nki(0, 0)       # not retried (--no-retry): a failure
    t = nkilib_suite.tally(nkilib_retry.merge(per, again), ["a", "b", "c", "d"])
    assert (t["counts"]["failed"], t["counts"]["excluded"]) == (3, 1)
    [(name, [rec])] = t["excluded"].items()
    assert name == "inputs larger than this machine's memory" and rec["nodeid"] == "a"


def test_the_retry_limit_ends_the_process_at_85_percent_of_the_machine():
    import nkilib_report_plugin as rp
    import nkilib_sample
    total = nkilib_sample.machine_gb()
    gb = nkilib_retry.machine_rss_gb(available=total)
    assert abs(gb * rp.HARD_RSS - 0.85 * total) < 0.2
    # other processes hold memory: the retry is ended at what is available, not at 85%
    gb = nkilib_retry.machine_rss_gb(available=0.5 * total)
    assert abs(gb * rp.HARD_RSS - 0.5 * total) < 0.2
    assert 0 < nkilib_retry.available_gb() <= total + 0.01


def test_a_process_ended_past_the_hard_limit_records_what_nki_mlir_did():
    """The watchdog's record of a process it ends says whether nki-mlir compiled or ran in
    the test, so a retried test ended in the suite's input generation is known to be the
    inputs alone (excluded), and one ended after nki-mlir ran stays a failure."""
    import nkilib_report_plugin as rp
    import nkilib_timing
    nkilib_timing.take()
    msg = SUITE_STOP.replace("(NKILIB_MAX_RSS_GB = 7)", "over 1.2 x NKILIB_MAX_RSS_GB = 7: the "
                             "process was ended")
    ended = rp.ended_record("a", msg, "in the suite's code at t.py:517", 19.0, 20.1)
    assert ended["nki"]["compiles"] == 0 and ended["nki"]["runs"] == 0
    nkilib_timing._COUNTS["run"] = 1       # (what an nki-mlir run in the test records)
    after_run = rp.ended_record("b", msg, "in the suite's code at t.py:517", 19.0, 20.1)
    assert after_run["nki"]["runs"] == 1
    per = _per(_rec("a", "failed", SUITE_STOP, 7.9), _rec("b", "failed", SUITE_STOP, 7.9))
    again = {r["nodeid"]: {**r, "kind": "failed"} for r in (ended, after_run)}
    t = nkilib_suite.tally(nkilib_retry.merge(per, again), ["a", "b"])
    assert (t["counts"]["failed"], t["counts"]["excluded"]) == (1, 1)
    [(name, [rec])] = t["excluded"].items()
    assert name == "inputs larger than this machine's memory" and rec["nodeid"] == "a"
