"""A short seeded run of the fuzzers of test/fuzz/ (the long run is ``bench/fuzz.py``):
every mutated kernel and every mutated ``.mlir`` file ends in success or a located error,
never an internal error, an unlocated error or a hang."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from fuzz import frontend, opt, runner  # noqa: E402

SEED = int(os.environ.get("NKI_MLIR_FUZZ_SEED", "1000"))


@pytest.mark.parametrize("name, case, n", [("frontend", frontend.case, 120), ("nki-opt", opt.case, 120)])
def test_fuzz_smoke(name, case, n):
    report = runner.run(case, list(range(SEED, SEED + n)), workers=2, timeout=120)
    assert not report.findings, f"{name}: {report.line()}\n" + "\n".join(
        f"  seed {s} {k}: {d}" for s, k, d in report.findings)
    assert report.counts["located"] > n // 4        # the mutants do reach the checks
