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

import weakref
from operator import le, mul

import numpy as np

from ..diagnostics import OpSite, error_at
from ..dialects.instruction import ELEMENTWISE_OPS
from ..errors import NKIHazardError
from .footprint import (Footprint, address, bytes_overlap, footprint, root_of, view_geometry,
                        view_geometry_at)
from .hazard_roots import Buffer as _Buffer, Root as _Root
from .hazard_tiles import TILE, tile_race, tile_record, to_history
from .hazard_races import EVERY, HISTORY_MAX, describe, prune, race, remember
from .hazard_marks import Marks
from .ir_release import drop_ops
from .memory import VIEWS_MAX
from .queues import Instance, QueueRun
from .views import skips_oob

#: a missing log entry of :class:`Marks` (its value: never written)
_UNSET = (None, 0)

#: footprints remembered per run (:meth:`Checker._footprint`)
FOOTPRINTS_MAX = 1 << 16

#: elementwise instructions: element i of each same-sized source feeds element i of ``dst``,
#: so they carry never-written elements into ``dst`` (see check 3)
#: (and the instruction definitions' ``elementwise`` ops, ``ELEMENTWISE_OPS``)
PROPAGATE = frozenset({
    "nisa.dma_copy",
})


def _buffer_name(op: OpSite) -> str:
    hint = op.hint
    return f"'%{hint}'" if hint else "the buffer"


def _copies_nothing(env: list) -> None:
    """The closure of a forwarded DMA instance (:meth:`Checker.forward`)."""


#: schedule -> ids of its DMAs that skip out-of-bounds dynamic addresses (:func:`_skipping`)
_SKIPPING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _skipping(sched) -> frozenset:
    """The ``sid`` of every instruction of ``sched`` that may skip its transfer at run time
    (``nisa.dma_copy`` with ``oob_mode=skip``: :func:`.views.skips_oob`), computed once per
    schedule."""
    out = _SKIPPING.get(sched)
    if out is None:
        out = _SKIPPING[sched] = frozenset(i.sid for i in sched.infos if skips_oob(i.op))
    return out


def _transferred(accs: tuple, env: list) -> tuple:
    """The accesses of a DMA that may skip its transfer (:func:`_skipping`) in this instance:
    all of them when it transfers, else only its index reads (an out-of-bounds dynamic view
    is ``None`` in ``env``: the DMA reads the offsets and neither reads ``src`` nor writes
    ``dst``; NKI docs ``nki.isa.dma_copy``, ``oob_mode``)."""
    if all(env[a[0]] is not None for a in accs if a[1] in ("dst", "src")):
        return accs
    return tuple(a for a in accs if a[1] not in ("dst", "src"))


class Checker:
    """The hazard state of one queue-mode run (see the module docstring)."""

    #: keep whole-tile summaries (:mod:`.hazard_tiles`); False: the general history for every
    #: root (the same answers, slower; for tests)
    tiles = True

    def __init__(self, state, queues: QueueRun):
        # the queues' static facts and clocks (``qclock`` is updated in place), not the
        # QueueRun itself: it holds this checker, and the cycle would leave every run's
        # hazard state to the garbage collector (a collection every run or two)
        self.sched = queues.sched
        self.sched.prepare_checks()
        self.skipping = _skipping(self.sched)
        drop_ops(self.sched)    # (the checks need no op from here on: their sites say it all)
        self.qclock = queues.qclock
        self.state = state
        self.stamp = object()                       # this run (see :meth:`_enter`)
        self.local: dict[int, _Root] = {}           # roots used in this run (kept alive)
        self.owner: dict[int, _Buffer] = {}         # alloc slot -> its current buffer
        self.fps: dict[int, tuple] = {}             # id(view) -> (view, _Root, footprint)
        # the same for views of the state's SBUF / PSUM / blocks (first), and their roots'
        # states, kept with the state across runs
        self.kept: dict[int, tuple] = state.mirrors.setdefault("footprints", {})
        self.kept_roots: dict[int, _Root] = state.mirrors.setdefault("roots", {})
        # id(array) -> (weak reference, fact) for arrays not the state's (:meth:`_weak`):
        # the address of a root, the geometry of a view
        self.weak_roots: dict[int, tuple] = state.mirrors.setdefault("weak roots", {})
        self.weak_views: dict[int, tuple] = state.mirrors.setdefault("weak views", {})

    def _enter(self, rs: _Root) -> None:
        """The first use of root ``rs`` in this run: its history and buffers start over,
        its marks are in use from its first ``nisa.alloc`` (:meth:`_mirrors`)."""
        rs.stamp = self.stamp
        rs.w = rs.pw = rs.hist = rs.key = rs.fw = None
        rs.live = []
        rs.fr = []
        self.local[id(rs.root)] = rs

    def _root(self, root: np.ndarray) -> _Root:
        rs = self.local.get(id(root))
        if rs is not None:
            return rs
        if self.state.mem.owns(root):   # SBUF, PSUM, a block (never a caller's or output array)
            rs = self.kept_roots.get(id(root))
            if rs is None or rs.root is not root:
                rs = self.kept_roots[id(root)] = _Root(root, True)
        else:       # a caller's array (often passed again) or a fresh one
            w = self.weak_roots.get(id(root))
            if w is not None and w[0]() is root:
                rs = _Root(root, False, w[1])
            else:
                rs = _Root(root, False)     # (its address when needed: :meth:`_base`)
        self._enter(rs)
        return rs

    def _base(self, rs: _Root) -> int:
        """The address of the root of ``rs`` (not the state's), remembered while it lives."""
        b = rs.base
        if b is None:
            b = rs.base = address(rs.root)
            self._weak(self.weak_roots, rs.root, b)
        return b

    @staticmethod
    def _weak(weak: dict, a: np.ndarray, facts) -> None:
        """Remember ``facts`` about the array ``a`` in ``weak`` while ``a`` lives."""
        if len(weak) >= 2 * VIEWS_MAX:
            weak.clear()
        weak[id(a)] = (weakref.ref(a), facts)

    def _footprint(self, a: np.ndarray) -> tuple:
        """``(a, root state, footprint)`` of the view ``a``, computed once per view object
        per run (the entry keeps ``a`` alive, so its id is not reused meanwhile).  Views of
        the state's SBUF / PSUM are kept across runs (``Memory.view``,
        ``Memory.subviews``), so are their footprints; of other views (of the caller's
        arrays, kept by ``Memory.subviews`` while the same array is passed again), the
        geometry is remembered while the view lives."""
        kept = self.kept
        hit = kept.get(id(a))
        if hit is not None and hit[0] is a:
            if hit[1].stamp is not self.stamp:
                self._enter(hit[1])
            return hit
        hit = self.fps.get(id(a))
        if hit is not None and hit[0] is a:
            return hit
        root = root_of(a)
        rs = self._root(root)
        if rs.owned:
            hit = (a, rs, footprint(a, root, rs.base))
            if len(kept) >= 2 * VIEWS_MAX:     # as many as the memory keeps views
                kept.clear()
            kept[id(a)] = hit
            return hit
        w = self.weak_views.get(id(a))
        if w is not None and w[0]() is a:
            geom = w[1]
        else:
            o = self.state.mem.origins.get(id(a))
            if o is not None and o[0] is a and o[1] is root:
                # a kept box subview of the root itself (a fresh output's tile view): its
                # start index places it, no address needed (``Memory.origins``)
                geom = view_geometry_at(a, root, sum(map(mul, o[2], root.strides)))
            else:
                geom = view_geometry(a, root, self._base(rs))
                self._weak(self.weak_views, a, geom)
        hit = (a, rs, None if geom is None else Footprint(root, *geom))
        if len(self.fps) < FOOTPRINTS_MAX:
            self.fps[id(a)] = hit
        return hit

    @staticmethod
    def _all_written(w: Marks, fp: Footprint) -> bool:
        u = w.uniform(fp)
        return bool(w.view(fp).all()) if u is None else u != 0

    @staticmethod
    def _non_matmul_mark(pw: Marks, fp: Footprint) -> bool:
        u = pw.uniform(fp)
        return bool((pw.view(fp) < 0).any()) if u is None else u < 0

    # ------------------------------------------------------------------ allocs
    @staticmethod
    def _mirrors(rs: _Root, psum: bool):
        m = rs.marks
        if m is None:
            root = rs.root
            m = rs.marks = (Marks(np.zeros(root.nbytes, np.uint8), root),
                            Marks(np.zeros(root.nbytes, np.int32), root, 4) if psum else None)
        rs.w, rs.pw = m
        return m

    def on_alloc(self, op: OpSite, slot: int, data: np.ndarray, space: str) -> None:
        """An on-chip ``nisa.alloc`` executed (enqueue time): clear the written flags of its
        bytes and evict the earlier buffers placed on them."""
        hit = self.kept.get(id(data))     # (:meth:`_footprint`'s common case, inline)
        if hit is not None and hit[0] is data:
            rs = hit[1]
            if rs.stamp is not self.stamp:
                self._enter(rs)
        else:
            hit = self._footprint(data)
            rs = hit[1]
        fp = hit[2]
        if fp is None:
            return
        w, pw = (rs.w, rs.pw) if rs.w is not None else self._mirrors(rs, space == "psum")
        if fp.exact and fp.key in w.log:     # (:meth:`Marks.fill`, inline)
            w.log[fp.key] = (fp, 0)
        else:
            w.fill(fp, 0)
        if pw is not None:
            if fp.exact and fp.key in pw.log:     # (:meth:`Marks.fill`, inline)
                pw.log[fp.key] = (fp, 0)
            else:
                pw.fill(fp, 0)
        buf = _Buffer(op, fp)
        live = rs.live
        if not live:        # (the root's first buffer of the run)
            rs.live = [(fp.box, buf)]
            self.owner[slot] = buf
            return
        keep = []
        lo0, hi0, lo1, hi1 = box = fp.box
        for t in live:
            # (the boxes on the first and last dimensions first: most buffers are apart)
            b = t[0]
            if b[2] < hi1 and lo1 < b[3] and b[0] < hi0 and lo0 < b[1]:
                other = t[1]
                # (the same footprint: the same view allocated again, e.g. the next loop
                # iteration's copy of a tile alone in its block; a footprint is never empty)
                if other.fp is fp or bytes_overlap(other.fp, fp):
                    other.evicted_by = op
                    continue
            keep.append(t)
        keep.append((box, buf))
        rs.live = keep
        self.owner[slot] = buf

    # ------------------------------------------------------------ instructions
    def _view(self, a) -> tuple | None:
        """``(a, root state, footprint)`` of an operand (:meth:`_footprint`), or None when it
        is not an array (the common cases of :meth:`check`, without its inlining)."""
        hit = self.kept.get(id(a))
        if hit is not None and hit[0] is a:
            if hit[1].stamp is not self.stamp:
                self._enter(hit[1])
            return hit
        return self._footprint(a) if isinstance(a, np.ndarray) else None

    def _dst(self, info, env: list):
        """The footprint of the one on-chip tensor an elementwise instruction (:data:`PROPAGATE`,
        ``ELEMENTWISE_OPS``) writes, which carries never-written elements through (poison), or
        None."""
        name = info.site.name
        if name not in PROPAGATE and name not in ELEMENTWISE_OPS:
            return None
        writes = []
        for slot, _, is_write, _, _ in info.accesses:
            hit = self._view(env[slot]) if is_write else None
            if hit is not None and hit[2] is not None:
                writes.append(hit)
        return writes[0][2] if len(writes) == 1 and writes[0][1].w is not None else None

    def check(self, inst: Instance, env: list) -> None:
        """Check the accesses of ``inst`` (enqueue time), then record them."""
        info = inst.info
        accs = info.checked
        if self.skipping and info.sid in self.skipping:
            accs = _transferred(accs, env)
        seen = []
        fps, owner = self.fps, self.owner
        kept, stamp = self.kept, self.stamp
        auto = info.matmul == "auto"
        clock = inst.clock
        dst = poison = None
        for slot, role, is_write, is_read, bslot in accs:
            a = env[slot]
            hit = kept.get(id(a))     # (the common cases of :meth:`_footprint`, inline; the
            if hit is not None and hit[0] is a:     # entries keep their views alive: ids
                rs = hit[1]                         # are unique)
                if rs.stamp is not stamp:
                    self._enter(rs)
            else:
                hit = fps.get(id(a))
                if hit is None or hit[0] is not a:
                    if not isinstance(a, np.ndarray):
                        continue
                    hit = self._footprint(a)
                rs = hit[1]
            fp = hit[2]
            if fp is None:
                continue
            if bslot is not None:
                buf = owner.get(bslot)
                if buf is not None and buf.evicted_by is not None:
                    op = info.site
                    raise error_at(op, f"{op.name}: overlap of live buffers: '{role}' is "
                                       f"{_buffer_name(buf.op)} (placed by {describe(buf.op)}), "
                                       f"but {describe(buf.evicted_by)} placed another buffer on "
                                       f"its bytes while it is still in use", NKIHazardError)
            w = rs.w
            if is_read and w is not None and not (fp.exact and (w.log.get(fp.key) or _UNSET)[1]) \
                    and (w.uniform(fp) or 0) == 0 and not self._all_written(w, fp):
                # an elementwise instruction writing one on-chip tensor carries never-written
                # elements through to its dst (poison) instead of failing at once
                if dst is None:
                    dst = self._dst(info, env) or False
                mv = w.elems(fp)
                n = int(np.prod(fp.shape))
                if dst is not False and n == int(np.prod(dst.shape)):
                    bad = (mv == 0).any(axis=-1).reshape(-1)
                    poison = bad if poison is None else poison | bad
                else:
                    buf = owner.get(bslot)
                    op = info.site
                    raise error_at(op, f"{op.name}: '{role}' reads SBUF/PSUM bytes never "
                                       f"written (or computed from never-written bytes) "
                                       f"since their allocation by "
                                       f"{describe(buf.op if buf else None)}",
                                       NKIHazardError)
            if auto and role == "dst":
                pw = rs.pw
                if pw is not None and self._non_matmul_mark(pw, fp):
                    mv = pw.elems(fp)
                    neg = mv < 0
                    other = self.sched.infos[-int(mv[neg][0]) - 1].site
                    op = info.site
                    raise error_at(op, f"{op.name}: accumulates (psum_accumulate_flags=auto) "
                                       f"onto PSUM elements whose last writer since allocation "
                                       f"is a non-matmul instruction, {describe(other)}: the "
                                       f"matmul overwrites that value instead of adding to it",
                                       NKIHazardError)
            hist = rs.hist
            if hist is None:        # a whole-tile summary (:mod:`.hazard_tiles`)
                key = rs.key
                if key is None:     # the root's first access in the run
                    plan = TILE if fp.exact and len(fp.lo) < 3 and self.tiles else None
                elif key == fp.box and fp.exact:
                    fw = rs.fw      # (:func:`tile_race`'s common case, inline: no race)
                    if (fw is not None and fw[4] > clock[fw[3]]) or (is_write and rs.fr):
                        tile_race(rs, inst, role, is_write, clock, self.sched.queues)
                    plan = TILE
                else:
                    hist = to_history(rs, len(self.qclock))
            if hist is None:
                pass
            elif not hist.alive:
                plan = None
            elif hist.key == fp.box and fp.exact and len(fp.lo) < 3 and \
                    all(map(le, hist.bound, clock)):    # (:meth:`_race`'s shortcut, inline)
                plan = (EVERY, hist.n, hist.gen)
            else:
                plan = race(inst, role, is_write, fp, hist, self.sched.queues)
            seen.append((fp, is_write, rs, role, plan))
        # then record them (after every check: an instruction may read what it writes)
        qi = info.qi
        epoch = (qi, clock[qi])
        for fp, is_write, rs, role, plan in seen:
            if is_write:
                w = rs.w
                if w is not None:
                    if poison is not None:
                        w.elems(fp)[...] = (~poison).reshape(fp.shape)[..., None]
                    elif fp.exact and fp.key in w.log:     # (:meth:`Marks.fill`, inline)
                        w.log[fp.key] = (fp, 1)
                    else:
                        w.fill(fp, 1)
                pw = rs.pw
                if pw is not None:
                    v = -(info.sid + 1) if info.matmul is None else info.sid + 1
                    if fp.exact and fp.key in pw.log:     # (:meth:`Marks.fill`, inline)
                        pw.log[fp.key] = (fp, v)
                    else:
                        pw.fill(fp, v)
            if plan is TILE:
                if rs.hist is None:
                    key = rs.key
                    if key is None:
                        key = rs.key = fp.box
                    if key == fp.box:
                        if is_write:        # (:func:`tile_record`'s common cases, inline)
                            rs.fw = (fp, inst, role, qi, epoch[1])
                            rs.fr = []
                            continue
                        if not rs.fr:
                            rs.fr.append((fp, inst, role, qi, epoch[1]))
                            continue
                        if tile_record(rs, fp, is_write, inst, role, qi, epoch[1]):
                            continue
                    to_history(rs, len(self.qclock))
                plan = None     # (the search by :func:`remember`, as for a first access)
            elif is_write:
                if plan is not None and plan[0] is EVERY:
                    hist = rs.hist
                    if plan[1] == hist.n and plan[2] == hist.gen:
                        hist.restart((fp, True, inst, role), epoch)   # (:meth:`_remember`)
                        continue
            elif plan is not None and plan[0] is EVERY:
                hist = rs.hist
                if plan[1] == hist.n and plan[2] == hist.gen:    # (:meth:`_remember`, inline)
                    drop = [i for i, e in enumerate(hist.entries) if e is not None and not e[1]]
                    if drop:
                        hist.remove(drop)
                    hist.append((fp, False, inst, role), epoch)
                    if hist.alive > HISTORY_MAX:
                        prune(hist, self.qclock)
                    continue
            if rs.hist is None and rs.key is not None:   # (another access of inst made it)
                to_history(rs, len(self.qclock))
            remember(rs, fp, is_write, inst, role, plan, self.qclock)

    def forward(self, plan: tuple, inst: Instance, env: list) -> None:
        """After :meth:`check` of a forwarding DMA ``inst`` (:mod:`.forward`): bind its tile's
        slot in ``env`` (the live slots, which later instances copy) to a fresh view of the
        source that this run's checks know as the tile (its root state and footprint), and
        make ``inst`` copy nothing; unless the source's layout is not the tile's or the
        per-run footprints are full (then it copies)."""
        d, s, free, row, broadcast = plan
        v = env[s]
        st = v.strides
        if st[1:] != free or (st[0] < row and not (broadcast and st[0] == 0)) or \
                len(self.fps) >= FOOTPRINTS_MAX:
            return
        hit = self._view(env[d])
        if hit is None or hit[2] is None:
            return
        fv = v[...]
        self.fps[id(fv)] = (fv, hit[1], hit[2])     # (the entry keeps fv alive: ids unique)
        env[d] = fv
        inst.fn = _copies_nothing
