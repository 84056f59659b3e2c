"""Closure builder of ``nisa.collective`` (``nki.collectives`` between the ranks of a
multi-rank launch), and :func:`lnc2_instance`, the LNC2 launch the cross-core instructions
(``nki_mlir/instructions/cross_core.py``: core_barrier, sendrecv) run in.

- ``nisa.collective``: the rank posts a copy of its payload through the launch's
  :class:`~.spmd.Comm` (k-th collective of every rank matched together), waits for the
  ranks it needs and computes ``dst`` with NumPy (see :mod:`nki_mlir.collectives`).  A plain
  run is a one-rank world (rank 0).  Ranks whose tensors disagree are a located error.

A wait that cannot complete is an error at this instruction (:mod:`.spmd`).  Semantics:
NKI ``nki.collectives`` pages (aws-neuron-sdk nki/api/nki.collectives.rst).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..dialects import isa_collective as C
from .env import STATE, Fault, finish

if TYPE_CHECKING:
    from .decoder import Decoder


def lnc2_instance(env, api: str):
    """The running program instance of an LNC2 launch, else a :class:`~.env.Fault` (a
    cross-core instruction in a single-core run)."""
    inst = env[STATE].launch
    if inst is None or inst.launch.cores < 2:
        raise Fault(f"{api} needs the two cores of an LNC2 launch (kernel[2](...) on trn2/trn3), "
                    f"but this run has a single core")
    return inst


# ------------------------------------------------------------------ nki.collectives

_UFUNC = {"add": np.add, "minimum": np.minimum, "maximum": np.maximum}


def _reduce(tok: str, arrays: list, dt) -> np.ndarray:
    """``op`` over the ranks' arrays in group order (fp32 for floats, int64 for ints)."""
    acc = np.int64 if np.issubdtype(dt, np.integer) else np.float32
    return _UFUNC[tok].reduce(np.stack([np.asarray(a).astype(acc) for a in arrays]), axis=0).astype(dt)


def _lists(a) -> list[list[int]]:
    return [[int(x.value.data) for x in row.data] for row in a.data]


def _my_group(groups: list[list[int]], rank: int, world: int) -> list[int]:
    for g in groups:
        if rank in g:
            if max(g) >= world:
                raise Fault(f"the replica group {groups} names rank {max(g)}, but the launch has "
                            f"{world} rank(s)")
            return g
    raise Fault(f"rank {rank} is not in the replica group {groups}")


def _v_rows(meta: np.ndarray) -> np.ndarray:
    """The (rows, group size) view of a ``*_v`` metadata tensor (HBM 2D or SBUF (1, rows, n))."""
    return meta.reshape(meta.shape[-2], meta.shape[-1])


def _place(kind: str, dst: np.ndarray, chunks: list[np.ndarray], rows: np.ndarray,
           rdispls: bool) -> None:
    """Write the chunk of each group position i at ``recv_displs[i]`` (row 3) or ``i * slot``."""
    flat = dst.reshape(-1)
    n = len(chunks)
    slot = flat.size // n
    for i, c in enumerate(chunks):
        at = int(rows[3, i]) if rdispls else i * slot
        room = flat.size - at if rdispls else slot
        if c.size > room:
            raise Fault(f"{kind}: the {c.size} elements from group position {i} do not fit in 'dst' "
                        f"({room} elements from offset {at})")
        flat[at:at + c.size] = c


def collective(dec: Decoder, op: C.NisaCollectiveOp):
    kind = op.kind.data
    src, dst = dec.buf(op, op.src, "src"), dec.buf(op, op.dst, "dst")
    src1 = dec.buf(op, op.src1, "src1") if op.src1 is not None else None
    meta = dec.buf(op, op.metadata, "metadata") if op.metadata is not None else None
    groups = _lists(op.groups)
    pairs = _lists(op.pairs) if op.pairs is not None else []
    tok = op.op.data if op.op is not None else "add"
    dim = int(op.collective_dim.value.data) if op.collective_dim is not None else 0
    rdispls = op.has_rdispls is not None and bool(op.has_rdispls.value.data)
    s, d, dt = src.slot, dst.slot, dst.dtype
    s1 = src1.slot if src1 is not None else None
    m = meta.slot if meta is not None else None
    api = f"nki.collectives.{C.API[kind]}"
    tag = f"{api} ({kind})"

    def run(env):
        inst = env[STATE].launch
        comm = inst.launch.comm if inst is not None else None
        rank = inst.launch.rank_id if comm is not None else 0
        world = comm.ranks if comm is not None else 1

        def xch(payload, peers):
            if comm is None:
                return {rank: payload}
            return comm.exchange(rank, tag, payload, sorted(set(peers)))

        def same_shapes(parts):
            for p, a in parts.items():
                if a.shape != env[s].shape or a.dtype != env[s].dtype:
                    raise Fault(f"{api}: 'src' of rank {p} is {list(a.shape)} {a.dtype} but 'src' of "
                                f"rank {rank} is {list(env[s].shape)} {env[s].dtype}")

        if kind == "permute":
            for r in {r for pr in pairs for r in pr}:
                if r >= world:
                    raise Fault(f"{api}: source_target_pairs name rank {r}, but the launch has "
                                f"{world} rank(s)")
            frm = [a for a, b in pairs if b == rank]
            parts = xch(np.array(env[s], copy=True), [rank] + frm)
            same_shapes(parts)
            if frm:
                env[d][...] = parts[frm[0]]
            return
        group = _my_group(groups, rank, world)
        n, pos = len(group), group.index(rank)
        if kind in ("permute_implicit", "permute_implicit_reduce"):
            mine = env[s] if s1 is None else _reduce(tok, [env[s], env[s1]], dt)
            pred = group[(pos - 1) % n]
            parts = xch(np.array(mine, copy=True), [rank, pred])
            same_shapes(parts)
            env[d][...] = parts[pred]
            return
        if kind in ("all_gather_v", "all_to_all_v"):
            rows = _v_rows(env[m])
            flat = env[s].reshape(-1)
            if kind == "all_gather_v":
                cnt, at = int(rows[0, 0]), int(rows[1, 0])
                post = [flat[at:at + cnt].copy()] * n
            else:
                post = [flat[int(rows[1, j]):int(rows[1, j]) + int(rows[0, j])].copy() for j in range(n)]
            if any(int(rows[1, j]) + int(rows[0, j]) > flat.size for j in range(1 if kind == "all_gather_v" else n)):
                raise Fault(f"{api}: send counts/displacements of rank {rank} run past 'src' "
                            f"({flat.size} elements)")
            parts = xch(post, group)
            _place(api, env[d], [parts[g][pos] for g in group], rows, rdispls)
            return
        if kind in ("all_gather_v_counts", "all_to_all_v_counts"):
            rows = _v_rows(env[m])
            parts = xch(np.array(rows[0], copy=True), group)
            rows[2, :] = [parts[g][0] if kind == "all_gather_v_counts" else parts[g][pos] for g in group]
            return
        parts = xch(np.array(env[s], copy=True), group)
        same_shapes(parts)
        data = [parts[g] for g in group]
        if kind == "all_reduce":
            env[d][...] = _reduce(tok, data, dt)
        elif kind == "reduce_scatter":
            env[d][...] = np.split(_reduce(tok, data, dt), n, axis=dim)[pos]
        elif kind == "all_gather":
            env[d][...] = np.concatenate(data, axis=dim)
        else:  # all_to_all
            env[d][...] = np.concatenate([np.split(a, n, axis=dim)[pos] for a in data], axis=dim)
    return finish(op, run, dst)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {"nisa.collective": collective}
