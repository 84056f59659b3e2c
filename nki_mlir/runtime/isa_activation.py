"""The engines' accumulator registers: the ScalarE ones ``activation`` and ``activate2``
share, and the VectorE ones of the accumulating Vector instructions (``tensor_scalar_reduce``,
``tensor_scalar_cumulative``, ``exponential``, ...; their definitions are in
``nki_mlir/instructions``).  The activation instruction itself is
``nki_mlir/instructions/activation.py``.

The accumulators are per-lane float32 registers (:class:`~.program.State` ``act_acc`` /
``dve_acc``, one lane per partition) that carry across instructions; :func:`accumulate`
applies a ``reduce_cmd``.  Semantics: nki.isa API reference (nki/api/nki/isa)
(``nki.isa.activation`` / ``activation_reduce``, ``nki.isa.reduce_cmd``).
"""
from __future__ import annotations

import numpy as np

from . import numerics as nm

#: reset value of an accumulator lane for each reduce op (NKI token spelling)
ACC_IDENTITY = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "maximum": -np.inf,
                "minimum": np.inf, "abs_max": 0.0, "abs_min": np.inf}


def _fold(rop: str, acc: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rop`` of the accumulator lanes ``acc[P]`` and every row of ``rows[P, n]`` (float32)."""
    if rop == "add":
        return acc + np.add.reduce(rows, axis=1)
    if rop == "multiply":
        return acc * np.multiply.reduce(rows, axis=1)
    if rop == "maximum":
        return np.maximum(acc, rows.max(axis=1))
    if rop == "minimum":
        return np.minimum(acc, rows.min(axis=1))
    if rop == "abs_max":
        return np.maximum(np.abs(acc), np.abs(rows).max(axis=1))
    if rop == "abs_min":
        return np.minimum(np.abs(acc), np.abs(rows).min(axis=1))
    raise ValueError(f"reduce_op={rop} has no accumulator rule")


def accumulate(acc: np.ndarray, cmd: str, rop: str, values, init=None) -> None:
    """Apply ``reduce_cmd`` ``cmd`` to the first ``P`` lanes of the fp32 accumulators ``acc``.

    ``values`` is ``[P, ...]`` (the instruction's fp32 results, reduced over the free dims);
    ``init`` (``[P]``) is what ``load_reduce`` loads.  ``idle`` leaves ``acc`` alone,
    ``reset`` sets the lanes to the identity of ``rop``, ``reset_reduce`` resets then folds
    ``values`` in, ``reduce`` folds them into the current lanes, ``load_reduce`` loads
    ``init`` then folds.  The fold is float32 arithmetic, as the engines' accumulators are
    fp32 registers fed fp32 results (nki.isa API reference, ``nki.isa.activation``: the
    reduction is computed on the fp32 results): each row is reduced in float32 (NumPy's
    pairwise summation for ``add``), then combined with the lane.
    """
    if cmd == "idle":
        return
    P = values.shape[0]
    if cmd in ("reset", "reset_reduce"):
        acc[:P] = ACC_IDENTITY[rop]
    elif cmd == "load_reduce":
        acc[:P] = init
    if cmd == "reset":
        return
    rows = np.asarray(values, nm.F32).reshape(P, -1)
    acc[:P] = _fold(rop, acc[:P], rows)
