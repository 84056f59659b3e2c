"""The race search of the hazard checks (:mod:`.hazards`) and the upkeep of the access
histories it searches (:mod:`.hazard_history`).

A race is an earlier access from another queue to overlapping bytes of the same memory, one
of the two a write, with no happens-before between the two instances (vector clocks,
:mod:`.queues`).  After an access is checked it is remembered, first forgetting the rows it
makes redundant (those it covers that happen before it: every future conflict with them is
one with it); past :data:`HISTORY_MAX` rows, those every queue has waited for, then the
oldest, are forgotten.

Units: bytes of the root's byte geometry (:func:`~.footprint.geometry`).
"""
from __future__ import annotations

import linecache

from xdsl.ir import Operation

from ..diagnostics import OpSite, error_at, loc_of
from ..errors import NKIHazardError
from .footprint import Footprint, bytes_overlap
from .hazard_history import History
from .queues import Instance

#: accesses remembered per memory before pruning by the queues' frontier
HISTORY_MAX = 256

#: the rows of a race search (:func:`race`) when every live row is redundant
EVERY = object()


def describe(op: Operation | OpSite | None) -> str:
    """``nisa.x at file:line (`source text`)`` for a message."""
    if op is None:
        return "an earlier instruction"
    loc = loc_of(op)
    if loc is None:
        return f"{op.name} (no source location)"
    text = linecache.getline(loc.file, loc.line).strip()
    return f"{op.name} at {loc.file}:{loc.line}" + (f" (`{text}`)" if text else "")


def race(inst: Instance, role: str, is_write: bool, fp: Footprint, hist: History,
         names: list[str]) -> tuple:
    """Raise on a race of ``inst``'s access ``role`` (bytes ``fp``) with a remembered access
    of ``hist`` (the :class:`History` of ``fp``'s root); ``names``: the queue names.
    Returns ``(rows, n, gen)``: the rows this access will make redundant (:func:`remember`;
    :data:`EVERY`: all, a read: all reads) as of the history's ``n`` rows and ``gen``.

    Raises:
        NKIHazardError: located at ``inst``'s instruction, naming the other one.
    """
    clock = inst.clock
    cover = fp.exact
    boxes = len(fp.lo) > 2        # (the rows hold the first and last dimensions only)
    if cover and not boxes and hist.settled(clock, fp.box):
        # every row happens before inst (no race) and fp covers it: all are redundant
        # (a read: the reads)
        return EVERY, hist.n, hist.gen
    drop = []
    krows = hist.rows
    lo0, hi0, lo1, hi1 = fp.box
    for i in hist.candidates(fp):
        r = krows[i]
        if r[0] >= hi0 or lo0 >= r[1] or r[2] >= hi1 or lo1 >= r[3]:
            continue            # (boxes apart: :meth:`History.near`, inline)
        if r[5] <= clock[r[4]]:       # happens before (:func:`~.queues.hb`, inline)
            # a row fp covers (on <= 2-D roots: its box on the first and last dimensions
            # inside fp's) that happens before inst is redundant
            if cover and r[0] >= lo0 and r[1] <= hi0 and r[2] >= lo1 and r[3] <= hi1:
                e = hist.entries[i]
                if (is_write or not e[1]) and (not boxes or fp.contains(e[0])):
                    drop.append(i)
            continue
        ofp, owrite, other, orole = hist.entries[i]
        if other is inst or not (owrite or is_write) or (boxes and not fp.overlaps(ofp)) \
                or not bytes_overlap(fp, ofp):
            continue
        raise race_error(inst, role, is_write, other, orole, owrite, names)
    return drop, hist.n, hist.gen


def race_error(inst: Instance, role: str, is_write: bool, other: Instance, orole: str,
               owrite: bool, names: list[str]) -> NKIHazardError:
    """The error of a race of ``inst``'s access ``role`` with ``other``'s access ``orole``
    (located at ``inst``'s instruction, naming the other one)."""
    what = "writes" if is_write else "reads"
    owhat = "writes" if owrite else "reads"
    return error_at(inst.info.site,
                    f"{inst.info.site.name}: race: it {what} '{role}' (queue "
                    f"'{names[inst.info.qi]}') bytes that {describe(other.info.site)} "
                    f"{owhat} as '{orole}' (queue '{names[other.info.qi]}'), with no "
                    f"ordering edge between the two instructions", NKIHazardError)


def remember(rs, fp: Footprint, is_write: bool, inst: Instance, role: str, plan,
             qclock: list[list[int]]) -> None:
    """Record the access, first forgetting the rows it makes redundant: those it covers
    that happen before it (every future conflict with them is one with it), found by
    :func:`race` (``plan``) or here, in the history of ``rs`` (a root's hazard state);
    ``qclock``: the queues' latest clocks."""
    hist = rs.hist
    if hist is None:
        hist = rs.hist = History(queues=len(qclock))
    elif plan is not None and plan[1] == hist.n and plan[2] == hist.gen:
        if plan[0] is EVERY:    # (nothing appended since the race search: its rows)
            if is_write:
                hist.reset()
            else:
                entries = hist.entries
                drop = [i for i in range(plan[1]) if entries[i] is not None and
                        not entries[i][1]]
                if drop:
                    hist.remove(drop)
        elif plan[0]:
            entries = hist.entries
            drop = [i for i in plan[0] if entries[i] is not None]
            if drop:
                hist.remove(drop)
    elif fp.exact and hist.alive:
        if plan is not None and plan[2] == hist.gen:
            entries = hist.entries
            drop = [i for i in (range(plan[1]) if plan[0] is EVERY else plan[0])
                    if entries[i] is not None and (plan[0] is not EVERY or is_write or
                                                   not entries[i][1])]
            if plan[1] != hist.n:        # rows this instruction appended since
                drop += hist.covered(fp, is_write, inst.clock, range(plan[1], hist.n))
        else:
            drop = hist.covered(fp, is_write, inst.clock, hist.near(fp))
        if drop:
            hist.remove(drop)
    qi = inst.info.qi
    hist.append((fp, is_write, inst, role), (qi, inst.clock[qi]))
    if hist.alive > HISTORY_MAX:
        prune(hist, qclock)


def prune(hist: History, qclock: list[list[int]]) -> None:
    """Forget the rows of ``hist`` every queue has waited for, then the oldest, down to
    :data:`HISTORY_MAX` rows."""
    if hist.alive > HISTORY_MAX:
        nq = len(qclock)
        frontier = [min(qclock[q][j] for q in range(nq)) for j in range(nq)]
        hist.keep([c > frontier[q] for q, c in hist.epochs()])
        if hist.alive > HISTORY_MAX:
            hist.keep([False] * (hist.alive - HISTORY_MAX * 3 // 4) +
                      [True] * (HISTORY_MAX * 3 // 4))
