"""The per-root and per-buffer state of the interpreter's hazard checks (:mod:`.hazards`).

A *root* is an array owning memory (:mod:`.footprint`): the run's SBUF / PSUM / blocks, an
HBM tensor or a private on-chip array; a *buffer* is one execution of an on-chip
``nisa.alloc`` placed in a root.
"""
from __future__ import annotations

import numpy as np

from .footprint import address
from .hazard_history import History
from .hazard_marks import Marks


class Buffer:
    """One execution of an on-chip ``nisa.alloc`` (``op``: its
    :class:`~nki_mlir.diagnostics.OpSite`): its bytes and who evicted it (a site too)."""

    __slots__ = ("op", "fp", "evicted_by")

    def __init__(self, op, fp):
        self.op, self.fp, self.evicted_by = op, fp, None


class Root:
    """The hazard state of one root array (:mod:`.footprint`): its written marks and PSUM
    writers (on-chip roots; in use from the root's first ``nisa.alloc`` of the run), its
    access history and its placed buffers not yet evicted.  The roots of the state's SBUF /
    PSUM / blocks keep theirs with the state across runs (the marks stay, the rest starts
    over at the root's first use in a run: :meth:`.hazards.Checker._enter`)."""

    __slots__ = ("root", "base", "owned", "stamp", "marks", "w", "pw", "hist", "live", "key",
                 "fw", "fr")

    def __init__(self, root: np.ndarray, owned: bool, base: int | None = None):
        self.root, self.owned = root, owned
        # the address of its first byte; of a root not the state's, None until first needed
        # (:meth:`.hazards.Checker._base`: the views of a fresh output are placed by their
        # subviews' start indices instead)
        self.base = address(root) if base is None and owned else base
        self.stamp = None
        self.marks: tuple | None = None     # (written, PSUM writers or None), kept
        self.w: Marks | None = None           # uint8 per byte: written since allocation
        self.pw: Marks | None = None          # int32 per byte: last PSUM writer (+-(sid+1))
        self.hist: History | None = None      # [(fp, is_write, inst, role)]
        self.live: list[tuple] = []           # (Footprint.box, Buffer)
        # while ``hist`` is None: the whole-tile summary of the accesses (:mod:`.hazard_tiles`)
        # of box ``key`` (None: no access yet)
        self.key: tuple | None = None
        self.fw: tuple | None = None
        self.fr: list = []
