"""Autotuning without hardware: sweep the compile-time parameters of a kernel (tile
sizes, loop orders, buffer counts, ...) and rank the variants by the cost model's
estimated latency (:mod:`nki_mlir.perf`), checking each on the ISA interpreter.

- :func:`tune` -- ``tune(kernel, args, space, ...) -> TuneResult`` (exhaustive or Optuna;
  inline, on a local process pool, or as Ray tasks with ``ray_address=``);
- :func:`autotune` -- the decorator form (``@autotune(configs=[...], key=[...])``);
- :class:`TuneResult` / :class:`Row` -- the ranked table;
- ``nki-mlir tune FILE.py::KERNEL --arg ... --space NAME=V1,V2`` -- the CLI
  (:mod:`nki_mlir.tools.tune_cmd`).
"""
from __future__ import annotations

from .decorator import Autotuner, autotune
from .result import Row, TuneResult
from .sweep import tune

__all__ = ["tune", "autotune", "Autotuner", "TuneResult", "Row"]
