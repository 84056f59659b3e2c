"""``--precise-fp-check`` of ``bench/nkilib_suite.py``: numeric mismatches run again with
``NKI_PRECISE_FP=0``.

A test the suite failed as a numeric mismatch (:func:`nkilib_causes.numeric_mismatch`: its
validation against the golden failed) is run again alone (``-n 1``) with ``NKI_PRECISE_FP=0``:
the interpreter then stores the bf16 / fp8 tensors the kernel allocates as float32, without
rounding (AWS's NKI simulator guide, "Precise Floating-Point Mode"; ``docs/cli.md``).  The
report says, per such test, whether the mismatch disappears -- the kernel's bf16 / fp8
storage against the suite's float32 golden: the kernel's logic matches the golden and its
low-precision intermediates lose the accuracy -- or the test still fails (then the cause is
elsewhere, or the kernel's inputs / outputs themselves are low precision).  Either way the
test stays counted as the failure it was: the check explains a failure, it does not excuse it.
"""
from __future__ import annotations

import os
from pathlib import Path

import nkilib_causes
import nkilib_sample

ENV = "NKI_PRECISE_FP"
PASSES = f"passes with {ENV}=0 (the kernel's bf16/fp8 storage vs the suite's fp32 golden)"
FAILS = "still fails"


def add_args(ap) -> None:
    ap.add_argument("--precise-fp-check", action="store_true",
                    help=f"run the numeric mismatches again alone with {ENV}=0 (bf16/fp8 "
                         f"stored as float32) and report whether they pass; they stay failures")


def mismatches(per: dict, ids: list[str]) -> list[str]:
    """The ids among ``ids`` that failed as a numeric mismatch of the simulator (not an
    excluded suite defect)."""
    return [i for i in ids if i in per and nkilib_causes.numeric_mismatch(per[i])
            and nkilib_causes.classify(per[i]) is None]


def report(ids: list[str], again: dict, seconds: float) -> list[str]:
    """The report's lines: per test, :data:`PASSES` or :data:`FAILS` (with the message)."""
    if not ids:
        return []
    lines, passed = [], 0
    for i in ids:
        r = again.get(i)
        if r is not None and r["kind"] == "passed":
            passed += 1
            lines.append(f"  {PASSES}: {i[:140]}")
        else:
            what = r.get("message", "").splitlines()[0][:120] if r and r.get("message") \
                else ("not run" if r is None else r["kind"])
            lines.append(f"  {FAILS} with {ENV}=0: {i[:120]}: {what}")
    head = (f"{ENV}=0 check ({len(ids)} numeric mismatches run again alone with bf16/fp8 "
            f"stored as float32; {seconds:.0f}s): {passed} pass, {len(ids) - passed} still "
            f"fail (all stay counted as failures)")
    return [head, *lines]


def run_checks(ns, per: dict, chosen: list[str], extra: list[str], run=None) -> list[str]:
    """:func:`mismatches` of ``chosen`` run again alone with ``NKI_PRECISE_FP=0`` when
    ``ns.precise_fp_check``; returns the report's lines (``per`` is not changed).  ``run``:
    ``run(ids) -> (records, seconds, timed out)``, by default ``nkilib_sample.run_sample``
    with the variable set in the environment the suite's process inherits."""
    ids = mismatches(per, chosen) if ns.precise_fp_check else []
    if not ids:
        return []
    if run is None:
        def run(left: list[str]):
            old = os.environ.get(ENV)
            os.environ[ENV] = "0"
            try:
                return nkilib_sample.run_sample(
                    Path(ns.root), left, 1, ns.test_timeout, ns.total_timeout or 10 ** 7,
                    extra, harness_timeout=ns.harness_timeout, max_rss_gb=ns.max_rss_gb,
                    test_timeout_wall=ns.test_timeout_wall, keep_outputs=ns.keep_outputs)
            finally:
                if old is None:
                    del os.environ[ENV]
                else:
                    os.environ[ENV] = old
    print(f"running {len(ids)} numeric mismatches again alone with {ENV}=0", flush=True)
    records, dt, _timed_out = run(ids)
    return report(ids, nkilib_sample.summarise(records, ids)["per"], dt)
