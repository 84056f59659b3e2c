"""Calibration of the cost model against the documented anchors (issue 6, ``bench/``).

    python bench/calibration.py        (from the repo root)

Anchors (``../shared/perf.md`` Part A.5), each reproduced with our own kernels of
``examples/matmul.py`` written to the documented tiling:

1. trn1, one NeuronCore, bf16 ``[4096, 8192] @ [8192, 8192]`` with the NKI matmul
   tutorial's naive tiling (:func:`matmul_tiled`): 51.80 ms
   (aws-neuron-sdk ``general/nki/tutorials/matrix_multiplication.rst``);
2. the same with the tutorial's fully optimised tiling (:func:`matmul_blocked`, default
   blocks 16 x 2 x 8 tiles): 6.97 ms (same page);
3. held out: the tutorial's intermediate steps on the same problem, "Optimization 1"
   (:func:`matmul_hoisted`, 42.96 ms) and "Optimization 2" (:func:`matmul_block_free`,
   22.07 ms).  The DMA efficiency knee (``dma_eff_knee_bytes`` in
   ``nki_mlir/targets.py``) was fitted to anchor 1, so anchors 2-4 are the checks
   that did not shape the model;
4. trn2, one DMA engine, 32 KiB HBM -> SBUF in 1416 ns (DMAOV Example 1): the kernel
   :func:`single_dma` moves a [4, 4096] bf16 tensor (4 partitions: one DMA engine) into
   SBUF with one ``dma_copy``; the anchor is compared with that DMA's modelled transfer
   (its timeline slice, which excludes the fixed per-DMA latency).  The kernel's
   end-to-end latency (load + store, fixed latencies included) is printed too, as
   information, not as an anchor.

Also printed as information: :func:`matmul_blocked` with an fp32 SBUF result block
(``FP32_RESULT=True``; the tutorial's kernel keeps it in bf16), whose 128 KiB per partition
leave trn1's SBUF no room to multi-buffer the lhsT block.

Prints a markdown table (anchor, documented, modelled, error %, within +-30%) and the
details of each estimate.  Exit status 1 if any anchor is outside +-30%.  The model is
cycle-approximate (perf.md Part A.6): +-30% is its stated accuracy.
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")  # before NumPy is imported

import inspect  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import nki_mlir as nki  # noqa: E402
from nki_mlir.perf import estimate  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul import (matmul_block_free, matmul_blocked, matmul_hoisted, matmul_tiled,  # noqa: E402
                    single_dma)
from published_data import BY_KEY  # noqa: E402

BF16 = ml_dtypes.bfloat16
TOLERANCE = 0.30
#: the marker comment on single_dma's load (finds its source line)
LOAD_MARKER = "# the anchor DMA"


@dataclass
class Result:
    """One printed row; ``anchor`` False for information-only rows (no pass/fail)."""

    name: str
    documented_ns: float | None
    modelled_ns: float
    anchor: bool = True

    @property
    def error(self) -> float | None:
        if self.documented_ns is None:
            return None
        return self.modelled_ns / self.documented_ns - 1.0

    @property
    def ok(self) -> bool:
        return self.error is None or abs(self.error) <= TOLERANCE


def _fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:,.1f} us"
    return f"{ns:,.0f} ns"


def _timed_estimate(kernel, args, target, keep_slices=False, **kwargs):
    ck = kernel.compile_with(args, kwargs, target=target)
    t0 = time.perf_counter()
    est = estimate(ck, keep_slices=keep_slices)
    return est, time.perf_counter() - t0


def _detail(label: str, est, wall: float) -> str:
    busy = ", ".join(f"{t.track} {t.busy_pct:.0f}%" for t in est.tracks)
    return (f"- {label}: latency {_fmt_ns(est.latency_ns)}, bound {_fmt_ns(est.bound_ns)} "
            f"({est.bound_kind}), ratio {est.ratio:.2f}, MFU {est.mfu_pct:.1f}%, "
            f"MBU {est.mbu_pct:.1f}%, {est.instructions:,} instructions, "
            f"{est.dma_count:,} DMAs of {est.avg_dma_bytes:,.0f} B on average; busy: {busy}; "
            f"estimate took {wall:.2f} s")


def _load_line() -> int:
    """Source line of single_dma's HBM -> SBUF load (the line with LOAD_MARKER)."""
    lines, first = inspect.getsourcelines(single_dma.fn)
    for i, text in enumerate(lines):
        if LOAD_MARKER in text:
            return first + i
    raise RuntimeError(f"single_dma has no line marked {LOAD_MARKER!r}")


def load_slice(est):
    """The timeline slice of single_dma's HBM -> SBUF load (needs ``keep_slices``)."""
    line = _load_line()
    hits = [s for s in est.slices
            if s.name == "nisa.dma_copy" and s.loc.rsplit(":", 1)[-1] == str(line)]
    if len(hits) != 1:
        raise RuntimeError(f"expected one nisa.dma_copy slice at line {line} of single_dma, "
                           f"found {len(hits)} (slices: {[(s.name, s.loc) for s in est.slices]})")
    return hits[0]


def main() -> int:
    lhs_t = np.zeros((8192, 4096), BF16)   # [K, M]
    rhs = np.zeros((8192, 8192), BF16)     # [K, N]
    results: list[Result] = []
    details: list[str] = []

    est, wall = _timed_estimate(matmul_tiled, (lhs_t, rhs), "trn1")
    results.append(Result("trn1 bf16 matmul 4096x8192x8192, naive tiling (matmul_tiled; "
                          "fitted: the DMA knee)", BY_KEY["mm.naive"].latency_ns, est.latency_ns))
    details.append(_detail("matmul_tiled trn1", est, wall))

    for kernel, doc, step in ((matmul_hoisted, BY_KEY["mm.opt1"].latency_ns, "Optimization 1"),
                              (matmul_block_free, BY_KEY["mm.opt2"].latency_ns, "Optimization 2")):
        est, wall = _timed_estimate(kernel, (lhs_t, rhs), "trn1")
        results.append(Result(f"trn1 bf16 matmul 4096x8192x8192, {step} "
                              f"({kernel.__name__}; held out)", doc, est.latency_ns))
        details.append(_detail(f"{kernel.__name__} trn1", est, wall))

    est, wall = _timed_estimate(matmul_blocked, (lhs_t, rhs), "trn1")
    results.append(Result("trn1 bf16 matmul 4096x8192x8192, fully optimised (matmul_blocked; "
                          "held out)",
                          BY_KEY["mm.opt3"].latency_ns, est.latency_ns))
    details.append(_detail("matmul_blocked trn1 (bf16 result block)", est, wall))

    est, wall = _timed_estimate(matmul_blocked, (lhs_t, rhs), "trn1", FP32_RESULT=True)
    results.append(Result("trn1 matmul_blocked with an fp32 result block (not the tutorial's "
                          "bf16; information only)", None, est.latency_ns, anchor=False))
    details.append(_detail("matmul_blocked trn1 (fp32 result block: 128 KiB, leaves no SBUF "
                           "for a second lhsT block)", est, wall))

    x = np.zeros((4, 4096), BF16)          # 32 KiB on partitions 0-3: one DMA engine
    est, wall = _timed_estimate(single_dma, (x,), "trn2", keep_slices=True)
    load = load_slice(est)
    results.append(Result("trn2 one DMA engine, 32 KiB HBM->SBUF: transfer (the load's slice; "
                          "held out)",
                          BY_KEY["dma.example1"].latency_ns, load.dur_ns))
    results.append(Result("trn2 single_dma kernel end to end (load + store, fixed latencies; "
                          "information only)", None, est.latency_ns, anchor=False))
    details.append(_detail("single_dma trn2", est, wall))
    details.append(f"- single_dma load slice: {load.name} {load.label} on {load.track}, "
                   f"{load.start_ns:,.0f} -> {load.end_ns:,.0f} ns ({load.bytes:,} B) at {load.loc}")

    print(f"nki-mlir {nki.__version__} cost-model calibration -- cycle-approximate model, "
          f"+-{TOLERANCE:.0%} (perf.md Part A.6)")
    print()
    print("| anchor | documented | modelled | error % | within +-30% |")
    print("|---|---|---|---|---|")
    for r in results:
        err = "-" if r.error is None else f"{r.error * 100:+.1f}"
        within = ("yes" if r.ok else "NO") if r.anchor else "-"
        print(f"| {r.name} | {_fmt_ns(r.documented_ns)} | {_fmt_ns(r.modelled_ns)} | {err} "
              f"| {within} |")
    print()
    print("\n".join(details))
    bad = [r for r in results if r.anchor and not r.ok]
    if bad:
        print(f"\n{len(bad)} anchor(s) outside +-{TOLERANCE:.0%}: " + "; ".join(r.name for r in bad))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
