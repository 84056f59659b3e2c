"""``nki_mlir.entry``: the legacy (NKI Beta 1) entry points at their first import path (they
live in :mod:`nki_mlir.driver.entry` and :mod:`nki_mlir.driver.results`)."""
from .driver.entry import (  # noqa: F401
    EntryKernel, baremetal, benchmark, profile, simulate_kernel, unwrap,
)
from .driver.results import (  # noqa: F401
    _NOTED, PERCENTILES, BenchmarkResult, LatencyResult, LaunchRecord, NKIInterpreterNote,
    attach_mode, call_in_mode, estimate, latency_estimator, note_interpreter, set_latency_estimator,
)

__all__ = ["baremetal", "benchmark", "profile", "simulate_kernel", "LatencyResult",
           "BenchmarkResult", "LaunchRecord", "EntryKernel", "NKIInterpreterNote", "PERCENTILES",
           "latency_estimator", "set_latency_estimator", "estimate", "note_interpreter"]
