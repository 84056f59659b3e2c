"""The discrete-event timeline of one kernel run over the schedule's engine queues.

Design: docs/cost-model.md.  The interpreter's queue mode
(:mod:`nki_mlir.runtime.queues`) enqueues every dynamic instruction instance in program
order with its waits resolved to concrete earlier instances (``nkim.deps``, carried waits
by loop serial, the in-order predecessor, fences).  :class:`Timeline` observes each
enqueue and computes, in the same single pass, when the instance runs:

- ``ready`` = the latest finish among its waits (and the last fence's finish);
- a compute queue (``tensor``/``vector``/``scalar``/``gpsimd``, or ``program`` for
  unscheduled IR) is in order: ``start = max(queue free, ready)``,
  ``end = start + cost`` (:func:`~.costs.instruction_cost`; optional TensorE throttle);
- a DMA queue (``dma0`` ...) is in order too, and a transfer starts no earlier than
  ``ready + dma_fixed_ns`` (the semaphore-to-start latency, DMABW).  A DMA queued
  behind its queue predecessor with its waits long satisfied streams right after it.
  Its rows go 8 partitions per DMA engine (DMAOV); each engine's share is booked in the
  earliest gap of that engine's busy intervals at or after the queue's start time, so
  transfers of different queues share the 16 engines without ever overlapping on one
  engine.  The slice spans the first share's start to the last share's end;
- a fence starts after everything enqueued before it and everything after waits for it.

Because waits only name earlier-enqueued instances and queues are FIFO in enqueue order,
one pass gives the exact schedule of this model; every loop iteration is simulated (no
steady-state shortcut).  The records kept per instance (start, end, queue, static op,
binding predecessor) give the critical path; :func:`.summary.summarize` turns them into an
:class:`~.estimate.Estimate`.
"""
from __future__ import annotations

import linecache
import os
from bisect import bisect_right
from functools import cached_property

from ..diagnostics import loc_of
from .costs import InstrCost, dma_engine_shares, instruction_cost
from .estimate import ENGINES, Slice
from ..targets import TargetModel

#: engines that are compute queues (everything that is not a DMA queue)
_COMPUTE = frozenset(ENGINES) | {"program"}
#: prune DMA-engine busy intervals every this many DMAs
_PRUNE_EVERY = 256


class EngineBook:
    """Busy intervals of DMA engines: sorted, disjoint ``[start, end)`` in ns.

    Engines whose bookings have been identical so far share one book (``engines``, sorted):
    a DMA spread evenly over them is booked once.  A DMA booking only some of the members,
    or different durations on them, first gives those engines a copy of their own
    (:meth:`Timeline._split`), so every engine's intervals stay exactly its own."""

    __slots__ = ("starts", "ends", "busy", "engines")

    def __init__(self, engines: tuple[int, ...] = ()):
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.busy = 0.0
        self.engines = engines

    def copy(self, engines: tuple[int, ...]) -> EngineBook:
        b = EngineBook(engines)
        b.starts, b.ends, b.busy = list(self.starts), list(self.ends), self.busy
        return b

    def place(self, t: float, d: float) -> float:
        """Book ``d`` ns at the earliest ``s >= t`` that is free for ``[s, s + d)``; return ``s``."""
        starts, ends = self.starts, self.ends
        i = bisect_right(ends, t)
        s = t
        n = len(starts)
        while i < n and starts[i] < s + d:
            if ends[i] > s:
                s = ends[i]
            i += 1
        e = s + d
        self.busy += d
        # insert [s, e) before interval i, merging with touching neighbours
        if i > 0 and ends[i - 1] >= s:
            if e > ends[i - 1]:
                ends[i - 1] = e
            if i < n and starts[i] <= e:
                if ends[i] > ends[i - 1]:
                    ends[i - 1] = ends[i]
                del starts[i], ends[i]
        elif i < n and starts[i] <= e:
            starts[i] = s
        else:
            starts.insert(i, s)
            ends.insert(i, e)
        return s

    def prune(self, t: float) -> None:
        """Forget intervals ending at or before ``t`` (no later booking starts before ``t``)."""
        k = bisect_right(self.ends, t)
        if k:
            del self.starts[:k], self.ends[:k]


def _short_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


#: engine tuples by value (one object per value)
_ENGINES: dict[tuple[int, ...], tuple[int, ...]] = {}


def _interned(engines: tuple[int, ...]) -> tuple[int, ...]:
    """The one object of value ``engines`` (books and share groups are compared by identity
    first)."""
    return _ENGINES.setdefault(engines, engines)


#: the interned ``(0, ..., n - 1)`` by ``n``
_ALL_ENGINES: dict[int, tuple[int, ...]] = {}
#: the last queue list a timeline was made for (a copy) and its DMA queues' indices
_DMA_QUEUES: list = [None, ()]


def _all_engines(n: int) -> tuple[int, ...]:
    """The interned tuple of engines ``0 .. n - 1`` (made once per ``n``)."""
    t = _ALL_ENGINES.get(n)
    if t is None:
        t = _ALL_ENGINES[n] = _interned(tuple(range(n)))
    return t


def _dma_queue_indices(queues: list[str]) -> tuple[int, ...]:
    """The indices of the DMA queues (``dma0`` ...) among ``queues`` (kept for the last
    queue list asked about: the timelines of one program ask about equal lists)."""
    memo = _DMA_QUEUES
    if memo[0] != queues:
        memo[1] = tuple(qi for qi, name in enumerate(queues) if name.startswith("dma"))
        memo[0] = list(queues)
    return memo[1]


class _Static:
    """The cost of one static instruction, resolved once per op."""

    __slots__ = ("sid", "cost", "ns", "tensor_mm", "track", "is_dma", "shares", "groups", "one",
                 "loc", "source", "label", "name")

    def __init__(self, sid: int, op, track: str, cost: InstrCost, model: TargetModel):
        self.sid = sid
        self.cost = cost
        self.ns = cost.ns
        #: a matmul on the tensor queue (what TensorE throttling slows down)
        self.tensor_mm = track == "tensor" and bool(cost.flops)
        self.track = track
        self.is_dma = cost.dma is not None
        self.shares = dma_engine_shares(model, cost.dma) if self.is_dma else ()
        by_ns: dict[float, list[int]] = {}
        for eng, ns in self.shares:
            by_ns.setdefault(ns, []).append(eng)
        #: the shares grouped by duration: ((engines...), ns); equal engine tuples are one
        #: object (a book's ``engines`` is tested for identity first)
        self.groups = tuple((_interned(tuple(engs)), ns) for ns, engs in by_ns.items())
        #: the only group when all shares take as long (the common case), else None
        self.one = self.groups[0] if len(self.groups) == 1 else None
        self.name = op.name if op is not None else "pseudo"
        self.label = cost.label
        loc = loc_of(op)
        self.loc = f"{_short_path(loc.file)}:{loc.line}" if loc else ""
        self.source = linecache.getline(loc.file, loc.line).strip() if loc else ""


class Timeline:
    """Observer of a queue-mode run that computes the modelled timeline (module docstring).

    Args:
        model: the target's constants (:mod:`nki_mlir.targets`).
        queues: the schedule's queue names by index (``Schedule.queues``).
        throttle: model TensorE power throttling (trn2/trn3: matmuls run at half rate for
            ``model.throttle_ramp_ns`` after TensorE was idle that long; docs/cost-model.md).
        costs: the per-instruction cost function (default :func:`~.costs.instruction_cost`).
        rows: the static costs of instructions timed before, by ``sid`` (kept across the
            timelines of one program and model; filled as instructions are first timed).
    """

    def __init__(self, model: TargetModel, queues: list[str], throttle: bool = False,
                 costs=instruction_cost, rows: dict | None = None):
        self.model = model
        self.costs = costs
        self.queues = queues
        self.throttle = throttle and model.throttle_ramp_ns > 0
        self._statics: dict[int, _Static] | None = {}
        self.rows: dict[int, _Static] = {} if rows is None else rows
        #: no instruction that can be timed here is costed with the fallback (set by the
        #: timing walk: the summary then need not look for one)
        self.no_fallback = False
        self._dma_queues = _dma_queue_indices(queues)
        self._dma_fixed = model.dma_fixed_ns
        nq = max(len(queues), 1)
        self.qfree: list[float] = [0.0] * nq     # per queue index: when it is free
        self.qlast: list[int] = [-1] * nq        # per queue index: its last record
        shared = EngineBook(_all_engines(model.dma_engines))
        self.books = [shared] * model.dma_engines   # one book per engine (shared while equal)
        #: the last fence's finish and record, the latest finish and its record
        self._mark: list = [0.0, -1, 0.0, -1]
        self._ndma = [0]            # DMAs booked so far (the engine books are pruned every
        #                             _PRUNE_EVERY)
        self._ramp_start = -1.0
        self._tensor_end = 0.0
        # per record (dynamic instance), parallel lists
        self.start: list[float] = []
        self.end: list[float] = []
        self.sid: list[int] = []
        self.pred: list[int] = []
        self.waited: list[bool] = []

    @cached_property
    def place(self):
        """``place(static, qi, fence, ready, pred) -> record`` (:meth:`_placer`; made on first
        use: the generated timing walk does not call it)."""
        return self._placer()

    # ------------------------------------------------------------------ static costs
    @property
    def statics(self) -> dict[int, _Static]:
        """The static costs of the instructions timed, by sid, in order of first timing."""
        d = self._statics
        if d is None:           # after a timing walk: from the records' sids, once
            rows = self.rows
            d = self._statics = {sid: rows[sid] for sid in dict.fromkeys(self.sid)}
        return d

    @statics.setter
    def statics(self, value: dict[int, _Static]) -> None:
        self._statics = value

    def statics_from_records(self) -> None:
        """Make :attr:`statics` from the records' sids and :attr:`rows` when it is first read
        (a timing walk records sids only; the timeline must not change afterwards)."""
        self._statics = None

    def static(self, info) -> _Static:
        statics = self._statics
        if statics is None:
            statics = self.statics
        st = statics.get(info.sid)
        if st is None:
            st = statics[info.sid] = self.row(info)
        return st

    def row(self, info) -> _Static:
        """The static cost of ``info``'s instruction (from :attr:`rows`, else computed)."""
        st = self.rows.get(info.sid)
        if st is None:
            track = self.queues[info.qi] if info.qi < len(self.queues) else "program"
            st = self.rows[info.sid] = _Static(info.sid, info.op, track,
                                               self.costs(info.op, self.model), self.model)
        return st

    floor = property(lambda self: self._mark[0], doc="finish of the last fence (ns)")
    floor_rec = property(lambda self: self._mark[1], doc="record of the last fence (-1: none)")
    maxend = property(lambda self: self._mark[2], doc="latest finish so far (ns)")
    maxend_rec = property(lambda self: self._mark[3], doc="record finishing latest (-1: none)")

    # --------------------------------------------------------------------- the event
    def add(self, inst, waits) -> None:
        """Time one enqueued instance (``runtime.queues.Instance``) given its resolved waits."""
        info = inst.info
        ready, pred = -1.0, -1
        for w in waits:
            if w.rec >= 0 and w.t > ready:
                ready, pred = w.t, w.rec
        rec = self.place(self.static(info), info.qi, info.fence, ready, pred)
        inst.t = self.end[rec]
        inst.rec = rec

    def _placer(self):
        """The :meth:`place` function of this timeline (a closure over its state: it runs once
        per dynamic instance)."""
        mark, qfree, qlast, end_l = self._mark, self.qfree, self.qlast, self.end
        start_a, end_a, sid_a = self.start.append, self.end.append, self.sid.append
        pred_a, waited_a = self.pred.append, self.waited.append
        fixed, book, throttle, throttled = self._dma_fixed, self._book, self.throttle, \
            self._throttled
        books, ndma = self.books, self._ndma

        def place(st: _Static, qi: int, fence: bool, ready: float, pred: int) -> int:
            """Time one instance of ``st`` on queue ``qi``: ``ready`` is when its waits are
            satisfied, ``pred`` the record of the wait deciding it (the first one finishing
            last; -1.0 and -1 without waits).  Returns its record index."""
            if mark[0] >= ready:               # nothing later than the last fence
                ready, pred = mark[0], mark[1]
            if fence and mark[2] > ready:      # a fence: after everything enqueued before
                ready, pred = mark[2], mark[3]
            free = qfree[qi]
            if st.is_dma:
                ready += fixed
                waited = ready > free
                t0 = ready if waited else free
                one = st.one
                if one is not None and books[one[0][0]].engines is one[0] and \
                        (ndma[0] + 1) % _PRUNE_EVERY:   # one share size, on its own book
                    start = books[one[0][0]].place(t0, one[1])
                    end = start + one[1]
                    ndma[0] += 1
                else:
                    start, end = book(st, t0)
            else:
                waited = ready > free
                start = ready if waited else free
                if throttle and st.tensor_mm:
                    end = start + throttled(start, st.ns)
                else:
                    end = start + st.ns
            rec = len(end_l)
            start_a(start)
            end_a(end)
            sid_a(st.sid)
            if waited:
                pred_a(pred)
                waited_a(pred >= 0)
            else:
                pred_a(qlast[qi])
                waited_a(False)
            qfree[qi] = end
            qlast[qi] = rec
            if end >= mark[2]:
                mark[2], mark[3] = end, rec
            if fence:
                mark[0], mark[1] = end, rec
            return rec
        return place

    def _book(self, st: _Static, t0: float) -> tuple[float, float]:
        """Book a DMA's shares on the DMA engines at or after ``t0``: ``(start, end)`` of
        its slice (the first share's start, the last share's end)."""
        start = end = None
        books = self.books
        for engines, ns in st.groups:
            b = books[engines[0]]
            if b.engines is not engines and b.engines != engines:   # not exactly their book
                self._split(engines)
                placed = set()
                for e in engines:
                    b = books[e]
                    if id(b) in placed:     # booked already through a sharing engine
                        continue
                    placed.add(id(b))
                    s = b.place(t0, ns)
                    start = s if start is None or s < start else start
                    end = s + ns if end is None or s + ns > end else end
                continue
            s = b.place(t0, ns)
            start = s if start is None or s < start else start
            end = s + ns if end is None or s + ns > end else end
        self._ndma[0] += 1
        if self._ndma[0] % _PRUNE_EVERY == 0:
            self._prune()
        if start is None:
            return t0, t0
        return start, end

    def _split(self, engines: tuple[int, ...]) -> None:
        """Give ``engines`` books of their own among those they share: every book shared by
        engines inside and outside ``engines`` is copied for the inside ones (which then
        share that copy)."""
        books = self.books
        by_book: dict[int, list[int]] = {}
        for e in engines:
            by_book.setdefault(id(books[e]), []).append(e)
        for inside in by_book.values():
            b = books[inside[0]]
            if len(b.engines) != len(inside):
                nb = b.copy(_interned(tuple(inside)))
                b.engines = _interned(tuple(e for e in b.engines if e not in nb.engines))
                for e in inside:
                    books[e] = nb

    def _throttled(self, start: float, dur: float) -> float:
        ramp = self.model.throttle_ramp_ns
        if self._ramp_start < 0 or start - self._tensor_end > ramp:
            self._ramp_start = start
        self._tensor_end = start + dur
        if start < self._ramp_start + ramp:
            dur *= 2.0
            self._tensor_end = start + dur
        return dur

    def _prune(self) -> None:
        if not self._dma_queues:
            return
        low = min(self.qfree[qi] for qi in self._dma_queues)
        for b in {id(b): b for b in self.books}.values():
            b.prune(low)

    # ------------------------------------------------------------------------ result
    # (the Estimate of everything timed so far: :func:`.summary.summarize`, which reads this)
    def slices(self) -> list[Slice]:
        """Every timed instance as a :class:`~.estimate.Slice` (enqueue order)."""
        out = []
        statics = self.statics
        for rec, (s, e, sid) in enumerate(zip(self.start, self.end, self.sid)):
            st = statics[sid]
            waited_on = None
            p = self.pred[rec]
            if self.waited[rec] and p >= 0:
                ps = statics[self.sid[p]]
                waited_on = f"{ps.name} @ {ps.loc or '?'} ({ps.track})"
            c = st.cost
            out.append(Slice(track=st.track, name=st.name, start_ns=s, end_ns=e, label=st.label,
                             loc=st.loc, source=st.source, waited_on=waited_on, sid=sid, index=rec,
                             bytes=c.dma.total_bytes if c.dma is not None else 0, flops=c.flops))
        return out
