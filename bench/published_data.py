"""The hardware measurements published in the Neuron documentation, as data (one place for
these facts: ``bench/published_report.py`` and ``bench/calibration.py`` read them).

Every record names the page it comes from (aws-neuron-sdk, the NKI docs tree of the corpus
at 81ce03ae unless a commit is given) and what was measured on which NeuronCore.  Values
are as printed on the page; nothing here is a model output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MATMUL_PAGE = ("general/nki/tutorials/matrix_multiplication.rst at 49ee15c5 (the performance "
               "table; recorded in ../shared/perf.md A.5, not in the corpus's current tree)")
KOPT_PAGE = "nki/guides/tutorials/kernel-optimization.rst"
MAMBA_PAGE = "nki/guides/tutorials/fused_mamba.rst"
DMA_PAGE = "nki/get-started/about/nki-dma-overview.rst"
PERF_PAGE = "nki/deep-dives/nki_perf_guide.rst"

MS, US = 1e6, 1e3


@dataclass(frozen=True)
class Measurement:
    """One documented figure of one kernel configuration.

    Attributes:
        key: our name for it.  page / where: the page and the passage.
        target: the NeuronCore generation (``trn1`` = NeuronCore-v2, ``trn2`` = v3).
        what: the kernel and shape in words.
        latency_ns: the documented device latency (None: the page gives none).
        active_pct: documented engine active time, % of the run (``PE``, ``DMA``, ``DVE``).
    """

    key: str
    page: str
    where: str
    target: str
    what: str
    latency_ns: float | None = None
    active_pct: dict = field(default_factory=dict)


_MM = "bf16 [4096, 8192] @ [8192, 8192]"
_KO = "fp32 [4096, 8192] @ [8192, 8192]"
_MAMBA = "fp32 selective scan [batch 1, channels {c}, seq {s}, state 16]"

MEASUREMENTS = [
    # --- the NKI matmul tutorial, trn1 (one NeuronCore), performance table
    Measurement("mm.naive", MATMUL_PAGE, "table: nki_matmul_tiled_", "trn1",
                f"{_MM}, naive tiling", 51.80 * MS),
    Measurement("mm.opt1", MATMUL_PAGE, "table: Optimization 1 (hoisted loads)", "trn1",
                f"{_MM}, loads hoisted", 42.96 * MS),
    Measurement("mm.opt2", MATMUL_PAGE, "table: Optimization 2 (M, N blocked)", "trn1",
                f"{_MM}, free dims blocked", 22.07 * MS),
    Measurement("mm.opt3", MATMUL_PAGE, "table: fully optimised, 85.24% HFU", "trn1",
                f"{_MM}, M, N, K blocked", 6.97 * MS, {"HFU": 85.24}),
    # --- kernel-optimization guide, trn2, fp32 inputs (the driver's np.float32 arrays)
    Measurement("ko.tiled", KOPT_PAGE, "Writing the kernel: profile summary", "trn2",
                f"{_KO}, tiled", None, {"DMA": 99.93, "PE": 87.28}),
    Measurement("ko.hoisted", KOPT_PAGE, "Analyzing the kernel: after hoisting", "trn2",
                f"{_KO}, loads hoisted (lists of tiles)", None, {"DMA": 99.73, "PE": 99.85}),
    Measurement("ko.block_free", KOPT_PAGE, "Overlapping data and compute through blocking",
                "trn2", f"{_KO}, free dims blocked 2 x 2", None, {"DMA": 95.70, "PE": 99.52}),
    Measurement("ko.blocked", KOPT_PAGE, "Optimizing DMA through blocking the contraction "
                "dimension", "trn2", f"{_KO}, M, N, K blocked 16 x 2 x 8", None,
                {"DMA": 21.54, "PE": 99.50, "DVE": 10.55}),
    # --- fused Mamba tutorial (NeuronCore not named on the page; perf.md A.5 records trn1)
    Measurement("mamba.v1.c256", MAMBA_PAGE, "Performance Check: 172.93 usec", "trn1",
                "mamba_v1 " + _MAMBA.format(c=256, s=512), 172.93 * US, {"DVE": 98.71}),
    Measurement("mamba.v1.c4096", MAMBA_PAGE, "Increasing input channels size: 2.34 ms", "trn1",
                "mamba_v1 " + _MAMBA.format(c=4096, s=512), 2.34 * MS, {"DVE": 92.16}),
    Measurement("mamba.v2.s512", MAMBA_PAGE, "loop reordering: 1.61 ms", "trn1",
                "mamba_v2 " + _MAMBA.format(c=4096, s=512), 1.61 * MS, {"DVE": 99.63}),
    Measurement("mamba.v2.s8192", MAMBA_PAGE, "Increasing input seq_len size: 53.33 ms", "trn1",
                "mamba_v2 " + _MAMBA.format(c=4096, s=8192), 53.33 * MS, {"DVE": 58.93}),
    Measurement("mamba.v3.s8192", MAMBA_PAGE, "Mitigate spilling by tiling seq_len: 27.8 ms",
                "trn1", "mamba_v3 " + _MAMBA.format(c=4096, s=8192), 27.8 * MS, {"DVE": 94.85}),
]
# the scaling table of the Mamba tutorial (ms): seq_len -> (mamba_v2, mamba_v3); the 512 row
# repeats the 1.61 ms above (as 1.6) for v2
MAMBA_TABLE = {512: (1.6, 1.6), 1024: (4.4, 3.3), 2048: (8.9, 6.6), 3072: (13.1, 10.1),
               4096: (17.6, 13.3), 5120: (23.7, 17.3), 6144: (27.5, 19.6), 7168: (41.3, 24.2),
               8192: (52.2, 27.8)}
for _s, (_v2, _v3) in MAMBA_TABLE.items():
    if _s > 512:
        MEASUREMENTS.append(Measurement(f"mamba.table.v2.s{_s}", MAMBA_PAGE, "scaling table",
                                        "trn1", "mamba_v2 " + _MAMBA.format(c=4096, s=_s),
                                        _v2 * MS))
    MEASUREMENTS.append(Measurement(f"mamba.table.v3.s{_s}", MAMBA_PAGE, "scaling table", "trn1",
                                    "mamba_v3 " + _MAMBA.format(c=4096, s=_s), _v3 * MS))
MEASUREMENTS += [
    # --- DMA overview, trn2: Example 1's load on one DMA engine (the transfer itself)
    Measurement("dma.example1", DMA_PAGE, "Example 1: 1416 ns", "trn2",
                "32 KiB [4, 4096] bf16 HBM -> SBUF on one DMA engine (transfer)", 1416.0),
    # --- performance guide Opt #5a: initiation interval of dependent 1-element ScalarE ops
    Measurement("perf.scalar_ii", PERF_PAGE, "Opt #5a: ~189 ns (264 ScalarE cycles on NC-v2)",
                "trn1", "back-to-back dependent activation on [128, 1] (interval)", 189.0),
]
BY_KEY = {m.key: m for m in MEASUREMENTS}

#: each tutorial's sequence of optimisation steps, slowest first as measured on hardware
#: (a step without a documented latency is faster than the one before it by the page's words)
SEQUENCES = {
    "matmul tutorial, trn1 bf16": ["mm.naive", "mm.opt1", "mm.opt2", "mm.opt3"],
    "kernel-optimization guide, trn2 fp32 (\"overall time improved\" at each step)":
        ["ko.tiled", "ko.hoisted", "ko.block_free", "ko.blocked"],
    "fused Mamba: loop reordering, 4096 channels": ["mamba.v1.c4096", "mamba.v2.s512"],
    "fused Mamba: seq_len tiling, seq 8192": ["mamba.v2.s8192", "mamba.v3.s8192"],
    **{f"fused Mamba table: v2 -> v3 at seq {s}": [f"mamba.table.v2.s{s}", f"mamba.table.v3.s{s}"]
       for s in MAMBA_TABLE if s > 512},
}

#: speed ratios the performance guide states for pairs of kernels: (key, where, slower,
#: faster, documented slower/faster ratio, note)
RATIOS = [
    ("perf.fuse", "Opt #6: impl 2 is 3x faster", "exp_three_ops", "exp_fused", 3.0,
     "compute span (first compute instruction's start to last one's end), DMAs excluded"),
    ("perf.pvec", "Opt #5b: option 2 reduces 2x faster", "reduce_two_halves",
     "reduce_vectorized", 2.0, "VectorE time of the reductions; the model's 'partition count "
     "does not change the cost' comes from the architecture guide: not independent"),
    ("perf.fastls", "Opt #7: a matmul every ~128 vs ~64 cycles", "matvec_short_stationary",
     "matvec_short_moving", 2.0, "TensorE matmul interval; the model's matmul formula comes "
     "from this passage: not independent"),
]

#: published figures not compared, and why
NOT_COMPARED = [
    (MAMBA_PAGE, "PyTorch reference 151.83 ms (and the 878x speedup)", "a Neuron-compiled "
     "PyTorch graph, not an NKI kernel: nothing of ours reproduces it"),
    ("general/nki/tutorials/layernorm.rst at 49ee15c5 (perf.md A.5)", "p50 2311 us, -14.9%",
     "the page is not in the corpus: its kernels, shape and what the p50 covers cannot be "
     "checked"),
    (PERF_PAGE, "'close to 70% DMA throughput utilization' with large transfers",
     "the page gives no shape or kernel for that profile"),
    (DMA_PAGE, "Example 2: 16 DMA engines, 2 KiB each", "a count, not a time: the model spreads "
     "a 128-partition DMA over 16 engines, 8 partitions each, by the same page's rule"),
    ("nki-samples test/unit/*.py", "latency thresholds of perf tests", "pass/fail upper bounds "
     "in test code (units not stated), not measurements on a documentation page"),
]
