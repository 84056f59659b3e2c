"""The decoder's state: what the closure builders build on while a ``func.func`` is decoded.

It assigns every SSA value an env slot (:mod:`.env`), records the static facts of tensor
operands (:class:`~.env.Buf`) and of constants, and turns a block into closures by asking
``dispatch`` (:func:`.handlers.dispatch`: the closure builder registered for each op) for
each op's closure.  The builders live in :mod:`.control` (``func`` / ``scf.for`` /
``arith``), :mod:`.views` (``memref.subview``) and the ``isa_*`` modules (``nisa`` ops);
:mod:`.handlers` holds their table and decodes a whole function
(:func:`.handlers.decode_function`).  This module imports none of them, so the builders
can name :class:`Decoder` in their signatures.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, OpResult, SSAValue

from .. import dtypes
from ..diagnostics import error_at
from ..dialects.common import MemSpaceAttr
from ..dialects.effects import VIEW_OPS, base_buffer
from ..errors import NKIRuntimeError
from . import numerics as nm
from . import precise_fp
from .env import Buf, Closure
from .timing_plan import UNSUPPORTED


class Decoder:
    """The decoding state of one function, shared by the closure builders.

    Attributes:
        target: ``"trn1"`` / ``"trn2"`` / ``"trn3"``.
        nslots: env slots handed out so far (slot 0 is the per-run state).
        slot_of: the env slot of every SSA value defined so far.
        bufs: the :class:`~.env.Buf` of every tensor (memref-typed) value.
        template: initial env contents by slot (constants folded at decode time).
        consts: the folded value of every constant SSA value.
        count: ``nisa`` instructions decoded so far.
    """

    def __init__(self, target: str,
                 dispatch: Callable[[Decoder, Operation], tuple[Closure | None, object]],
                 schedule, wide: bool = False):
        self.target = target
        #: the decode for ``NKI_PRECISE_FP=0`` (:mod:`.precise_fp`): the bf16 / fp8 tensors
        #: the kernel allocates are stored as float32 (:meth:`widened`)
        self.wide = wide
        #: :meth:`widened` of each base buffer seen so far
        self._widened: dict[SSAValue, bool] = {}
        #: ``dispatch(decoder, op)``: the closure of one op and its timing-plan step
        #: (:func:`.handlers.dispatch`)
        self.dispatch = dispatch
        self.nslots = 1
        self.slot_of: dict[SSAValue, int] = {}
        self.bufs: dict[SSAValue, Buf] = {}
        self.template: dict[int, object] = {}
        self.consts: dict[SSAValue, object] = {}
        self.count = 0
        #: ``shared_hbm`` allocs seen so far per ``nkim.name`` (launch-wide binding, spmd.py)
        self.shared_names: dict[str, int] = {}
        #: queue-mode facts of the instructions (a :class:`.queues.Schedule`)
        self.schedule = schedule
        #: the timing plan of every decoded block (:mod:`.timing_plan`); None when a block
        #: holds an op the plan cannot walk
        self.plans: dict[Block, tuple | None] = {}
        #: the block of every copy of every placed on-chip alloc, ``{(op, copy): (lo, hi)}``
        #: (:mod:`.blocks`; filled by :func:`.handlers.decode_function`)
        self.blocks: dict = {}
        #: write-only HBM allocs filled after the run (:mod:`.hbm_fill`): ``(slot, tracking
        #: slot, dtype)`` each, and the tracking slot of every ``nisa.dma_copy`` writing one
        self.hbm_fills: list[tuple] = []
        self.hbm_tracked: dict[Operation, int] = {}
        #: analyses computed once per decode and shared by the builders (:mod:`.forward`,
        #: :mod:`.bind`)
        self.memo: dict = {}
        #: the first memory-touching op after each alloc-like op, by ``id`` (memo of
        #: :func:`.isa_memory.written_first`)
        self.next_memory_op: dict[int, Operation | None] = {}
        #: the closure built for each op so far, by the op's ``id`` (output forwarding
        #: evaluates some ahead, :mod:`.out_forward`; the IR outlives the decode)
        self.built: dict[int, Closure] = {}
        #: ``(type, shape, dtype, space)`` of every memref type decoded so far, by ``id`` (the
        #: type is kept alive, so its id stays its own): identical types of many values are
        #: read once (a type that cannot be decoded is never kept: each op reports it)
        self.type_facts: dict[int, tuple] = {}
        #: ``(type, text)`` of every type printed by :meth:`type_text` so far, by ``id``
        self.type_texts: dict[int, tuple] = {}

    # -------------------------------------------------------------- slots and values

    def fresh(self) -> int:
        s = self.nslots
        self.nslots += 1
        return s

    def define(self, v: SSAValue, op: Operation | None) -> int:
        s = self.nslots
        self.nslots = s + 1
        self.slot_of[v] = s
        if isinstance(v.type, MemRefType):
            self.bufs[v] = self.buffer_info(op, v, s)
        return s

    def buffer_info(self, op, v: SSAValue, slot: int) -> Buf:
        t = v.type
        hit = self.type_facts.get(id(t))
        if hit is not None and hit[0] is t:
            _t, shape, dt, space = hit
        else:
            shape, dt, space = self._type_facts(op, t)
        flags = self.fresh() if space == "psum" else None
        if self.wide and dt in precise_fp.WIDENED and self.widened(v):
            return Buf(slot, flags, shape, precise_fp.F32, space, dt)
        return Buf(slot, flags, shape, dt, space)

    def widened(self, v: SSAValue) -> bool:
        """Whether this ``NKI_PRECISE_FP=0`` decode stores the bf16 / fp8 value ``v`` as
        float32: ``v`` is (a view of) a bf16 / fp8 ``nisa.alloc`` that no ``func.return``
        returns (nor a view of).  Kernel arguments and outputs keep their declared dtype (the
        caller's arrays), and so do bf16 / fp8 views of a tensor of another dtype (its
        bytes)."""
        base = base_buffer(v)
        hit = self._widened.get(base)
        if hit is None:
            hit = self._widened[base] = isinstance(base, OpResult) and \
                base.op.name == "nisa.alloc" and \
                dtypes.from_mlir(base.type.element_type) in precise_fp.WIDENED and \
                not _returned(base)
        return hit

    def declared(self, b: Buf) -> np.dtype:
        """The declared dtype of the tensor ``b`` (its ``dtype`` is the storage dtype)."""
        return b.declared

    def stored_as(self, v: SSAValue) -> np.dtype | None:
        """The dtype the memref value ``v``'s elements are stored in (its declared dtype,
        or float32 for a :meth:`widened` bf16 / fp8 one); None for an unknown dtype."""
        try:
            dt = dtypes.from_mlir(v.type.element_type)
        except (KeyError, AttributeError):
            return None
        return precise_fp.F32 if self.wide and dt in precise_fp.WIDENED and self.widened(v) else dt

    def _type_facts(self, op, t) -> tuple:
        """``(shape, dtype, space)`` of memref type ``t`` (kept in :attr:`type_facts`)."""
        assert isinstance(t, MemRefType)
        shape = tuple(int(d) for d in t.get_shape())
        if any(d < 0 for d in shape):
            raise error_at(op, f"{op.name if op else 'func.func'}: dynamic shape {t} is not "
                               f"supported by the interpreter", NKIRuntimeError)
        try:
            dt = dtypes.from_mlir(t.element_type)
        except KeyError:
            raise error_at(op, f"{op.name if op else 'func.func'}: element type {t.element_type} "
                               f"is not an NKI dtype", NKIRuntimeError) from None
        space = t.memory_space.space.data if isinstance(t.memory_space, MemSpaceAttr) else "hbm"
        self.type_facts[id(t)] = (t, shape, dt, space)
        return shape, dt, space

    def type_text(self, t) -> str:
        """The printed form of type ``t`` for a run-time message (a decoded program keeps
        the text, not the type: it holds none of the compile's IR); printed once per
        distinct type (printing costs more than decoding an op)."""
        hit = self.type_texts.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        key = ("type text", t)
        text = self.memo.get(key)
        if text is None:
            text = self.memo[key] = str(t)
        self.type_texts[id(t)] = (t, text)
        return text

    def use(self, op: Operation, v: SSAValue | None, role: str) -> int:
        try:
            return self.slot_of[v]  # type: ignore[index]
        except KeyError:
            raise error_at(op, f"{op.name}: operand '{role}' is not defined by an op the "
                               f"interpreter executes", NKIRuntimeError) from None

    def buf(self, op: Operation, v: SSAValue | None, role: str) -> Buf:
        b = self.bufs.get(v)  # type: ignore[arg-type]
        if b is not None:     # (a value with a Buf has a slot: :meth:`define` gives both)
            return b
        self.use(op, v, role)
        raise error_at(op, f"{op.name}: operand '{role}' must be a tensor (memref), "
                           f"got {v.type}", NKIRuntimeError)

    def scalar(self, op: Operation, v: SSAValue, role: str, bshape: tuple[int, ...],
               as_int: bool = False) -> Callable[[list], object]:
        """A getter for a scalar-or-``[P,1]``-tile operand, broadcastable to ``bshape``'s rank.

        Scalars are float32 (``as_int``: int64); a tile is reshaped to ``(P, 1, ..., 1)``.
        """
        if isinstance(v.type, MemRefType):
            b = self.buf(op, v, role)
            if b.free != 1 or b.parts != bshape[0]:
                raise error_at(op, f"{op.name}: operand '{role}' must be a scalar or a "
                                   f"[{bshape[0]}, 1] tensor, got {list(b.shape)}", NKIRuntimeError)
            s = b.slot
            tshape = (bshape[0],) + (1,) * (len(bshape) - 1)
            if as_int:
                if not dtypes.is_int(b.dtype):
                    raise error_at(op, f"{op.name}: operand '{role}' must have an integer dtype "
                                       f"for a bitvec operator, got {dtypes.name_of(b.dtype)}",
                                   NKIRuntimeError)
                return lambda env: nm.to_int64(env[s]).reshape(tshape)
            if b.shape == tshape and np.dtype(b.dtype) == nm.F32:
                return lambda env: env[s]    # (already float32 in that shape)
            return lambda env: nm.to_f32(env[s]).reshape(tshape)
        s = self.use(op, v, role)
        if v in self.consts:
            c = self.consts[v]
            c = np.int64(int(c)) if as_int else np.float32(c)
            return lambda env: c
        if as_int:
            return lambda env: np.int64(int(env[s]))
        return lambda env: np.float32(env[s])

    def loop_index(self, op: Operation) -> int:
        """The index of loop ``op``'s iteration serial counter (queue mode)."""
        return self.schedule.loop_index(op)

    def const_value(self, v: SSAValue):
        return self.consts.get(v)

    # -------------------------------------------------------------- structure

    def block(self, block: Block) -> list[Closure]:
        """The closures of ``block``'s ops, in order (ops with nothing to run build none)."""
        dispatch = self.dispatch
        out: list[Closure] = []
        plan: list | None = []
        for op in block.ops:
            c, step = dispatch(self, op)
            if c is not None:
                out.append(c)
                self.built[id(op)] = c
            if plan is not None:
                if step is UNSUPPORTED:
                    plan = None
                elif step is not None:
                    plan.append(step)
        self.plans[block] = tuple(plan) if plan is not None else None
        return out

    @staticmethod
    def unsupported(op: Operation) -> str:
        if op.name.startswith("nki."):
            return (f"{op.name} cannot be executed: the interpreter runs nisa IR "
                    f"(run the lower-nki-to-nisa pass first)")
        return (f"{op.name} is not supported by the ISA interpreter (it executes func, scf.for, "
                f"arith index arithmetic and constants, memref.subview and nisa ops)")


def _returned(base: SSAValue) -> bool:
    """Whether a ``func.return`` returns ``base`` or a (chain of) view(s) of it."""
    todo = [base]
    while todo:
        for u in todo.pop().uses:
            o = u.operation
            if o.name == "func.return":
                return True
            if o.name in VIEW_OPS and u.index == 0:
                todo.extend(o.results)
    return False

