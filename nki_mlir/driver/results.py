"""What a run through a legacy entry point reports, and ``nki.jit(mode=...)`` calls.

- :class:`NKIInterpreterNote` / :func:`note_interpreter`: the once-per-API warning that a
  device entry point ran on the ISA interpreter;
- the latency hook: :func:`estimate` asks :func:`latency_estimator` (the function registered
  with :func:`set_latency_estimator`, else :func:`nki_mlir.perf.estimate_latency`) about a
  :class:`LaunchRecord` and returns a :class:`LatencyResult` (percentiles of
  :data:`PERCENTILES`, in microseconds), held by a :class:`BenchmarkResult`;
- :func:`attach_mode` / :func:`call_in_mode`: ``nki.jit(mode=...)`` at decoration and call
  time (used by :mod:`.jit`).

The entry points themselves (``nki.baremetal``, ``nki.benchmark``, ``nki.profile``) are
:mod:`.entry`; the module docstring there describes the options and the estimator protocol.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import NKIError

#: percentiles NKI's ``get_latency_percentile`` offers
PERCENTILES = (0, 1, 10, 25, 50, 90, 99, 100)
#: modes of ``nki.jit`` that would need a Neuron device or an ML framework
_DEVICE_MODES = ("auto", "jax", "torchxla", "baremetal", "benchmark")


class NKIInterpreterNote(UserWarning):
    """A device/framework entry point ran on the ISA interpreter instead (said once per API)."""


_NOTED: set[str] = set()


def note_interpreter(api: str) -> None:
    """Warn once per process that ``api`` runs on the ISA interpreter (no Neuron device)."""
    if api in _NOTED:
        return
    _NOTED.add(api)
    from ..diagnostics import caller_loc
    loc = caller_loc()
    warnings.warn_explicit(f"{api}: no Neuron device here; nki-mlir runs the kernel on its ISA "
                           f"interpreter (NumPy) and produces no NEFF/NTFF", NKIInterpreterNote,
                           loc.file if loc else "<nki-mlir>", loc.line if loc else 0)


# ======================================================================== latency hook


@dataclass
class LaunchRecord:
    """What a latency estimator is given: one run of a kernel launch.

    Attributes:
        name: the kernel's name.
        compiled: the :class:`~nki_mlir.compiler.CompiledKernel` of every program instance
            in program-id order (one for a launch without grid; the same object repeats when
            the instances are identical).
        target: "trn1" | "trn2" | "trn3".
        warmup, iters: the benchmark settings asked for.
        cores: the physical core of each instance (None: one core, or the cores in the
            instances' manifests).
    """

    name: str
    compiled: list
    target: str
    warmup: int = 10
    iters: int = 100
    cores: list | None = None


def instance_cores(k, compiled: list) -> list | None:
    """The physical core of each instance of ``k``'s launch (``k`` a kernel or a launch)."""
    of = getattr(k, "instance_cores", None)
    return of(compiled[0].target) if of is not None else None


_estimator: Callable[[LaunchRecord], Any] | None = None


def set_latency_estimator(fn: Callable[[LaunchRecord], Any] | None) -> None:
    """Register (or with None, forget) the latency estimator; see the module docstring."""
    global _estimator
    _estimator = fn


def latency_estimator() -> Callable[[LaunchRecord], Any]:
    """The latency estimator: the registered one, else ``nki_mlir.perf.estimate_latency``."""
    if _estimator is not None:
        return _estimator
    from ..perf import estimate_latency
    return estimate_latency


class LatencyResult:
    """``benchmark_result.nc_latency``: latency percentiles in microseconds (or None)."""

    def __init__(self, percentiles: Mapping[int, float] | None = None):
        self._p = dict(percentiles or {})

    @property
    def available(self) -> bool:
        """Whether a performance model produced an estimate."""
        return bool(self._p)

    def get_latency_percentile(self, p: int) -> float | None:
        """The ``p``-th percentile latency in microseconds; None when no estimate is available.

        Raises:
            NKIError: ``p`` is not one of 0, 1, 10, 25, 50, 90, 99, 100.
        """
        if isinstance(p, bool) or not isinstance(p, int) or p not in PERCENTILES:
            raise NKIError(f"get_latency_percentile({p!r}): available percentiles are "
                           f"{', '.join(map(str, PERCENTILES))}", category="bad argument")
        return self._p.get(p)

    def __repr__(self) -> str:
        if not self._p:
            return "<nc_latency: no estimate available (no performance model)>"
        return f"<nc_latency p50={self._p.get(50)} us p99={self._p.get(99)} us>"


@dataclass
class BenchmarkResult:
    """``fn.benchmark_result`` of ``nki.benchmark`` / ``nki.profile``."""

    nc_latency: LatencyResult = field(default_factory=LatencyResult)


def estimate(record: LaunchRecord) -> LatencyResult:
    """Ask the latency estimator (if any) about ``record``; an empty result when there is none."""
    est = latency_estimator()
    if est is None:
        return LatencyResult()
    value = est(record)
    if value is None:
        return LatencyResult()
    if isinstance(value, Mapping):
        return LatencyResult({int(p): float(v) for p, v in value.items()})
    return LatencyResult({p: float(value) for p in PERCENTILES})


# ------------------------------------------------------------------ nki.jit(mode=...)


def attach_mode(kernel, mode: str) -> None:
    """Decoration time of ``nki.jit(mode=...)``: a benchmark kernel gets ``benchmark_result``."""
    if mode == "benchmark":
        kernel.benchmark_result = BenchmarkResult()


def call_in_mode(k, mode: str, args: tuple, kwargs: dict):
    """A call of a kernel (or launch) decorated with ``nki.jit(mode=...)``."""
    if mode in _DEVICE_MODES:
        note_interpreter(f"nki.jit(mode={mode!r})")
    result, compiled = k.run(args, kwargs)
    if mode == "benchmark" and compiled:
        base = getattr(k, "kernel", k)
        record = LaunchRecord(base.fn.__name__, compiled, compiled[0].target,
                              cores=instance_cores(k, compiled))
        base.benchmark_result = BenchmarkResult(estimate(record))
        if k is not base:
            k.benchmark_result = base.benchmark_result
    return result


__all__ = ["PERCENTILES", "NKIInterpreterNote", "note_interpreter", "LaunchRecord",
           "set_latency_estimator", "latency_estimator", "LatencyResult", "BenchmarkResult",
           "estimate", "attach_mode", "call_in_mode"]
