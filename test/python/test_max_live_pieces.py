"""passes/memory_report.max_live: the per-piece loads give the answer of the per-partition
NumPy vector, on random placements (partition ranges that start, end or lie past 128)."""
from __future__ import annotations

import random
from types import SimpleNamespace as NS

from nki_mlir.passes import memory_report as mr


def _tensors(rng: random.Random, n: int):
    out = []
    for _ in range(n):
        start = rng.randrange(0, 60)
        part = rng.choice([0, 0, 32, 64, 96, 120, 130])
        out.append(NS(region=NS(partition=part, partitions=rng.choice([1, 16, 32, 64, 128]),
                                offset=rng.randrange(0, 4096, 64), size=rng.randrange(1, 2048)),
                      live=NS(start=start, end=start + rng.randrange(0, 20))))
    return out


def test_same_answer_as_the_vector():
    rng = random.Random(7)
    for n in (0, 1, 2, 5, 40, 200):
        for _ in range(20):
            ts = _tensors(rng, n)
            assert mr.max_live(ts) == mr.max_live_vector(ts)


def test_wrapping_ranges_use_the_vector():
    ts = [NS(region=NS(partition=-4, partitions=8, offset=0, size=10), live=NS(start=0, end=3)),
          NS(region=NS(partition=0, partitions=2, offset=0, size=5), live=NS(start=2, end=4))]
    assert mr.max_live(ts) == mr.max_live_vector(ts) == 15
