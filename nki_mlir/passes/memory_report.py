"""The SBUF / PSUM use report that ``nisa-allocate`` puts on the module (and the compile
driver copies into the artifact manifest under ``"memory"``).

All numbers are bytes per partition (the unit of placement, see :mod:`.allocate`);
rotating copies of multi-buffered tensors are included (footprint ``copies * stride``).
For each memory ``m`` in ``sbuf``, ``psum`` the module gets:

- ``nkim.m_peak_bytes``: the high-water mark: max over partitions and tensors of
  ``offset + footprint`` (what the placement uses);
- ``nkim.m_max_live_bytes``: the lower bound any placement needs: the max over program
  points and partitions of the sum of the footprints of the tensors live there that
  cover that partition.  When all tensors cover partition 0 (every automatic placement
  does) this is simply the max over program points of the sum over live tensors;
- ``nkim.m_partition_peak_bytes``: the per-partition high-water mark, run-length
  encoded over the 128 partitions as ``[[first, last, peak_bytes], ...]`` (partitions
  ``first..last`` inclusive, unused ones have peak 0);
- ``nkim.m_fragmentation``: ``1 - max_live / peak`` (0.0 when nothing is placed),
  rounded to 4 decimals: the share of the peak lost to alignment, bank rules and
  packing (0 is a perfect packing);
- ``nkim.psum_banks_used``: how many of the 8 PSUM banks any tensor (copy) touches;
- ``nkim.rotating_tensors``: how many allocs got more than one rotating copy.

With several functions in a module each number is the max over functions
(banks: union).  :func:`report` reads these attributes back as a dict; :func:`to_json`
turns any module attribute into JSON for the manifest.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from xdsl.dialects.builtin import (ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, ModuleOp,
                                   StringAttr, UnitAttr, f64, i64)
from xdsl.ir import Attribute

from ..targets import PARTITIONS, PSUM_BANK_BYTES

SPACES = ("sbuf", "psum")


def max_live(tensors) -> int:
    """Max over program points and partitions of the live footprints (module docstring).
    ``tensors``: placed tensors of ONE function (``.region``, ``.live.start/.end``).
    The partitions are cut where some footprint's partition range starts or ends: each
    piece has one load (a Python int per piece, not a NumPy update per event; ranges that
    wrap around use :func:`max_live_vector`)."""
    spans = [_partitions(t.region) for t in tensors]
    if any(type(s) is not slice for s in spans):
        return max_live_vector(tensors)
    cuts = sorted({0, PARTITIONS, *(p for s in spans if s.start < s.stop for p in (s.start, s.stop))})
    piece = {c: i for i, c in enumerate(cuts)}
    events: dict[int, list[tuple[int, int, int]]] = {}
    for t, s in zip(tensors, spans):
        if s.start < s.stop:
            lo, hi, size = piece[s.start], piece[s.stop], t.region.size
            events.setdefault(t.live.start, []).append((lo, hi, size))
            events.setdefault(t.live.end + 1, []).append((lo, hi, -size))
    load = [0] * (len(cuts) - 1)
    best = 0
    for point in sorted(events):
        for lo, hi, delta in events[point]:
            for i in range(lo, hi):
                load[i] += delta
        best = max(best, max(load))
    return best


def max_live_vector(tensors) -> int:
    """:func:`max_live` with the per-partition loads in one NumPy vector."""
    events: dict[int, list[tuple[int, object]]] = {}
    for t in tensors:
        events.setdefault(t.live.start, []).append((+1, t))
        events.setdefault(t.live.end + 1, []).append((-1, t))
    load = np.zeros(PARTITIONS, np.int64)
    best = 0
    for point in sorted(events):
        for sign, t in events[point]:
            r = t.region
            idx = _partitions(r)
            if type(idx) is slice:
                load[idx] += sign * r.size
            else:
                np.add.at(load, idx, sign * r.size)
        best = max(best, int(load.max()))
    return best


def _partitions(r):
    """The partitions ``range(r.partition, min(128, r.partition + r.partitions))`` covers, as
    an index of a per-partition vector (a slice; Python's wrap-around for a negative start)."""
    stop = min(PARTITIONS, r.partition + r.partitions)
    if r.partition >= 0:
        return slice(r.partition, max(r.partition, stop))
    return [p % PARTITIONS for p in range(r.partition, stop)]


def partition_peaks(tensors) -> list[int]:
    """The high-water mark ``offset + footprint`` of each of the 128 partitions."""
    peak = np.zeros(PARTITIONS, np.int64)
    for t in tensors:
        r = t.region
        idx = _partitions(r)
        if type(idx) is slice:
            peak[idx] = np.maximum(peak[idx], r.offset + r.size)
        else:
            np.maximum.at(peak, idx, r.offset + r.size)
    return [int(v) for v in peak]


def run_length(values: list[int]) -> list[list[int]]:
    """``[5, 5, 0]`` -> ``[[0, 1, 5], [2, 2, 0]]``."""
    runs: list[list[int]] = []
    for i, v in enumerate(values):
        if runs and runs[-1][2] == v:
            runs[-1][1] = i
        else:
            runs.append([i, i, v])
    return runs


def psum_banks(tensors) -> set[int]:
    """The PSUM banks any placed tensor's footprint touches."""
    banks: set[int] = set()
    for t in tensors:
        r = t.region
        if r.size > 0:
            banks.update(range(r.offset // PSUM_BANK_BYTES, (r.offset + r.size - 1) // PSUM_BANK_BYTES + 1))
    return banks


def annotate(module: ModuleOp, per_function: list[list]) -> None:
    """Write the report attributes on ``module`` from the placed tensors of each function."""
    peaks = {s: [0] * PARTITIONS for s in SPACES}
    lower = {s: 0 for s in SPACES}
    banks: set[int] = set()
    rotating = 0
    for tensors in per_function:
        for space in SPACES:
            mine = [t for t in tensors if t.space == space and t.region is not None]
            peaks[space] = [max(a, b) for a, b in zip(peaks[space], partition_peaks(mine))]
            lower[space] = max(lower[space], max_live(mine))
            if space == "psum":
                banks |= psum_banks(mine)
        rotating += sum(1 for t in tensors if t.copies > 1)
    attrs = module.attributes
    for space in SPACES:        # the two peaks first: existing tests read them in this order
        attrs[f"nkim.{space}_peak_bytes"] = IntegerAttr(max(peaks[space]), i64)
    for space in SPACES:
        peak = max(peaks[space])
        frag = 0.0 if peak == 0 else round(1.0 - lower[space] / peak, 4)
        attrs[f"nkim.{space}_max_live_bytes"] = IntegerAttr(lower[space], i64)
        attrs[f"nkim.{space}_partition_peak_bytes"] = ArrayAttr(
            [ArrayAttr([IntegerAttr(v, i64) for v in run]) for run in run_length(peaks[space])])
        attrs[f"nkim.{space}_fragmentation"] = FloatAttr(frag, f64)
    attrs["nkim.psum_banks_used"] = IntegerAttr(len(banks), i64)
    attrs["nkim.rotating_tensors"] = IntegerAttr(rotating, i64)


def to_json(attr: Attribute) -> Any:
    """A module attribute as JSON: integers, floats, strings, arrays and dicts as such,
    unit attributes as ``True``, anything else as its MLIR text."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [to_json(a) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: to_json(v) for k, v in attr.data.items()}
    if isinstance(attr, UnitAttr):
        return True
    return str(attr)


def manifest_entry(module: ModuleOp) -> dict[str, Any]:
    """Every ``nkim.*`` module attribute, without the prefix, as JSON (the manifest's
    ``"memory"`` entry)."""
    return {k.removeprefix("nkim."): to_json(v) for k, v in module.attributes.items()
            if k.startswith("nkim.")}


def report(module: ModuleOp) -> dict[str, Any]:
    """The report of an allocated module as a dict::

        {"sbuf": {"peak_bytes", "max_live_bytes", "fragmentation", "partition_peak_bytes"},
         "psum": {... the same ..., "banks_used"}, "rotating_tensors": n}

    Missing attributes (module not allocated) give None."""
    def get(name: str):
        attr = module.attributes.get(f"nkim.{name}")
        return None if attr is None else to_json(attr)

    out: dict[str, Any] = {}
    for space in SPACES:
        out[space] = {key: get(f"{space}_{key}") for key in
                      ("peak_bytes", "max_live_bytes", "fragmentation", "partition_peak_bytes")}
    out["psum"]["banks_used"] = get("psum_banks_used")
    out["rotating_tensors"] = get("rotating_tensors")
    return out
