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
is :func:`~.results.latency_estimator` (:mod:`.results`): it returns the function registered
with :func:`~.results.set_latency_estimator`, else ``nki_mlir.perf.estimate_latency``.  The
estimator is called as ``estimate(record)`` with a :class:`LaunchRecord` and returns the
latency in microseconds (a float: every percentile) or a mapping ``{percentile:
microseconds}``, or None when it cannot estimate.

Outputs: like NKI's ``benchmark`` / ``profile`` the outputs are "undefined" on hardware; here
they are the interpreter's results.
"""
from __future__ import annotations

import functools
import json
import os
from typing import Any

from ..errors import NKIError
from .jit import Kernel, LaunchedKernel, _not_while_tracing, _tracing
from .results import (  # noqa: F401  (the latency hook, also importable from here)
    PERCENTILES, BenchmarkResult, LatencyResult, LaunchRecord, NKIInterpreterNote, estimate,
    instance_cores,
    latency_estimator, note_interpreter, set_latency_estimator,
)

# ============================================================================ wrappers


def unwrap(k: Any) -> Any:
    """The kernel (or launch) an :class:`EntryKernel` wraps; anything else unchanged."""
    while isinstance(k, EntryKernel):
        k = k.target
    return k


def _as_runnable(k: Any):
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
                              opts.get("warmup", 10), opts.get("iters", 100),
                              instance_cores(k, compiled))
        self.benchmark_result.nc_latency = estimate(record)
        if self.api == "nki.profile" and opts.get("working_directory"):
            _write_profile(self, record)


def _copy_artifacts(compiled: list, dest: str) -> None:
    distinct = list({id(c): c.final() for c in compiled}.values())    # (scheduled kernels)
    os.makedirs(dest, exist_ok=True)
    for c in distinct:
        name = f"{c.spec.name}-{c.manifest['cache_key'][:16]}"
        c.save(dest if len(distinct) == 1 else os.path.join(dest, name))


def _write_profile(ek: EntryKernel, record: LaunchRecord) -> None:
    """The files of ``nki.profile`` (module docstring), written only after every name was
    checked, so an existing file without ``overwrite=True`` leaves nothing half-written."""
    from ..perf import estimate as perf_estimate
    from ..perf.report import write_profile_files
    from ..perf.trace import atomic_write
    opts = ek.options
    wd = opts["working_directory"]
    stem = os.path.splitext(os.path.basename(opts.get("save_trace_name") or "profile.ntff"))[0]
    distinct = list({id(c): c.final() for c in record.compiled}.values())   # (scheduled kernels)
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


def simulate_kernel(kernel, *args: Any, **kwargs: Any):
    """NKI Beta 1's ``nki.simulate_kernel(kernel, *arrays)``: run on the ISA interpreter.

    ``kernel`` is a ``@nki.jit`` kernel, a launch ``kernel[grid]`` (all instances write into
    the shared outputs returned) or a plain function.  Returns the kernel's outputs as
    NumPy arrays (one, a tuple, or None).  Doc: NKI Beta 1 ``nki.simulate_kernel``.
    """
    k = unwrap(kernel)
    if not isinstance(k, (Kernel, LaunchedKernel)):
        k = Kernel(k)
    return k.run(args, kwargs)[0]


__all__ = ["baremetal", "benchmark", "profile", "simulate_kernel", "LatencyResult", "BenchmarkResult", "LaunchRecord",
           "EntryKernel", "NKIInterpreterNote", "PERCENTILES", "latency_estimator",
           "set_latency_estimator", "estimate", "note_interpreter"]
