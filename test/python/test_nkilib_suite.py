"""bench/nkilib_suite.py's bookkeeping (no nki-library checkout needed): unit/integration
split, excluded categories (bench/nkilib_causes.py) and the last line's counts."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import nkilib_causes  # noqa: E402
import nkilib_suite  # noqa: E402


def _rec(nodeid, kind, message="", where=""):
    return {"nodeid": nodeid, "kind": kind, "when": "call", "message": message, "where": where,
            "duration": 1.0}


MLP = ("test.utils.exceptions.InferenceException: /x/nkilib/core/mlp/mlp_tkg/mlp_tkg_constants.py"
       ":225:16: compile-time evaluation error: TypeError: MLPTKGConstantsDimensionSizes.__init__()"
       " missing 1 required positional argument: 'remainderIFused'")


def test_choose_keeps_every_unit_test_and_samples_integration():
    ids = ["unit/a.py::t1", "integration/b.py::t0", "unit/a.py::t2", "integration/b.py::t1",
           "integration/b.py::t2", "integration/b.py::t3"]
    units, integ = nkilib_suite.choose(ids, True, 2, 1)
    assert units == ["unit/a.py::t1", "unit/a.py::t2"]
    assert integ == ["integration/b.py::t1", "integration/b.py::t3"]
    assert nkilib_suite.choose(ids, False, 1, 0)[0] == []


def test_suite_defects_are_excluded_with_evidence_and_others_counted():
    per = {"a": _rec("a", "passed"), "b": _rec("b", "failed", MLP, "/x/test_orchestrator.py:468"),
           "c": _rec("c", "failed", "NKIError: x.py:3:1: unsupported construct: foo"),
           "d": _rec("d", "skipped"),
           "e": _rec("e", "failed", "test.utils.exceptions.CompilationException: NotImplementedError:"
                                   " nki.compiler.frontend.ParserFrontend.compile: ...")}
    t = nkilib_suite.tally(per, ["a", "b", "c", "d", "e", "f"])
    c = t["counts"]
    assert (c["passed"], c["failed"], c["skipped"], c["excluded"], c["not run"]) == (1, 1, 1, 2, 1)
    assert set(t["excluded"]) == {"mlp_tkg dataclass field never passed", "needs nki.compiler.frontend"}
    ev = nkilib_causes.evidence(per["b"])
    assert ev.startswith("/x/nkilib/core/mlp/mlp_tkg/mlp_tkg_constants.py:225: ")
    lines = nkilib_suite.report(t, 5, [])
    assert lines[-1] == "1 passed, 1 failed, 1 skipped, 2 excluded, 1 not run"
    assert lines[-2].startswith("pass ratio: 1 / (1 + 1) = 50.0%")


def test_a_failure_in_a_defective_file_is_not_excluded_by_its_location_alone():
    # same test file as the qkv golden defect, but a simulator error: must stay a failure
    rec = _rec("x", "failed", "test.utils.exceptions.InferenceException: /k.py:1:1: type error: y",
               "/x/nkilib/core/qkv/qkv_tkg_torch.py:166")
    assert nkilib_causes.classify(rec) is None
    rec = _rec("x", "failed", "test.utils.exceptions.ValidationException: Validation failed for "
               "['V_cache']", "/x/test_orchestrator.py:563")
    rec["nodeid"] = "integration/nkilib/core/attention/test_attention_tkg.py::T::t[1]"
    assert nkilib_causes.classify(rec) is None   # only the attention-block golden is excluded



def test_the_fp8_golden_defect_needs_a_static_quantised_attention_block_test():
    static = ("integration/nkilib/experimental/transformer/test_attention_block_tkg.py::T::"
              "test_attn_blk_model[MODEL_WIP_GENERALITY_32-1-128-7168-None-10240-10240-1-32-True-"
              "False-True-False-False-True-True-False-False-bfloat16-1-2-False-True-False-False-"
              "False-None-True-True-default-1-1-False]")
    unquantised = static.replace("bfloat16-1-2-", "bfloat16-0-2-")
    both = ("test.utils.exceptions.ValidationException: Validation failed for "
            "['X_out', 'V_cache']")
    x_out = "test.utils.exceptions.ValidationException: Validation failed for ['X_out']"
    cat = nkilib_causes.classify({**_rec(static, "failed", both), "nodeid": static})
    assert cat is not None and cat.kind == nkilib_causes.SUITE
    # the same outputs without STATIC quantisation, or X_out alone: the simulator's failure
    assert nkilib_causes.classify({**_rec(unquantised, "failed", both),
                                   "nodeid": unquantised}) is None
    assert nkilib_causes.classify({**_rec(static, "failed", x_out), "nodeid": static}) is None

def test_timeouts_and_crashes_are_one_cause_each():
    per = {"a": _rec("a", "failed", "nkilib_report_plugin.TestTimeout: test exceeded 120 s "
                                    "(NKILIB_TEST_TIMEOUT)"),
           "b": _rec("b", "failed", "test.utils.exceptions.InferenceException: /p.py:81:9: kernel "
                                    "error: kernel raised TestTimeout('test exceeded 120 s "
                                    "(NKILIB_TEST_TIMEOUT)')"),
           "c": _rec("c", "failed", "worker 'gw0' crashed while running 'x.py::t'"),
           "d": _rec("d", "failed", "worker 'gw1' crashed while running 'y.py::u'")}
    t = nkilib_suite.tally(per, ["a", "b", "c", "d"])
    assert sorted(len(v) for v in t["causes"].values()) == [2, 2]


def test_a_timeout_says_whether_nki_mlir_was_running():
    import nkilib_report_plugin as rp
    here = rp.timeout_site(sys._getframe())
    assert here.startswith("in the suite's code at ") and here.endswith("(nki-mlir not running)")
    assert "test_nkilib_suite.py:" in here
    ns: dict = {}
    exec(compile("import sys\nf = sys._getframe()", "/x/nki_mlir/passes/p.py", "exec"), ns)
    assert rp.timeout_site(ns["f"]) == "in nki-mlir at /x/nki_mlir/passes/p.py:2"
    # a helper of nki-mlir called by the suite outside a kernel is the suite's time
    site = rp.timeout_site(ns["f"], running=False)
    assert site.startswith("in the suite's code at ") and "test_nkilib_suite.py:" in site
    assert site.endswith("(nki-mlir not running; inside /x/nki_mlir/passes/p.py:2)")
    harness = _rec("h", "failed", "nkilib_report_plugin.TestTimeout: test exceeded 120 s "
                                  f"(NKILIB_TEST_TIMEOUT) {here}")
    ours = _rec("o", "failed", "nkilib_report_plugin.TestTimeout: test exceeded 120 s "
                               "(NKILIB_TEST_TIMEOUT) in nki-mlir at /x/nki_mlir/passes/p.py:2")
    t = nkilib_suite.tally({"h": harness, "o": ours}, ["h", "o"])
    assert t["counts"]["failed"] == 2 and len(t["causes"]) == 2
    assert any("nki-mlir not running" in k for k in t["causes"])
