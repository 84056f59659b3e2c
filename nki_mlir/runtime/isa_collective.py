"""Closure builders for the LNC2 cross-core instructions: core_barrier, sendrecv.

Both need the run to be one core of an LNC2 launch (``State.launch``, see :mod:`.spmd`);
a plain run (``Program.run`` without a launch, or a one-core launch) is a located runtime
error.

- ``nisa.core_barrier``: the core counts its barriers and waits until the other core has
  reached as many (the k-th barriers of the two cores complete together).  Writes made by
  either core before its barrier are visible to both after it (program order; the
  interpreter executes every instruction eagerly).
- ``nisa.sendrecv``: the core posts a copy of its ``src`` tile in the mailbox
  ``(pipe_id, this core, send_to_rank)`` and takes the oldest tile of
  ``(pipe_id, recv_from_rank, this core)`` into ``dst`` (bit-exact; the two tiles have the
  same dtype and element counts, checked again at run time because the two cores may run
  different specialisations).

A wait that cannot complete is an error at this instruction (:mod:`.spmd`).  Semantics:
nki_spec.md sections 1.4 and 5.4 (NKI ``nki.isa.core_barrier`` / ``nki.isa.sendrecv``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..dialects import isa_collective as C
from .env import STATE, Fault, check_elems, finish, guard

if TYPE_CHECKING:
    from .decoder import Decoder


def _instance(env, api: str):
    inst = env[STATE].launch
    if inst is None or inst.launch.cores < 2:
        raise Fault(f"{api} needs the two cores of an LNC2 launch (kernel[2](...) on trn2/trn3), "
                    f"but this run has a single core")
    return inst


def core_barrier(dec: Decoder, op: C.NisaCoreBarrierOp):
    dec.buf(op, op.data, "data")

    def run(env):
        inst = _instance(env, "nisa.core_barrier")
        inst.launch.barrier(inst.rank)
    return guard(op, run)


def sendrecv(dec: Decoder, op: C.NisaSendRecvOp):
    src, dst = dec.buf(op, op.src, "src"), dec.buf(op, op.dst, "dst")
    check_elems(op, dst, ("src", src))
    to, frm = int(op.send_to_rank.value.data), int(op.recv_from_rank.value.data)
    pipe = int(op.pipe_id.value.data)
    s, d, shape, dt = src.slot, dst.slot, dst.shape, dst.dtype
    count = int(np.prod(shape))

    def run(env):
        inst = _instance(env, "nisa.sendrecv")
        got = inst.launch.sendrecv(inst.rank, to, frm, pipe, env[s])
        if got.dtype != dt or got.size != count:
            raise Fault(f"core {frm} sent a {list(got.shape)} {got.dtype} tile on pipe {pipe}, but "
                        f"'dst' of core {inst.rank} is {list(shape)} {np.dtype(dt)}")
        env[d][...] = got.reshape(shape)
    return finish(op, run, dst)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {"nisa.core_barrier": core_barrier, "nisa.sendrecv": sendrecv}
