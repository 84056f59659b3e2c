"""The LNC2 cross-core instructions: core_barrier and sendrecv (trn2 / trn3).

Both need an LNC2 launch (``kernel[2](...)`` on trn2 / trn3, or a Beta 1
``kernel[nl.nc(2)]``), checked at the call, and run only as one core of such a launch
(``nki_mlir/runtime/isa_collective.py``: a single-core run is a located runtime error).
They are cross-core synchronisation points: ``nisa-schedule`` makes them fences, and a
reordering or a cost model must not move instructions across them.

- ``core_barrier``: the core counts its barriers and waits until the other core has reached
  as many (the k-th barriers of the two cores complete together); writes made by either core
  before its barrier are visible to both after it.
- ``sendrecv``: the core posts a copy of its ``src`` tile in the mailbox ``(pipe_id, this
  core, send_to_rank)`` and takes the oldest tile of ``(pipe_id, recv_from_rank, this core)``
  into ``dst`` (bit-exact; dtype and element counts are checked again at run time, as the
  two cores may run different specialisations).

Semantics: NKI language guide (nki/get-started/nki-language-guide) and the ``nki.isa`` API
pages ``core_barrier``, ``sendrecv``, ``dma_engine`` (nki/api/nki.isa).
"""
from __future__ import annotations

import numpy as np
from xdsl.utils.exceptions import VerifyException

from ..dialects import rules
from ..dialects.instruction import CROSS_CORE  # the launch's semaphores and mailboxes
from ..dialects.common import HBM_SPACES, MEM_SPACES, describe, dtype_of, free_size, space_of
from ..dialects.ods import Engine, EnumProp, Formula, Int, IntList, Tile
from ..dialects.ods_forms import LoopIndex
from ..errors import NKITypeError
from ..frontend.index_bounds import index_bounds
from ..frontend.isa_calls import loop_offset
from ..frontend.values import Index
from ..frontend.spmd import require_lnc2
from ..runtime.env import Fault, check_elems, finish, guard
from ..runtime.isa_collective import lnc2_instance
from .define import instruction

#: the only supported ``cores`` of core_barrier (the two cores of one LNC2 logical core)
BARRIER_CORES = (0, 1)
#: ranks of an LNC2 launch
RANKS = (0, 1)
#: ``nisa.dma_engine`` members
DMA_ENGINES = ("dma", "gpsimd_dma")
#: gpsimd_dma bytes-per-partition limit by element size (nki.isa API reference, sendrecv)
GPSIMD_DMA_MAX_BYTES = {4: 1024, 2: 512, 1: 256}


def _barrier_call(cg, args, operands, props, emit):
    """``cores`` must be (0, 1); the kernel must be an LNC2 launch."""
    if tuple(props["cores"]) != BARRIER_CORES:
        raise cg.b.error(f"nisa.core_barrier: cores={args['cores']!r} is not supported; only "
                         f"cores=(0, 1) (the two NeuronCores of an LNC2 launch)", NKITypeError)
    require_lnc2(cg, "nisa.core_barrier")
    emit()


@instruction
class core_barrier:
    """Barrier of the two cores of an LNC2 launch: neither continues past it until both
    reached it (the k-th barriers of the two cores complete together).  Needs trn2 or newer.

    ``data``: the ``shared_hbm`` tensor the cores synchronise on.  ``cores``: ``(0, 1)``, the
    only supported value.  ``engine``: the engine whose sequencer runs the barrier (GpSimd by
    default; Vector, Scalar, Tensor or Sync); only that engine is blocked on hardware.

    Raises ``NKITypeError`` for other ``cores`` or a kernel not launched as LNC2
    (``kernel[2](...)``), ``NKIVerifyError`` for a ``data`` outside ``shared_hbm`` or a target
    before trn2.
    NKI docs: ``nki.isa.core_barrier`` (nki/api/generated/nki.isa.core_barrier).
    """

    data = Tile(spaces=MEM_SPACES)
    cores = IntList()
    engine = Engine("gpsimd", vector="trn1", scalar="trn1", tensor="trn1", sync="trn1")
    since = "trn2"
    feature = "core_barrier (LNC2 cross-core barrier)"
    state = CROSS_CORE
    cost = Formula("empty", source="analogue: MIN_II / engine start-up (an instruction with no "
                                   "data)")
    beta1_result = False
    frontend = _barrier_call

    def verify(op):
        api, sp = rules.api(op), space_of(op.data)
        if sp != "shared_hbm":
            where = sp if sp in HBM_SPACES else f"{sp} (on-chip)"
            raise VerifyException(f"{api}: 'data' must be a shared_hbm tensor (the data both cores "
                                  f"synchronise on), got one in {where}")
        got = tuple(int(c.value.data) for c in op.cores.data)
        if got != BARRIER_CORES:
            raise VerifyException(f"{api}: cores={got} is not supported; only cores=(0, 1) "
                                  f"(the two NeuronCores of an LNC2 launch)")

    def interpret(dec, op):
        dec.buf(op, op.data, "data")

        def run(env):
            inst = lnc2_instance(env, "nisa.core_barrier")
            inst.launch.barrier(inst.rank)
        return guard(op, run)


def _rank(dec, op, base, index, role: str):
    """A getter of a ``sendrecv`` rank: the property ``base`` plus the run-time ``index``
    operand when there is one."""
    b = int(base.value.data)
    if index is None:
        return lambda env: b
    slot = dec.use(op, index, role)
    return lambda env: b + int(env[slot])


def _split_ranks(cg, api, args) -> None:
    """The ``call`` hook: a rank that is an expression of a symbolic program id (a launch
    traced once, :mod:`nki_mlir.frontend.spmd`) -> its constant part and its
    ``<role>_index`` operand, added at run time."""
    pids = set(cg.b.program_ids.values())
    for role in ("send_to_rank", "recv_from_rank"):
        v = args[role]
        if isinstance(v, Index) and v.terms:
            # only a rank that is 0 or 1 for every instance, else the per-instance trace's
            # error (the tracer unrolls the launch on this one)
            span = index_bounds(v, cg.b.loop_ranges)
            if any(sym not in pids for sym, _ in v.terms) or span is None or \
                    span[0] < min(RANKS) or span[1] > max(RANKS):
                raise cg.b.error(f"{api}: '{role}' must be a compile-time integer, got an "
                                 f"index of a rolled loop or launch", NKITypeError)
        args[role], args[role + "_index"] = loop_offset(cg, api, v)


def _sendrecv_call(cg, args, operands, props, emit):
    """Ranks 0 or 1, a non-negative ``pipe_id``, an LNC2 launch."""
    for role in ("send_to_rank", "recv_from_rank"):
        if operands[role + "_index"] is None and props[role] not in RANKS:
            raise cg.b.error(f"nisa.sendrecv: {role}={props[role]} is not a rank of an LNC2 launch "
                             f"(0 or 1)", NKITypeError)
    if props["pipe_id"] < 0:
        raise cg.b.error(f"nisa.sendrecv: pipe_id must be a non-negative int, got "
                         f"{props['pipe_id']}", NKITypeError)
    require_lnc2(cg, "nisa.sendrecv")
    emit()


@instruction
class sendrecv:
    """Send the SBUF tile ``src`` to core ``send_to_rank`` and receive core
    ``recv_from_rank``'s ``src`` into the SBUF tile ``dst`` (an LNC2 launch; trn2 or newer).

    ``src`` / ``dst``: SBUF tiles of the same dtype, partition count and elements per
    partition.  ``send_to_rank`` / ``recv_from_rank``: 0 or 1 (ints, e.g. ``1 -
    nl.program_id(0)``; in a launch traced once the program id is symbolic and the rank is
    checked when the instruction runs).  ``pipe_id``: a non-negative int; the operations with the same
    ``pipe_id`` complete together.  ``dma_engine``: ``nisa.dma_engine.dma`` (the shared DMA,
    default) or ``nisa.dma_engine.gpsimd_dma`` (GpSimd's DMA: at most 1024 / 512 / 256 bytes
    per partition for 32 / 16 / 8-bit types).

    Raises ``NKITypeError`` for another rank, a negative ``pipe_id`` or a kernel not launched
    as LNC2, ``NKIVerifyError`` for mismatched tiles, another memory or a target before trn2.
    NKI docs: ``nki.isa.sendrecv`` (nki/api/generated/nki.isa.sendrecv).
    """

    src = Tile(spaces=("sbuf",))
    dst = Tile(writes=True, spaces=("sbuf",), like="src")
    send_to_rank = Int()
    recv_from_rank = Int()
    pipe_id = Int()
    dma_engine = EnumProp(enum="dma_engine", allowed=DMA_ENGINES, default="dma")
    send_to_rank_index = LoopIndex()
    recv_from_rank_index = LoopIndex()
    engine = Engine("dma", param=False)
    since = "trn2"
    feature = "sendrecv (LNC2 core-to-core exchange)"
    state = CROSS_CORE
    cost = Formula("dma", source="DMABW, DMAOV: a DMA of src (docs/cost-model.md)")
    beta1_result = False
    call = _split_ranks
    frontend = _sendrecv_call

    def verify(op):
        api = rules.api(op)
        if dtype_of(op.src) != dtype_of(op.dst):
            raise VerifyException(f"{api}: 'src' and 'dst' must have the same dtype, got "
                                  f"{describe(op.src)} and {describe(op.dst)}")
        for prop in ("send_to_rank", "recv_from_rank"):
            r = int(op.properties[prop].value.data)
            if getattr(op, prop + "_index") is None and r not in RANKS:
                raise VerifyException(f"{api}: {prop}={r} is not a rank of an LNC2 launch (0 or 1)")
        if int(op.pipe_id.value.data) < 0:
            raise VerifyException(f"{api}: pipe_id must be a non-negative integer, got "
                                  f"{int(op.pipe_id.value.data)}")
        if op.dma_engine is not None and op.dma_engine.data == "gpsimd_dma":
            size = dtype_of(op.src).itemsize
            limit = GPSIMD_DMA_MAX_BYTES.get(size)
            nbytes = free_size(op.src) * size
            if limit is None or nbytes > limit:
                raise VerifyException(
                    f"{api}: dma_engine=gpsimd_dma moves at most 1024/512/256 bytes per partition "
                    f"for 32/16/8-bit types; 'src' {describe(op.src)} has {nbytes} bytes per "
                    f"partition")

    def interpret(dec, op):
        src, dst = dec.buf(op, op.src, "src"), dec.buf(op, op.dst, "dst")
        check_elems(op, dst, ("src", src))
        to = _rank(dec, op, op.send_to_rank, op.send_to_rank_index, "send_to_rank")
        frm = _rank(dec, op, op.recv_from_rank, op.recv_from_rank_index, "recv_from_rank")
        pipe = int(op.pipe_id.value.data)
        s, d, shape, dt = src.slot, dst.slot, dst.shape, dst.dtype
        count = int(np.prod(shape))

        def run(env):
            inst = lnc2_instance(env, "nisa.sendrecv")
            got = inst.launch.sendrecv(inst.rank, to(env), frm(env), pipe, env[s])
            if got.dtype != dt or got.size != count:
                raise Fault(f"core {frm(env)} sent a {list(got.shape)} {got.dtype} tile on pipe {pipe}, "
                            f"but 'dst' of core {inst.rank} is {list(shape)} {np.dtype(dt)}")
            env[d][...] = got.reshape(shape)
        return finish(op, run, dst)
