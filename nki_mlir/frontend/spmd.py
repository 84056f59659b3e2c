"""SPMD launch grids and LNC: the launch markers and the ``nl.program_id`` family.

**Launch markers** (used *outside* kernels, in the launch brackets; NKI Beta 1
``nl.nc`` / ``nl.spmd_dim``, NKI language guide (nki/get-started/nki-language-guide)):

- ``nl.nc(n)``: a grid dimension of size ``n`` spread over ``n`` physical NeuronCores
  (instance ``i`` of that dimension runs on core ``i``).
- ``nl.spmd_dim(a, b, ...)``: one grid dimension of size ``a * b * ...`` with sub-dimension
  tiling: the program id along it is ``((i_a * size_b) + i_b) * ...`` (row-major over the
  factors).  At most one factor may be ``nl.nc(n)``; its index is the physical core.
  ``nl.nc(2) * 2`` is ``nl.spmd_dim(nl.nc(2), 2)`` (core = pid // 2) and ``2 * nl.nc(2)`` is
  ``nl.spmd_dim(2, nl.nc(2))`` (core = pid % 2), as in the NKI ``nki.language.spmd_dim`` page.

**Launch information** (:class:`SpmdInfo`): the compiler specialises a kernel once per
program instance; ``build_module(..., spmd=info)`` stores it on the builder as ``cg.b.spmd``
(None for a plain call without brackets).

**Handlers** (NKI language guide (nki/get-started/nki-language-guide); NKI ``nki.language.program_id`` /
``num_programs`` / ``program_ndim`` pages).  They behave as compile-time Python ints, so
they can be used in index arithmetic, slices, masks and ``if`` conditions:

- ``nl.program_id(axis=0)``: this instance's index along ``axis`` (0 without a grid).  The
  launcher traces the first instance with ``SpmdInfo.symbolic``: the id is then a symbolic
  index (like a rolled loop's, over ``range(grid[axis])``: the ``program_id`` op's result,
  read by each instance when it runs) and one trace serves every instance.  A use that
  needs the id as a Python value -- ``if pid == 0:``, ``range(pid)``, ``float(pid)``, a
  dict key -- raises the tracer's ``Retrace`` for :data:`~.context.LAUNCH_KEY` and the
  kernel is traced again with the instance's id as an int, once per instance (so the
  kernel means what its Python says either way).  f-strings of the id stay symbolic for
  instruction names (:mod:`.symbolic_str`).
- ``nl.num_programs(axes=None)``: ``None`` -> the total number of instances; an int -> the
  grid size along that axis; a tuple of axes -> the number of instances of that sub-grid
  (the product of the sizes).  1 without a grid.
- ``nl.program_ndim()``: the number of grid dimensions (0 without a grid; 1 for the Beta 2
  LNC launch ``kernel[2]``).

An axis outside the grid is a located :class:`~nki_mlir.errors.NKITypeError`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import NKIError, NKITypeError
from ..targets import LNC_CORES
from .builtins import handles
from .context import LAUNCH_KEY

#: physical NeuronCores a logical core can span (LNC2 on trn2/trn3)
MAX_CORES = max(LNC_CORES.values())


# ============================================================== launch markers (outside kernels)


class SpmdDim:
    """One launch-grid dimension built from ``nl.nc`` / ``nl.spmd_dim`` markers.

    Attributes:
        size: number of program instances along the dimension.
        cores: physical cores the dimension is spread over (1: none).
        core_stride: program id -> core is ``(pid // core_stride) % cores``.
    """

    __slots__ = ("size", "cores", "core_stride", "_text")

    def __init__(self, size: int, cores: int = 1, core_stride: int = 1, text: str = ""):
        self.size, self.cores, self.core_stride = int(size), int(cores), int(core_stride)
        self._text = text or str(size)

    def core_of(self, pid: int) -> int:
        return (pid // self.core_stride) % self.cores if self.cores > 1 else 0

    def __mul__(self, other: Any) -> SpmdDim:
        return spmd_dim(self, other)

    def __rmul__(self, other: Any) -> SpmdDim:
        return spmd_dim(other, self)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SpmdDim)
                and (self.size, self.cores, self.core_stride) == (other.size, other.cores, other.core_stride))

    def __hash__(self) -> int:
        return hash((self.size, self.cores, self.core_stride))

    def __repr__(self) -> str:
        return self._text


def _factor(v: Any, api: str) -> SpmdDim:
    if isinstance(v, SpmdDim):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and int(v) >= 1:
        return SpmdDim(int(v))
    raise NKIError(f"{api}: grid factors must be positive ints or nl.nc(n) markers, got {v!r}",
                   category="bad launch")


def nc(n: int) -> SpmdDim:
    """``nl.nc(n)``: a launch-grid dimension of ``n`` instances, one per physical NeuronCore.

    Only valid in launch brackets (``kernel[nl.nc(2), 4](...)``).  ``n`` must be a positive
    int; more than 2 cores (or 2 on trn1) is rejected when the kernel is launched.

    Raises:
        NKIError: ``n`` is not a positive int.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)) or int(n) < 1:
        raise NKIError(f"nl.nc(n): n must be a positive int (the number of physical NeuronCores), "
                       f"got {n!r}", category="bad launch")
    return SpmdDim(int(n), int(n), 1, f"nl.nc({int(n)})")


def spmd_dim(*factors: Any) -> SpmdDim:
    """``nl.spmd_dim(a, b, ...)``: one launch-grid dimension of size ``a * b * ...``.

    The program id along it enumerates the factors row-major (the first factor varies
    slowest).  At most one factor may be an ``nl.nc(n)`` marker: its index selects the
    physical core (NKI ``nki.language.spmd_dim`` page).

    Raises:
        NKIError: no factors, a factor that is not a positive int or marker, or two
            core-spreading factors.
    """
    if not factors:
        raise NKIError("nl.spmd_dim(...) needs at least one factor", category="bad launch")
    dims = [_factor(f, "nl.spmd_dim") for f in factors]
    size = math.prod(d.size for d in dims)
    spread = [i for i, d in enumerate(dims) if d.cores > 1]
    if len(spread) > 1:
        raise NKIError("nl.spmd_dim(...): at most one factor can be spread over physical cores "
                       "(nl.nc)", category="bad launch")
    cores, stride = 1, 1
    if spread:
        i = spread[0]
        inner = math.prod(d.size for d in dims[i + 1:])
        cores, stride = dims[i].cores, dims[i].core_stride * inner
    text = "nl.spmd_dim(" + ", ".join(repr(d) for d in dims) + ")"
    return SpmdDim(size, cores, stride, text)


# ================================================================== launch info (compile time)


@dataclass
class SpmdInfo:
    """What one program instance of a launch knows at compile time.

    Attributes:
        grid: grid sizes, one per dimension (``(2,)`` for the Beta 2 ``kernel[2]``).
        ids: this instance's program id along each dimension.
        cores: physical NeuronCores of the launch (2 for LNC2, else 1).
        core: the physical core this instance runs on (its rank for ``nisa.sendrecv``).
        lnc: True for a Beta 2 LNC launch (``kernel[2]``), False for a Beta 1 grid.
        ranks: ranks of a multi-rank launch (``nki.collectives.simulate(kernel, num_ranks=N)``;
            grid ``(1,)``), else 1.
        rank: this program's rank id in such a launch (``nki.collectives.rank_id()``), else 0.
        uses_program_id: set by the frontend when ``nl.program_id`` gave this instance's id
            as a Python int (not part of the cache key): instances of a kernel that never
            does are identical, so the launcher compiles one and runs it for all.
        symbolic: trace the instances once: ``nl.program_id`` gives a symbolic index (the
            ``program_id`` op's result, read by each instance when it runs) while the
            kernel's Python uses it only in index arithmetic; a use that needs a Python
            value (``if pid == 0:``, ``range(pid)``) traces the kernel again with this
            instance's ``ids`` (``uses_program_id``).  The launcher sets it for the first
            instance of a launch of one rank.
        symbolic_ids: set by the frontend when a symbolic id was handed out.
    """

    grid: tuple[int, ...]
    ids: tuple[int, ...]
    cores: int = 1
    core: int = 0
    lnc: bool = False
    uses_program_id: bool = field(default=False, compare=False)
    ranks: int = 1
    rank: int = 0
    symbolic: bool = False
    symbolic_ids: bool = field(default=False, compare=False)

    def key(self) -> tuple:
        """The part of the compile-cache key (everything but the usage records).  A
        symbolic trace's key leaves out the ids and core: it is the launch's."""
        if self.symbolic:
            return self.launch_key() + ("symbolic program ids",)
        base = (self.grid, self.ids, self.cores, self.core, self.lnc)
        return base + (("ranks", self.ranks, self.rank),) if self.ranks > 1 else base

    def launch_key(self) -> tuple:
        """:meth:`key` without this instance's ids, core and rank: equal for every program
        instance of one launch."""
        base = (self.grid, self.cores, self.lnc)
        return base + (("ranks", self.ranks),) if self.ranks > 1 else base

    def manifest(self) -> dict[str, Any]:
        out = {"grid": list(self.grid), "ids": list(self.ids), "cores": self.cores,
               "core": self.core, "lnc": self.lnc, "uses_program_id": self.uses_program_id}
        if self.symbolic:
            out.update(symbolic=True, symbolic_ids=self.symbolic_ids)
            if not self.uses_program_id:    # one program for every instance
                out.update(ids=None, core=None)
        if self.ranks > 1:
            out.update(ranks=self.ranks, rank=self.rank)
        return out

    def describe(self) -> str:
        if self.ranks > 1:
            return f"rank {self.rank} of a {self.ranks}-rank launch"
        return "kernel[" + ", ".join(str(g) for g in self.grid) + "]"


def spmd_of(cg) -> SpmdInfo | None:
    return getattr(cg.b, "spmd", None)


# ================================================================================ handlers


def _axis(cg, api: str, role: str, v: Any, ndim: int, info: SpmdInfo | None) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise cg.b.error(f"{api}: {role} must be a compile-time int, got {v!r}", NKITypeError)
    a = int(v)
    if info is None:
        if a != 0:
            raise cg.b.error(f"{api}: {role}={a} is out of range: the kernel was launched without "
                             f"a grid (program_ndim() is 0), so only axis 0 exists", NKITypeError)
        return a
    if not 0 <= a < ndim:
        raise cg.b.error(f"{api}: {role}={a} is out of range: the launch grid {info.describe()} "
                         f"has {ndim} dimension(s) (axes 0..{ndim - 1})", NKITypeError)
    return a


@handles("nl.program_id")
def program_id(cg, axis=0):
    info = spmd_of(cg)
    ax = _axis(cg, "nl.program_id", "axis", axis, len(info.grid) if info else 0, info)
    if info is None:
        return 0
    if info.symbolic and LAUNCH_KEY not in cg.unroll:
        info.symbolic_ids = True
        return _symbolic_id(cg, ax, info.grid[ax])
    info.uses_program_id = True
    return info.ids[ax]


def _symbolic_id(cg, axis: int, size: int):
    """The ``program_id`` op's result for ``axis`` as a loop index over ``range(size)``,
    emitted once per trace at the start of the kernel's entry block (it dominates every use)."""
    from xdsl.dialects.builtin import IndexType

    from ..dialects.ods_ops import op_class
    from . import args as A
    from .proxies import LoopIndex
    from .values import Index
    b = cg.b
    ids = b.program_ids
    v = ids.get(axis)
    if v is None:
        with b.at(b.entry):
            op = A.emit(cg, op_class("nki.program_id"), {}, {"axis": axis}, [IndexType()])
        op.detach()
        first = b.entry.first_op
        if first is None:
            b.entry.add_op(op)
        else:
            b.entry.insert_op_before(op, first)
        v = ids[axis] = op.results[0]
        v.name_hint = f"program_id{axis}" if axis else "program_id"
        b.loop_ranges[v] = (0, size, 1)
    return LoopIndex(Index.of(v), frozenset((LAUNCH_KEY,)))


@handles("nl.num_programs")
def num_programs(cg, axes=None):
    info = spmd_of(cg)
    grid = info.grid if info is not None else ()
    if axes is None:
        return math.prod(grid)
    if isinstance(axes, (tuple, list)):
        seen = [_axis(cg, "nl.num_programs", "axes", a, len(grid), info) for a in axes]
        if len(set(seen)) != len(seen):
            raise cg.b.error(f"nl.num_programs: axes {tuple(axes)} repeat an axis", NKITypeError)
        return math.prod(grid[a] for a in seen) if info is not None else 1
    a = _axis(cg, "nl.num_programs", "axes", axes, len(grid), info)
    return grid[a] if info is not None else 1


@handles("nl.program_ndim")
def program_ndim(cg):
    info = spmd_of(cg)
    return len(info.grid) if info is not None else 0


def require_lnc2(cg, api: str) -> SpmdInfo:
    """The launch info of an LNC2 launch, else a located error (cross-core instructions)."""
    info = spmd_of(cg)
    if info is None or info.cores != MAX_CORES:
        how = "without brackets (LNC1)" if info is None else f"as {info.describe()} on one core"
        raise cg.b.error(f"{api} works between the 2 NeuronCores of an LNC2 launch, but "
                         f"the kernel was launched {how}; launch it as kernel[2](...) on trn2/trn3"
                         f" (Beta 1: kernel[nl.nc(2)](...))", NKITypeError)
    return info


def rank_world(cg, api: str) -> tuple[int, int]:
    """``(rank id, number of ranks)`` of this program for ``nki.collectives``: a multi-rank
    launch's, or ``(0, 1)`` for a plain call.  An LNC / SPMD grid launch is a located error."""
    info = spmd_of(cg)
    if info is None:
        return 0, 1
    if info.ranks > 1 or (info.grid == (1,) and info.cores == 1):
        return info.rank, info.ranks
    raise cg.b.error(f"{api} is not supported in an SPMD / LNC grid launch ({info.describe()}); "
                     f"launch the kernel with nki.collectives.simulate(kernel, num_ranks=N)",
                     NKITypeError)


__all__ = ["SpmdDim", "SpmdInfo", "nc", "spmd_dim", "require_lnc2", "rank_world", "MAX_CORES"]
