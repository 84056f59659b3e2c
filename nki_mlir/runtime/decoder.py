"""The decoder: walks a ``func.func`` once and turns it into a :class:`~.program.Program`.

It assigns every SSA value an env slot (:mod:`.env`), records the static facts of tensor
operands (:class:`~.env.Buf`) and of constants, and asks the closure builder registered for
each op (:data:`HANDLERS`) for its closure.  The builders live in :mod:`.control`
(``func`` / ``scf.for`` / ``arith``), :mod:`.views` (``memref.subview``) and the ``isa_*``
modules (``nisa`` ops); the :class:`Decoder` methods here are what they build on.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import nisa
from ..dialects.common import MemSpaceAttr
from ..errors import NKIRuntimeError
from . import (
    control, isa_activation, isa_alu, isa_control, isa_iota, isa_matmul, isa_memory, lang_ops,
    isa_movement, isa_select, isa_tensor, isa_vector, views,
)
from . import isa_collective, queues, spmd  # noqa: E402  (LNC2 cross-core ops; shared HBM of launches)
from . import numerics as nm
from .env import Buf, Closure, is_float_type
from .memory import flag_dtype
from .program import Program


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

    def __init__(self, target: str):
        self.target = target
        self.nslots = 1
        self.slot_of: dict[SSAValue, int] = {}
        self.bufs: dict[SSAValue, Buf] = {}
        self.template: dict[int, object] = {}
        self.consts: dict[SSAValue, object] = {}
        self.count = 0
        #: ``shared_hbm`` allocs seen so far per ``nkim.name`` (launch-wide binding, spmd.py)
        self.shared_names: dict[str, int] = {}
        #: queue-mode facts of the instructions (:mod:`.queues`)
        self.schedule = queues.Schedule()

    # -------------------------------------------------------------- slots and values

    def fresh(self) -> int:
        s = self.nslots
        self.nslots += 1
        return s

    def define(self, v: SSAValue, op: Operation | None) -> int:
        s = self.fresh()
        self.slot_of[v] = s
        if isinstance(v.type, MemRefType):
            self.bufs[v] = self.buffer_info(op, v, s)
        return s

    def buffer_info(self, op, v: SSAValue, slot: int) -> Buf:
        t = v.type
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
        flags = self.fresh() if space == "psum" else None
        return Buf(slot, flags, shape, dt, space, v)

    def use(self, op: Operation, v: SSAValue | None, role: str) -> int:
        try:
            return self.slot_of[v]  # type: ignore[index]
        except KeyError:
            raise error_at(op, f"{op.name}: operand '{role}' is not defined by an op the "
                               f"interpreter executes", NKIRuntimeError) from None

    def buf(self, op: Operation, v: SSAValue | None, role: str) -> Buf:
        self.use(op, v, role)
        b = self.bufs.get(v)  # type: ignore[arg-type]
        if b is None:
            raise error_at(op, f"{op.name}: operand '{role}' must be a tensor (memref), "
                               f"got {v.type}", NKIRuntimeError)
        return b

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

    def function(self, fop: func.FuncOp) -> Program:
        block = fop.body.block
        module = fop.parent_op()
        mode = module.attributes.get("nkim.schedule") if module is not None else None
        self.schedule.in_order = getattr(mode, "data", None) == "in-order"
        arg_slots, arg_specs, arg_names = [], [], []
        for i, a in enumerate(block.args):
            s = self.define(a, None)
            arg_slots.append(s)
            arg_names.append(a.name_hint or f"arg{i}")
            if isinstance(a.type, MemRefType):
                b = self.bufs[a]
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
        body = self.block(block)
        # PSUM arguments need matmul-written flags; give them fresh zeroed ones per run.
        psum_args = [(self.bufs[a].flags, self.bufs[a].shape, self.bufs[a].dtype)
                     for a in block.args if a in self.bufs and self.bufs[a].space == "psum"]
        if psum_args:
            def init_flags(env, items=tuple(psum_args)):
                for fslot, shape, dt in items:
                    env[fslot] = np.zeros(shape, flag_dtype(dt))
            body.insert(0, init_flags)
        ret_slots, ret_specs = [], []
        for v in ret.operands:
            ret_slots.append(self.use(ret, v, "result"))
            if v in self.bufs:
                b = self.bufs[v]
                ret_specs.append((b.shape, b.dtype, b.space))
            else:
                ret_specs.append(((), None, None))
        self.schedule.finish()
        template: list = [None] * self.nslots
        for s, c in self.template.items():
            template[s] = c
        return Program(func_op=fop, target=self.target, body=body, template=template,
                       arg_slots=arg_slots, arg_specs=arg_specs, arg_names=arg_names,
                       ret_slots=ret_slots, ret_specs=ret_specs, instruction_count=self.count,
                       schedule=self.schedule)

    def block(self, block: Block) -> list[Closure]:
        out: list[Closure] = []
        for op in block.ops:
            handler = HANDLERS.get(op.name)
            if handler is None:
                raise error_at(op, self.unsupported(op), NKIRuntimeError)
            if isinstance(op, nisa.NisaInstruction):
                self.count += 1
            c = handler(self, op)
            if op.name == "nisa.alloc":  # shared_hbm: bound launch-wide in SPMD/LNC launches
                c = spmd.shared_alloc(self, op, c)
            elif c is not None and isinstance(op, nisa.NisaInstruction):
                c = queues.wrap(self, op, c)  # enqueued in queue mode
            if c is not None:
                out.append(c)
        return out

    @staticmethod
    def unsupported(op: Operation) -> str:
        if op.name.startswith("nki."):
            return (f"{op.name} cannot be executed: the interpreter runs nisa IR "
                    f"(run the lower-nki-to-nisa pass first)")
        return (f"{op.name} is not supported by the ISA interpreter (it executes func, scf.for, "
                f"arith index arithmetic and constants, memref.subview and nisa ops)")


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
    "nisa.dma_copy": isa_memory.dma_copy,
    "nisa.tensor_copy": isa_memory.tensor_copy,
    "nisa.memset": isa_memory.memset,
    "nisa.tensor_tensor_arith": isa_alu.tensor_tensor,
    "nisa.tensor_scalar_arith": isa_alu.tensor_scalar,
    "nisa.reciprocal": isa_alu.reciprocal,
    "nisa.tensor_reduce_arith": isa_alu.tensor_reduce,
    "nisa.activation": isa_activation.activation,
    "nisa.matmul": isa_matmul.matmul,
    "nisa.nc_transpose": isa_matmul.nc_transpose,
    "nisa.iota": isa_iota.iota,
    "nisa.affine_select": isa_iota.affine_select,
    **isa_vector.HANDLERS,
    **isa_select.HANDLERS,
    **isa_movement.HANDLERS,
    **isa_tensor.HANDLERS,
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
