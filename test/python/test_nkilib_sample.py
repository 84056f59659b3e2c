"""bench/nkilib_sample.py's bookkeeping (no nki-library checkout needed): sampling, cause
grouping and per-test outcomes from the report plugin's JSON lines."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
_spec = importlib.util.spec_from_file_location("nkilib_sample", BENCH / "nkilib_sample.py")
ns = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ns)


def test_sample_is_every_nth_from_offset():
    ids = [f"t{i}" for i in range(10)]
    assert ns.sample(ids, 3) == ["t0", "t3", "t6", "t9"]
    assert ns.sample(ids, 3, offset=4) == ["t1", "t4", "t7"]   # offset modulo N
    assert ns.sample(ids, 1) == ids


def test_causes_group_by_first_line_with_digits_normalised():
    assert ns.cause_key("KeyError: 'x' at 12") == ns.cause_key("KeyError: 'x' at 345")
    assert ns.cause_key("KeyError: 'x'") != ns.cause_key("KeyError: 'y'")


def test_summary_ranks_setup_errors_over_call_outcomes():
    rec = lambda nodeid, when, outcome, msg="": {  # noqa: E731
        "nodeid": nodeid, "when": when, "outcome": outcome, "message": msg, "where": "", "duration": 0}
    records = [rec("a", "call", "passed"), rec("a", "teardown", "failed", "OSError: 1"),
               rec("b", "call", "failed", "ValueError: 2"), rec("c", "setup", "skipped", "slow"),
               rec("d", "call", "failed", "ValueError: 3")]
    s = ns.summarise(records, ["a", "b", "c", "d", "e"])
    assert dict(s["counts"]) == {"error": 1, "failed": 2, "skipped": 1, "not run": 1}
    assert [len(v) for v in s["causes"].values()] == [1, 2]   # ValueError 2 and 3 grouped


def test_ids_become_paths_under_the_rootdir(tmp_path):
    (tmp_path / "test" / "unit").mkdir(parents=True)
    (tmp_path / "test" / "unit" / "test_a.py").write_text("")
    assert ns.as_arg(tmp_path, "unit/test_a.py::test_x[1]") == "test/unit/test_a.py::test_x[1]"


def test_the_watchdogs_record_of_an_ended_worker_outranks_the_crash_report():
    ended = {"nodeid": "a", "when": "call", "outcome": "failed", "where": "x.py:3",
             "message": "nkilib_report_plugin.MemoryLimit: ... the process was ended ...",
             "duration": 5}
    crash = {"nodeid": "a", "when": "???", "outcome": "failed", "where": "", "duration": 0,
             "message": "worker 'gw0' crashed while running 'a'"}
    s = ns.summarise([ended, crash], ["a"])
    assert s["per"]["a"]["message"].startswith("nkilib_report_plugin.MemoryLimit")
    assert ns.summarise([crash], ["a"])["per"]["a"]["message"].startswith("worker 'gw0'")


def test_several_tests_run_in_xdist_workers_even_one_so_a_memory_end_stops_one_test():
    # in-process, the memory limit's end of the process would leave every later test not run
    assert ns._xdist(1, 1) == []
    assert ns._xdist(1, 40) == ["-n", "1", "--max-worker-restart", "40"]
    assert ns._xdist(2, 40) == ["-n", "2", "--max-worker-restart", "40"]
