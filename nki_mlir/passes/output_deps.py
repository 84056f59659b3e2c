"""``err_unexpected_output_dependencies`` (NKI error catalogue (nki.errors)).

Two iterations of an ``affine_range`` loop must not write the same location of a tensor
defined outside the loop.  Candidate pairs of writes come from the (conservative) carried
distance of :mod:`.dependence`; a candidate is confirmed by the exact integer-set test of
:mod:`.exact_overlap`, so a bijective index map (``out[i2 * n1 + i1]``) is never reported
while every real overlap still is.  Accumulations are exempt (see
:func:`check_output_dependencies`).
"""
from __future__ import annotations

from collections import defaultdict

from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from ..diagnostics import error_at
from ..errors import NKIVerifyError
from .dependence import (Acc, Node, _common, carried_distance, collect_nodes,
                         same_iteration_overlap, where)
from .exact_overlap import carried_overlap_either


def tensor_name(base: SSAValue) -> str:
    if isinstance(base, OpResult):
        name = base.op.attributes.get("nkim.name")
        if isinstance(name, StringAttr):
            return name.data
    return base.name_hint or "tensor"


def _accumulates(op: Operation, acc: Acc, all_accs: list[Acc], common: list[Operation]) -> bool:
    """Associative accumulation by one instruction, allowed across affine_range iterations:
    matmul into PSUM, DMA with an accumulate op, or a read-modify-write of the region."""
    if op.name in ("nisa.matmul", "nisa.nc_matmul_mx"):
        flags = op.properties.get("psum_accumulate_flags")
        return not (isinstance(flags, StringAttr) and flags.data == "overwrite")
    if op.name == "nisa.dma_compute" or "dst_rmw_op" in op.properties or "accumulate_op" in op.properties:
        return True
    return any(not r.is_write and r.base is acc.base and same_iteration_overlap(r.box, acc.box, common)
               for r in all_accs)


def _reduction(x: Node, ax: Acc, loop: Operation, reads: list[tuple[Node, Acc]]) -> bool:
    """``x`` writes a region that the same iteration of ``loop`` read before (``t = acc op y;
    acc = t``, how ``loop_reduce`` and ``acc += y`` on a subscript lower): an accumulation."""
    return _accumulates(x.op, ax, x.accs, x.loops) or any(
        r.index < x.index and loop in r.loops
        and same_iteration_overlap(ar.box, ax.box, _common(r, x)) for r, ar in reads)


def check_output_dependencies(func: FuncOp, nodes: list[Node] | None = None) -> None:
    """Raise ``err_unexpected_output_dependencies`` (a located :class:`NKIVerifyError`) when two
    iterations of an ``affine_range`` loop may write the same location of a tensor defined
    outside the loop (both boxes exactly known).  Accumulations are exempt: matmul into PSUM,
    DMA with an accumulate op, and a write of a region that the same iteration read before
    it (by the same instruction or an earlier one)."""
    if nodes is None:
        if not any(_is_affine(op) for op in func.walk()):
            return                          # no affine_range loop: nothing to check
        nodes = collect_nodes(func, keep=_in_affine)    # (the only ones read below)
    writes: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    reads: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    for n in nodes:
        if not _in_affine(n.loops):
            continue
        for a in n.accs:
            if a.is_write and a.box.exact:
                writes[a.base].append((n, a))
            elif not a.is_write:
                reads[a.base].append((n, a))
    for base, ws in writes.items():
        for i, (x, ax) in enumerate(ws):
            for y, ay in ws[i:]:
                common = _common(x, y)
                for lvl, loop in enumerate(common):
                    if not _is_affine(loop) or _inside(base, loop):
                        continue
                    if _reduction(x, ax, loop, reads[base]) and _reduction(y, ay, loop, reads[base]):
                        continue
                    if carried_distance(ax.box, ay.box, common, lvl) is None and \
                            carried_distance(ay.box, ax.box, common, lvl) is None:
                        continue
                    if not carried_overlap_either(ax.box, ay.box, common, lvl):
                        continue            # exact (isl): no element shared across iterations
                    bad = x if not _reduction(x, ax, loop, reads[base]) else y
                    other = y if bad is x else x
                    also = "" if x is y else f" (and by the {other.name} at {where(other.op)})"
                    raise error_at(
                        bad.op,
                        f"tensor '{tensor_name(base)}' is written at the same location in different "
                        f"iterations of the affine_range loop at {where(loop)}{also}; iterations of an "
                        f"affine_range must be independent: write a different location per "
                        f"iteration, or use nl.sequential_range for a loop-carried dependency",
                        NKIVerifyError, code="err_unexpected_output_dependencies")


def check_module(module: Operation) -> None:
    """:func:`check_output_dependencies` of every function of ``module``: what a compile
    that stops before ``nisa-schedule`` (which checks it too) still owes its user.

    Raises:
        NKIVerifyError: ``err_unexpected_output_dependencies``, located at the write.
    """
    for op in module.walk():
        if isinstance(op, FuncOp):
            check_output_dependencies(op)


def _in_affine(loops: list[Operation]) -> bool:
    return any(_is_affine(l) for l in loops)


def _is_affine(loop: Operation) -> bool:
    r = loop.attributes.get("nki.range")
    return loop.name == "scf.for" and isinstance(r, StringAttr) and r.data == "affine"


def _inside(value: SSAValue, loop: Operation) -> bool:
    """Whether ``value`` is defined inside ``loop``'s body."""
    owner = value.op if isinstance(value, OpResult) else value.block.parent_op() \
        if isinstance(value, BlockArgument) else None
    while owner is not None:
        if owner is loop:
            return True
        owner = owner.parent_op()
    return False
