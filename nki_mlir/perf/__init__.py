"""The cost model: estimated latency, per-engine timeline and roofline report of a kernel,
without hardware.

- :func:`estimate` -- ``estimate(compiled) -> Estimate`` (also ``compiled.estimate()``);
- :func:`estimate_latency` -- the latency hook of ``nki.benchmark`` / ``nki.profile``
  (:mod:`nki_mlir.entry`), microseconds per percentile;
- :mod:`nki_mlir.targets` (constants per target with sources), :mod:`.costs` (per-instruction
  cost; operands in :mod:`.operands`, DMAs in :mod:`.dma_costs`), :mod:`.timeline`
  (discrete-event simulation), :mod:`.summary` (figures), :mod:`.report` (text),
  :mod:`.trace` (Perfetto JSON), :mod:`.html` (HTML timeline; :mod:`.html_assets`).

The model is cycle-approximate: documented constants are themselves "roughly" values, so
read every figure as +-30% (calibration: ``bench/calibration.py``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .estimate import ENGINES, CriticalEntry, Estimate, PerfWarning, Slice, TrackStats

__all__ = ["estimate", "estimate_latency", "launch_estimates", "Estimate", "Slice", "TrackStats",
           "CriticalEntry", "PerfWarning", "ENGINES"]


def estimate(compiled, args: Sequence | None = None, *, keep_slices: bool = True,
             throttle: bool = False) -> Estimate:
    """The cost model's :class:`Estimate` of one run of a compiled kernel on one NeuronCore.

    Args:
        compiled: a :class:`~nki_mlir.compiler.CompiledKernel` (``nki.compile(...)``).
        args: the tensor arguments (NumPy arrays), needed only for an input-specific
            estimate of a kernel whose control flow reads machine state; otherwise the
            estimate does not depend on the data and is cached on ``compiled``.
        keep_slices: keep every instruction instance (for traces; costs memory on big runs).
        throttle: model TensorE power throttling (trn2/trn3; off by default).

    Raises:
        NKIError: an unknown target; NKITypeError / NKIRuntimeError for bad ``args`` or a
            faulting kernel when it has to be executed.
    """
    from ..targets import target_model
    from .walk import needs_execution, timed_run
    compiled = compiled.final()     # the schedule's engine queues and waits (a placed compile's too)
    program = compiled.program
    key = (keep_slices, throttle)
    cache = compiled.__dict__.setdefault("_estimates", {})
    data_dependent = needs_execution(program)
    if not data_dependent or args is None:
        hit = cache.get(key) or (cache.get((True, throttle)) if not keep_slices else None)
        if hit is not None:
            return hit
    arrays = None if args is None else _tensor_args(compiled, args)
    est = timed_run(program, target_model(compiled.target), arrays, keep_slices=keep_slices,
                    throttle=throttle, program_ids=_first_instance(compiled))
    est.kernel = compiled.spec.name
    if not data_dependent or args is None:
        cache[key] = est
    return est


def _tensor_args(compiled, args: Sequence) -> list:
    tensors = [a for a in compiled.spec.args if a.kind == "tensor"]
    if len(args) != len(tensors):
        from ..errors import NKITypeError
        raise NKITypeError(f"{compiled.spec.name}: estimate() takes the {len(tensors)} tensor "
                           f"argument(s) ({', '.join(a.name for a in tensors)}), got {len(args)}")
    return list(args)


def _first_instance(compiled) -> tuple | None:
    """The ids of a launch's first instance when ``compiled`` serves every instance (its
    estimate is that instance's: the instances run the same instructions, at other
    addresses), else None."""
    spmd = (compiled.manifest or {}).get("spmd") or {}
    if spmd.get("symbolic_ids") and not spmd.get("uses_program_id"):
        return (0,) * len(spmd["grid"])
    return None


def launch_estimates(compiled: list, cores: list | None = None) -> tuple[float, list[Estimate]]:
    """The latency in ns of a launch of program instances ``compiled`` (in program-id
    order) and the estimate of each distinct instance: instances on one core run one after
    another, cores run in parallel (``cores``: each instance's core; else manifest
    ``spmd.core``), so the launch takes the busiest core's sum."""
    per_core: dict[int, float] = {}
    ests: dict[int, Estimate] = {}
    for n, ck in enumerate(compiled):
        est = ests.get(id(ck))
        if est is None:
            est = ests[id(ck)] = estimate(ck, keep_slices=False)
        core = cores[n] if cores is not None else \
            int(((ck.manifest or {}).get("spmd") or {}).get("core", 0) or 0)
        per_core[core] = per_core.get(core, 0.0) + est.latency_ns
    return max(per_core.values(), default=0.0), list(ests.values())


def estimate_latency(record: Any) -> float | None:
    """``nki.benchmark`` / ``nki.profile`` hook (:func:`nki_mlir.entry.latency_estimator`):
    the modelled latency in microseconds of ``record`` (a :class:`~nki_mlir.entry.LaunchRecord`).
    The model is deterministic, so every percentile is the same number."""
    if not record.compiled:
        return None
    ns, _ = launch_estimates(record.compiled, getattr(record, "cores", None))
    return ns / 1e3
