"""The interpreter's hazard checks (``Program.run(hazards=True)``, env ``NKI_MLIR_HAZARDS=1``).

They run in queue mode (:mod:`.queues`) and are decided at ENQUEUE time, in program order,
so they do not depend on the interleaving the drain picks.  Every enqueued instruction
instance gets a vector clock (one entry per queue: the join of its queue predecessor's and
its waited instances' clocks plus its own tick; a fence joins everything), so "A happens
before B" is exact for the waits the schedule declares.  Each memref operand's byte
footprint (:mod:`.footprint`) is then checked for:

1. RACE: an earlier access from another queue to overlapping bytes of the same memory, one
   of the two a write, with no happens-before between the two instances.  Accesses are
   remembered per memory (SBUF, PSUM, each HBM tensor / private array); an access is
   forgotten once a later access that covers its bytes happens after it (every future
   conflict would also conflict with the later one), and when more than :data:`HISTORY_MAX`
   are remembered for one memory, those every queue has already waited for; past that,
   the oldest are dropped (a race with them is then missed).
2. OVERLAP OF LIVE BUFFERS: an access through a buffer after another ``nisa.alloc`` was
   placed on any of its bytes (each alloc evicts the earlier owners of its bytes).
3. READ OF NEVER-WRITTEN SBUF/PSUM: per on-chip byte a written flag, cleared by the
   ``nisa.alloc`` that places a tensor there and set by writes; a read of a clear byte
   (``nisa.matmul`` with ``psum_accumulate_flags=accumulate`` reads its ``dst``).  NKI
   kernels compute on garbage rows they never store (an unmasked op on a ragged tile), so
   an elementwise instruction (:data:`PROPAGATE`) writing one on-chip tensor does not fail:
   the dst elements computed from never-written ones stay "never written" (element i of
   each same-sized source feeds element i of dst).  Any other reader -- a DMA to HBM, a
   matmul, a reduction, a broadcast operand -- is the fault.
4. OUT-OF-BOUNDS HBM: the views' own checks (located runtime errors), unchanged.
5. A ``nisa.matmul`` accumulating (``psum_accumulate_flags=auto``: first matmul write
   overwrites, later ones add) onto PSUM elements whose last writer since their allocation
   was a non-matmul instruction: such an element is not marked matmul-written, so the
   matmul silently overwrites the value the other instruction put there (e.g. a bias
   copied into the accumulator first).  An explicit ``accumulate`` matmul adds onto
   whatever PSUM holds, which is the documented ``acc = nl.zeros(..., buffer=nl.psum);
   acc += nc_matmul(...)`` idiom (a ``memset`` then accumulating matmuls), so it is not
   reported.

Each fault is an :class:`~nki_mlir.errors.NKIHazardError` located at the later instruction
whose message names the other one (the earlier access, the evicting or placing
``nisa.alloc``, the non-matmul writer) with ``file:line`` and its source line.
"""
from __future__ import annotations

import linecache

import numpy as np
from xdsl.ir import Operation

from ..diagnostics import error_at, loc_of
from ..dialects.instruction import ELEMENTWISE_OPS
from ..errors import NKIHazardError
from .footprint import Footprint, address, bytes_overlap, footprint, root_of
from .hazard_history import History
from .hazard_marks import Marks
from .memory import VIEWS_MAX
from .queues import Instance, QueueRun, hb

#: accesses remembered per memory before pruning by the queues' frontier
HISTORY_MAX = 256

#: footprints remembered per run (:meth:`Checker._footprint`)
FOOTPRINTS_MAX = 1 << 16

#: elementwise instructions: element i of each same-sized source feeds element i of ``dst``,
#: so they carry never-written elements into ``dst`` (see check 3)
#: (and the instruction definitions' ``elementwise`` ops, ``ELEMENTWISE_OPS``)
PROPAGATE = frozenset({
    "nisa.dma_copy", "nisa.tensor_copy", "nisa.affine_select",
})


def describe(op: Operation | None) -> str:
    """``nisa.x at file:line (`source text`)`` for a message."""
    if op is None:
        return "an earlier instruction"
    loc = loc_of(op)
    if loc is None:
        return f"{op.name} (no source location)"
    text = linecache.getline(loc.file, loc.line).strip()
    return f"{op.name} at {loc.file}:{loc.line}" + (f" (`{text}`)" if text else "")


def _buffer_name(op: Operation) -> str:
    hint = op.results[0].name_hint if op.results else None
    return f"'%{hint}'" if hint else "the buffer"


class _Buffer:
    """One execution of an on-chip ``nisa.alloc``: its bytes and who evicted it."""

    __slots__ = ("op", "fp", "evicted_by")

    def __init__(self, op, fp):
        self.op, self.fp, self.evicted_by = op, fp, None


class Checker:
    """The hazard state of one queue-mode run (see the module docstring)."""

    def __init__(self, state, queues: QueueRun):
        # the queues' static facts and clocks (``qclock`` is updated in place), not the
        # QueueRun itself: it holds this checker, and the cycle would leave every run's
        # hazard state to the garbage collector (a collection every run or two)
        self.sched = queues.sched
        self.qclock = queues.qclock
        self.state = state
        self.roots: dict[int, np.ndarray] = {}      # keeps roots alive: ids stay unique
        self.written: dict[int, Marks] = {}         # on-chip root -> uint8 per byte
        self.psum_writer: dict[int, Marks] = {}     # PSUM root -> int32 per byte (+-(sid+1))
        self.owner: dict[int, _Buffer] = {}         # alloc slot -> its current buffer
        # root -> (lo0, hi0, lo_last, hi_last, buffer) of the placed buffers not yet evicted
        self.live: dict[int, list[tuple]] = {}
        self.history: dict[int, History] = {}      # root -> [(fp, is_write, inst, role)]
        self.fps: dict[int, tuple] = {}
        self.bases: dict[int, tuple] = {}             # id(view) -> (view, root, footprint)
        # the same for views of the state's SBUF / PSUM, kept with the state across runs
        self.kept: dict[int, tuple] = state.mirrors.setdefault("footprints", {})

    def _footprint(self, a: np.ndarray):
        """``(root, footprint)`` of the view ``a``, computed once per view object per run
        (the entry keeps ``a`` alive, so its id is not reused meanwhile).  Views of the
        state's SBUF / PSUM are kept across runs (``Memory.view``, ``Memory.subviews``), so
        are their footprints."""
        hit = self.fps.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1], hit[2]
        kept = self.kept
        hit = kept.get(id(a))
        if hit is not None and hit[0] is a:
            self.fps[id(a)] = hit
            return hit[1], hit[2]
        root = root_of(a)
        base = self.bases.get(id(root))       # (root, its address): kept alive, id unique
        if base is None or base[0] is not root:
            base = self.bases[id(root)] = (root, address(root))
        fp = footprint(a, root, base[1])
        if len(self.fps) < FOOTPRINTS_MAX:
            self.fps[id(a)] = (a, root, fp)
        if self.state.mem.owns(root):   # SBUF, PSUM, a block (never a caller's or output array)
            if len(kept) >= 2 * VIEWS_MAX:     # as many as the memory keeps views
                kept.clear()
            kept[id(a)] = (a, root, fp)
        return root, fp

    @staticmethod
    def _all_written(w: Marks, fp: Footprint) -> bool:
        u = w.uniform(fp)
        return bool(w.view(fp).all()) if u is None else u != 0

    @staticmethod
    def _non_matmul_mark(pw: Marks, fp: Footprint) -> bool:
        u = pw.uniform(fp)
        return bool((pw.view(fp) < 0).any()) if u is None else u < 0

    # ------------------------------------------------------------------ allocs
    def _mirrors(self, root: np.ndarray, psum: bool):
        rid = id(root)
        w = self.written.get(rid)
        if w is None:
            mem = self.state.mem
            if mem.owns(root):     # big, or many: kept with the pooled state
                key = "sbuf" if root is mem.sbuf else "psum" if root is mem.psum else id(root)
                cached = self.state.mirrors.get(key)
                if cached is None:
                    cached = self.state.mirrors[key] = (
                        Marks(np.zeros(root.nbytes, np.uint8), root),
                        Marks(np.zeros(root.nbytes, np.int32), root, 4) if psum else None)
                w, pw = cached
            else:
                w = Marks(np.zeros(root.nbytes, np.uint8), root)
                pw = Marks(np.zeros(root.nbytes, np.int32), root, 4) if psum else None
            self.roots[rid] = root
            self.written[rid] = w
            if pw is not None:
                self.psum_writer[rid] = pw
        return w, self.psum_writer.get(rid)

    def on_alloc(self, op: Operation, slot: int, data: np.ndarray, space: str) -> None:
        """An on-chip ``nisa.alloc`` executed (enqueue time): clear the written flags of its
        bytes and evict the earlier buffers placed on them."""
        root, fp = self._footprint(data)
        if fp is None:
            return
        w, pw = self._mirrors(root, space == "psum")
        w.fill(fp, 0)
        if pw is not None:
            pw.fill(fp, 0)
        buf = _Buffer(op, fp)
        keep = []
        lo0, hi0, lo1, hi1 = fp.lo[0], fp.hi[0], fp.lo[-1], fp.hi[-1]
        for t in self.live.get(id(root), ()):
            # (the boxes on the first and last dimensions first: most buffers are apart)
            if t[2] < hi1 and lo1 < t[3] and t[0] < hi0 and lo0 < t[1]:
                other = t[4]
                if bytes_overlap(other.fp, fp):
                    other.evicted_by = op
                    continue
            keep.append(t)
        keep.append((lo0, hi0, lo1, hi1, buf))
        self.live[id(root)] = keep
        self.owner[slot] = buf

    # ------------------------------------------------------------ instructions
    def check(self, inst: Instance, env: list) -> None:
        """Check the accesses of ``inst`` (enqueue time), then record them."""
        info = inst.info
        op = info.op
        seen = []
        fps = self.fps
        written = self.written
        nwrites, wrow = 0, None
        for slot, role, is_write, is_read, bslot in info.accesses:
            a = env[slot]
            if not isinstance(a, np.ndarray):
                continue
            hit = fps.get(id(a))      # (the common case of :meth:`_footprint`, inline)
            if hit is not None and hit[0] is a:
                root, fp = hit[1], hit[2]
            else:
                root, fp = self._footprint(a)
            if fp is not None:
                rid = id(root)
                row = (fp, is_write, is_read, rid, role, bslot, written.get(rid))
                seen.append(row)
                if is_write:
                    nwrites += 1
                    wrow = row
        # an elementwise instruction writing one on-chip tensor carries never-written
        # elements through to its dst (poison) instead of failing at once
        dst = wrow[0] if nwrites == 1 and wrow[6] is not None and (
            op.name in PROPAGATE or op.name in ELEMENTWISE_OPS) else None
        poison = None
        nears = []
        owner, history = self.owner, self.history
        auto = info.matmul == "auto"
        for fp, is_write, is_read, rid, role, bslot, w in seen:
            if bslot is not None:
                buf = owner.get(bslot)
                if buf is not None and buf.evicted_by is not None:
                    raise error_at(op, f"{op.name}: overlap of live buffers: '{role}' is "
                                       f"{_buffer_name(buf.op)} (placed by {describe(buf.op)}), "
                                       f"but {describe(buf.evicted_by)} placed another buffer on "
                                       f"its bytes while it is still in use", NKIHazardError)
            if is_read and w is not None and (w.uniform(fp) or 0) == 0 and \
                    not self._all_written(w, fp):
                mv = w.elems(fp)
                n = int(np.prod(fp.shape))
                if dst is not None and n == int(np.prod(dst.shape)):
                    bad = (mv == 0).any(axis=-1).reshape(-1)
                    poison = bad if poison is None else poison | bad
                else:
                    buf = owner.get(bslot)
                    raise error_at(op, f"{op.name}: '{role}' reads SBUF/PSUM bytes never "
                                       f"written (or computed from never-written bytes) "
                                       f"since their allocation by "
                                       f"{describe(buf.op if buf else None)}",
                                       NKIHazardError)
            if auto and role == "dst":
                pw = self.psum_writer.get(rid)
                if pw is not None and self._non_matmul_mark(pw, fp):
                    mv = pw.elems(fp)
                    neg = mv < 0
                    other = self.sched.infos[-int(mv[neg][0]) - 1].op
                    raise error_at(op, f"{op.name}: accumulates (psum_accumulate_flags=auto) "
                                       f"onto PSUM elements whose last writer since allocation "
                                       f"is a non-matmul instruction, {describe(other)}: the "
                                       f"matmul overwrites that value instead of adding to it",
                                       NKIHazardError)
            hist = history.get(rid)
            nears.append(None if hist is None else self._race(inst, role, is_write, fp, hist))
        psum_writer = self.psum_writer
        for (fp, is_write, is_read, rid, role, bslot, w), near in zip(seen, nears):
            if is_write:
                if w is not None:
                    if poison is not None:
                        w.elems(fp)[...] = (~poison).reshape(fp.shape)[..., None]
                    else:
                        w.fill(fp, 1)
                if psum_writer:
                    pw = psum_writer.get(rid)
                    if pw is not None:
                        pw.fill(fp, -(info.sid + 1) if info.matmul is None else info.sid + 1)
            self._remember(rid, fp, is_write, inst, role, near)

    def _race(self, inst: Instance, role: str, is_write: bool, fp: Footprint, hist):
        """Raise on a race with a remembered access of ``hist`` (the :class:`History` of
        ``fp``'s root); returns the rows it searched (:meth:`History.mark`, for
        :meth:`_remember`)."""
        rows = hist.near(fp)
        boxes = len(fp.lo) > 2        # (near() compared the first and last dimensions)
        entries = hist.entries
        for i in rows:
            ofp, owrite, other, orole = entries[i]
            if other is inst or not (owrite or is_write) or (boxes and not fp.overlaps(ofp)):
                continue
            if hb(other, inst) or not bytes_overlap(fp, ofp):
                continue
            op = inst.info.op
            names = self.sched.queues
            what = "writes" if is_write else "reads"
            owhat = "writes" if owrite else "reads"
            raise error_at(op, f"{op.name}: race: it {what} '{role}' (queue "
                               f"'{names[inst.info.qi]}') bytes that {describe(other.info.op)} "
                               f"{owhat} as '{orole}' (queue '{names[other.info.qi]}'), with no "
                               f"ordering edge between the two instructions", NKIHazardError)
        return rows, hist.n, hist.gen      # (:meth:`History.mark`)

    def _remember(self, rid: int, fp: Footprint, is_write: bool, inst: Instance, role: str,
                  near=None) -> None:
        hist = self.history.get(rid)
        if hist is None:
            hist = self.history[rid] = History()
            self.roots.setdefault(rid, fp.root)
        if fp.exact and hist.alive:
            entries = hist.entries
            rows = near[0] if near is not None and near[1] == hist.n and near[2] == hist.gen \
                else hist.near(fp, near)       # (nothing appended since the race search)
            drop = []
            if rows:
                # rows fp covers (on <= 2-D roots: their boxes on the first and last
                # dimensions, :attr:`History.rows`, inside fp's) that happen before inst
                lo, hi = fp.lo, fp.hi
                boxes = len(lo) > 2
                lo0, hi0, lo1, hi1 = lo[0], hi[0], lo[-1], hi[-1]
                krows, clock = hist.rows, inst.clock
                for i in rows:
                    e = entries[i]
                    if e is None or not (is_write or not e[1]):
                        continue
                    r = krows[i]
                    if r[0] < lo0 or -r[1] > hi0 or r[2] < lo1 or -r[3] > hi1 or \
                            (boxes and not fp.contains(e[0])):
                        continue
                    q = e[2].info.qi
                    if e[2].clock[q] <= clock[q]:       # (:func:`~.queues.hb`, inline)
                        drop.append(i)
            if drop:
                hist.remove(drop)
        hist.append((fp, is_write, inst, role))
        if hist.alive > HISTORY_MAX:
            qclock = self.qclock
            nq = len(qclock)
            frontier = [min(qclock[q][j] for q in range(nq)) for j in range(nq)]
            hist.keep([r[2].clock[r[2].info.qi] > frontier[r[2].info.qi] for r in hist.live()])
            if hist.alive > HISTORY_MAX:
                hist.keep([False] * (hist.alive - HISTORY_MAX * 3 // 4) +
                          [True] * (HISTORY_MAX * 3 // 4))
