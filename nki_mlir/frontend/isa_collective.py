"""Frontend handlers of the LNC2 cross-core instructions: core_barrier, sendrecv.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md sections 1.4 and 5.4)::

    nisa.core_barrier(data, cores, engine=nisa.engine.gpsimd, name=None)
    nisa.sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id,
                  dma_engine=nisa.dma_engine.dma, name=None)

(``use_gpsimd_dma=True`` of NKI 0.2 is accepted as ``dma_engine=gpsimd_dma``.)  Both need
an LNC2 launch (``kernel[2](...)`` on trn2/trn3, or a Beta 1 ``kernel[nl.nc(2)]``), checked
here with a located error; ranks and ``pipe_id`` are compile-time ints (``nl.program_id``
is one).  Memory, dtype, shape and target rules are the op verifiers'
(:mod:`nki_mlir.dialects.isa_collective`), reported at the call's line.
"""
from __future__ import annotations

import numpy as np

from ..dialects import isa_collective as C
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .spmd import require_lnc2


def _int(cg, api: str, role: str, v) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise cg.b.error(f"{api}: {role} must be a compile-time int (e.g. computed from "
                         f"nl.program_id()), got {A._show(v)}", NKITypeError)
    return int(v)


@handles("nisa.core_barrier")
def core_barrier(cg, data, cores, engine=None, name=None):
    api = "nisa.core_barrier"
    d = A.tensor(cg, api, "data", data)
    if not isinstance(cores, (tuple, list)) or \
            tuple(_int(cg, api, "cores entries", c) for c in cores) != C.BARRIER_CORES:
        raise cg.b.error(f"{api}: cores={cores!r} is not supported; only cores=(0, 1) (the two "
                         f"NeuronCores of an LNC2 launch)", NKITypeError)
    require_lnc2(cg, api)
    A.emit(cg, C.CoreBarrierOp, {"data": d.value},
           {"cores": list(C.BARRIER_CORES), "engine": A.engine(cg, api, engine)})


@handles("nisa.sendrecv")
def sendrecv(cg, src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=None, name=None,
             use_gpsimd_dma=None):
    api = "nisa.sendrecv"
    s, d = A.tensor(cg, api, "src", src), A.tensor(cg, api, "dst", dst)
    ranks = {r: _int(cg, api, r, v) for r, v in (("send_to_rank", send_to_rank),
                                                    ("recv_from_rank", recv_from_rank))}
    for role, r in ranks.items():
        if r not in C.RANKS:
            raise cg.b.error(f"{api}: {role}={r} is not a rank of an LNC2 launch (0 or 1)", NKITypeError)
    pipe = _int(cg, api, "pipe_id", pipe_id)
    if pipe < 0:
        raise cg.b.error(f"{api}: pipe_id must be a non-negative int, got {pipe}", NKITypeError)
    eng = A.enum_name(cg, api, "dma_engine", dma_engine, "dma_engine")
    if use_gpsimd_dma is not None:
        if dma_engine is not None:
            raise cg.b.error(f"{api}: pass dma_engine= or the NKI 0.2 use_gpsimd_dma=, not both",
                             NKITypeError)
        eng = "gpsimd_dma" if use_gpsimd_dma else "dma"
    require_lnc2(cg, api)
    A.emit(cg, C.SendRecvOp, {"src": s.value, "dst": d.value},
           {**ranks, "pipe_id": pipe, "dma_engine": eng})
