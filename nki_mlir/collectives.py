"""``nki.collectives`` (``ncc``): collective communication between the ranks of a launch.

Names and parameters follow the NKI ``nki.collectives`` API page (aws-neuron-sdk
``nki/api/nki.collectives.rst``).  The functions are markers compiled by the frontend
(:mod:`nki_mlir.frontend.isa_collective`); calling them outside an ``@nki.jit`` kernel
raises an :class:`~nki_mlir.errors.NKIError`.  Each (src, dst) pair becomes one
``nki.collective`` op (``kind`` says which collective), lowered to ``nisa.collective`` on the
DMA queue and executed by the interpreter (:mod:`nki_mlir.runtime.isa_collective`).

**Multi-rank launch** (the NKI simulator has no collectives; this is nki-mlir's spelling)::

    import nki_mlir as nki
    import nki_mlir.collectives as ncc

    out = ncc.simulate(kernel, num_ranks=4)(x)     # x.shape == (4, *per-rank shape)

Every array argument carries a leading rank axis (rank ``r`` gets ``x[r]``); a list of
``num_ranks`` arrays is also per rank; other arguments (ints, dtypes, ...) go to every rank
unchanged.  The ranks run concurrently (one thread each), each with its own HBM, and the
result stacks the ranks' outputs on a new leading axis.  A plain call (``kernel(x)``) is a
one-rank world: ``rank_id()`` is 0 and a group must be ``[[0]]``.

Semantics, for a rank at position ``p`` of its sub-group ``g`` of ``n`` ranks (NumPy):

- ``all_reduce``: ``dst = op(src of g[0], ..., src of g[n-1])`` (floats in fp32).
- ``all_gather``: ``dst = concatenate([src of g[i] for i], axis=collective_dim)``.
- ``reduce_scatter``: ``dst = split(all_reduce result, n, axis=collective_dim)[p]``.
- ``all_to_all``: ``dst = concatenate([split(src of g[i], n, axis)[p] for i], axis)``.
- ``collective_permute``: each target gets its source's ``src``; ranks that are no target
  keep ``dst`` unchanged.
- ``collective_permute_implicit[_reduce]``: ``dst`` = the ring predecessor ``g[p-1]``'s
  ``src`` (``op(src0, src1)`` for ``_reduce``).

Errors: wrong arguments, groups naming ranks outside the launch, a rank outside every
sub-group, and shape/dtype/memory mismatches are NKIErrors located at the call's line;
ranks whose tensors disagree at run time, or that execute different collectives, are
located runtime errors.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .errors import NKIError
from .frontend.builtins import Builtin as _B
from .frontend.isa_collective import ReplicaGroup

_PAGE = " Doc: NKI ``nki.collectives.{0}`` page (aws-neuron-sdk nki/api/nki.collectives.rst)."

all_reduce = _B("nki.collectives.all_reduce", doc=(
    "``all_reduce(srcs, dsts, replica_group, op, priority=None, name=None)``: every rank of a "
    "sub-group gets ``op`` (``nl.add`` / ``nl.minimum`` / ``nl.maximum``) over the sub-group's "
    "``srcs[i]`` in ``dsts[i]``.  ``src`` and ``dst`` have the same shape and dtype, all on HBM "
    "or all on SBUF (several pairs: HBM only).  Floats are reduced in fp32.  ``priority`` 0..3."
    " Raises NKIError (located) for mismatched shapes/dtypes, bad groups or ops."
    + _PAGE.format("all_reduce")))
all_gather = _B("nki.collectives.all_gather", doc=(
    "``all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None)``: "
    "``dst`` is the sub-group's ``src`` tensors concatenated along ``collective_dim`` in group "
    "order, so ``dst.shape[dim] == n * src.shape[dim]``.  HBM: dim 0; SBUF (2D): dim 0 or 1."
    " Raises NKIError (located) for shapes that do not fit." + _PAGE.format("all_gather")))
all_gather_v = _B("nki.collectives.all_gather_v", doc=(
    "``all_gather_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, "
    "has_rdispls=False, priority=None, name=None)``: flat variable-length all-gather.  The "
    "uint32 ``metadata_tensor`` is ``(rows, n)`` (HBM) or ``(1, rows, n)`` (SBUF): row 0 col 0 "
    "send_count, row 1 col 0 send_displ (elements), row 2 recv_counts (written unless "
    "recv_counts_known), row 3 recv_displs (read when has_rdispls).  Chunk of group position "
    "i lands at ``i * dst.size // n`` (or recv_displs[i]).  One HBM tensor per list."
    + _PAGE.format("all_gather_v")))
reduce_scatter = _B("nki.collectives.reduce_scatter", doc=(
    "``reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None)``: "
    "the ``op`` reduction of the sub-group's ``src``, split in ``n`` along ``collective_dim`` "
    "(0 only); group position ``p`` gets piece ``p``: ``src.shape[0] == n * dst.shape[0]``."
    + _PAGE.format("reduce_scatter")))
all_to_all = _B("nki.collectives.all_to_all", doc=(
    "``all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None)``: "
    "``src`` is split in ``n`` along ``collective_dim`` (0 only); piece ``j`` goes to group "
    "position ``j``, and ``dst`` concatenates the received pieces in group order.  Same shape "
    "for src and dst, dim divisible by ``n``, HBM only." + _PAGE.format("all_to_all")))
all_to_all_v = _B("nki.collectives.all_to_all_v", doc=(
    "``all_to_all_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, "
    "has_rdispls=False, priority=None, name=None)``: flat variable-length all-to-all.  "
    "Metadata (uint32, ``(rows, n)``): row 0 send_counts[j] and row 1 send_displs[j] "
    "(elements) per destination position j; row 2 recv_counts (written unless "
    "recv_counts_known); row 3 recv_displs (when has_rdispls).  One HBM tensor per list."
    + _PAGE.format("all_to_all_v")))
collective_permute = _B("nki.collectives.collective_permute", doc=(
    "``collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None)``: for "
    "each ``(source, target)`` pair the target's ``dst`` gets the source's ``src`` (same "
    "shape and dtype; HBM; one tensor per list).  A rank sends and receives at most once."
    + _PAGE.format("collective_permute")))
collective_permute_implicit = _B("nki.collectives.collective_permute_implicit", doc=(
    "``collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, "
    "channel_ids=[0], priority=None, name=None)``: ring shift inside each sub-group: every "
    "rank's ``dst`` gets its predecessor's ``src``, per channel (channel_ids 0..k-1, k <= 4, "
    "one tensor per channel)." + _PAGE.format("collective_permute_implicit")))
collective_permute_implicit_reduce = _B("nki.collectives.collective_permute_implicit_reduce", doc=(
    "``collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel, "
    "replica_group, op, channel_ids=[0], priority=None, name=None)``: each rank sends "
    "``op(src0, src1)`` to its ring successor; ``dst`` gets the predecessor's."
    + _PAGE.format("collective_permute_implicit_reduce")))
collective_permute_implicit_current_processing_rank_id = _B(
    "nki.collectives.collective_permute_implicit_current_processing_rank_id", doc=(
        "``collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group, "
        "channel_id=0, name=None)``: the rank whose data a ring algorithm holds at step "
        "``iteration_id`` (a compile-time int): ``g[(p - iteration_id) % n]`` (this rank at "
        "step 0).  Returned as a compile-time int." + _PAGE.format(
            "collective_permute_implicit_current_processing_rank_id")))
rank_id = _B("nki.collectives.rank_id", doc=(
    "``rank_id(name=None)``: this rank's id in the launch (0..num_ranks-1), a compile-time "
    "int usable in index arithmetic." + _PAGE.format("rank_id")))


class RankLaunch:
    """``simulate(kernel, num_ranks=N)``: callable on per-rank arguments (see the module doc).

    Attributes:
        kernel: the :class:`~nki_mlir.kernel.Kernel`.
        num_ranks: number of ranks.
        timeout: seconds a rank may wait at a collective (default: the launch timeout).
    """

    def __init__(self, kernel, num_ranks: int, timeout: float | None = None):
        self.kernel, self.num_ranks, self.timeout = kernel, num_ranks, timeout

    def rank_args(self, args: tuple, kwargs: dict) -> list[tuple[tuple, dict]]:
        """Rank ``r``'s ``(args, kwargs)``: per-rank arrays split, other values shared."""
        from .driver.jit import _launch_error
        n = self.num_ranks

        def pick(where: str, v: Any, r: int):
            if isinstance(v, np.ndarray):
                if v.ndim == 0 or v.shape[0] != n:
                    raise _launch_error(f"nki.collectives.simulate(num_ranks={n}): array argument "
                                        f"{where} has shape {list(v.shape)}; its leading axis "
                                        f"must be the rank axis, of size {n}")
                return np.ascontiguousarray(v[r])
            if isinstance(v, list) and v and all(isinstance(x, np.ndarray) for x in v):
                if len(v) != n:
                    raise _launch_error(f"nki.collectives.simulate(num_ranks={n}): argument "
                                        f"{where} is a list of {len(v)} arrays, not one per rank")
                return v[r]
            return v
        return [(tuple(pick(f"#{i}", a, r) for i, a in enumerate(args)),
                 {k: pick(repr(k), v, r) for k, v in kwargs.items()}) for r in range(n)]

    def compile(self, *args: Any, **kwargs: Any) -> list:
        """The :class:`~nki_mlir.compiler.CompiledKernel` of every rank, in rank order."""
        from .frontend.spmd import SpmdInfo
        out = []
        for r, (a, k) in enumerate(self.rank_args(args, kwargs)):
            info = SpmdInfo((1,), (0,), 1, 0, False, ranks=self.num_ranks, rank=r)
            out.append(self.kernel.compile_with(a, k, spmd=info))
        return out

    def __call__(self, *args: Any, **kwargs: Any):
        from .runtime.spmd import run_ranks
        per_rank = self.rank_args(args, kwargs)
        compiled = self.compile(*args, **kwargs)
        try:
            for ck in compiled:
                ck.program  # decode here, not in the rank threads  # noqa: B018
            results = run_ranks([functools.partial(_run, ck, a, k)
                                 for ck, (a, k) in zip(compiled, per_rank)], self.timeout)
        except NKIError as exc:
            raise exc.with_traceback(None) from None
        spec = compiled[0].spec
        if not results[0]:
            return None
        outs = tuple(np.stack([res[i] for res in results]) for i in range(len(results[0])))
        return outs if spec.returns_tuple else outs[0]

    def __repr__(self) -> str:
        return f"<nki.collectives.simulate({self.kernel!r}, num_ranks={self.num_ranks})>"


def _run(ck, args, kwargs, instance):
    return ck.run(args, kwargs, launch=instance)


def simulate(kernel, num_ranks: int, timeout: float | None = None) -> RankLaunch:
    """Run ``kernel`` as ``num_ranks`` ranks on the ISA interpreter (nki.collectives launch).

    ``simulate(kernel, num_ranks=N)(*args, **kwargs)``: every NumPy array argument has a
    leading rank axis of size N (rank ``r`` gets ``a[r]``), or is a list of N arrays; other
    arguments are given to every rank.  Returns the kernel's outputs with a leading rank
    axis (a tuple if the kernel returns one; None if it returns nothing).  ``timeout`` is
    the seconds a rank may wait for the others at a collective.

    Raises:
        NKIError: ``num_ranks`` not a positive int, a kernel launched on a grid, arguments
            without a rank axis (located at the caller); kernel errors (located in it).
    """
    from .driver.entry import unwrap
    from .driver.jit import Kernel, LaunchedKernel, _launch_error
    if isinstance(num_ranks, bool) or not isinstance(num_ranks, (int, np.integer)) or num_ranks < 1:
        raise _launch_error(f"nki.collectives.simulate: num_ranks must be a positive int, got "
                            f"{num_ranks!r}")
    k = unwrap(kernel)
    if isinstance(k, LaunchedKernel):
        raise _launch_error(f"nki.collectives.simulate: {k!r} is launched on an LNC / SPMD grid; "
                            f"pass the kernel without brackets")
    return RankLaunch(k if isinstance(k, Kernel) else Kernel(k), int(num_ranks), timeout)


__all__ = ["ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter",
           "all_to_all", "all_to_all_v", "collective_permute", "collective_permute_implicit",
           "collective_permute_implicit_reduce",
           "collective_permute_implicit_current_processing_rank_id", "rank_id", "simulate",
           "RankLaunch"]
