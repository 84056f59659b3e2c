"""The tensors ``nisa-allocate`` has placed so far, indexed by live range."""
from __future__ import annotations

from .interval_index import IntervalIndex


class Placed(list):
    """The tensors placed so far (placement order), also indexed by live range so that the
    ones live with a tensor are found in O(log n + k) instead of scanning them all."""

    def __init__(self):
        super().__init__()
        self._by_live = IntervalIndex()

    def append(self, t) -> None:
        self._by_live.insert(t.live.start, t.live.end, len(self))
        super().append(t)

    def live_with(self, t) -> list:
        """The placed tensors whose live range meets ``t``'s, in placement order."""
        return [self[i] for i in sorted(self._by_live.query(t.live.start, t.live.end))]


__all__ = ["Placed"]
