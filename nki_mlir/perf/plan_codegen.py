"""The timing-only walk as one generated Python function per program, model and throttle.

:func:`.plan_walk.walk_plan` interprets the resolved timing plan (:class:`.plan_walk.Resolved`)
step by step: per dynamic instruction it unpacks a step tuple, loops over its waits and
calls :meth:`.timeline.Timeline.place`.  This module writes the same walk out as Python
source once -- loops as ``for`` loops, each instruction's cost, queue, fence flag, waits
and history updates as constants and straight-line code, the queues' free times and last
records, the fence / latest-finish marks and each ``nkim.id``'s latest record and finish as
local variables -- and compiles it.  Running it leaves the timeline exactly as the
interpreted walk does (the same records in the same order, the same DMA-engine bookings,
queue state and marks; ``test/python/test_perf_plan_walk.py`` compares every figure of the
two and of a queue-mode run).

A plan the generator does not take (too many static steps, or Python refusing the source:
loops nested deeper than it allows) has no generated walk: :func:`walker` returns None and
the interpreted walk runs.
"""
from __future__ import annotations

import math

from ..runtime import control
from ..runtime.queues import CARRIED_HISTORY
from ..runtime.timing_plan import FOR, IF, INSTR, RUN
from .timeline import _all_engines
from .unwalkable import Unwalkable

#: plans with more steps than this are walked by the interpreter (source size, compile time)
MAX_STEPS = 20000
#: a fence-free plan of about this many instances or more finds the latest finish after the
#: walk (one pass over the finishes) instead of at every instance
LATEST_AFTER = 512


#: the book every DMA engine shares, in locals: ``BOK`` (they still share one: ``books[0]``
#: is it), its interval lists ``BS`` / ``BE`` and busy time ``BZ`` (written back to
#: ``B0.busy`` before the timeline books a DMA itself and at the end; read again after)
SHARED_BOOK = "B0 = books[0]; BOK = B0.engines is GALL; BS, BE, BZ = B0.starts, B0.ends, B0.busy"


class Unsupported(Exception):
    """The plan cannot be written out (:data:`MAX_STEPS`)."""


class _Gen:
    """Writes the walk of one resolved plan (see the module docstring)."""

    def __init__(self, res, tl, in_order: bool, throttle: bool):
        self.res, self.tl = res, tl
        self.in_order, self.throttle = in_order, throttle
        self.ns: dict[str, object] = {"control": control, "H": CARRIED_HISTORY}
        self.lines: list[str] = []
        self.queues: set[int] = set()
        self.ids: set[int] = set()
        self.loops: set[int] = set()
        self.hists: set[int] = set()        # carried-wait histories (lists mutated in place)
        self.steps = 0
        #: carried waits looked up in the current straight-line code: (history, loop,
        #: distance) -> k of the locals ``cw<k>`` (record) and ``ce<k>`` (its finish)
        self.found: dict[tuple[int, int, int], int] = {}
        self.nfound = 0
        #: the latest finish (``m2``, ``m3``) is kept while walking: a fence reads it
        self.fences = _has_fence(res.plan) or res.dynamic < LATEST_AFTER
        #: the ``nkim.id`` some instruction waits on (``nkim.deps``)
        self.read_ids = _dep_ids(res.plan, set())
        self.uses_history = False
        self.dma_queues = tuple(getattr(tl, "_dma_queues", ()))
        #: the (interned) tuple of every DMA engine: a DMA spread evenly over all of them is
        #: booked on the shared book kept in locals (:data:`SHARED_BOOK`)
        self.all_engines = _all_engines(tl.model.dma_engines)
        self.ns["GALL"] = self.all_engines

    def const(self, prefix: str, value) -> str:
        """A name for ``value`` in the generated function's globals."""
        name = f"{prefix}{len(self.ns)}"
        self.ns[name] = value
        return name

    def num(self, x: float) -> str:
        """``x`` as a source literal (exact: ``repr`` of a finite float round-trips)."""
        x = float(x)
        return repr(x) if math.isfinite(x) else self.const("f", x)

    def use_history(self, hi: int, li: int) -> None:
        """The generated code reads carried-wait history ``hi`` of loop ``li``: bind both."""
        self.uses_history = True
        self.loops.add(li)
        self.hists.add(hi)

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    # ------------------------------------------------------------------ steps
    def block(self, plan: tuple, d: int) -> None:
        start = len(self.lines)
        self.found = {}
        for step in plan:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise Unsupported
            kind = step[0]
            if kind == INSTR:
                self.instr(step, d)
                continue
            if kind == FOR:
                self.loop(step, d)
            elif kind == RUN:
                self.emit(d, f"{self.const('r', step[1])}(env)")
            else:  # IF
                if step[1] is None:
                    self.block(step[2], d)
                else:
                    self.emit(d, f"if env[{step[1]}]:")
                    self.block(step[2], d + 1)
                    if step[3]:
                        self.emit(d, "else:")
                        self.block(step[3], d + 1)
            self.found = {}          # after a loop or branch: serials and histories moved
        if len(self.lines) == start:
            self.emit(d, "pass")

    def loop(self, step: tuple, d: int) -> None:
        _, lb, ub, inc, iv, li, body, dynamic = step
        self.loops.add(li)
        self.emit(d, f"lo, hi, inc = env[{lb}], env[{ub}], env[{inc}]")
        cond = "inc <= 0"
        if dynamic:
            cond += " or len(range(lo, hi, inc)) > control.MAX_LOOP_ITERATIONS"
        self.emit(d, f"if {cond}:")
        self.emit(d + 1, "raise Unwalkable")
        self.emit(d, "for i in range(lo, hi, inc):")
        self.emit(d + 1, f"env[{iv}] = i")
        self.emit(d + 1, f"S{li} += 1")
        self.block(body, d + 1)

    def instr(self, step: tuple, d: int) -> None:
        _, st, qi, fence, deps, carried, nid, track, closure = step
        e = lambda text: self.emit(d, text)   # noqa: E731
        self.queues.add(qi)
        # the waits, the last fence first: Timeline.place takes the fence's finish when it
        # is >= every wait's, and a wait replaces the one before only when it finishes
        # strictly later -- starting from the fence gives the same (ready, pred)
        e("ready = m0")
        e("pred = m1")
        for dep in deps:
            self.ids.add(dep)
            e(f"if LE{dep} > ready:")
            e(f"    ready = LE{dep}")
            e(f"    pred = L{dep}")
        for hi, li, dist in carried:
            self.use_history(hi, li)
            key = (hi, li, dist)
            k = self.found.get(key)
            if k is None:
                # the latest instance whose serial is <= the target (serials increase),
                # else the oldest kept when older ones were dropped, else none (-1.0: no
                # finish is earlier than the fence mark); kept for the same wait of a
                # later instruction in this straight-line code
                k = self.found[key] = self.nfound
                self.nfound += 1
                e(f"j = bisect_right(HS{hi}, S{li} - {dist})")
                e("if j:")
                e(f"    cw{k} = HR{hi}[j - 1]")
                e(f"    ce{k} = end[cw{k}]")
                e(f"elif len(HS{hi}) >= H:")
                e(f"    cw{k} = HR{hi}[0]")
                e(f"    ce{k} = end[cw{k}]")
                e("else:")
                e(f"    ce{k} = -1.0")
            e(f"if ce{k} > ready:")
            e(f"    ready = ce{k}")
            e(f"    pred = cw{k}")
        if self.in_order:
            e("if lastend > ready:")
            e("    ready = lastend")
            e("    pred = last")
        if fence:
            e("if m2 > ready:")
            e("    ready = m2")
            e("    pred = m3")
        if st.is_dma:
            sname = self.const("s", st)
            e(f"ready += {self.num(self.tl._dma_fixed)}")
            e(f"if ready > Q{qi}:")
            e("    t0 = ready")
            e("    pred_a(pred)")
            e("    waited_a(pred >= 0)")
            e("else:")
            e(f"    t0 = Q{qi}")
            e(f"    pred_a(R{qi})")
            e("    waited_a(False)")
            # Timeline._book prunes the engine books by the DMA queues' free times: they
            # are written back before it runs
            sync = "; ".join(f"qfree[{q}] = Q{q}" for q in self.dma_queues)
            one = st.one
            if one is not None and one[0] is self.all_engines:
                # every engine, as long as they share one book: the book kept in locals
                self.book_inline(d, "if BOK", one[1], ("BS", "BE", "BZ"), sync, sname)
            elif one is not None:
                g = self.const("g", one[0])
                e(f"b = books[{one[0][0]}]")
                self.book_inline(d, f"if b.engines is {g}", one[1],
                                 ("b.starts", "b.ends", "b.busy"), sync, sname)
            else:
                self.call_book(d, sync, sname)
        else:
            e(f"if ready > Q{qi}:")
            e("    start = ready")
            e("    pred_a(pred)")
            e("    waited_a(pred >= 0)")
            e("else:")
            e(f"    start = Q{qi}")
            e(f"    pred_a(R{qi})")
            e("    waited_a(False)")
            if self.throttle and st.tensor_mm:
                e(f"end_v = start + throttled(start, {self.num(st.ns)})")
            else:
                e(f"end_v = start + {self.num(st.ns)}")
        # ``n`` is this instance's record until the end of its statements
        e("start_a(start)")
        e("end_a(end_v)")
        e(f"sid_a({int(st.sid)})")
        e(f"Q{qi} = end_v")
        e(f"R{qi} = n")
        if self.fences:        # else the latest finish is found once, after the walk
            e("if end_v >= m2:")
            e("    m2 = end_v")
            e("    m3 = n")
        if fence:
            e("m0 = end_v")
            e("m1 = n")
        if nid >= 0 and nid in self.read_ids:      # an instruction waits on it
            self.ids.add(nid)
            e(f"L{nid} = n")
            e(f"LE{nid} = end_v")
        if nid >= 0:
            for hi, li in track:
                self.use_history(hi, li)
                # the history changes: a wait found in it is looked up again
                self.found = {key: k for key, k in self.found.items() if key[0] != hi}
                e(f"if HS{hi} and HS{hi}[-1] == S{li}:")
                e(f"    HR{hi}[-1] = n")
                e("else:")
                e(f"    HS{hi}.append(S{li})")
                e(f"    HR{hi}.append(n)")
                e(f"    if len(HS{hi}) > H:")
                e(f"        del HS{hi}[0], HR{hi}[0]")
        if self.in_order:
            e("last = n")
            e("lastend = end_v")
        e("n += 1")
        if closure is not None:
            e(f"{self.const('k', closure)}(env)")

    def call_book(self, d: int, sync: str, sname: str) -> None:
        """:meth:`.timeline.Timeline._book` of the DMA ``sname`` at ``t0``: the DMA queues'
        free times, the DMA count and the shared book's busy time written back first (it
        reads and prunes them), the shared book read again after (it may have split)."""
        if sync:
            self.emit(d, sync)
        self.emit(d, "ndma[0] = nd")
        self.emit(d, "if BOK:")
        self.emit(d, "    B0.busy = BZ")
        self.emit(d, f"start, end_v = book({sname}, t0)")
        self.emit(d, "nd = ndma[0]")
        self.emit(d, SHARED_BOOK)

    def book_inline(self, d: int, cond: str, amount, names: tuple[str, str, str],
                    sync: str, sname: str) -> None:
        """A DMA's booking on one shared engine book, inline under ``cond`` (the book named
        by ``names``: starts, ends, busy) unless the books are due for pruning; else
        through ``Timeline._book``."""
        e = lambda text: self.emit(d, text)   # noqa: E731
        e(f"{cond} and (nd + 1) % PRUNE:")
        if amount > 0:
            self.place_at_end(d + 1, self.num(amount), *names)
        else:
            self.place_on_book(d + 1, self.num(amount), *names)
        e("    nd += 1")
        e("else:")
        self.call_book(d + 1, sync, sname)

    def place_at_end(self, d: int, ns: str, starts: str, ends: str, busy: str) -> None:
        """:meth:`place_on_book` of ``ns > 0`` ns, with the common case first: ``t0`` at or
        after the start of the book's last interval.  The intervals are disjoint and never
        touch (``ends[i] < starts[i + 1]``), so the earliest free start is then the last
        interval's end (``t0`` inside it) or ``t0``, and the booking extends the last
        interval (it ends at or inside it) or follows it -- what the general statements
        do in that case."""
        if not ends.isidentifier():
            self.emit(d, f"ends = {ends}")
            ends = "ends"
        for text in (
                f"if {ends} and t0 >= {starts}[-1]:",
                f"    le = {ends}[-1]",
                "    if t0 <= le:",
                "        start = le",
                f"        end_v = {ends}[-1] = start + {ns}",
                "    else:",
                "        start = t0",
                f"        end_v = t0 + {ns}",
                f"        {starts}.append(t0)",
                f"        {ends}.append(end_v)",
                f"    {busy} += {ns}",
                "else:"):
            self.emit(d, text)
        self.place_on_book(d + 1, ns, starts, ends, busy)

    def place_on_book(self, d: int, ns: str, starts: str, ends: str, busy: str) -> None:
        """:meth:`.timeline.EngineBook.place` of ``ns`` ns at ``t0`` on the book of interval
        lists ``starts`` / ``ends`` and busy time ``busy`` (expressions), inlined (the same
        statements): sets ``start`` and ``end_v``."""
        for text in (
                f"starts, ends = {starts}, {ends}",
                "ix = bisect_right(ends, t0)",
                "s = t0",
                "nb = len(starts)",
                f"while ix < nb and starts[ix] < s + {ns}:",
                "    if ends[ix] > s:",
                "        s = ends[ix]",
                "    ix += 1",
                f"e_ = s + {ns}",
                f"{busy} += {ns}",
                "if ix > 0 and ends[ix - 1] >= s:",
                "    if e_ > ends[ix - 1]:",
                "        ends[ix - 1] = e_",
                "    if ix < nb and starts[ix] <= e_:",
                "        if ends[ix] > ends[ix - 1]:",
                "            ends[ix - 1] = ends[ix]",
                "        del starts[ix], ends[ix]",
                "elif ix < nb and starts[ix] <= e_:",
                "    starts[ix] = s",
                "else:",
                "    starts.insert(ix, s)",
                "    ends.insert(ix, e_)",
                "start = s",
                f"end_v = s + {ns}"):
            self.emit(d, text)

    # ------------------------------------------------------------------ function
    def source(self) -> str:
        self.block(self.res.plan, 1)
        body = self.lines
        head = ["def walk(tl, env, serial=None, history=None):",
                "    start_a, end_a, sid_a = tl.start.append, tl.end.append, tl.sid.append",
                "    pred_a, waited_a = tl.pred.append, tl.waited.append",
                "    end = tl.end",
                "    n = n0 = len(end)",
                "    books, ndma, book, throttled = tl.books, tl._ndma, tl._book, tl._throttled",
                "    nd = ndma[0]",
                "    " + SHARED_BOOK,
                "    mark = tl._mark",
                "    m0, m1, m2, m3 = mark",
                "    qfree, qlast = tl.qfree, tl.qlast",
                "    last, lastend = -1, -1.0"]
        for q in sorted(self.queues | set(self.dma_queues)):
            head.append(f"    Q{q}, R{q} = qfree[{q}], qlast[{q}]")
        for i in sorted(self.ids & self.read_ids):
            head.append(f"    L{i}, LE{i} = -1, -1.0")
        loops, hists = sorted(self.loops), sorted(self.hists)
        if loops:
            head.append("    if serial is None:")
            head += [f"        S{li} = -1" for li in loops]
            head.append("    else:")
            head += [f"        S{li} = serial[{li}]" for li in loops]
        if hists:
            head.append("    if history is None:")
            head += [f"        HS{hi}, HR{hi} = [], []" for hi in hists]
            head.append("    else:")
            head += [f"        HS{hi}, HR{hi} = history[{hi}]" for hi in hists]
        head.append("    try:")
        tail = ["    finally:"]
        if not self.fences:
            # Timeline.place's running ``if end >= m2: m2, m3 = end, rec``: the largest
            # finish and the last record reaching it (finishes are finite)
            tail += ["        if len(end) > n0:",
                     "            ends_ = end[n0:]",
                     "            mx = max(ends_)",
                     "            if mx >= m2:",
                     "                m2 = mx",
                     "                ends_.reverse()",
                     "                m3 = len(end) - 1 - ends_.index(mx)"]
        tail += ["        ndma[0] = nd",
                 "        if BOK:",
                 "            B0.busy = BZ",
                "        mark[0], mark[1], mark[2], mark[3] = m0, m1, m2, m3"]
        for q in sorted(self.queues | set(self.dma_queues)):
            tail.append(f"        qfree[{q}], qlast[{q}] = Q{q}, R{q}")
        if loops:
            tail.append("        if serial is not None:")
            tail += [f"            serial[{li}] = S{li}" for li in loops]
        return "\n".join(head + ["    " + ln for ln in body] + tail) + "\n"


def _dep_ids(plan: tuple, out: set[int]) -> set[int]:
    """``out`` with the ``nkim.deps`` ids of a resolved plan's instructions added."""
    for step in plan:
        kind = step[0]
        if kind == INSTR:
            out.update(step[4])
        elif kind == FOR:
            _dep_ids(step[6], out)
        elif kind == IF:
            _dep_ids(step[2], out)
            _dep_ids(step[3], out)
    return out


def _has_fence(plan: tuple) -> bool:
    """Whether a resolved plan has a fence instruction (in any loop or branch)."""
    for step in plan:
        kind = step[0]
        if kind == INSTR:
            if step[3]:
                return True
        elif kind == FOR:
            if _has_fence(step[6]):
                return True
        elif kind == IF:
            if _has_fence(step[2]) or _has_fence(step[3]):
                return True
    return False


def generate(res, tl, in_order: bool, throttle: bool):
    """The generated walk of resolved plan ``res`` for timelines like ``tl`` (its model,
    DMA latency and throttle flag), or None (module docstring).  Called as
    ``walk(tl, env, serial=None, history=None)``: ``serial`` the loops' serials (None: -1
    each), ``history`` the carried-wait histories (None: ``([], [])`` each); raises :class:`.unwalkable.Unwalkable`
    as the interpreted walk does."""
    from bisect import bisect_right

    from .timeline import _PRUNE_EVERY
    gen = _Gen(res, tl, in_order, throttle)
    try:
        src = gen.source()
        gen.ns.update(Unwalkable=Unwalkable, bisect_right=bisect_right, PRUNE=_PRUNE_EVERY)
        code = compile(src, f"<timing walk of {len(gen.lines)} lines>", "exec")
    except (Unsupported, SyntaxError, RecursionError, MemoryError):
        return None
    exec(code, gen.ns)   # noqa: S102 -- our own generated source, no user text in it
    return gen.ns["walk"]
