"""DMA costs: what one DMA moves (:class:`DmaShape`, from its operands) and how long each of
the 16 DMA engines is busy with it (:func:`dma_engine_shares`).  Formulas: docs/cost-model.md (DMABW, DMAOV, ARCH3), summarised in :mod:`.costs`."""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from ..dialects.rules import partition_start
from .operands import Tile, role_of
from ..targets import TargetModel

HBM = ("hbm", "private_hbm", "shared_hbm")


@dataclass(frozen=True)
class DmaShape:
    """What one DMA moves, as the DMA engines see it.

    Attributes:
        total_bytes: bytes moved (for ``dma_compute``: the bytes of all sources read).
        hbm_bytes: bytes read from HBM plus bytes written to HBM.
        rows: rows spread over the DMA engines: the partition dim of the SBUF side
            (HBM->HBM: the first dim, 1 for a 1-D tensor).
        row_bytes: bytes per row (``ceil(total_bytes / rows)``).
        run_bytes: innermost contiguous run in bytes, min over source and destination,
            at most ``row_bytes`` (used for ``eff``).
        start_partition: SBUF-side start partition when static, else 0; row ``r`` goes to
            DMA engine ``((start_partition + r) // 8) % 16``.
        transpose: a ``dma_transpose``.  sbuf_to_sbuf: both sides on chip.
    """

    total_bytes: int
    hbm_bytes: int
    rows: int
    row_bytes: int
    run_bytes: int
    start_partition: int
    transpose: bool
    sbuf_to_sbuf: bool


def _start_partition(t: Tile) -> int:
    p = partition_start(t.value)
    return int(p) if p is not None else 0


def _run_bytes(t: Tile) -> int:
    return t.run_elems() * t.itemsize


def dma_shape(op: Operation, tiles: list[Tile]) -> DmaShape:
    """What the DMA ``op`` moves; an instruction definition's ``Dma`` cost row
    (``dialects/ods_forms.py``) names its sources and whether it transposes."""
    name = op.name
    dst = role_of(tiles, "dst")
    row = getattr(getattr(op, "DEFINITION", None), "cost", None)
    roles = getattr(row, "srcs", ("src",))
    transpose = getattr(row, "transpose", False)
    srcs = [t for t in tiles if t.role in roles]
    if dst is None or not srcs:
        return DmaShape(0, 0, 1, 0, 1, 0, transpose, False)
    if name == "nisa.dma_copy_indirect":
        return _indirect_shape(tiles, dst, srcs[0])
    src_bytes = sum(s.nbytes for s in srcs)
    total = src_bytes if getattr(row, "sum_srcs", False) else max(src_bytes, dst.nbytes)
    hbm = sum(s.nbytes for s in srcs if s.space in HBM) + (dst.nbytes if dst.space in HBM else 0)
    side = dst if dst.space == "sbuf" else next((s for s in srcs if s.space == "sbuf"), None)
    if side is not None:
        rows, start = side.shape[0], _start_partition(side)
    else:  # HBM -> HBM: rows are the first dim
        rows, start = (dst.shape[0] if len(dst.shape) > 1 else 1), 0
    rows = max(rows, 1)
    row_bytes = -(-total // rows)
    runs = [_run_bytes(dst)] if transpose else [_run_bytes(t) for t in (dst, *srcs)]
    run = max(1, min(min(runs), row_bytes))
    on_chip = dst.space == "sbuf" and all(s.space == "sbuf" for s in srcs)
    return DmaShape(total, hbm, rows, row_bytes, run, start, transpose, on_chip)


def _indirect_shape(tiles: list[Tile], dst: Tile, src: Tile) -> DmaShape:
    """Gather (``src_index``) / scatter (``dst_index``): whole rows of the indexed HBM tensor."""
    si, di = role_of(tiles, "src_index"), role_of(tiles, "dst_index")
    row_elems = dst.free if len(dst.shape) > 1 else 1
    if si is not None and di is not None:
        nrows = si.shape[0]
    elif si is not None:
        nrows = dst.shape[0]
    else:
        nrows = src.shape[0]
    total = nrows * row_elems * max(dst.itemsize, src.itemsize)
    hbm = (total if src.space in HBM else 0) + (total if dst.space in HBM else 0)
    side = dst if dst.space == "sbuf" else src if src.space == "sbuf" else None
    start = _start_partition(side) if side is not None else 0
    rows = max(nrows, 1)
    row_bytes = -(-total // rows)
    run = max(1, min(_run_bytes(dst), _run_bytes(src), row_bytes))
    return DmaShape(total, hbm, rows, row_bytes, run, start, False,
                    dst.space == "sbuf" and src.space == "sbuf")


def dma_engine_bytes(model: TargetModel, dma: DmaShape) -> list[tuple[int, float]]:
    """``[(DMA engine index, bytes on that engine)]`` (engines with bytes, ascending): row
    ``r`` goes to engine ``((start_partition + r) // dma_partitions_per_engine) %
    dma_engines``; each row carries ``total_bytes / rows`` bytes."""
    engines, per = model.dma_engines, model.dma_partitions_per_engine
    rows = max(int(dma.rows), 1)
    counts = [0] * engines
    period = engines * per
    full, rem = divmod(rows, period)
    if full:
        counts = [full * per] * engines
    pos = int(dma.start_partition) + full * period
    while rem > 0:
        take = min(rem, per - pos % per)
        counts[(pos // per) % engines] += take
        rem -= take
        pos += take
    row = dma.total_bytes / rows
    return [(e, c * row) for e, c in enumerate(counts) if c and dma.total_bytes > 0]


def dma_eff(model: TargetModel, run_bytes: float) -> float:
    """DMA efficiency ``b / (b + dma_eff_knee_bytes)`` of a contiguous run of ``b`` bytes."""
    b = max(float(run_bytes), 1.0)
    return b / (b + model.dma_eff_knee_bytes)


def dma_engine_shares(model: TargetModel, dma: DmaShape) -> list[tuple[int, float]]:
    """``[(DMA engine index, transfer ns on that engine)]``, excluding ``dma_fixed_ns``.

    Per engine: ``bytes / (dma_bytes_per_ns * eff(run_bytes) * hbm_scale)``, with
    ``hbm_scale = min(1, hbm_bytes_per_ns / (dma_engines * dma_bytes_per_ns))`` when the DMA
    touches HBM (else 1), divided by ``dma_transpose_eff_hbm`` / ``_sbuf`` for a transpose
    (DMABW, DMAOV, ARCH3; docs/cost-model.md).  E.g. trn2, 4x4096 bf16 HBM->SBUF: one engine,
    32768 B / (23 * 0.941 * 0.984) = 1539 ns.
    """
    rate = model.dma_bytes_per_ns * dma_eff(model, dma.run_bytes)
    if dma.hbm_bytes > 0:
        rate *= min(1.0, model.hbm_bytes_per_ns / (model.dma_engines * model.dma_bytes_per_ns))
    if dma.transpose:
        rate *= model.dma_transpose_eff_sbuf if dma.sbuf_to_sbuf else model.dma_transpose_eff_hbm
    return [(e, b / rate) for e, b in dma_engine_bytes(model, dma)]
