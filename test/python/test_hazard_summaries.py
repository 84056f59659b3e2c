"""The hazard checks' cheaper bookkeeping (runtime/hazards.py, runtime/hazard_marks.py): the
lazily filled per-byte marks and the indexed access history give the answers of a full scan."""
import numpy as np

from nki_mlir.runtime.footprint import footprint
from nki_mlir.runtime.hazard_marks import Marks
from nki_mlir.runtime.hazard_history import History as _History


def _fp(root, rows, cols):
    return footprint(root[rows, cols], root)


def test_marks_answer_as_a_full_per_byte_mirror():
    """Lazily logged tile fills (runtime/hazard_marks.py) give the marks a per-byte mirror
    written at every fill would hold, whatever mix of exact, partial and stepped fills."""
    rng = np.random.default_rng(5)
    sbuf = np.zeros((128, 4096), np.uint8)
    marks = Marks(np.zeros(sbuf.size, np.uint8), sbuf)
    plain = np.zeros(sbuf.shape, np.uint8)       # the reference: every fill written at once
    tile = _fp(sbuf, slice(0, 128), slice(0, 512))
    marks.fill(tile, 1)
    plain[:, 0:512] = 1
    assert marks.uniform(tile) == 1 and marks.log             # logged, not written
    assert marks.uniform(_fp(sbuf, slice(0, 64), slice(0, 256))) == 1   # inside one entry
    for _ in range(300):
        p0, c0 = int(rng.integers(0, 127)), int(rng.integers(0, 4000))
        rows = slice(p0, p0 + int(rng.integers(1, 128 - p0 + 1)))
        cols = slice(c0, c0 + int(rng.integers(1, 96)), int(rng.choice([1, 1, 1, 2])))
        fp = _fp(sbuf, rows, cols)
        v = int(rng.integers(0, 3))
        marks.fill(fp, v)
        plain[rows, cols] = v
        q = _fp(sbuf, slice(int(rng.integers(0, 64)), 128), slice(c0, c0 + 64))
        u = marks.uniform(q)
        want = plain[q.lo[0]:q.hi[0], q.lo[1]:q.hi[1]]
        if u is not None:
            assert (want == u).all()
        assert np.array_equal(marks.view(q), want)
        keys = list(marks.log)                     # the log's boxes stay pairwise disjoint
        assert all(not marks.log[a][0].overlaps(marks.log[b][0])
                   for i, a in enumerate(keys) for b in keys[i + 1:])
    marks.flush()
    assert not marks.log and np.array_equal(marks.mirror.reshape(sbuf.shape), plain)


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
    rows_indexed = _History(0, 8)                  # indexed by rows (HBM tensors)
    for i, fp in enumerate(fps):
        rows_indexed.append((fp, True, i, "dst"))
    for q in fps[::3]:
        assert {i for i, e in enumerate(fps) if e.overlaps(q)} <= set(rows_indexed.near(q))
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
    assert all(h.rows[k][:4] == (e[0].lo[0], e[0].hi[0], e[0].lo[-1], e[0].hi[-1])
               for k, e in enumerate(h.entries))
    assert all(k in h.buckets[b] for k, e in enumerate(h.entries)      # re-indexed
               for b in range(e[0].lo[-1] // h.width, (e[0].hi[-1] - 1) // h.width + 1))
    for q in fps[::5]:
        near = h.near(q)
        assert {i for i, e in enumerate(h.entries) if e[0].overlaps(q)} <= set(near)


def test_marks_uniform_over_several_log_entries():
    """A tile filled piece by piece (several matmuls into one PSUM tile) reads as uniform
    when the pieces, all of one value, cover it; not when one piece is missing or differs."""
    psum = np.zeros((128, 2048), np.uint8)
    marks = Marks(np.zeros(psum.size, np.uint8), psum)
    tile = _fp(psum, slice(0, 128), slice(0, 2048))
    for c in range(0, 1536, 512):
        marks.fill(_fp(psum, slice(0, 128), slice(c, c + 512)), 3)
    assert marks.uniform(tile) is None                     # the last quarter is not filled
    assert marks.uniform(_fp(psum, slice(8, 100), slice(100, 1200))) == 3
    marks.fill(_fp(psum, slice(0, 128), slice(1536, 2048)), 3)
    assert marks.uniform(tile) == 3 and len(marks.log) == 4
    marks.fill(_fp(psum, slice(0, 64), slice(1536, 2048)), 2)
    assert marks.uniform(tile) is None                     # one piece holds another value
    view = marks.view(tile)
    assert view[:64, 1536:].min() == view[:64, 1536:].max() == 2 and view[64:].min() == 3


def test_history_settled_only_when_every_live_row_is_that_box_and_before():
    """History.settled (the race search's shortcut) answers True only when every live row
    has the asked box and an epoch the clock has passed; it answers True for the common
    case of one tile accessed whole, and a reset forgets every row."""
    rng = np.random.default_rng(4)
    sbuf = np.zeros((128, 1024), np.uint8)
    tiles = [_fp(sbuf, slice(0, 128), slice(0, 512)), _fp(sbuf, slice(0, 128), slice(512, 1024)),
             _fp(sbuf, slice(0, 64), slice(0, 512))]
    h = _History(queues=3)
    rows = []
    for i in range(200):
        fp = tiles[int(rng.integers(0, 2)) if i % 5 else 2]
        epoch = (int(rng.integers(0, 3)), int(rng.integers(1, 20)))
        h.append((fp, bool(rng.integers(0, 2)), i, "dst"), epoch)
        rows.append((fp, epoch))
        if rng.random() < 0.2:
            live = [k for k, e in enumerate(h.entries) if e is not None]
            h.remove(live[:int(rng.integers(0, len(live) + 1))])
        clock = [int(c) for c in rng.integers(0, 25, 3)]
        live = [k for k, e in enumerate(h.entries) if e is not None]
        for box in {t.box for t in tiles}:
            truth = all(h.rows[k][:4] == box and h.rows[k][5] <= clock[h.rows[k][4]]
                        for k in live)
            if h.settled(clock, box):
                assert truth
        if rng.random() < 0.1:
            h.reset()
            assert h.alive == 0 and not [e for e in h.entries if e is not None]
            h.append((tiles[0], True, -1, "dst"), (1, 3))
            assert h.settled([0, 3, 0], tiles[0].box) and not h.settled([0, 2, 0], tiles[0].box)


def test_argument_reads_left_out_only_when_nothing_may_write_an_argument():
    """Schedule.prepare_checks: the reads of a function argument's view are left out of the
    checks only when every write goes through a view of a nisa.alloc; a kernel writing an
    argument keeps them, and a race on that argument is still reported."""
    import nki_mlir as nki
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl

    @nki.jit
    def loads(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
        return out

    @nki.jit
    def writes_arg(x, y):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=y, src=t)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.ones((128, 64), np.float32)
    for kernel, args, left_out in ((loads, (x,), 1), (writes_arg, (x, x.copy()), 0)):
        prog = nki.compile(kernel, *args, use_cache=False).program
        prog.run(list(args), hazards=True)
        infos = prog.schedule.infos
        assert sum(len(i.accesses) - len(i.checked) for i in infos) == left_out
    # every wait removed in turn (writes_arg: the same array for x and y): reported as
    # with every access checked
    reported = 0
    for kernel, n in ((loads, 1), (writes_arg, 2)):
        reported += _alike_with_every_access_checked(nki.compile(kernel, *([x] * n),
                                                                 use_cache=False).program, n)
    assert reported >= 2


def _alike_with_every_access_checked(prog, n: int) -> int:
    from nki_mlir.errors import NKIHazardError
    infos = prog.schedule.infos
    reported = 0
    for info in infos:
        for k in range(len(info.deps)):
            saved = info.deps
            info.deps = saved[:k] + saved[k + 1:]
            outcomes = []
            for full in (False, True):
                for i in infos:
                    i.checked = tuple(i.resolve_accesses()) if full else None
                prog.schedule.checks_ready = full
                same = np.ones((128, 64), np.float32)
                try:
                    prog.run([same] * n, hazards=True)
                    outcomes.append("ok")
                except NKIHazardError as e:
                    outcomes.append(str(e))
            info.deps = saved
            assert outcomes[0] == outcomes[1]
            reported += outcomes[0] != "ok"
    return reported
