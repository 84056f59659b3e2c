"""Per-byte marks of one memory for the hazard checks (:mod:`.hazards`), filled lazily.

The hazard checks keep, per byte of a root array (SBUF, PSUM, a private on-chip array), a
mark: "written since allocation" (uint8) or the last PSUM writer (int32, ``+-(sid+1)``).
Most fills cover a whole tile as it was allocated or written (an exact footprint,
:mod:`.footprint`), and most tests ask about exactly such a tile, so :class:`Marks` keeps
recent exact fills of large boxes as a *log* of ``(box, value)`` entries instead of writing
every byte: an entry says every byte of its box holds ``value``.  Entries are pairwise
disjoint and newer than the mirror bytes under them, so any one of them can be written
through to the mirror alone (*materialized*) at any time; a fill that partially overlaps an
entry materializes it first, a fill that covers it drops it.  Reads of bytes under entries
materialize those entries first, so the mirror is exact wherever it is read.

Units: bytes of the root's byte geometry (:func:`~.footprint.geometry`).
"""
from __future__ import annotations

import numpy as np

from .footprint import Footprint, geometry, mirror_view

#: fills of exact boxes of at least this many bytes are logged (smaller ones are written)
LOG_MIN_BYTES = 0
#: entries a log keeps (past it, every entry is materialized)
LOG_MAX = 256


class Marks:
    """The marks of the bytes of one root array (see the module docstring).

    Attributes:
        mirror: one element per byte of the root (flat; ``scale`` bytes each).
        log: ``{(lo, hi): (footprint, value)}``, pairwise disjoint exact boxes not yet
            written to the mirror (being disjoint, a box equal to a logged one meets no
            other entry, which makes the common cases dictionary lookups).
    """

    __slots__ = ("mirror", "scale", "log", "boxed")

    def __init__(self, mirror: np.ndarray, root: np.ndarray, scale: int = 1):
        self.mirror = mirror
        self.scale = scale
        self.log: dict[tuple, tuple[Footprint, int]] = {}
        shape, _ = geometry(root)
        #: the mirror in the root's byte geometry (an exact box is a plain slice of it)
        self.boxed = mirror.reshape(shape)

    def _box(self, fp: Footprint) -> np.ndarray:
        return self.boxed[tuple(slice(a, b) for a, b in zip(fp.lo, fp.hi))]

    def _overlapping(self, fp: Footprint) -> list[tuple]:
        lo0, hi0, lo1, hi1 = fp.box
        out = []
        for key, (e, _) in self.log.items():
            b = e.box
            if b[0] < hi0 and lo0 < b[1] and b[2] < hi1 and lo1 < b[3] and e.overlaps(fp):
                out.append(key)
        return out

    def _materialize(self, keys: list[tuple]) -> None:
        """Write the log entries ``keys`` through to the mirror and drop them."""
        log = self.log
        for k in keys:
            e, v = log.pop(k)
            self._box(e)[...] = v

    def flush(self) -> None:
        """Write every log entry through to the mirror."""
        self._materialize(list(self.log))

    def fill(self, fp: Footprint, value: int) -> None:
        """Set the mark of every byte under ``fp`` to ``value``."""
        log = self.log
        key = fp.key
        if key in log and fp.exact:     # the same box again (it meets no other entry)
            log[key] = (fp, value)
            return
        keys = self._overlapping(fp) if log else []
        if fp.exact and (not LOG_MIN_BYTES or
                         (fp.hi[0] - fp.lo[0]) * (fp.hi[-1] - fp.lo[-1]) >= LOG_MIN_BYTES):
            for k in keys:
                if fp.contains(log[k][0]):
                    del log[k]          # wholly overwritten
                else:
                    self._materialize([k])
            log[key] = (fp, value)
            if len(log) > LOG_MAX:
                self.flush()
            return
        self._materialize(keys)
        self.view(fp)[...] = value

    def uniform(self, fp: Footprint) -> int | None:
        """The value of every byte under ``fp`` when one log entry covers them all, else
        None (then read them with :meth:`view` / :meth:`elems`)."""
        log = self.log
        if not log:
            return None
        hit = log.get(fp.key)
        if hit is not None and fp.exact:
            return hit[1]
        keys = self._overlapping(fp)
        if len(keys) == 1:
            e, v = log[keys[0]]
            if e.contains(fp):
                return v
            return None
        if not keys or not fp.exact:
            return None
        # several entries (e.g. the matmuls filling one PSUM tile piece by piece): being
        # pairwise disjoint, they cover fp's box when their parts in it add up to all of it
        value = log[keys[0]][1]
        covered = 0
        for k in keys:
            e, v = log[k]
            if v != value:
                return None
            part = 1
            for a0, a1, b0, b1 in zip(e.lo, e.hi, fp.lo, fp.hi):
                part *= min(a1, b1) - max(a0, b0)
            covered += part
        whole = 1
        for b0, b1 in zip(fp.lo, fp.hi):
            whole *= b1 - b0
        return value if covered == whole else None

    def view(self, fp: Footprint) -> np.ndarray:
        """The marks under ``fp``'s bytes, exact, in any shape (for whole-region tests and
        fills: ``all``, ``any``, ``[...] = v``)."""
        if self.log:
            self._materialize(self._overlapping(fp))
        if fp.exact:
            return self._box(fp)
        return mirror_view(self.mirror, fp, self.scale)

    def elems(self, fp: Footprint) -> np.ndarray:
        """The marks under ``fp``'s bytes, exact, shaped ``fp.shape + (itemsize,)``."""
        if self.log:
            self._materialize(self._overlapping(fp))
        return mirror_view(self.mirror, fp, self.scale)
