"""Estimated performance of the example kernels at benchmark sizes (issue 6, ``bench/``).

    python bench/perf_table.py [--only SUBSTRING]        (from the repo root)

Compiles each kernel twice, with the list schedule (the default) and with
``schedule="in-order"`` (every engine queue keeps program order), runs the cost model
(:func:`nki_mlir.perf.estimate`, nothing executes on data) and prints one markdown row per
kernel and target:

- est. us: modelled end-to-end latency of the list-scheduled kernel, microseconds;
- bound us / kind: the roofline lower bound (max of matmul FLOPs at peak, each engine's
  total work, DMA work, HBM bytes at the HBM bandwidth) and which term it is;
- ratio: est / bound (1.00 = on the roofline);
- MFU % / MBU %: matmul FLOPs and HBM bytes relative to peak over the estimated latency;
- in-order us: the same kernel compiled with ``schedule="in-order"``;
- speedup: in-order / list (what the list scheduler buys);
- wall s: host seconds the cost model took for the list / in-order estimate.

The figures come from a cycle-approximate model (``../shared/perf.md`` Part A.6): read
them as +-30%, never as measurements.  Exit status 1 if any row failed.
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")  # noqa: E402 -- before NumPy is imported

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import nki_mlir as nki  # noqa: E402
from nki_mlir.perf import estimate  # noqa: E402
from kernels import attention, layernorm, row_softmax, tiled_matmul  # noqa: E402
from matmul import matmul_blocked  # noqa: E402

BF16 = ml_dtypes.bfloat16
CAVEAT = "cycle-approximate model, +-30% (perf.md Part A.6): estimates, not measurements"


def _z(shape, dtype=np.float32):
    return np.zeros(shape, dtype)  # only shapes and dtypes matter: nothing runs on data


@dataclass
class Case:
    """One table row: ``kernel(*args, **kwargs)`` compiled for ``target``."""

    label: str
    kernel: object
    args: tuple
    target: str
    kwargs: dict = field(default_factory=dict)


def _mm_args():
    return (_z((8192, 4096), BF16), _z((8192, 8192), BF16))   # lhsT [K, M], rhs [K, N]


def cases() -> list[Case]:
    mm = _mm_args()
    s = _z((1024, 128))
    return [
        Case("tiled_matmul (kernels.py) 4096x8192x8192 bf16", tiled_matmul, mm, "trn2"),
        Case("tiled_matmul (kernels.py) 4096x8192x8192 bf16", tiled_matmul, mm, "trn1"),
        Case("matmul_blocked (matmul.py) 4096x8192x8192 bf16", matmul_blocked, mm, "trn2"),
        Case("matmul_blocked (matmul.py) 4096x8192x8192 bf16", matmul_blocked, mm, "trn1"),
        Case("row_softmax 4096x1024 fp32", row_softmax, (_z((4096, 1024)),), "trn2"),
        Case("layernorm 2048x1024 fp32", layernorm,
             (_z((2048, 1024)), _z((1, 1024)), _z((1, 1024))), "trn2"),
        Case("attention S=1024 d=128 fp32", attention, (s, s, s), "trn2"),
    ]


def _estimate(case: Case, schedule: str):
    """(Estimate, wall seconds of the estimate alone) for ``case`` under ``schedule``."""
    ck = case.kernel.compile_with(case.args, dict(case.kwargs), target=case.target,
                                  schedule=schedule)
    t0 = time.perf_counter()
    est = estimate(ck, keep_slices=False)
    return est, time.perf_counter() - t0


HEADER = ("| kernel | target | est. us | bound us | bound kind | ratio | MFU % | MBU % "
          "| in-order us | speedup | wall s (list / in-order) |")
RULE = "|" + "---|" * 11


def row(case: Case) -> str:
    est, wall = _estimate(case, "list")
    ino, wall_ino = _estimate(case, "in-order")
    speedup = ino.latency_ns / est.latency_ns if est.latency_ns else float("nan")
    return (f"| {case.label} | {case.target} | {est.latency_ns / 1e3:,.1f} | "
            f"{est.bound_ns / 1e3:,.1f} | {est.bound_kind} | {est.ratio:.2f} | "
            f"{est.mfu_pct:.1f} | {est.mbu_pct:.1f} | {ino.latency_ns / 1e3:,.1f} | "
            f"{speedup:.2f}x | {wall:.2f} / {wall_ino:.2f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run only rows whose label contains this")
    opts = ap.parse_args(argv)
    print(f"nki-mlir {nki.__version__} estimated performance -- {CAVEAT}")
    print()
    print(HEADER)
    print(RULE)
    failed = 0
    for case in cases():
        if opts.only and opts.only not in case.label:
            continue
        try:
            print(row(case), flush=True)
        except Exception as exc:  # a benchmark table reports every row it can
            failed += 1
            print(f"| {case.label} | {case.target} | error: {type(exc).__name__}: "
                  f"{str(exc).splitlines()[0] if str(exc) else ''} |" + " |" * 8, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
