"""The scheduled kernel of a placed compile, made when something first needs it.

A kernel call running in program order (the default: no ``NKI_MLIR_HAZARDS``) compiles to the
``placed`` stage (:func:`run_stage`): the pipeline up to ``nisa-allocate``, every on-chip
tensor placed and every capacity check done, but no ``nisa-schedule``.  Such a run executes
one instruction at a time in program order, so the engine queues and cross-queue waits of
the schedule would go unread -- on a large unrolled kernel they are the biggest part of the
compile.  :func:`finish` completes a placed compile: it runs ``nisa-schedule`` (and the
module verifier) on the placed module, then stores the result exactly as a compile of the
whole pipeline would (same cache key, same artifact), so an ``estimate``, a queue-mode or
hazard-checked run, ``ir("nisa")`` or ``save`` sees the same kernel either way.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable

from ..runtime import artifact as art
from ..runtime import cache
from ..runtime.gc_pause import no_cyclic_gc
from .frame_stack import on_fresh_stack
from .pipeline import SCHEDULED, print_module, run_pipeline


def run_stage() -> str:
    """The compile stage a kernel call needs now: ``"placed"`` for a program-order run,
    ``"final"`` when ``NKI_MLIR_HAZARDS=1`` asks for engine queues and hazard checks."""
    from ..runtime.program import resolve_mode
    mode, _ = resolve_mode(None, None)
    return "placed" if mode == "program-order" else "final"


def finish(placed: Any, disk_hit: Callable[[Any, str], Any]) -> Any:
    """The scheduled kernel of the placed compile ``placed`` (a
    :class:`~.compile.CompiledKernel`): from the in-memory or disk cache (``disk_hit(dest,
    target)``: the checked entry or None) when a compile of the whole pipeline made it
    before, else ``nisa-schedule`` on the placed module (cached under the whole pipeline's
    key when ``placed`` was cached).

    Raises:
        NKIError: a diagnostic of ``nisa-schedule``, located at the kernel line.
    """
    info = placed.manifest["final"]
    key, cached = info["cache_key"], info["cached"]
    dest = cache.cache_dir() / info["dir"]
    if cached:
        if (hit := cache.memory_get(key)) is not None:
            return hit
        if os.path.lexists(dest) and (ck := disk_hit(dest, placed.target)) is not None:
            cache.memory_put(key, ck)
            return ck
    module = placed._nisa_module()
    placed._module = None               # scheduled in place below: no longer the placed one
    t0 = time.perf_counter()
    with no_cyclic_gc():
        names = on_fresh_stack(run_pipeline, module, placed.target, info["schedule"],
                               only=SCHEDULED)
        ir_nisa = print_module(module)
        from ..runtime.ir_compact import encode as to_compact
        compact = to_compact(module, ir_nisa)
    seconds = time.perf_counter() - t0
    from ..passes.memory_report import manifest_entry
    manifest = {k: v for k, v in placed.manifest.items() if k not in ("stage", "final")}
    manifest.update(pipeline=list(placed.manifest["pipeline"]) + names,
                    memory=manifest_entry(module), cache_key=key,
                    compile_seconds=round(placed.manifest["compile_seconds"] + seconds, 6))
    ir = {"nisa": ir_nisa, "nki": placed.own_ir("nki"), "compact": compact}
    path = None
    if cached:
        path = art.write_artifact(dest, manifest, ir)
        cache.added(path)
    ck = type(placed)(placed.spec, path, placed.target, manifest,
                        placed.compile_seconds + seconds, None, ir, _module=module)
    if cached:
        cache.memory_put(key, ck)
    return ck


__all__ = ["finish", "run_stage"]
