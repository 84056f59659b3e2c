"""AWS's nki-library test suite imports and collects in simulation mode on nki-mlir.

Runs ``bench/nkilib_collect.py --fast`` (``pytest --collect-only`` of
../shared/corpus/nki-library/test (next to the checkout) with ``--test-mode simulation``, the
``nki_cpu_simulator`` shim as the simulator and ``--skip-coverage-parametrize`` so every
module is imported without the minutes-long pairwise test generation) and asserts there
are no collection errors.  Skips when the corpus is absent or the ``nkilib`` extra
(``pip install -e .[nkilib]``) is not installed.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "nki-library"
BENCH = Path(__file__).resolve().parents[2] / "bench" / "nkilib_collect.py"
#: import names of the ``nkilib`` extra's packages the suite needs at import time
NKILIB_EXTRA_MODULES = ["torch", "pytest_html", "pytest_metadata", "allpairspy", "pandas",
                        "boto3", "botocore", "aws_embedded_metrics", "fabric2", "paramiko",
                        "filelock", "plotext", "scipy", "typing_extensions", "ml_dtypes"]


def _load_bench():
    spec = importlib.util.spec_from_file_location("nkilib_collect", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_nkilib_suite_collects_without_errors():
    if not (ROOT / "test" / "conftest.py").exists():
        pytest.skip(f"nki-library corpus not found at {ROOT}")
    missing = [m for m in NKILIB_EXTRA_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the 'nkilib' extra is not installed (missing: {', '.join(missing)}); "
                    f"pip install -e .[nkilib]")
    bench = _load_bench()
    res, proc = bench.run(ROOT, fast=True, timeout=110)
    detail = (proc.stdout[-4000:] + proc.stderr[-2000:]) if res["errors"] or proc.returncode else ""
    assert proc.returncode == 0, f"pytest --collect-only exited {proc.returncode}:\n{detail}"
    assert res["errors"] == 0, f"collection errors in {res['error_files']}:\n{detail}"
    assert res["tests"] > 1000 and res["files"] > 50, res
    print(f"nki-library: {res['files']} test files, {res['tests']} tests, 0 collection errors "
          f"({res['summary']})", file=sys.stderr)
