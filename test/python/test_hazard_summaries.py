"""The hazard checks' cheaper bookkeeping (runtime/hazards.py): per-tile summaries of the
per-byte flags and the indexed access history give the answers of a full scan."""
import numpy as np

from nki_mlir.runtime.footprint import footprint
from nki_mlir.runtime.hazards import _Boxes, _History


def _fp(root, rows, cols):
    return footprint(root[rows, cols], root)


def test_boxes_know_only_what_was_set_and_not_cleared_since():
    sbuf = np.zeros((128, 4096), np.uint8)
    tile = _fp(sbuf, slice(0, 128), slice(0, 512))
    other = _fp(sbuf, slice(0, 128), slice(1024, 1536))
    inner = _fp(sbuf, slice(0, 64), slice(0, 256))
    b = _Boxes()
    assert not b.covers(tile)
    b.add(tile)
    b.add(other)
    assert b.covers(tile) and b.covers(other) and not b.covers(inner)  # exact boxes only
    b.drop(_fp(sbuf, slice(64, 65), slice(500, 504)))   # one row of a new tile over its corner
    assert not b.covers(tile) and b.covers(other)
    stepped = footprint(sbuf[:, 2048:2560:2], sbuf)      # not every byte of its box
    b.add(stepped)
    assert not b.covers(stepped)


def test_history_candidates_include_every_overlapping_entry():
    rng = np.random.default_rng(3)
    sbuf = np.zeros((128, 8192), np.uint8)
    h = _History()
    fps = []
    for i in range(60):
        p0 = int(rng.integers(0, 120))
        c0 = int(rng.integers(0, 8000))
        fp = _fp(sbuf, slice(p0, p0 + int(rng.integers(1, 128 - p0 + 1))),
                 slice(c0, c0 + int(rng.integers(1, 192))))
        fps.append(fp)
        h.append((fp, True, i, "dst"))
    for q in fps[::7]:
        near = h.near(q)
        assert near == sorted(near)
        assert {i for i, e in enumerate(h.entries) if e[0].overlaps(q)} <= set(near)
    h.remove([1, 2])                                # removed rows are never candidates
    assert not {1, 2} & set(h.near(fps[1])) and not {1, 2} & set(h.near(fps[2]))
    assert h.alive == 58 and [e[2] for e in h.live()][:3] == [0, 3, 4]
    h.keep([i % 3 != 0 for i in range(h.alive)])    # over the live entries, oldest first
    want = [i for i in range(60) if i not in (1, 2)]
    want = [w for k, w in enumerate(want) if k % 3 != 0]
    assert [e[2] for e in h.live()] == want and h.alive == h.n == len(want)
    assert all(tuple(h.keys[k]) == (e[0].lo[0], -e[0].hi[0], e[0].lo[-1], -e[0].hi[-1])
               for k, e in enumerate(h.entries))
    for q in fps[::5]:
        near = h.near(q)
        assert {i for i, e in enumerate(h.entries) if e[0].overlaps(q)} <= set(near)
