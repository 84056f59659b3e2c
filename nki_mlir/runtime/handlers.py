"""The closure builder of every op the interpreter runs, and the decode of one function.

:data:`HANDLERS` maps an op name to its closure builder ``builder(decoder, op)`` (from
:mod:`.control`, :mod:`.views`, the ``isa_*`` modules and :mod:`.lang_ops`);
:func:`dispatch` applies it to one op (counting instructions, binding ``shared_hbm``
allocs launch-wide and wrapping instructions for queue mode), and :func:`decode_function`
decodes a ``func.func`` into a :class:`~.program.Program`.  The builders see the decoder
only through :class:`~.decoder.Decoder`, which does not import them.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import Operation

from .. import dtypes
from ..diagnostics import error_at, forget_sites
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import (
    control, isa_control, isa_memory, lang_ops, views,
)
from . import isa_collective, queues, spmd, timing_plan  # LNC2 cross-core ops; shared HBM of launches
from . import blocks  # the contiguous storage of placed on-chip tensors
from . import hbm_fill  # sentinels of write-only HBM outputs, filled after the run
from .decoder import Decoder
from .env import Closure, is_float_type
from .memory import flag_dtype
from .program import Program


#: op name -> closure builder ``builder(decoder, op)``; a builder returns None for an op
#: with nothing to do at run time (a folded constant, a terminator, ``nisa.release``).
#: The instruction definitions (``nki_mlir/instructions``) add theirs (:func:`register`).
HANDLERS: dict[str, Callable[[Decoder, Operation], Closure | None]] = {
    "func.return": control.func_return,
    "scf.yield": control.scf_yield,
    "scf.for": control.scf_for,
    "scf.if": control.scf_if,
    "arith.constant": control.arith_constant,
    "arith.index_cast": control.index_cast,
    "arith.index_castui": control.index_cast,
    **{name: control.int_binary for name in control.INT_BINARY},
    **views.HANDLERS,
    "nisa.dma_copy_indirect": isa_memory.dma_copy_indirect,
    "nisa.alloc": isa_memory.alloc,
    "nisa.release": isa_memory.release,
    **isa_control.HANDLERS,
    **isa_collective.HANDLERS,
    **lang_ops.HANDLERS,
}


def register(op_name: str, builder: Callable[[Decoder, Operation], Closure | None]) -> None:
    """Make ``builder`` the closure builder of ``op_name``.

    Raises:
        ValueError: an internal error: the op has a closure builder already.
    """
    if op_name in HANDLERS:
        raise ValueError(f"internal error: {op_name} has a closure builder already (defined twice)")
    HANDLERS[op_name] = builder


def dispatch(dec: Decoder, op: Operation) -> tuple[Closure | None, object]:
    """The closure of ``op`` (None for an op with nothing to run) and its step of the block's
    timing plan (:mod:`.timing_plan`: None for no step, ``UNSUPPORTED`` for an op the plan
    cannot walk).

    Raises:
        NKIRuntimeError: located at ``op``, which the interpreter cannot run.
    """
    name = op.name
    handler = HANDLERS.get(name)
    if handler is None:
        raise error_at(op, dec.unsupported(op), NKIRuntimeError)
    cls = type(op)
    instruction = _INSTRUCTION.get(cls)
    if instruction is None:
        instruction = _INSTRUCTION[cls] = isinstance(op, nisa.NisaInstruction)
    if instruction:
        dec.count += 1
    c = handler(dec, op)
    if name == "nisa.alloc":  # shared_hbm: bound launch-wide in SPMD/LNC launches
        return spmd.shared_alloc(dec, op, c), None
    if c is not None and instruction:
        # enqueued in queue mode; the plan keeps the instruction's own closure
        return queues.wrap(dec, op, c), timing_plan.instruction(dec.schedule.infos[-1], c)
    if name in timing_plan.SKIPPED:     # (a step of nothing: skipped by the walk)
        return c, None
    return c, timing_plan.step(dec, op, c)


#: whether an op class is a ``nisa`` instruction (``isinstance`` through the ABC costs more)
_INSTRUCTION: dict[type, bool] = {}


def decode_function(target: str, fop: func.FuncOp, wide: bool = False) -> Program:
    """Decode ``fop`` once for ``target`` into a :class:`~.program.Program`.  ``wide``: the
    program a run with ``NKI_PRECISE_FP=0`` executes (:mod:`.precise_fp`); the default
    program decodes it when such a run first asks.

    Raises:
        NKIRuntimeError: located at the first op or argument the interpreter cannot run.
    """
    try:
        with blocks.memoized():
            return _decode_function(target, fop, wide)
    finally:
        forget_sites()      # (the memo of the module's location attributes)


def _decode_wide(target: str, fop: func.FuncOp, keep_ops: bool = False) -> Program:
    """The ``NKI_PRECISE_FP=0`` program of ``fop`` (:meth:`.program.Program.wide`; decoded
    from the op, it keeps its ops whatever ``keep_ops`` says)."""
    return decode_function(target, fop, True)


def _decode_function(target: str, fop: func.FuncOp, wide: bool) -> Program:
    dec = Decoder(target, dispatch, queues.Schedule(), wide)
    dec.blocks = blocks.plan(fop)
    block = fop.body.block
    module = fop.parent_op()
    mode = module.attributes.get("nkim.schedule") if module is not None else None
    dec.schedule.in_order = getattr(mode, "data", None) == "in-order"
    arg_slots, arg_specs, arg_names = [], [], []
    for i, a in enumerate(block.args):
        s = dec.define(a, None)
        arg_slots.append(s)
        arg_names.append(a.name_hint or f"arg{i}")
        if isinstance(a.type, MemRefType):
            b = dec.bufs[a]
            arg_specs.append((b.shape, b.dtype, b.space))
        elif isinstance(a.type, (IndexType, IntegerType)):
            arg_specs.append(((), None, None))
        elif is_float_type(a.type):
            arg_specs.append(((), dtypes.float32, None))
        else:
            raise error_at(fop, f"func.func @{fop.sym_name.data}: argument #{i} has type "
                                f"{a.type}, which the interpreter cannot pass",
                           NKIRuntimeError)
    ret = fop.get_return_op()
    if ret is None or ret.parent_block() is not block:
        raise error_at(fop, f"func.func @{fop.sym_name.data}: the body must end with func.return",
                       NKIRuntimeError)
    body = dec.block(block)
    # PSUM arguments need matmul-written flags; give them fresh zeroed ones per run.
    psum_args = [(dec.bufs[a].flags, dec.bufs[a].shape, dec.bufs[a].dtype)
                 for a in block.args if a in dec.bufs and dec.bufs[a].space == "psum"]
    if psum_args:
        def init_flags(env, items=tuple(psum_args)):
            for fslot, shape, dt in items:
                env[fslot] = np.zeros(shape, flag_dtype(dt))
        body.insert(0, init_flags)
    if dec.hbm_fills:     # write-only HBM tensors: sentinels where nothing wrote them
        body.append(hbm_fill.finisher(dec.hbm_fills))
    ret_slots, ret_specs = [], []
    for v in ret.operands:
        ret_slots.append(dec.use(ret, v, "result"))
        if v in dec.bufs:
            b = dec.bufs[v]
            ret_specs.append((b.shape, b.dtype, b.space))
        else:
            ret_specs.append(((), None, None))
    dec.schedule.finish()
    template: list = [None] * dec.nslots
    for s, c in dec.template.items():
        template[s] = c
    return Program(func_op=fop, target=dec.target, body=body, template=template,
                   arg_slots=arg_slots, arg_specs=arg_specs, arg_names=arg_names,
                   ret_slots=ret_slots, ret_specs=ret_specs, instruction_count=dec.count,
                   schedule=dec.schedule, plan=timing_plan.finish(dec.plans[block]),
                   widen=None if wide else functools.partial(_decode_wide, target, fop))
