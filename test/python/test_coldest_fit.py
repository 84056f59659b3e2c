"""Coldest-fit SBUF placement (nki_mlir/passes/coldest_fit.py, used by nisa-allocate): the
bytes freed longest ago first, below the peak best fit reaches, with best fit's copies --
so everything that fits with best fit still fits, as high, with the same copies."""
from __future__ import annotations

import os
import sys

import pytest

from nki_mlir.errors import NKIAllocationError
from nki_mlir.passes import allocate as A
from nki_mlir.passes import memory_report
from nki_mlir.passes.coldest_fit import FreedMap, coldest_fit

sys.path.insert(0, os.path.dirname(__file__))
from test_multibuffer import (allocate, allocs, attr, check_trace, copies,  # noqa: E402
                              execute, random_loop_program)


def test_freed_map_keeps_the_last_end_per_byte():
    m = FreedMap(1000)
    assert m.latest(0, 1000) == -1 and m.boundaries(0, 1000) == []
    m.assign(100, 300, 7)
    m.assign(200, 400, 9)
    assert (m.latest(0, 100), m.latest(0, 101), m.latest(100, 200), m.latest(250, 260)) == (-1, 7, 7, 9)
    assert m.latest(400, 1000) == -1 and m.boundaries(0, 1000) == [100, 200, 400]
    assert m.boundaries(100, 400) == [200]
    m.assign(0, 1000, 3)
    assert (m.starts, m.values) == ([0], [3])


class _T:
    """What coldest_fit reads of a tensor."""

    def __init__(self, size):
        self.stride = self.footprint = size
        self.place_alignment = 64


def test_coldest_fit_prefers_never_used_then_least_recently_freed():
    arena = A.arenas("trn2")["sbuf"]
    m = FreedMap(arena.capacity)
    m.assign(0, 2048, 5)          # freed at program point 5
    m.assign(2048, 4096, 9)       # freed at 9
    assert coldest_fit(_T(2048), arena, [], m) == 4096            # never used
    small = A.Arena("sbuf", 4096, 64)
    assert coldest_fit(_T(2048), small, [], m) == 0               # freed earlier than 2048
    assert coldest_fit(_T(2048), small, [(0, 2048)], m) == 2048   # 0 is taken by a live one
    assert coldest_fit(_T(4096), small, [(0, 64)], m) is None     # no gap holds it
    # a candidate starts at each boundary of the map inside a gap
    m.assign(0, 1024, 1)
    assert coldest_fit(_T(1024), small, [], m) == 0
    assert coldest_fit(_T(1536), small, [], m) == 0               # [0, 1536): latest 5


def _best_fit_only(monkeypatch):
    place = A.place_space
    monkeypatch.setattr(A, "place_space", lambda *a, coldest=False, **kw: place(*a, **kw))


def _outcome(text):
    try:
        module = allocate(text)
    except NKIAllocationError as exc:
        return None, str(exc)
    ops = allocs(module)
    return module, ({n: copies(op) for n, op in ops.items()},
                    memory_report.report(module)["sbuf"]["peak_bytes"],
                    {n: attr(op, "nkim.offset") for n, op in ops.items()})


@pytest.mark.parametrize("big", [False, True])
def test_same_copies_no_higher_peak_no_collision(monkeypatch, big):
    tries = {"free fails": 0, "reserved fails": 0}
    place = A._try_place

    def counted(*a, coldest=False, reserve=True, **kw):
        failed = place(*a, coldest=coldest, reserve=reserve, **kw)
        if coldest and failed is not None:
            tries["reserved fails" if reserve else "free fails"] += 1
        return failed
    monkeypatch.setattr(A, "_try_place", counted)
    moved = 0
    for seed in range(30):
        text = random_loop_program(seed, big=big)
        cold, got = _outcome(text)
        with monkeypatch.context() as mp:
            _best_fit_only(mp)
            best, want = _outcome(text)
        assert (cold is None) == (best is None), seed
        if cold is None:
            continue
        assert got[0] == want[0], seed                        # the same rotating copies
        assert got[1] <= want[1], seed                        # never above best fit's peak
        moved += got[2] != want[2]
        check_trace(execute(cold))                            # no two live tensors share a byte
    assert moved >= 5                                         # the generators exercise it
    assert tries["reserved fails"] == 0                       # the fallback always fits
    assert tries["free fails"] >= 3                           # ... and is exercised
