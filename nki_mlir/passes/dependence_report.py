"""Printing of ``nisa-schedule``'s dependence edges (``nki-opt --print-deps``; tests).

One line per edge: ``%7 dma_copy (k.py:28) -> %9 matmul (k.py:30)  RAW lhs  [same iteration]``,
or ``[carried at loop k.py:25 distance 1]`` for a loop-carried edge, with the edge's
reason when it is not a data dependence.
"""
from __future__ import annotations

from pathlib import Path

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ..diagnostics import loc_of
from .dependence import Edge
from .dependence_graph import analyze


def where(op: Operation) -> str:
    loc = loc_of(op)
    return f"{Path(loc.file).name}:{loc.line}" if loc is not None else "?"


def describe(edge: Edge) -> str:
    """``%7 dma_copy (k.py:28) -> %9 matmul (k.py:30)  RAW lhs  [same iteration]``."""
    s, d = edge.src, edge.dst
    if edge.level is None:
        when = "same iteration"
    else:
        when = f"carried at loop {where(edge.loop)} distance {edge.distance}"
    extra = "" if edge.reason == "data" else f"  ({edge.reason})"
    return (f"%{s.index} {s.name} ({where(s.op)}) -> %{d.index} {d.name} ({where(d.op)})  "
            f"{edge.kind} {edge.role}  [{when}]{extra}")


def format_deps(func: FuncOp) -> list[str]:
    return [describe(e) for e in analyze(func).edges]

