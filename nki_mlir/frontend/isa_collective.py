"""Frontend handlers of ``nki.collectives`` (:mod:`nki_mlir.collectives`; each (src, dst)
pair -> one ``nki.collective`` op; ``rank_id`` and the ring's current rank are compile-time
ints).  Memory, dtype and shape rules are the op verifier's
(:mod:`nki_mlir.dialects.isa_collective`), reported at the call's line.  The LNC2
cross-core instructions ``core_barrier`` / ``sendrecv`` are
``nki_mlir/instructions/cross_core.py``.
"""
from __future__ import annotations

import numpy as np

from ..dialects import isa_collective as C
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from ..dialects.common import space_of
from .spmd import rank_world


def _int(cg, api: str, role: str, v) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise cg.b.error(f"{api}: {role} must be a compile-time int (e.g. computed from "
                         f"nl.program_id()), got {A._show(v)}", NKITypeError)
    return int(v)


# ============================================================== nki.collectives (multi-rank)


class ReplicaGroup:
    """``nki.collectives.ReplicaGroup(groups)``: the ranks that take part in a collective.

    ``groups`` is a list of sub-groups, each a list of global rank ids (ints >= 0), e.g.
    ``ReplicaGroup([[0, 1, 2, 3]])`` (one group of four ranks) or ``ReplicaGroup([[0, 1],
    [2, 3]])`` (two independent pairs); a flat list of ints is one sub-group.  Sub-groups
    must not overlap and, for a collective, must have the same size and together name
    ranks of the launch only.  A collective runs independently inside each sub-group; the
    order of a sub-group is the order of the ranks' data (all_gather concatenation order,
    ring order of the implicit permutes).

    Raises:
        NKIError: an empty group, a non-int or negative rank, or overlapping sub-groups
            (located at the construction).

    Doc: NKI ``nki.collectives.ReplicaGroup`` page (aws-neuron-sdk nki/api/nki.collectives.rst).
    """

    def __init__(self, groups):
        from ..diagnostics import caller_loc
        rows = list(groups) if isinstance(groups, (list, tuple)) else None
        if rows and all(_is_int(r) for r in rows):
            rows = [rows]
        bad = (not rows or any(not isinstance(g, (list, tuple)) or not g for g in rows)
               or any(not _is_int(r) or int(r) < 0 for g in rows for r in g))
        if bad:
            raise NKITypeError(f"ReplicaGroup({groups!r}): expected a non-empty list of non-empty "
                               f"lists of rank ids (ints >= 0), e.g. ReplicaGroup([[0, 1, 2, 3]])",
                               caller_loc())
        self.groups = tuple(tuple(int(r) for r in g) for g in rows)
        flat = [r for g in self.groups for r in g]
        if len(set(flat)) != len(flat):
            raise NKITypeError(f"ReplicaGroup({groups!r}): sub-groups overlap (each rank may appear "
                               f"once)", caller_loc())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReplicaGroup) and other.groups == self.groups

    def __hash__(self) -> int:
        return hash(self.groups)

    def __repr__(self) -> str:
        return f"ReplicaGroup({[list(g) for g in self.groups]})"


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _group(cg, api: str, rg, rank: int, world: int) -> list[list[int]]:
    """The sub-groups of ``rg`` (a ReplicaGroup or a list of lists), checked against the launch."""
    if not isinstance(rg, ReplicaGroup):
        if not isinstance(rg, (list, tuple)):
            raise cg.b.error(f"{api}: replica_group must be a nki.collectives.ReplicaGroup, got "
                             f"{A._show(rg)}", NKITypeError)
        rg = ReplicaGroup(rg)
    groups = [list(g) for g in rg.groups]
    if len({len(g) for g in groups}) != 1:
        raise cg.b.error(f"{api}: the sub-groups of {rg!r} must all have the same number of ranks",
                         NKITypeError)
    outside = [r for g in groups for r in g if r >= world]
    if outside:
        raise cg.b.error(f"{api}: {rg!r} names rank {outside[0]}, but the launch has {world} "
                         f"rank(s) (0..{world - 1})", NKITypeError)
    if not any(rank in g for g in groups):
        raise cg.b.error(f"{api}: rank {rank} is not in {rg!r}; every rank of the launch runs "
                         f"the collective, so every rank must be in one sub-group", NKITypeError)
    return groups


def _tensors(cg, api: str, role: str, v) -> list:
    if not isinstance(v, (list, tuple)) or not v:
        raise cg.b.error(f"{api}: {role} must be a non-empty list of tensors, got {A._show(v)}",
                         NKITypeError)
    return [A.tensor(cg, api, f"{role}[{i}]", t) for i, t in enumerate(v)]


def _priority(cg, api: str, priority):
    if priority is None:
        return None
    p = _int(cg, api, "priority", priority)
    if not 0 <= p <= 3:
        raise cg.b.error(f"{api}: priority must be 0..3 (lower is higher priority), got {p}",
                         NKITypeError)
    return p


def _pairs(cg, api: str, srcs, dsts, single: bool = False) -> list:
    s, d = _tensors(cg, api, "srcs", srcs), _tensors(cg, api, "dsts", dsts)
    if len(s) != len(d):
        raise cg.b.error(f"{api}: srcs has {len(s)} tensor(s) but dsts has {len(d)}; they pair up "
                         f"one to one", NKITypeError)
    if single and len(s) != 1:
        raise cg.b.error(f"{api}: coalesced collectives are not supported here: srcs and dsts must "
                         f"each hold exactly one tensor, got {len(s)}", NKITypeError)
    if len(s) > 1 and any(space_of(t.value) == "sbuf" for t in s + d):
        raise cg.b.error(f"{api}: coalesced collectives (several tensors) need HBM tensors; SBUF "
                         f"tensors go one per call", NKITypeError)
    return list(zip(s, d))


def _emit(cg, kind: str, src, dst, groups, **props):
    ops = {"src": src.value, "dst": dst.value}
    for k in ("src1", "metadata"):
        if props.get(k) is not None:
            ops[k] = props.pop(k).value
        props.pop(k, None)
    A.emit(cg, C.CollectiveOp, ops, {"kind": kind, "groups": groups, **props})


def _simple(cg, name: str, kind: str, srcs, dsts, replica_group, op=None, collective_dim=None,
            priority=None):
    api = f"nki.collectives.{name}"
    rank, world = rank_world(cg, api)
    groups = _group(cg, api, replica_group, rank, world)
    tok = A.op_token(cg, api, "op", op, C.REDUCE_OPS) if kind in C.REDUCING else None
    dim = _int(cg, api, "collective_dim", collective_dim) if collective_dim is not None else None
    for s, d in _pairs(cg, api, srcs, dsts, single=kind == "permute"):
        _emit(cg, kind, s, d, groups, op=tok, collective_dim=dim, priority=_priority(cg, api, priority))


@handles("nki.collectives.all_reduce")
def all_reduce(cg, srcs, dsts, replica_group, op, priority=None, name=None):
    _simple(cg, "all_reduce", "all_reduce", srcs, dsts, replica_group, op=op, priority=priority)


@handles("nki.collectives.all_gather")
def all_gather(cg, srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    _simple(cg, "all_gather", "all_gather", srcs, dsts, replica_group,
            collective_dim=collective_dim, priority=priority)


@handles("nki.collectives.reduce_scatter")
def reduce_scatter(cg, srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    _simple(cg, "reduce_scatter", "reduce_scatter", srcs, dsts, replica_group, op=op,
            collective_dim=collective_dim, priority=priority)


@handles("nki.collectives.all_to_all")
def all_to_all(cg, srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    _simple(cg, "all_to_all", "all_to_all", srcs, dsts, replica_group,
            collective_dim=collective_dim, priority=priority)


def _variable(cg, name, srcs, dsts, replica_group, metadata_tensor, recv_counts_known,
              has_rdispls, priority):
    api = f"nki.collectives.{name}"
    rank, world = rank_world(cg, api)
    groups = _group(cg, api, replica_group, rank, world)
    ((s, d),) = _pairs(cg, api, srcs, dsts, single=True)
    m = A.tensor(cg, api, "metadata_tensor", metadata_tensor)
    for role, flag in (("recv_counts_known", recv_counts_known), ("has_rdispls", has_rdispls)):
        if not isinstance(flag, (bool, np.bool_)):
            raise cg.b.error(f"{api}: {role} must be a compile-time bool, got {A._show(flag)}",
                             NKITypeError)
    rows = m.value.type.get_shape()[-2] if len(m.value.type.get_shape()) >= 2 else 0
    if has_rdispls and rows != 4:
        raise cg.b.error(f"{api}: has_rdispls=True needs a 4-row metadata_tensor (row 3: "
                         f"recv_displs), got {m.describe()}", NKITypeError)
    _emit(cg, name, s, d, groups, metadata=m, has_rdispls=bool(has_rdispls) or None,
          priority=_priority(cg, api, priority))
    if not recv_counts_known:  # row 2 is an output: a second exchange writes it (in place)
        _emit(cg, f"{name}_counts", m, m, groups, metadata=m)


@handles("nki.collectives.all_gather_v")
def all_gather_v(cg, srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    _variable(cg, "all_gather_v", srcs, dsts, replica_group, metadata_tensor, recv_counts_known,
              has_rdispls, priority)


@handles("nki.collectives.all_to_all_v")
def all_to_all_v(cg, srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    _variable(cg, "all_to_all_v", srcs, dsts, replica_group, metadata_tensor, recv_counts_known,
              has_rdispls, priority)


@handles("nki.collectives.collective_permute")
def collective_permute(cg, srcs, dsts, source_target_pairs, priority=None, name=None):
    api = "nki.collectives.collective_permute"
    rank, world = rank_world(cg, api)
    ok = isinstance(source_target_pairs, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and all(_is_int(r) and int(r) >= 0 for r in p)
        for p in source_target_pairs)
    if not ok:
        raise cg.b.error(f"{api}: source_target_pairs must be a list of (source, target) rank ids, "
                         f"got {A._show(source_target_pairs)}", NKITypeError)
    pairs = [(int(a), int(b)) for a, b in source_target_pairs]
    for role, i in (("source", 0), ("target", 1)):
        seen = [p[i] for p in pairs]
        if len(set(seen)) != len(seen):
            raise cg.b.error(f"{api}: source_target_pairs {pairs} repeat a {role} rank (each rank "
                             f"sends at most once and receives at most once)", NKITypeError)
        if any(r >= world for r in seen):
            raise cg.b.error(f"{api}: source_target_pairs {pairs} name rank {max(seen)}, but the "
                             f"launch has {world} rank(s)", NKITypeError)
    ((s, d),) = _pairs(cg, api, srcs, dsts, single=True)
    _emit(cg, "permute", s, d, [list(range(world))], pairs=[list(p) for p in pairs],
          priority=_priority(cg, api, priority))


def _channels(cg, api: str, channel_ids, *lists):
    if not isinstance(channel_ids, (list, tuple)) or list(channel_ids) != list(range(len(channel_ids))) \
            or not 1 <= len(channel_ids) <= 4:
        raise cg.b.error(f"{api}: channel_ids must be consecutive ints from 0 (at most 4 "
                         f"channels), got {A._show(channel_ids)}", NKITypeError)
    out = []
    for role, v in lists:
        if not isinstance(v, (list, tuple)) or len(v) != len(channel_ids):
            raise cg.b.error(f"{api}: {role} must hold one list per channel ({len(channel_ids)}), "
                             f"got {A._show(v)}", NKITypeError)
        out.append([_tensors(cg, api, f"{role}[{c}]", inner) for c, inner in enumerate(v)])
    for role, per in zip((r for r, _ in lists), out):
        if any(len(x) != 1 for x in per):
            raise cg.b.error(f"{api}: each inner list of {role} must hold exactly one tensor "
                             f"(coalesced collectives are not supported)", NKITypeError)
    return [[x[0] for x in per] for per in out]


@handles("nki.collectives.collective_permute_implicit")
def collective_permute_implicit(cg, srcs_by_channel, dsts_by_channel, replica_group,
                                channel_ids=[0], priority=None, name=None):  # noqa: B006 (NKI's default)
    api = "nki.collectives.collective_permute_implicit"
    rank, world = rank_world(cg, api)
    groups = _group(cg, api, replica_group, rank, world)
    srcs, dsts = _channels(cg, api, channel_ids, ("srcs_by_channel", srcs_by_channel),
                           ("dsts_by_channel", dsts_by_channel))
    for c, (s, d) in enumerate(zip(srcs, dsts)):
        _emit(cg, "permute_implicit", s, d, groups, channel=c, priority=_priority(cg, api, priority))


@handles("nki.collectives.collective_permute_implicit_reduce")
def collective_permute_implicit_reduce(cg, srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                       replica_group, op, channel_ids=[0], priority=None,  # noqa: B006
                                       name=None):
    api = "nki.collectives.collective_permute_implicit_reduce"
    rank, world = rank_world(cg, api)
    groups = _group(cg, api, replica_group, rank, world)
    tok = A.op_token(cg, api, "op", op, C.REDUCE_OPS)
    s0, s1, ds = _channels(cg, api, channel_ids, ("srcs0_by_channel", srcs0_by_channel),
                           ("srcs1_by_channel", srcs1_by_channel), ("dsts_by_channel", dsts_by_channel))
    for c, (a, b, d) in enumerate(zip(s0, s1, ds)):
        _emit(cg, "permute_implicit_reduce", a, d, groups, src1=b, op=tok, channel=c,
              priority=_priority(cg, api, priority))


@handles("nki.collectives.collective_permute_implicit_current_processing_rank_id")
def collective_permute_implicit_current_processing_rank_id(cg, iteration_id, replica_group,
                                                           channel_id=0, name=None):
    api = "nki.collectives.collective_permute_implicit_current_processing_rank_id"
    rank, world = rank_world(cg, api)
    groups = _group(cg, api, replica_group, rank, world)
    if not _is_int(iteration_id):
        raise cg.b.error(f"{api}: iteration_id must be a compile-time int (e.g. the index of an "
                         f"nl.static_range loop), got {A._show(iteration_id)}", NKITypeError)
    c = _int(cg, api, "channel_id", channel_id)
    if not 0 <= c < 4:
        raise cg.b.error(f"{api}: channel_id must be 0..3, got {c}", NKITypeError)
    g = next(g for g in groups if rank in g)
    return g[(g.index(rank) - int(iteration_id)) % len(g)]


@handles("nki.collectives.rank_id")
def rank_id(cg, name=None):
    return rank_world(cg, "nki.collectives.rank_id")[0]
