"""The hazard checks' access summary of a root accessed as one whole tile (:mod:`.hazards`).

Most roots of a run are one tile in its own block (:mod:`.blocks`) that every access covers
exactly: the same exact box on a root of at most 2 dimensions.  For such a root the general
access history (:mod:`.hazard_history`, searched by :func:`.hazard_races.race`) always holds
the same rows, in the same order, as this summary of it:

- ``fw``: the last write ``(fp, inst, role, queue, clock)``, or None: a write that passes
  the race search happens after every remembered row, and covering them all it makes them
  all redundant (:func:`~.hazard_races.remember`), so it is the only row left;
- ``fr``: the reads since, oldest first: a read makes redundant the earlier reads that
  happen before it (it covers them), never a write.

So the race search is: a read races with ``fw`` unless ``fw`` happens before it; a write
with ``fw`` or any read of ``fr`` that does not happen before it, the first in that order
(the general search reports the oldest such row).  The summary holds while every access is
that box (:attr:`key`); the first access that is not turns it into the general history
(:func:`to_history`, the same rows in the same order), as does a long list of reads
(:data:`READS_MAX`, below the history's pruning size), for the rest of the run.

Units: bytes of the root's byte geometry (:func:`~.footprint.geometry`).
"""
from __future__ import annotations

from .hazard_history import History
from .hazard_races import race_error

#: the plan of an access recorded in its root's summary (:meth:`.hazards.Checker.check`)
TILE = object()
#: reads a summary keeps before it becomes a general history (which prunes past
#: :data:`~.hazard_races.HISTORY_MAX`)
READS_MAX = 32


def tile_race(rs, inst, role: str, is_write: bool, clock: list[int], names: list[str]) -> None:
    """Raise on a race of ``inst``'s access ``role`` (the summary's box) with a remembered
    access of root state ``rs`` (its summary: ``rs.fw``, ``rs.fr``); ``clock``: ``inst``'s
    vector clock; ``names``: the queue names.

    Raises:
        NKIHazardError: as :func:`.hazard_races.race` (the same row, the same message).
    """
    fw = rs.fw
    if fw is not None and fw[4] > clock[fw[3]]:
        raise race_error(inst, role, is_write, fw[1], fw[2], True, names)
    if is_write:
        for r in rs.fr:
            if r[4] > clock[r[3]]:
                raise race_error(inst, role, is_write, r[1], r[2], False, names)


def tile_record(rs, fp, is_write: bool, inst, role: str, q: int, c: int) -> bool:
    """Remember the access (after :func:`tile_race` passed) with its epoch ``(q, c)`` in the
    summary of ``rs``; False when the summary is too long (:data:`READS_MAX`): then turn it
    into a history (:func:`to_history`) and remember the access there."""
    if is_write:
        rs.fw = (fp, inst, role, q, c)
        rs.fr = []
        return True
    fr = rs.fr
    if fr:
        # the reads that happen before this one are redundant (:func:`~.hazard_races.covered`)
        clock = inst.clock
        fr = rs.fr = [r for r in fr if r[4] > clock[r[3]]]
        if len(fr) >= READS_MAX:
            return False
    fr.append((fp, inst, role, q, c))
    return True


def to_history(rs, queues: int) -> History:
    """The general history holding the rows of ``rs``'s summary (oldest first); the summary
    is dropped (``rs.key`` None)."""
    hist = History(queues=queues)
    fw = rs.fw
    if fw is not None:
        hist.append((fw[0], True, fw[1], fw[2]), (fw[3], fw[4]))
    for fp, inst, role, q, c in rs.fr:
        hist.append((fp, False, inst, role), (q, c))
    rs.hist = hist
    rs.key = rs.fw = None
    rs.fr = []
    return hist
