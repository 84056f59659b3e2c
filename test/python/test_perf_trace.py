"""The Chrome / Perfetto trace writer (nki_mlir/perf/trace.py) on hand-built estimates:
event shapes, microsecond units, track names and order, and validate_trace's checks."""
import copy
import json

import pytest

from nki_mlir.errors import NKIError
from nki_mlir.perf.estimate import CriticalEntry, Estimate, PerfWarning, Slice, TrackStats
from nki_mlir.perf.trace import (shape_hint, trace_events, track_sort_key, validate_trace,
                                 write_trace)


def _est() -> Estimate:
    """Two tracks: dma0 loads (1500 ns transfer) then tensor matmul (640 ns), then a second
    load overlapping the matmul on its own queue."""
    mm = "dst=128x512xf32@psum stationary=128x128xbf16@sbuf moving=128x512xbf16@sbuf"
    ld = "dst=128x512xbf16@sbuf src=128x512xbf16@hbm"
    slices = [
        Slice("dma0", "nisa.dma_copy", 1300.0, 2800.0, ld, "k.py:10", "nisa.dma_copy(dst=t, src=x)",
              None, sid=0, index=0, bytes=131072),
        Slice("tensor", "nisa.matmul", 2800.0, 3440.0, mm, "k.py:11", "nisa.nc_matmul(dst=a, ...)",
              "nisa.dma_copy @ k.py:10 (dma0)", sid=1, index=1, flops=2 * 128 * 128 * 512),
        Slice("dma0", "nisa.dma_copy", 2800.0, 4300.0, ld, "k.py:10", "nisa.dma_copy(dst=t, src=x)",
              None, sid=0, index=2, bytes=131072),
    ]
    return Estimate(
        kernel="toy", target="trn2", schedule="list", latency_ns=4300.0,
        tracks=[TrackStats("tensor", 640.0, 640 / 43, 1), TrackStats("dma0", 3000.0, 3000 / 43, 2)],
        dma_bytes=262144, hbm_bytes=262144, dma_count=2, avg_dma_bytes=131072.0,
        matmul_flops=2 * 128 * 128 * 512, mfu_pct=1.5, mbu_pct=20.0, bound_ns=1500.0,
        bound_kind="dma", bounds={"dma": 1500.0, "matmul": 100.0}, ratio=4300 / 1500,
        critical_path=[CriticalEntry("nisa.dma_copy", "k.py:10", "nisa.dma_copy(dst=t, src=x)",
                                     "dma0", 3000.0, 2, 69.8)],
        warnings=[PerfWarning("idle_on_dma", "tensor waited 2800 ns on DMA", "k.py:11")],
        slices=slices, instructions=3)


def _x(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def test_slices_in_microseconds_with_names_and_args():
    est = _est()
    tr = trace_events(est)
    assert tr["displayTimeUnit"] == "ns"
    xs = _x(tr)
    assert len(xs) == 3
    first = xs[0]
    assert first["ts"] == pytest.approx(1.3) and first["dur"] == pytest.approx(1.5)
    assert isinstance(first["ts"], float) and isinstance(first["dur"], float)
    assert first["cat"] == "dma" and first["name"] == "dma_copy 128x512xbf16"
    assert first["args"]["source"] == "k.py:10"
    assert first["args"]["line"] == "nisa.dma_copy(dst=t, src=x)"
    assert first["args"]["bytes"] == 131072 and first["args"]["instance"] == 0
    mm = next(e for e in xs if e["cat"] == "tensor")
    assert mm["name"] == "matmul 128x128xbf16, 128x512xbf16 -> 128x512xf32"
    assert mm["ts"] == pytest.approx(2.8) and mm["dur"] == pytest.approx(0.64)
    assert mm["args"]["waited_on"] == "nisa.dma_copy @ k.py:10 (dma0)"
    assert mm["args"]["flops"] == 2 * 128 * 128 * 512
    assert mm["args"]["operands"].startswith("dst=128x512xf32@psum")
    assert tr["otherData"]["latency_us"] == pytest.approx(4.3)
    assert tr["otherData"]["bound_kind"] == "dma"


def test_one_named_thread_per_track_in_engine_order():
    tr = trace_events(_est())
    meta = [e for e in tr["traceEvents"] if e["ph"] == "M"]
    proc = [e for e in meta if e["name"] == "process_name"]
    assert len(proc) == 1 and proc[0]["args"]["name"] == "toy (trn2, estimated)"
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    order = {e["tid"]: e["args"]["sort_index"] for e in meta if e["name"] == "thread_sort_index"}
    assert sorted(names.values()) == ["dma0", "tensor"]
    by_name = {v: k for k, v in names.items()}
    assert order[by_name["tensor"]] < order[by_name["dma0"]]
    for e in _x(tr):
        assert names[e["tid"]] == ("dma0" if e["cat"] == "dma" else "tensor")


def test_track_order():
    names = ["dma10", "program", "dma2", "gpsimd", "tensor", "dma0", "vector", "scalar"]
    assert sorted(names, key=track_sort_key) == [
        "tensor", "vector", "scalar", "gpsimd", "dma0", "dma2", "dma10", "program"]


def test_shape_hint():
    assert shape_hint("dst=128x1xf32@sbuf data=128x512xf32@sbuf operand0=-1.0") == \
        "128x512xf32 -> 128x1xf32"
    assert shape_hint("") == ""
    assert shape_hint("src=64x64xbf16@hbm") == "64x64xbf16"


def test_valid_trace_and_json_round_trip(tmp_path):
    est = _est()
    tr = trace_events(est)
    assert validate_trace(tr) == []
    assert validate_trace(tr, est) == []
    path = write_trace(est, tmp_path / "sub" / "toy.json")
    assert path == tmp_path / "sub" / "toy.json"
    loaded = json.loads(path.read_text())
    assert loaded == json.loads(json.dumps(tr))
    assert validate_trace(loaded, est) == []
    assert [p.name for p in path.parent.iterdir()] == ["toy.json"]  # no temp file left


def test_write_trace_error_is_nki_error(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(NKIError, match="cannot write the trace"):
        write_trace(_est(), tmp_path / "d")


def _broken(fn):
    tr = copy.deepcopy(trace_events(_est()))
    fn(tr)
    return validate_trace(tr)


def test_reports_overlap():
    def overlap(tr):
        xs = _x(tr)
        dma = [e for e in xs if e["cat"] == "dma"]
        dma[1]["ts"] = dma[0]["ts"] + 0.5
    problems = _broken(overlap)
    assert len(problems) == 1 and "overlap" in problems[0]


def test_touching_slices_are_not_overlap():
    def touch(tr):
        dma = [e for e in _x(tr) if e["cat"] == "dma"]
        dma[1]["ts"] = dma[0]["ts"] + dma[0]["dur"] - 1e-9
    assert _broken(touch) == []


def test_reports_missing_key():
    def drop(tr):
        del _x(tr)[1]["dur"]
    problems = _broken(drop)
    assert len(problems) == 1 and "missing key" in problems[0] and "dur" in problems[0]

    def drop_meta_args(tr):
        del tr["traceEvents"][0]["args"]
    problems = _broken(drop_meta_args)
    assert len(problems) == 1 and "args" in problems[0]


def test_reports_negative_and_non_finite():
    def neg(tr):
        _x(tr)[0]["dur"] = -0.25
    problems = _broken(neg)
    assert len(problems) == 1 and "negative dur" in problems[0]

    def nan(tr):
        _x(tr)[0]["ts"] = float("nan")
    problems = _broken(nan)
    assert len(problems) == 1 and "not finite" in problems[0]

    def text(tr):
        _x(tr)[0]["ts"] = "1.3"
    assert "not a number" in _broken(text)[0]


def test_reports_missing_display_time_unit_and_unknown_ph():
    problems = _broken(lambda tr: tr.pop("displayTimeUnit"))
    assert problems == ["displayTimeUnit missing"]
    problems = _broken(lambda tr: tr["traceEvents"].append({"ph": "Q", "ts": 0}))
    assert len(problems) == 1 and "unknown ph" in problems[0]
    assert any("displayTimeUnit" in p for p in validate_trace(trace_events(_est())["traceEvents"]))
    assert validate_trace("nope") != []


def test_reports_nanosecond_timestamps():
    def ns_units(tr):
        for e in _x(tr):
            e["ts"] *= 1e3
            e["dur"] *= 1e3
    problems = _broken(ns_units)
    assert len(problems) == 1 and "microseconds" in problems[0]


def test_problem_list_is_capped():
    def many(tr):
        for e in _x(tr):
            e["dur"] = -1.0
        tr["traceEvents"].extend({"ph": "Z", "ts": 0} for _ in range(50))
    problems = _broken(many)
    assert any(p.startswith("... and 30 more unknown ph") for p in problems)
    assert len(problems) < 30


def test_empty_estimate():
    est = Estimate(kernel="empty", target="trn1", schedule="list", latency_ns=0.0,
                   ratio=float("inf"))
    tr = trace_events(est)
    assert validate_trace(tr, est) == []
    assert tr["otherData"]["ratio"] is None
    json.dumps(tr, allow_nan=False)


def test_real_tiled_matmul_trace_validates(tmp_path):
    import sys
    from pathlib import Path

    import ml_dtypes
    import numpy as np

    import nki_mlir
    from nki_mlir.perf import estimate
    examples = str(Path(__file__).resolve().parents[2] / "examples")
    sys.path.insert(0, examples)
    try:
        from kernels import tiled_matmul
    finally:
        sys.path.remove(examples)
    a_t = np.ones((256, 256), dtype=ml_dtypes.bfloat16)
    b = np.ones((256, 512), dtype=ml_dtypes.bfloat16)
    est = estimate(nki_mlir.compile(tiled_matmul, a_t, b))
    tr = json.loads(write_trace(est, tmp_path / "mm.json").read_text())
    assert validate_trace(tr, est) == []
    threads = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "thread_name"}
    assert {"tensor", "vector"} <= threads and any(t.startswith("dma") for t in threads)
    xs = _x(tr)
    assert len(xs) == len(est.slices) > 0
    assert max(e["ts"] + e["dur"] for e in xs) == pytest.approx(est.latency_ns / 1e3)
    mm = [e for e in xs if e["cat"] == "tensor"]
    assert mm and all(e["name"].startswith("matmul ") for e in mm)
    assert all("kernels.py:" in e["args"]["source"] and "nc_matmul" in e["args"]["line"]
               for e in mm)


def test_trace_cap_keeps_the_first_slices(tmp_path, monkeypatch):
    t = trace_events(_est(), max_slices=2)
    assert [e["ts"] for e in _x(t)] == [1.3, 2.8]
    assert t["otherData"]["truncated"] == {"kept": 2, "total": 3}
    monkeypatch.setenv("NKI_MLIR_TRACE_MAX_SLICES", "1")
    written = json.loads(write_trace(_est(), tmp_path / "t.json").read_text())
    assert len(_x(written)) == 1 and not validate_trace(written)


def test_large_trace_is_announced_before_writing(tmp_path, monkeypatch):
    import nki_mlir.perf.trace as trace_mod
    from nki_mlir.errors import NKIProfileWarning
    monkeypatch.setattr(trace_mod, "WARN_BYTES", 100)
    with pytest.warns(NKIProfileWarning, match=r"MiB trace of 3 slices to .*t.json; NKI_MLIR_TRACE_MAX_SLICES"):
        write_trace(_est(), tmp_path / "t.json")
    assert (tmp_path / "t.json").exists()
