"""Per-test phase times of nki-mlir inside a test run (for ``bench/nkilib_report_plugin.py``).

:func:`install` wraps, from outside the library, the driver's phases:

- ``trace``: the tracing frontend (``nki_mlir.driver.compile.build_module``);
- one entry per pass of the pipeline (``nki-legalize``, ..., ``nisa-schedule``; the
  pass objects ``nki_mlir.driver.pipeline.default_pipeline`` returns);
- ``compile``: a whole compile that missed the cache (``compile_kernel`` minus cache hits:
  tracing, the passes, printing and encoding the IR);
- ``run``: running one program instance on the interpreter (``CompiledKernel.run``; the
  instances of an LNC launch run in threads, each is counted);
- ``call``: a whole kernel call through the simulator's entry point
  (``nki_cpu_simulator.nki.cpu_simulate(kernel)[lnc](...)``: argument conversion, cache
  look-up, compile, run, results).

``nki``, in :func:`take`'s totals, is nki-mlir's own time in the test: the union of the
intervals during which any of ``call``, ``compile`` or ``run`` was active in any thread
(nested and concurrent calls counted once), as wall seconds and as the CPU seconds the whole
process spent in them (``time.process_time``: every thread, so the instances of an LNC
launch count; on a loaded machine CPU stays near what an idle one would take in wall time);
the rest of a test's call phase is the suite's own code (input generation, golden,
validation).  :func:`busy` gives that time so far, the
interval in progress included, and whether nki-mlir is running now (the report plugin's
per-test limits read it while the test runs).

Each phase gets its wall time and the CPU time of the thread that ran it
(``time.thread_time``, steadier than wall time on a loaded machine), in seconds, summed
over the calls of the current test.  :func:`take` returns the totals since the last call
and resets them: ``{"compile": [wall, cpu], "run": [...], "trace": [...], "pass:<name>":
[...], "nki": [wall, process CPU], "compiles": n, "runs": n}``.  Nothing is recorded while :func:`install` was not
called; the library itself is unchanged.
"""
from __future__ import annotations

import functools
import threading
import time

_LOCK = threading.Lock()
_TOTALS: dict[str, list[float]] = {}
_COUNTS: dict[str, int] = {}
_INSTALLED = False
_ACTIVE = 0             # top-level nki-mlir phases running now (all threads)
_SINCE = (0.0, 0.0)     # (perf_counter(), process_time()) when _ACTIVE went from 0 to 1
_BUSY = [0.0, 0.0]      # closed busy intervals since the last take(): wall, process CPU


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _enter() -> None:
    global _ACTIVE, _SINCE
    with _LOCK:
        if _ACTIVE == 0:
            _SINCE = _now()
        _ACTIVE += 1


def _leave() -> None:
    global _ACTIVE
    with _LOCK:
        _ACTIVE -= 1
        if _ACTIVE == 0:
            w, c = _now()
            _BUSY[0] += w - _SINCE[0]
            _BUSY[1] += c - _SINCE[1]


def _busy() -> tuple[float, float]:
    """(wall, CPU) of the busy intervals, the open one included (call with _LOCK held)."""
    if not _ACTIVE:
        return _BUSY[0], _BUSY[1]
    w, c = _now()
    return _BUSY[0] + w - _SINCE[0], _BUSY[1] + c - _SINCE[1]


def busy() -> tuple[float, float, bool]:
    """(nki-mlir's wall seconds since the last :func:`take`, the running interval included;
    the process's CPU seconds in that time, all threads; whether an nki-mlir phase is
    running now)."""
    with _LOCK:
        w, c = _busy()
        return w, c, _ACTIVE > 0


def _add(phase: str, wall: float, cpu: float) -> None:
    with _LOCK:
        tot = _TOTALS.setdefault(phase, [0.0, 0.0])
        tot[0] += wall
        tot[1] += cpu
        _COUNTS[phase] = _COUNTS.get(phase, 0) + 1


def _timed(phase, fn):
    """``fn`` recording its wall and thread CPU time under ``phase`` (a name, or a function
    of the call's result giving the name or None to skip), and counted as nki-mlir busy."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        w0, c0 = time.perf_counter(), time.thread_time()
        out = None
        _enter()
        try:
            out = fn(*args, **kwargs)
            return out
        finally:            # a failed call (an NKIError) is timed too
            _leave()
            w, c = time.perf_counter() - w0, time.thread_time() - c0
            name = phase(out) if callable(phase) else phase
            if name is not None:
                _add(name, w, c)
    return wrapper


class _TimedPass:
    """A pass of the pipeline whose ``apply`` is timed as ``pass:<name>``."""

    def __init__(self, p):
        self._p = p
        self.name = p.name
        self.apply = _timed(f"pass:{p.name}", p.apply)


def install() -> None:
    """Wrap the driver's phases (idempotent)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from nki_mlir.driver import compile as comp
    from nki_mlir.driver import pipeline
    comp.build_module = _timed("trace", comp.build_module)
    # a compile that traced (a cache hit, in memory or on disk, does not): "compile"
    local = threading.local()
    traced = comp.build_module

    def build_module(*a, **k):
        local.traced = True
        return traced(*a, **k)
    comp.build_module = build_module

    def compiled(_ck):
        hit, local.traced = not getattr(local, "traced", False), False
        return None if hit else "compile"
    comp.compile_kernel = _timed(compiled, comp.compile_kernel)
    default = pipeline.default_pipeline
    pipeline.default_pipeline = functools.wraps(default)(
        lambda *a, **k: [_TimedPass(p) for p in default(*a, **k)])
    comp.CompiledKernel.run = _timed("run", comp.CompiledKernel.run)
    try:
        from nki_cpu_simulator import nki as sim
    except ImportError:     # nki-mlir without the simulator package: compile and run only
        sim = None
    if sim is not None:
        sim._CpuSimulated.__call__ = _timed("call", sim._CpuSimulated.__call__)
    _INSTALLED = True


def take() -> dict:
    """Totals since the last call (see the module docstring), then reset."""
    global _BUSY, _SINCE
    with _LOCK:
        out: dict = {k: [round(v[0], 3), round(v[1], 3)] for k, v in _TOTALS.items()}
        w, c = _busy()
        out["nki"] = [round(w, 3), round(c, 3)]
        _BUSY, _SINCE = [0.0, 0.0], _now()
        out["compiles"] = _COUNTS.get("compile", 0)
        out["runs"] = _COUNTS.get("run", 0)
        _TOTALS.clear()
        _COUNTS.clear()
    return out
