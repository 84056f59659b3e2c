"""The run objects of the view ops whose views are kept with the run's memory
(:mod:`.views`): a ``memref.subview`` (:class:`KeptSubview`) and a ``memref.reinterpret_cast``
with a static offset (:class:`KeptCast`).

They are objects with slots rather than closures: a decoded kernel holds one per view op,
and a closure is a function, a tuple and one cell per captured name -- objects every full
collection of the cyclic garbage collector walks (an unrolled kernel holds hundreds of
thousands of view ops).  A decoded body holds their bound ``run`` methods (a call of the
bound method costs what a closure call does; calling the object itself goes through the
type's ``__call__`` slot, slower in a loop body).  What they do is documented in :func:`.views.subview` and
:func:`.views.reinterpret_cast` (NKI docs: ``nki.language`` tensor indexing).
"""
from __future__ import annotations

import itertools

from .env import STATE
from .memory import VIEWS_MAX

#: tokens of the kept views (a key of ``Memory.subviews`` / ``Memory.run_views``)
TOKENS = itertools.count()


class KeptSubview:
    """The run of a ``memref.subview`` (built by :func:`.views.subview`): its views of slot
    ``ss`` are kept with the run's memory (``Memory.subviews``) by the subview and its
    dynamic offsets ``dyn``, and reused while the source is the same array object (a placed
    tensor's views are kept across runs, and so are the caller's arguments when they are
    passed again), so a loop body does not build them again, and the hazard checks find
    their footprints known (:mod:`.hazards`).  ``box``: the view keeps every dim with unit
    steps; its start index is then recorded in ``Memory.origins`` while it is kept.
    ``on_chip``: the source is a placed SBUF / PSUM tensor, whose views the memory keeps
    across runs (one per copy of a rotating tile): the key then tells the source arrays
    apart, so each copy keeps its views (an HBM source -- a fresh output per run -- keeps
    one set, not one per run).  ``per_run``: the source is made afresh every run (an
    unplaced ``nisa.alloc``): its views are kept in ``Memory.run_views``, forgotten at the
    end of the run.  ``fsrc`` / ``fres``: the flags slots of a PSUM source and result
    (None elsewhere).

    A miss (a new source array: every run for a fresh output) indexes the source with the
    index tuple its offsets gave before, checked then: it depends on the offsets only (the
    shapes are static), so it is worked out once per offsets (``plans``, by
    ``indices(env)``; ``static``: that of static offsets, ``(index tuple, box start)``
    worked out at decode time)."""

    __slots__ = ("token", "ss", "res", "fsrc", "fres", "dyn", "n", "d0", "indices", "box",
                 "on_chip", "per_run", "static", "plans")

    def __init__(self, ss: int, res: int, fsrc: int | None, fres: int | None, dyn: tuple,
                 indices, box: bool, on_chip: bool, per_run: bool, static: tuple | None):
        self.token = next(TOKENS)
        self.ss, self.res, self.fsrc, self.fres, self.dyn = ss, res, fsrc, fres, dyn
        self.n = len(dyn)
        self.d0 = dyn[0] if dyn else None
        self.indices, self.box, self.on_chip, self.per_run = indices, box, on_chip, per_run
        self.static = static
        self.plans: dict | None = {} if dyn else None   # offsets -> (index tuple, box start)

    def run(self, env):
        src = env[self.ss]
        mem = env[STATE].mem
        kept = mem.run_views if self.per_run else mem.subviews
        n, token = self.n, self.token
        if n == 1:
            key = (token, id(src), env[self.d0]) if self.on_chip else (token, env[self.d0])
        elif n == 0:
            key = (token, id(src)) if self.on_chip else token
        else:
            key = (token, id(src) if self.on_chip else 0, *[env[d] for d in self.dyn])
        fres = self.fres
        if _reuse(env, kept.get(key), src, self.res, fres):
            return
        if n == 0:
            p = self.static
        else:
            plans = self.plans
            okey = key[-1] if n == 1 else key[2:]
            p = plans.get(okey)
            if p is None:
                t = self.indices(env)          # (checks the offsets)
                p = (t, tuple(x.start for x in t) if self.box else None)
                if len(plans) >= VIEWS_MAX:
                    plans.clear()
                plans[okey] = p
        t = p[0]
        v = src[t]
        fv = env[self.fsrc][t] if fres is not None else None
        env[self.res] = v
        if fres is not None:
            env[fres] = fv
            mem.sub_rect(fv, env[self.fsrc])
        if len(kept) >= VIEWS_MAX:
            kept.clear()
            mem.origins.clear()
        if self.box:
            old = kept.get(key)
            if old is not None:
                mem.origins.pop(id(old[1]), None)
            mem.origins[id(v)] = (v, src, p[1])
        kept[key] = (src, v, fv)

    __call__ = run


class KeptCast:
    """The run of a ``memref.reinterpret_cast`` with a static offset ``off0`` (see
    :func:`.views.reinterpret_cast`): ``make(base, dt, off0)`` of the base array in slot
    ``bs`` (and of its flags in ``bf``, as ``ft``, when the result ``res`` has flags
    ``fres``), kept like a subview's views (``as_strided`` is slow)."""

    __slots__ = ("token", "bs", "bf", "res", "fres", "make", "dt", "ft", "off0")

    def __init__(self, bs: int, bf: int | None, res: int, fres: int | None, make, dt, ft,
                 off0: int):
        self.token = next(TOKENS)
        self.bs, self.bf, self.res, self.fres = bs, bf, res, fres
        self.make, self.dt, self.ft, self.off0 = make, dt, ft, off0

    def run(self, env):
        b = env[self.bs]
        kept = env[STATE].mem.subviews
        token, fres = self.token, self.fres
        if _reuse(env, kept.get(token), b, self.res, fres):
            return
        make, off0 = self.make, self.off0
        v = make(b, self.dt, off0)
        fv = make(env[self.bf], self.ft, off0) if fres is not None else None
        env[self.res] = v
        if fres is not None:
            env[fres] = fv
        if len(kept) >= VIEWS_MAX:
            kept.clear()
        kept[token] = (b, v, fv)

    __call__ = run


def _reuse(env, hit, src, res: int, fres) -> bool:
    """Bind the kept view ``hit`` (``(source, view, flags view)``) to the result slots when
    it was made from this ``src``; returns whether it was."""
    if hit is None or hit[0] is not src:
        return False
    env[res] = hit[1]
    if fres is not None:
        env[fres] = hit[2]
    return True
