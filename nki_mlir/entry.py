"""The legacy (NKI Beta 1) entry points: ``nki.baremetal``, ``nki.benchmark``, ``nki.profile``
and ``nki.jit(mode=...)`` (NKI simulator guide (nki/guides/nki_simulator); NKI Beta 1 ``nki`` API page:
``baremetal``, ``benchmark``, ``profile``, ``jit``, ``simulate_kernel``).

There is no Neuron device here: every entry point runs the kernel on nki-mlir's ISA
interpreter (NumPy) and says so once per process and API, as an :class:`NKIInterpreterNote`
warning naming the API (``nki.simulate_kernel`` and ``mode="simulation"`` are silent: they
are simulations anyway).  No NEFF or NTFF is produced; ``save_neff_name`` and
``additional_compile_opt`` are accepted and ignored, and ``save_trace_name`` only names the
files ``nki.profile`` writes.

- ``baremetal(kernel=None, save_neff_name=None, save_trace_name=None,
  additional_compile_opt=None, artifacts_dir=None)``: decorator (with or without
  arguments) or wrapper; the result is called like the kernel and returns its outputs.
  ``artifacts_dir`` receives a copy of the compile artifact (``manifest.json``,
  ``kernel.nki.mlir``, ``kernel.nisa.mlir``; one sub-directory per specialisation when an
  SPMD launch compiled several).
- ``benchmark(kernel=None, warmup=10, iters=100, save_neff_name=None, save_trace_name=None,
  additional_compile_opt=None)``: runs the kernel once on the interpreter (not ``warmup +
  iters`` times: the interpreter's wall time says nothing about the device) and sets
  ``fn.benchmark_result.nc_latency``, a :class:`LatencyResult` holding the cost model's
  estimate (:mod:`nki_mlir.perf`).  The call returns the kernel's outputs, as NKI's does.
- ``profile(func=None, working_directory=None, save_neff_name="file.neff",
  save_trace_name="profile.ntff", additional_compile_opt=None, overwrite=False,
  profile_nth=1)``: runs the kernel; at the ``profile_nth``-th call it makes the estimate
  (``fn.benchmark_result``) and, with a ``working_directory`` (absolute path), writes there,
  for ``<stem>`` the stem of ``save_trace_name``: ``<stem>.json`` (summary figures),
  ``<stem>.trace.json`` (Chrome/Perfetto trace-event JSON: one track per engine and DMA
  queue; open it at ui.perfetto.dev or chrome://tracing), ``<stem>.html`` (a self-contained
  timeline page) and ``<stem>.txt`` (the text report).  Existing files need
  ``overwrite=True``.  A launch with several distinct program instances gets one set of
  files per instance (``<stem>_<i>.*``).

**Latency.** ``LatencyResult.get_latency_percentile(p)`` for ``p`` in
:data:`PERCENTILES` (0, 1, 10, 25, 50, 90, 99, 100) returns the latency in microseconds
(the model is deterministic: every percentile is the same estimate), or None when no
estimator is available; any other ``p`` is an :class:`~nki_mlir.errors.NKIError`.  The hook
is :func:`latency_estimator`: it returns the function registered with
:func:`set_latency_estimator`, else ``nki_mlir.perf.estimate_latency`` (looked up lazily at
each estimate).  The estimator is called as ``estimate(record)`` with a
:class:`LaunchRecord` and returns the latency in microseconds (a float: every percentile)
or a mapping ``{percentile: microseconds}``, or None when it cannot estimate.

Outputs: like NKI's ``benchmark`` / ``profile`` the outputs are "undefined" on hardware; here
they are the interpreter's results.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import NKIError

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
    from .diagnostics import caller_loc
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
    """

    name: str
    compiled: list
    target: str
    warmup: int = 10
    iters: int = 100


_estimator: Callable[[LaunchRecord], Any] | None = None


def set_latency_estimator(fn: Callable[[LaunchRecord], Any] | None) -> None:
    """Register (or with None, forget) the latency estimator; see the module docstring."""
    global _estimator
    _estimator = fn


def latency_estimator() -> Callable[[LaunchRecord], Any] | None:
    """The latency estimator: the registered one, else ``nki_mlir.perf.estimate_latency``."""
    if _estimator is not None:
        return _estimator
    if importlib.util.find_spec(f"{__package__}.perf") is None:
        return None
    return getattr(importlib.import_module(f"{__package__}.perf"), "estimate_latency", None)


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


# ============================================================================ wrappers


def unwrap(k: Any) -> Any:
    """The kernel (or launch) an :class:`EntryKernel` wraps; anything else unchanged."""
    while isinstance(k, EntryKernel):
        k = k.target
    return k


def _as_runnable(k: Any):
    from .kernel import Kernel, LaunchedKernel
    k = unwrap(k)
    if isinstance(k, (Kernel, LaunchedKernel)):
        return k
    if callable(k):
        return Kernel(k)
    raise NKIError(f"expected an NKI kernel (a function or an @nki.jit kernel), got {k!r}",
                   category="bad argument")


def _kernel_name(k: Any) -> str:
    k = _as_runnable(k)
    return getattr(k, "kernel", k).fn.__name__


class EntryKernel:
    """A kernel wrapped by ``nki.baremetal`` / ``nki.benchmark`` / ``nki.profile``.

    Call it like the kernel (NumPy arrays in, outputs out); index it for a launch grid
    (``fn[2](...)``).  ``benchmark_result`` holds the latest latency estimate.
    """

    def __init__(self, target: Any, api: str, options: dict[str, Any]):
        self.target = target
        self.api = api
        self.options = options
        self.benchmark_result = BenchmarkResult()
        self.calls = 0
        fn = getattr(unwrap(target), "fn", None) or getattr(getattr(unwrap(target), "kernel", None), "fn", None)
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __getitem__(self, grid) -> EntryKernel:
        sub = EntryKernel(_as_runnable(self.target)[grid], self.api, self.options)
        sub.benchmark_result = self.benchmark_result
        return sub

    def __repr__(self) -> str:
        return f"<{self.api} {unwrap(self.target)!r}>"

    def __call__(self, *args: Any, **kwargs: Any):
        from .kernel import Kernel, _not_while_tracing, _tracing
        k = _as_runnable(self.target)
        if isinstance(k, Kernel) and _tracing():
            return k(*args, **kwargs)  # inside a kernel being traced: runs inline
        _not_while_tracing(k)
        note_interpreter(self.api)
        result, compiled = k.run(args, kwargs)
        self.calls += 1
        if compiled:
            self._after_run(k, compiled)
        return result

    def _after_run(self, k, compiled: list) -> None:
        opts = self.options
        if opts.get("artifacts_dir"):
            _copy_artifacts(compiled, opts["artifacts_dir"])
        if self.api == "nki.baremetal":
            return
        nth = opts.get("profile_nth", 1)
        if self.api == "nki.profile" and self.calls != nth:
            return
        record = LaunchRecord(_kernel_name(k), compiled, compiled[0].target,
                              opts.get("warmup", 10), opts.get("iters", 100))
        self.benchmark_result.nc_latency = estimate(record)
        if self.api == "nki.profile" and opts.get("working_directory"):
            _write_profile(self, record)


def _copy_artifacts(compiled: list, dest: str) -> None:
    distinct = list({id(c): c for c in compiled}.values())
    os.makedirs(dest, exist_ok=True)
    for c in distinct:
        name = f"{c.spec.name}-{c.manifest['cache_key'][:16]}"
        c.save(dest if len(distinct) == 1 else os.path.join(dest, name))


def _write_profile(ek: EntryKernel, record: LaunchRecord) -> None:
    """The files of ``nki.profile`` (module docstring), written only after every name was
    checked, so an existing file without ``overwrite=True`` leaves nothing half-written."""
    from .perf import estimate as perf_estimate
    from .perf.report import write_profile_files
    from .perf.trace import atomic_write
    opts = ek.options
    wd = opts["working_directory"]
    stem = os.path.splitext(os.path.basename(opts.get("save_trace_name") or "profile.ntff"))[0]
    distinct = list({id(c): c for c in record.compiled}.values())
    stems = [stem] if len(distinct) == 1 else [f"{stem}_{i}" for i in range(len(distinct))]
    paths = [os.path.join(wd, s + ext) for s in stems for ext in (".json", ".trace.json", ".html", ".txt")]
    existing = [p for p in paths if os.path.exists(p)]
    if existing and not opts.get("overwrite", False):
        raise NKIError(f"nki.profile: {existing[0]} already exists; pass overwrite=True to replace it",
                       category="bad argument")
    lat = ek.benchmark_result.nc_latency
    for s, ck in zip(stems, distinct):
        est = perf_estimate(ck, keep_slices=True)
        base = os.path.join(wd, s)
        files = write_profile_files(est, base)
        summary = {
            "kernel": record.name, "api": "nki.profile", "backend": "nki-mlir cost model (no device)",
            "target": record.target, "program_instances": len(record.compiled),
            "instructions": ck.program.instruction_count,
            "latency_us": {str(p): lat.get_latency_percentile(p) for p in PERCENTILES},
            "instance_latency_us": est.latency_ns / 1e3, "bound_us": est.bound_ns / 1e3,
            "bound_kind": est.bound_kind, "ratio": est.ratio, "mfu_pct": est.mfu_pct,
            "mbu_pct": est.mbu_pct, "dma_bytes": est.dma_bytes, "hbm_bytes": est.hbm_bytes,
            "busy_pct": {t.track: t.busy_pct for t in est.tracks},
            "warnings": [{"kind": w.kind, "loc": w.loc, "message": w.message} for w in est.warnings],
            "note": "no NEFF/NTFF: no Neuron device; figures come from a cycle-approximate model (+-30%)",
            "files": files,
            "artifact": str(ck.artifact) if ck.artifact else None,
        }
        atomic_write(base + ".json", json.dumps(summary, indent=2), "profile summary")


# ====================================================================== entry points


def _check_int(api: str, name: str, v: Any, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise NKIError(f"{api}: {name} must be an int >= {minimum}, got {v!r}", category="bad argument")
    return v


def _decorator(api: str, kernel: Any, options: dict[str, Any]):
    if kernel is None:
        return lambda k: EntryKernel(k, api, options)
    return EntryKernel(kernel, api, options)


def baremetal(kernel=None, *, save_neff_name: str | None = None, save_trace_name: str | None = None,
              additional_compile_opt: str | None = None, artifacts_dir: str | None = None):
    """NKI Beta 1 ``nki.baremetal``: compile and run on NumPy arrays -- here on the interpreter.

    ``@nki.baremetal`` / ``@nki.baremetal(...)`` / ``nki.baremetal(kernel)(*arrays)``; see the
    module docstring for the options.  Returns an :class:`EntryKernel`.
    """
    opts = {"save_neff_name": save_neff_name, "save_trace_name": save_trace_name,
            "additional_compile_opt": additional_compile_opt, "artifacts_dir": artifacts_dir}
    return _decorator("nki.baremetal", kernel, opts)


def benchmark(kernel=None, warmup: int = 10, iters: int = 100, *, save_neff_name: str | None = None,
              save_trace_name: str | None = None, additional_compile_opt: str | None = None):
    """NKI Beta 1 ``nki.benchmark``: run once on the interpreter and set
    ``fn.benchmark_result.nc_latency`` (:class:`LatencyResult`: the cost model's latency in
    microseconds; ``nki.benchmark(kernel, warmup, iters)(*arrays)`` or as a decorator).

    Raises:
        NKIError: ``warmup`` < 0 or ``iters`` < 1 (or not ints).
    """
    opts = {"warmup": _check_int("nki.benchmark", "warmup", warmup, 0),
            "iters": _check_int("nki.benchmark", "iters", iters, 1),
            "save_neff_name": save_neff_name, "save_trace_name": save_trace_name,
            "additional_compile_opt": additional_compile_opt}
    return _decorator("nki.benchmark", kernel, opts)


def profile(func=None, *, working_directory: str | None = None, save_neff_name: str = "file.neff",
            save_trace_name: str = "profile.ntff", additional_compile_opt: str | None = None,
            overwrite: bool = False, profile_nth: int = 1):
    """NKI Beta 1 ``nki.profile``: run on the interpreter; at the ``profile_nth``-th call set
    ``fn.benchmark_result`` and write the summary, Perfetto trace, HTML timeline and text
    report into ``working_directory`` (module docstring).

    A relative ``working_directory`` is taken relative to the current directory at
    decoration time (and made absolute then).

    Raises:
        NKIError: ``profile_nth`` < 1, or the summary file exists and ``overwrite`` is
            False (at the profiled call).
    """
    if working_directory is not None:
        working_directory = os.path.abspath(os.fspath(working_directory))
    opts = {"working_directory": working_directory, "save_neff_name": save_neff_name,
            "save_trace_name": save_trace_name, "additional_compile_opt": additional_compile_opt,
            "overwrite": bool(overwrite), "profile_nth": _check_int("nki.profile", "profile_nth", profile_nth, 1)}
    return _decorator("nki.profile", func, opts)


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
        record = LaunchRecord(base.fn.__name__, compiled, compiled[0].target)
        base.benchmark_result = BenchmarkResult(estimate(record))
        if k is not base:
            k.benchmark_result = base.benchmark_result
    return result


__all__ = ["baremetal", "benchmark", "profile", "LatencyResult", "BenchmarkResult", "LaunchRecord",
           "EntryKernel", "NKIInterpreterNote", "PERCENTILES", "latency_estimator",
           "set_latency_estimator", "estimate", "note_interpreter"]
