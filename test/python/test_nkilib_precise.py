"""bench/nkilib_precise.py (``nkilib_suite.py --precise-fp-check``): the suite's numeric
mismatches, and only those, are run again with ``NKI_PRECISE_FP=0``; the report says which
pass then and which still fail, and they stay counted as failures (no nki-library checkout
needed: the run is a stand-in that returns the plugin's records)."""
import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import nkilib_precise  # noqa: E402
import nkilib_suite  # noqa: E402

MISMATCH = "test.utils.exceptions.ValidationException: Validation failed for ['X_out']"
V_CACHE = "test.utils.exceptions.ValidationException: Validation failed for ['V_cache']"
#: an attention-block test id whose config quantises the QKV input statically (field 20: 1)
STATIC_ATTN_BLK = ("integration/nkilib/experimental/transformer/test_attention_block_tkg.py::"
                   "TestRangeAttnBlk::test_attn_blk_model[MODEL_WIP_GENERALITY_32-1-128-7168-None-"
                   "10240-10240-1-32-True-False-True-False-False-True-True-False-False-bfloat16-"
                   "1-2-False-True-False-False-False-None-True-True-default-1-1-False]")


def _rec(nodeid, outcome, message=""):
    return {"nodeid": nodeid, "when": "call", "outcome": outcome, "message": message,
            "where": "", "duration": 1.0, "rss_gb": 0.0}


def _per(*recs):
    return {r["nodeid"]: {**r, "kind": r["outcome"]} for r in recs}


def test_only_numeric_mismatches_of_the_simulator_are_checked():
    per = _per(_rec("a", "failed", MISMATCH), _rec("b", "failed", "AssertionError: x"),
               _rec("c", "passed"),
               # the excluded fp8 KV-cache golden defect (nkilib_causes) is not checked
               _rec(STATIC_ATTN_BLK, "failed", V_CACHE))
    assert nkilib_precise.mismatches(per, list(per) + ["e"]) == ["a"]


def test_the_check_runs_with_the_variable_and_reports_each_test():
    per = _per(_rec("a", "failed", MISMATCH), _rec("b", "failed", MISMATCH),
               _rec("c", "failed", "AssertionError: x"))
    seen = []

    def run(ids):
        seen.append(list(ids))
        return [_rec("a", "passed"), _rec("b", "failed", MISMATCH)], 3.0, False

    ns = argparse.Namespace(precise_fp_check=True)
    lines = nkilib_precise.run_checks(ns, per, ["a", "b", "c"], [], run=run)
    assert seen == [["a", "b"]]
    assert "2 numeric mismatches" in lines[0] and "1 pass, 1 still fail" in lines[0]
    assert lines[1] == ("  passes with NKI_PRECISE_FP=0 (the kernel's bf16/fp8 storage vs the "
                        "suite's fp32 golden): a")
    assert lines[2].startswith("  still fails with NKI_PRECISE_FP=0: b: ") and \
        "Validation failed" in lines[2]
    # the outcomes are not changed: both stay failures in the tally
    t = nkilib_suite.tally(per, ["a", "b", "c"])
    assert t["counts"]["failed"] == 3 and t["counts"]["passed"] == 0


def test_off_by_default_and_the_environment_is_restored(monkeypatch):
    per = _per(_rec("a", "failed", MISMATCH))
    assert nkilib_precise.run_checks(argparse.Namespace(precise_fp_check=False), per, ["a"],
                                     [], run=lambda ids: 1 / 0) == []
    monkeypatch.delenv("NKI_PRECISE_FP", raising=False)
    got = {}

    def fake_run_sample(root, ids, workers, *a, **k):
        got["env"], got["workers"] = os.environ.get("NKI_PRECISE_FP"), workers
        return [_rec("a", "passed")], 1.0, False

    monkeypatch.setattr(nkilib_precise.nkilib_sample, "run_sample", fake_run_sample)
    ns = argparse.Namespace(precise_fp_check=True, root=".", test_timeout=1, total_timeout=0,
                            harness_timeout=0, max_rss_gb=None, test_timeout_wall=0,
                            keep_outputs=False)
    lines = nkilib_precise.run_checks(ns, per, ["a"], [])
    assert got == {"env": "0", "workers": 1} and "1 pass, 0 still fail" in lines[0]
    assert "NKI_PRECISE_FP" not in os.environ
