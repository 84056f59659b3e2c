#!/usr/bin/env python3
"""Long fuzz runs of the frontend and of nki-opt (test/fuzz/), in worker processes.

    python bench/fuzz.py                          # 20,000 frontend and 10,000 nki-opt cases
    python bench/fuzz.py --frontend 500 --opt 0 --start 100000 --workers 2 --timeout 60

Prints per fuzzer ``N cases: K located errors, I internal, U unlocated, H hangs (...)`` and
every finding as ``seed kind: detail`` (replay one with ``--start SEED --frontend 1``).
Exit status 1 if any finding.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, ROOT)


def _one(name, case_fn, n, start, workers, timeout) -> int:
    from fuzz import runner
    if n <= 0:
        return 0
    t0 = time.perf_counter()
    tty = sys.stderr.isatty()

    def progress(report, done):
        if tty and done % 50 == 0:
            print(f"\r{name}: {done}/{n}  {report.line()}", end="", file=sys.stderr, flush=True)

    report = runner.run(case_fn, list(range(start, start + n)), workers=workers, timeout=timeout,
                        progress=progress)
    if tty:
        print(file=sys.stderr)
    print(f"{name}: {report.line()} in {time.perf_counter() - t0:.0f} s")
    for seed, kind, detail in sorted(report.findings):
        print(f"  {seed} {kind}: {detail}")
    return len(report.findings)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frontend", type=int, default=20000, help="frontend cases (default 20000)")
    ap.add_argument("--opt", type=int, default=10000, help="nki-opt cases (default 10000)")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case before a hang")
    ns = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("NKI_MLIR_HAZARDS", "1")
    from fuzz import frontend, opt
    bad = _one("frontend", frontend.case, ns.frontend, ns.start, ns.workers, ns.timeout)
    bad += _one("nki-opt", opt.case, ns.opt, ns.start, ns.workers, ns.timeout)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
