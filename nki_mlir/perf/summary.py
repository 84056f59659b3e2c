"""From a finished :class:`~.timeline.Timeline` to the figures of an :class:`~.estimate.Estimate`.

- per queue: busy time and %, dynamic instruction count, time idle waiting on a DMA;
- DMA bytes, HBM bytes, DMA count and average transfer size;
- MFU = matmul time at the dtype's TensorE peak / latency; MBU = HBM bytes / (latency x
  HBM bandwidth per core) (neuron-profile's ``mfu_estimated_percent`` /
  ``mbu_estimated_percent``, docs/cost-model.md);
- the roofline lower bound (docs/cost-model.md): the max of matmul FLOPs at peak, each compute
  engine's total work, the busiest DMA engine's total transfer time and HBM bytes at the
  HBM bandwidth; ``ratio = latency / bound``;
- the critical path (binding predecessors back from the last instruction to finish),
  aggregated per static instruction;
- warnings like neuron-profile's: DMAs under 2 KiB per partition, matmuls with a moving
  free size under 128, compute engines idle waiting on DMAs (PERF Opt #1, #5a, #9).
"""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from typing import TYPE_CHECKING

from .costs import FALLBACK_LABEL
from .estimate import ENGINES, CriticalEntry, Estimate, LazyEstimate, PerfWarning, TrackStats

if TYPE_CHECKING:
    from .timeline import Timeline

#: bytes per partition under which a DMA is "small" (DMABW: at least 2 KiB recommended)
SMALL_DMA_BYTES = 2048
#: matmul moving free size under which TensorE is latency-bound (PERF Opt #5a)
SMALL_MOVING = 128
#: share of the latency a compute engine may idle on DMAs before it is reported
IDLE_ON_DMA_PCT = 10.0
#: rows of the critical path kept
CRITICAL_ROWS = 10
#: records up to which a lazy summary keeps the timeline until a figure is read (a cached
#: estimate read only for its latency would otherwise hold every record of a long run;
#: beyond this the walk, not the summary, is the cost)
LAZY_RECORDS = 1 << 16


def _track_order(name: str) -> tuple:
    if name in ENGINES:
        return (0, ENGINES.index(name), 0)
    if name.startswith("dma") and name[3:].isdigit():
        return (1, 0, int(name[3:]))
    return (2, 0, name)


def summarize(tl: Timeline, kernel: str, schedule: str, keep_slices: bool = True,
              lazy: bool = False) -> Estimate:
    """The :class:`~.estimate.Estimate` of timeline ``tl`` (see the module docstring).

    ``lazy``: compute only the kernel, target, schedule, latency, instruction count and notes
    now and every other figure on first access (:class:`~.estimate.LazyEstimate`; equal
    to the eager result) when ``tl`` has at most :data:`LAZY_RECORDS` records; ``tl`` must
    then not be changed afterwards."""
    latency = tl.maxend
    notes = []
    fallback = () if tl.no_fallback else sorted(
        {f"{st.name} at {st.loc or '?'}" for st in tl.statics.values() if st.label == FALLBACK_LABEL})
    if fallback:
        notes.append("costed with a conservative fallback (operands not understood): "
                     + ", ".join(fallback))
    if lazy and len(tl.start) <= LAZY_RECORDS:
        return LazyEstimate(kernel=kernel, target=tl.model.name, schedule=schedule,
                            latency_ns=latency, instructions=len(tl.start), notes=notes,
                            _figures=lambda: figures(tl, keep_slices))
    return Estimate(kernel=kernel, target=tl.model.name, schedule=schedule, latency_ns=latency,
                    instructions=len(tl.start), notes=notes, **figures(tl, keep_slices))


def figures(tl: Timeline, keep_slices: bool) -> dict:
    """The figures of timeline ``tl`` by :class:`~.estimate.Estimate` field name: every one
    but ``kernel``, ``target``, ``schedule``, ``latency_ns``, ``instructions`` and ``notes``
    (:data:`~.estimate.LAZY_FIELDS`)."""
    model = tl.model
    statics = tl.statics
    latency = tl.maxend
    busy, count, wait_dma = _per_track(tl)
    # instances per static instruction, in order of first appearance (tl.statics' order)
    if len(tl.sid) > SMALL_TIMELINE:
        counts = np.bincount(_np(tl.sid, np.int64)).tolist()
        per_sid = {s: counts[s] for s in statics}
    else:
        per_sid = Counter(tl.sid)

    dma_bytes = hbm_bytes = dma_count = 0
    flops = mm_peak_ns = 0.0
    work: dict[str, float] = defaultdict(float)
    small_dma: list[tuple[int, int, int]] = []
    small_mov: list[tuple[int, int, int]] = []
    for s, n in per_sid.items():
        st = statics[s]
        c = st.cost
        if c.dma is not None:
            dma_count += n
            dma_bytes += n * c.dma.total_bytes
            hbm_bytes += n * c.dma.hbm_bytes
            if c.dma.row_bytes < SMALL_DMA_BYTES:
                small_dma.append((s, n, c.dma.row_bytes))
        else:
            work[c.engine] += n * c.ns
        if c.flops:
            flops += n * c.flops
            if c.peak_flops_per_ns:
                mm_peak_ns += n * c.flops / c.peak_flops_per_ns
        if c.moving_free is not None and c.moving_free < SMALL_MOVING:
            small_mov.append((s, n, c.moving_free))

    bounds = {"matmul": mm_peak_ns}
    for eng in ENGINES:
        if work.get(eng):
            bounds[eng] = work[eng]
    dma_busiest = max((b.busy for b in tl.books), default=0.0)
    if dma_busiest:
        bounds["dma"] = dma_busiest
    if hbm_bytes:
        bounds["hbm"] = hbm_bytes / model.hbm_bytes_per_ns
    bound_kind, bound_ns = max(bounds.items(), key=lambda kv: kv[1])

    tracks = [TrackStats(track=t, busy_ns=busy[t], busy_pct=100.0 * busy[t] / latency if latency else 0.0,
                         instructions=count[t], wait_dma_ns=wait_dma.get(t, 0.0))
              for t in sorted(busy, key=_track_order)]
    return dict(
        tracks=tracks, dma_bytes=dma_bytes, hbm_bytes=hbm_bytes, dma_count=dma_count,
        avg_dma_bytes=dma_bytes / dma_count if dma_count else 0.0, matmul_flops=flops,
        mfu_pct=100.0 * mm_peak_ns / latency if latency else 0.0,
        mbu_pct=100.0 * hbm_bytes / (latency * model.hbm_bytes_per_ns) if latency else 0.0,
        bound_ns=bound_ns, bound_kind=bound_kind, bounds=bounds,
        ratio=latency / bound_ns if bound_ns else 0.0,
        critical_path=_critical_path(tl, latency),
        warnings=_warnings(tl, latency, tracks, small_dma, small_mov),
        slices=tl.slices() if keep_slices else [])


#: records up to which :func:`_per_track` loops in Python (NumPy's fixed cost is larger)
SMALL_TIMELINE = 256


def _per_track(tl: Timeline) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
    """Per track (tracks with records only): busy ns, records, and ns a compute track
    idled on DMAs (a record whose deciding wait is a DMA: the gap since the track's
    previous record ended, or since 0).  Sums run in record order (``np.bincount`` adds
    its weights in input order), as a loop over the records would -- and does, for
    timelines of at most :data:`SMALL_TIMELINE` records."""
    if len(tl.sid) <= SMALL_TIMELINE:
        return _per_track_loop(tl)
    names = sorted({st.track for st in tl.statics.values()})
    index = {t: i for i, t in enumerate(names)}
    nsid = max(tl.statics, default=-1) + 1
    track_of = np.zeros(nsid, np.intp)
    is_dma = np.zeros(nsid, bool)
    for s, st in tl.statics.items():
        track_of[s] = index[st.track]
        is_dma[s] = st.is_dma
    sid = _np(tl.sid, np.int64)
    start = _np(tl.start, np.float64)
    end = _np(tl.end, np.float64)
    tix = track_of[sid]
    nt = len(names)
    busy = np.bincount(tix, weights=end - start, minlength=nt)
    count = np.bincount(tix, minlength=nt)
    pred = _np(tl.pred, np.int64)
    waits = ~is_dma[sid] & (_np(tl.waited, np.int8) != 0) & (pred >= 0)
    waits[waits] = is_dma[sid[pred[waits]]]
    wait_dma = np.zeros(nt)
    if waits.any():
        order = np.argsort(tix, kind="stable")       # records by track, in record order
        prev = np.empty_like(end)
        prev[order[1:]] = end[order[:-1]]
        first = np.ones(len(order), bool)
        first[1:] = tix[order[1:]] != tix[order[:-1]]
        prev[order[first]] = 0.0
        gap = np.maximum(start - prev, 0.0)
        wait_dma = np.bincount(tix[waits], weights=gap[waits], minlength=nt)
    used = [i for i in range(nt) if count[i]]
    return ({names[i]: float(busy[i]) for i in used}, {names[i]: int(count[i]) for i in used},
            {names[i]: float(wait_dma[i]) for i in used if waits.any()})


def _np(seq, dt) -> np.ndarray:
    """The record list ``seq`` as a NumPy array of ``dt``."""
    return np.fromiter(seq, dt, len(seq))


def _per_track_loop(tl: Timeline) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
    """:func:`_per_track` as a loop over the records (the same sums in the same order)."""
    statics = tl.statics
    track = {s: st.track for s, st in statics.items()}
    dma = {s: st.is_dma for s, st in statics.items()}
    names = sorted(set(track.values()))
    busy = dict.fromkeys(names, 0.0)
    count = dict.fromkeys(names, 0)
    wait = dict.fromkeys(names, 0.0)
    prev_end: dict[str, float] = {}
    any_wait = False
    sid, start, end, pred, waited = tl.sid, tl.start, tl.end, tl.pred, tl.waited
    for rec in range(len(sid)):
        s = sid[rec]
        t = track[s]
        b, e = start[rec], end[rec]
        busy[t] += e - b
        count[t] += 1
        p = pred[rec]
        if not dma[s] and waited[rec] and p >= 0 and dma[sid[p]]:
            any_wait = True
            wait[t] += max(b - prev_end.get(t, 0.0), 0.0)
        prev_end[t] = e
    used = [t for t in names if count[t]]
    return ({t: busy[t] for t in used}, {t: count[t] for t in used},
            {t: wait[t] for t in used} if any_wait else {})


def _critical_path(tl: Timeline, latency: float) -> list[CriticalEntry]:
    """The static instructions of the binding-predecessor chain back from the record that
    finishes last: time on it and instances per instruction, the :data:`CRITICAL_ROWS`
    longest (ties in order of first appearance along the chain)."""
    nsid = max(tl.statics, default=-1) + 1
    time = [0.0] * nsid
    hits = [0] * nsid
    order: list[int] = []            # static instructions in order of first appearance
    sid, start, end, pred = tl.sid, tl.start, tl.end, tl.pred
    rec = tl.maxend_rec
    while rec >= 0:
        s = sid[rec]
        if not hits[s]:
            order.append(s)
        time[s] += end[rec] - start[rec]
        hits[s] += 1
        rec = pred[rec]
    rows = []
    for s in sorted(order, key=lambda s: -time[s])[:CRITICAL_ROWS]:
        st = tl.statics[s]
        t = time[s]
        rows.append(CriticalEntry(name=st.name, loc=st.loc, source=st.source, track=st.track,
                                  time_ns=t, instances=hits[s],
                                  pct=100.0 * t / latency if latency else 0.0))
    return rows


def _warnings(tl: Timeline, latency: float, tracks: list[TrackStats], small_dma,
              small_mov) -> list[PerfWarning]:
    out: list[PerfWarning] = []
    findings = [("small_dma", small_dma, lambda st, n, b: (
                    f"{n} DMA(s) of {st.cost.dma.total_bytes} bytes move {b} bytes per partition "
                    f"(< {SMALL_DMA_BYTES}; 4 KiB or more per partition nearly saturates DMA "
                    f"bandwidth)")),
                ("small_moving", small_mov, lambda st, n, f: (
                    f"{n} matmul(s) with a moving free size of {f} (< {SMALL_MOVING}): TensorE "
                    f"is latency-bound (fixed {tl.model.mm_min_cycles}-cycle interval)"))]
    for kind, rows, say in findings:
        for s, n, value in sorted(rows, key=lambda x: -x[1]):
            st = tl.statics[s]
            out.append(PerfWarning(kind, f"{say(st, n, value)}: `{st.source}`", st.loc))
    for t in tracks:
        if latency and t.wait_dma_ns and 100.0 * t.wait_dma_ns / latency > IDLE_ON_DMA_PCT:
            out.append(PerfWarning(
                "idle_on_dma", f"{t.track} engine idle {t.wait_dma_ns / 1e3:.1f} us "
                               f"({100.0 * t.wait_dma_ns / latency:.0f}% of the latency) "
                               f"waiting on DMAs"))
    return out
