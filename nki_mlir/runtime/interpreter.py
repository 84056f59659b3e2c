"""The NumPy ISA interpreter: executes ``nisa``-dialect IR as the hardware would.

Usage::

    from nki_mlir.runtime.interpreter import decode
    prog = decode(module)            # once per module (raises NKIError for IR it cannot run)
    out, = prog.run([a, b])          # NumPy arrays in, NumPy arrays out (func.return order)

What it executes is what ``lower-nki-to-nisa`` + ``nisa-allocate`` + ``nisa-schedule``
produce: one ``func.func`` per kernel whose body uses ``scf.for``, ``arith`` index
arithmetic and constants, ``memref.subview``, ``nisa.alloc`` / ``nisa.release`` and the
``nisa`` instructions (``dma_copy``, ``tensor_copy``, ``memset``, ``tensor_tensor_arith``,
``tensor_scalar_arith``, ``activation``, ``reciprocal``, ``tensor_reduce_arith``,
``matmul``, ``nc_transpose``, ``iota``, ``affine_select``).  Instructions run in program
(text) order; the ``nkim.*`` schedule attributes are ignored.

Design (``design.md`` section 8): :func:`decode` turns the function into a flat list of
pre-bound closures ``f(env)``; SSA values live in integer slots of the list ``env`` (slot 0
holds the per-run state), and ``scf.for`` is a closure running its body's list.  Memory is
physical (:mod:`.memory`); numerics follow :mod:`.numerics`.  Semantics of each instruction:
nki_spec.md section 5.4 (NKI ``nki.isa`` API pages).

Every fault while running (out-of-bounds subview, bad placement, ...) raises
:class:`~nki_mlir.errors.NKIRuntimeError` located at the op; unexpected Python exceptions
inside an instruction are wrapped the same way.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import nisa
from ..dialects.common import HBM_SPACES, ON_CHIP, MemSpaceAttr, TargetAttr
from ..errors import NKIError, NKIRuntimeError, NKITypeError
from . import numerics as nm
from .memory import (
    PARTITIONS,
    Memory,
    MemoryFault,
    fill_sentinel,
    flag_dtype,
    flag_set_value,
    free_elems,
    resolve_psum_offset,
)

__all__ = ["Program", "decode"]

Closure = Callable[[list], None]

_STATE = 0  # env slot of the per-run _State
_DYNAMIC = memref.DYNAMIC_INDEX


class _Fault(Exception):
    """A runtime fault; re-raised as an NKIRuntimeError located at the executing op."""


class _State:
    """Per-run machine state: the memories and the ScalarE per-lane fp32 accumulators."""

    __slots__ = ("mem", "act_acc")

    def __init__(self, target: str):
        self.mem = Memory(target)
        self.act_acc = np.zeros(PARTITIONS, np.float32)


# Idle machine states by target, reused across runs and programs: a fresh 28 MiB SBUF per
# run would cost milliseconds in page faults.  Reuse is safe because every nisa.alloc
# refills its region with sentinels (and clears PSUM flags) when it executes, so no value
# can leak from one run to the next.  list.pop/append are atomic, so concurrent runs each
# get their own state.
_POOL: dict[str, list[_State]] = {}
_POOL_MAX = 2


def _acquire_state(target: str) -> _State:
    try:
        state = _POOL.setdefault(target, []).pop()
    except IndexError:
        return _State(target)
    state.act_acc[:] = 0
    return state


def _release_state(state: _State) -> None:
    idle = _POOL.setdefault(state.mem.target, [])
    if len(idle) < _POOL_MAX:
        idle.append(state)


class _Buf:
    """Static facts of a buffer-typed SSA value (from its memref type)."""

    __slots__ = ("slot", "flags", "shape", "dtype", "space", "value")

    def __init__(self, slot, flags, shape, dtype, space, value):
        self.slot, self.flags, self.shape, self.dtype, self.space, self.value = \
            slot, flags, shape, dtype, space, value

    @property
    def parts(self) -> int:
        return self.shape[0]

    @property
    def free(self) -> int:
        return free_elems(self.shape)


def _guard(op: Operation, impl: Closure) -> Closure:
    """Wrap ``impl`` so that any failure becomes an NKIRuntimeError located at ``op``."""
    name = op.name

    def run(env):
        try:
            impl(env)
        except NKIError:
            raise
        except (_Fault, MemoryFault) as e:
            raise error_at(op, f"{name}: {e}", NKIRuntimeError) from None
        except Exception as e:  # noqa: BLE001 -- never leak a raw traceback to the user
            raise error_at(op, f"{name}: internal error while executing this instruction: "
                               f"{type(e).__name__}: {e}", NKIRuntimeError) from e
    return run


def _with_flag_clear(impl: Closure, fslot: int) -> Closure:
    """A non-matmul write to PSUM: clear the matmul-written flags of the written region."""
    def run(env):
        impl(env)
        env[fslot].fill(0)
    return run


# --------------------------------------------------------------------------- Program


class Program:
    """A decoded kernel, ready to :meth:`run` any number of times.

    Attributes:
        target: ``"trn1"`` / ``"trn2"`` / ``"trn3"`` (the module's ``nisa.target``; default trn2).
        func_name: the executed ``func.func``.
        instruction_count: static number of ``nisa`` instructions in the function
            (each loop body counted once; ``nisa.alloc`` / ``nisa.release`` not counted).
        arg_names: names of the kernel arguments (SSA names, or ``arg<i>``).
        arg_types: per argument ``(shape, dtype, memory space)``; space ``None`` for scalars.
        result_types: per result ``(shape, dtype, memory space)``.
    """

    def __init__(self, *, func_op: func.FuncOp, target: str, body: list[Closure],
                 template: list, arg_slots: list[int], arg_specs: list, arg_names: list[str],
                 ret_slots: list[int], ret_specs: list, instruction_count: int):
        self._func = func_op
        self.target = target
        self.func_name = func_op.sym_name.data
        self._body = body
        self._template = template
        self._arg_slots = arg_slots
        self._arg_specs = arg_specs
        self.arg_names = arg_names
        self._ret_slots = ret_slots
        self.instruction_count = instruction_count
        self.arg_types = [(s[0], s[1], s[2]) for s in arg_specs]
        self.result_types = list(ret_specs)

    def __repr__(self) -> str:
        return (f"<Program @{self.func_name} on {self.target}: {len(self.arg_names)} args, "
                f"{len(self._ret_slots)} results, {self.instruction_count} instructions>")

    def _check_args(self, args: Sequence) -> list:
        n = len(self._arg_specs)
        if isinstance(args, np.ndarray) or not isinstance(args, Sequence):
            raise error_at(self._func, f"@{self.func_name}: run() takes a sequence of {n} "
                                       f"argument(s), got {type(args).__name__}", NKITypeError)
        if len(args) != n:
            names = ", ".join(self.arg_names) or "none"
            raise error_at(self._func, f"@{self.func_name} takes {n} argument(s) ({names}), "
                                       f"got {len(args)}", NKITypeError)
        out = []
        for i, (a, (shape, dt, space), name) in enumerate(zip(args, self._arg_specs, self.arg_names)):
            what = f"@{self.func_name}: argument #{i} '{name}'"
            if space is None:  # scalar argument
                if not isinstance(a, (int, float, np.integer, np.floating)):
                    raise error_at(self._func, f"{what} must be a number, got {type(a).__name__}",
                                   NKITypeError)
                out.append(np.float32(a) if dt is not None and dtypes.is_float(dt) else int(a))
                continue
            want = f"a NumPy array of shape {list(shape)} and dtype {dtypes.name_of(dt)}"
            if not isinstance(a, np.ndarray):
                raise error_at(self._func, f"{what} must be {want}, got {type(a).__name__}",
                               NKITypeError)
            if a.dtype != dt:
                raise error_at(self._func, f"{what} must be {want}, got dtype {a.dtype} "
                                           f"(convert it with .astype(...))", NKITypeError)
            if tuple(a.shape) != tuple(shape):
                raise error_at(self._func, f"{what} must be {want}, got shape {list(a.shape)}",
                               NKITypeError)
            if not a.flags.writeable:
                a = a.copy()  # kernels may write their arguments; a read-only input stays intact
            out.append(a)
        return out

    def run(self, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        """Execute the kernel on ``args`` and return its outputs.

        Args:
            args: one NumPy array per kernel argument, with exactly the shape and dtype of
                the function signature (bf16/fp8 as ``ml_dtypes`` arrays).  Writes the kernel
                makes to an argument are visible in the caller's array.

        Returns:
            The ``func.return`` operands in order, as NumPy arrays the caller owns.

        Raises:
            NKITypeError: wrong argument count, type, shape or dtype.
            NKIRuntimeError: a runtime fault, located at the faulting op.
        """
        vals = self._check_args(args)
        env = list(self._template)
        state = _acquire_state(self.target)
        env[_STATE] = state
        for slot, v in zip(self._arg_slots, vals):
            env[slot] = v
        try:
            with np.errstate(all="ignore"):
                for f in self._body:
                    f(env)
        finally:
            _release_state(state)
        outs: list = []
        seen: set[int] = set()
        for slot, (_, _, space) in zip(self._ret_slots, self.result_types):
            v = env[slot]
            if isinstance(v, np.ndarray):
                if space in ON_CHIP or id(v) in seen:
                    v = v.copy()
                seen.add(id(v))
            else:
                v = np.asarray(v)
            outs.append(v)
        return tuple(outs)


# --------------------------------------------------------------------------- decoding


def decode(module: ModuleOp, func_name: str | None = None) -> Program:
    """Decode ``module`` once into a :class:`Program`.

    Args:
        module: a ``builtin.module`` of ``nisa`` IR (optionally with ``nisa.target``).
        func_name: the ``func.func`` to run; default: the only (or first) public function
            with a body.

    Raises:
        NKIRuntimeError: an op the interpreter cannot execute, or a malformed function.
    """
    if not isinstance(module, ModuleOp):
        raise NKIRuntimeError(f"decode() expects a builtin.module, got {type(module).__name__}")
    funcs = [op for op in module.body.ops if isinstance(op, func.FuncOp)]
    if func_name is not None:
        chosen = [f for f in funcs if f.sym_name.data == func_name]
        if not chosen:
            have = ", ".join("@" + f.sym_name.data for f in funcs) or "none"
            raise error_at(module, f"no func.func @{func_name} in the module (functions: {have})",
                           NKIRuntimeError)
        fop = chosen[0]
    else:
        public = [f for f in funcs if not f.is_declaration and
                  (f.sym_visibility is None or f.sym_visibility.data == "public")]
        if not public:
            raise error_at(module, "the module has no public func.func with a body to run",
                           NKIRuntimeError)
        fop = public[0]
    if fop.is_declaration:
        raise error_at(fop, f"func.func @{fop.sym_name.data} has no body", NKIRuntimeError)
    target = "trn2"
    t = module.attributes.get("nisa.target")
    if isinstance(t, TargetAttr):
        target = t.target.data
    return _Decoder(target).function(fop)


def _is_float_type(t) -> bool:
    try:
        return dtypes.is_float(dtypes.from_mlir(t))
    except KeyError:
        return False


class _Decoder:
    def __init__(self, target: str):
        self.target = target
        self.nslots = 1
        self.slot_of: dict[SSAValue, int] = {}
        self.bufs: dict[SSAValue, _Buf] = {}
        self.template: dict[int, object] = {}
        self.consts: dict[SSAValue, object] = {}
        self.count = 0

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

    def buffer_info(self, op, v: SSAValue, slot: int) -> _Buf:
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
        return _Buf(slot, flags, shape, dt, space, v)

    def use(self, op: Operation, v: SSAValue | None, role: str) -> int:
        try:
            return self.slot_of[v]  # type: ignore[index]
        except KeyError:
            raise error_at(op, f"{op.name}: operand '{role}' is not defined by an op the "
                               f"interpreter executes", NKIRuntimeError) from None

    def buf(self, op: Operation, v: SSAValue | None, role: str) -> _Buf:
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

    def const_value(self, v: SSAValue):
        return self.consts.get(v)

    # -------------------------------------------------------------- structure

    def function(self, fop: func.FuncOp) -> Program:
        block = fop.body.block
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
            elif _is_float_type(a.type):
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
        template: list = [None] * self.nslots
        for s, c in self.template.items():
            template[s] = c
        return Program(func_op=fop, target=self.target, body=body, template=template,
                       arg_slots=arg_slots, arg_specs=arg_specs, arg_names=arg_names,
                       ret_slots=ret_slots, ret_specs=ret_specs, instruction_count=self.count)

    def block(self, block: Block) -> list[Closure]:
        out: list[Closure] = []
        for op in block.ops:
            handler = _HANDLERS.get(op.name)
            if handler is None:
                raise error_at(op, self.unsupported(op), NKIRuntimeError)
            if isinstance(op, nisa.NisaInstruction):
                self.count += 1
            c = handler(self, op)
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

    # -------------------------------------------------------------- builtin dialects

    def op_return(self, op: func.ReturnOp):
        return None  # handled by function()

    def op_yield(self, op: scf.YieldOp):
        if op.operands:
            raise error_at(op, "scf.yield with values (loop-carried values) is not supported by "
                               "the interpreter", NKIRuntimeError)
        return None

    def op_constant(self, op: arith.ConstantOp):
        attr = op.value
        t = op.result.type
        if isinstance(attr, IntegerAttr):
            value: object = int(attr.value.data)
            if _is_float_type(t):
                value = np.float32(value)
        elif isinstance(attr, FloatAttr):
            value = np.float32(attr.value.data)
        else:
            raise error_at(op, f"arith.constant: only scalar integer/index/float constants are "
                               f"supported, got {attr}", NKIRuntimeError)
        s = self.define(op.result, op)
        self.template[s] = value
        self.consts[op.result] = value
        return None

    def op_index_cast(self, op: Operation):
        src = self.use(op, op.operands[0], "in")
        if op.operands[0] in self.consts:
            s = self.define(op.results[0], op)
            self.template[s] = self.consts[op.results[0]] = int(self.consts[op.operands[0]])
            return None
        r = self.define(op.results[0], op)

        def run(env):
            env[r] = int(env[src])
        return run

    def op_int_binary(self, op: Operation):
        fn = _INT_BINARY[op.name]
        a, b = op.operands
        sa, sb = self.use(op, a, "lhs"), self.use(op, b, "rhs")
        if a in self.consts and b in self.consts:
            try:
                value = fn(int(self.consts[a]), int(self.consts[b]))
            except _Fault:
                pass
            else:
                s = self.define(op.results[0], op)
                self.template[s] = self.consts[op.results[0]] = value
                return None
        r = self.define(op.results[0], op)

        def run(env):
            env[r] = fn(env[sa], env[sb])
        return _guard(op, run)

    def op_for(self, op: scf.ForOp):
        if op.iter_args or op.res:
            raise error_at(op, "scf.for with iter_args (loop-carried values) is not supported by "
                               "the interpreter", NKIRuntimeError)
        lb, ub, st = (self.use(op, op.lb, "lowerBound"), self.use(op, op.ub, "upperBound"),
                      self.use(op, op.step, "step"))
        iv = self.define(op.body.block.args[0], op)
        body = tuple(self.block(op.body.block))

        def run(env):
            lo, hi, step = env[lb], env[ub], env[st]
            if step <= 0:
                raise _Fault(f"step must be positive, got {step}")
            for i in range(lo, hi, step):
                env[iv] = i
                for f in body:
                    f(env)
        return _guard(op, run)  # errors raised inside the body are already located

    def op_subview(self, op: memref.SubviewOp):
        src = self.buf(op, op.source, "source")
        offsets = list(op.static_offsets.get_values())
        sizes = list(op.static_sizes.get_values())
        strides = list(op.static_strides.get_values())
        if _DYNAMIC in sizes or _DYNAMIC in strides:
            raise error_at(op, "memref.subview: dynamic sizes or strides are not supported by the "
                               "interpreter", NKIRuntimeError)
        if len(offsets) != len(src.shape):
            raise error_at(op, f"memref.subview: {len(offsets)} offsets for a rank-"
                               f"{len(src.shape)} source", NKIRuntimeError)
        if any(s <= 0 for s in strides):
            raise error_at(op, f"memref.subview: strides must be positive, got {strides}",
                           NKIRuntimeError)
        res_shape = tuple(op.result.type.get_shape())
        keep, r = [], 0
        for size in sizes:
            if r < len(res_shape) and size == res_shape[r]:
                keep.append(True)
                r += 1
            elif size == 1:
                keep.append(False)
            else:
                raise error_at(op, f"memref.subview: sizes {sizes} do not match the result shape "
                                   f"{list(res_shape)}", NKIRuntimeError)
        if r != len(res_shape):
            raise error_at(op, f"memref.subview: sizes {sizes} do not match the result shape "
                               f"{list(res_shape)}", NKIRuntimeError)
        dyn_slots = [self.use(op, v, "offset") for v in op.offsets]
        res = self.define(op.result, op)
        rb = self.bufs[op.result]
        fsrc, fres = src.flags, rb.flags
        ss = src.slot
        src_type = str(op.source.type)

        def check(d: int, off: int) -> None:
            size, stride, dim = sizes[d], strides[d], src.shape[d]
            last = off + (size - 1) * stride
            if off < 0 or (size > 0 and last >= dim):
                raise _Fault(f"out-of-bounds access of 'source' ({src_type}): dim {d} has "
                             f"size {dim}, but the view covers [{off}, {last + 1})"
                             + (f" (offset {off}, size {size}, stride {stride})" if stride != 1 else
                                f" (offset {off} + size {size} > {dim})"))

        def index(d: int, off: int):
            if keep[d]:
                return slice(off, off + (sizes[d] - 1) * strides[d] + 1, strides[d])
            return off

        if not dyn_slots:
            try:
                for d, off in enumerate(offsets):
                    check(d, off)
            except _Fault as e:
                msg = str(e)

                def fail(env):
                    raise _Fault(msg)
                return _guard(op, fail)
            idx = tuple(index(d, off) for d, off in enumerate(offsets))
            if fsrc is None:
                def run(env):
                    env[res] = env[ss][idx]
            else:
                def run(env):
                    env[res] = env[ss][idx]
                    env[fres] = env[fsrc][idx]
            return _guard(op, run)

        plan = []  # per dim: (static offset or None, dyn slot)
        it = iter(dyn_slots)
        for off in offsets:
            plan.append((None, next(it)) if off == _DYNAMIC else (off, -1))
        plan_t = tuple(plan)
        ndim = len(offsets)

        def run(env):
            idx = []
            for d in range(ndim):
                off, ds = plan_t[d]
                if off is None:
                    off = env[ds]
                check(d, off)
                idx.append(index(d, off))
            t = tuple(idx)
            env[res] = env[ss][t]
            if fres is not None:
                env[fres] = env[fsrc][t]
        return _guard(op, run)

    # -------------------------------------------------------------- nisa: memory

    def op_alloc(self, op: nisa.AllocOp):
        s = self.define(op.result, op)
        b = self.bufs[op.result]
        shape, dt, space, fslot = b.shape, b.dtype, b.space, b.flags
        if space in HBM_SPACES:
            def run(env):
                env[s] = Memory.hbm(shape, dt)
            return _guard(op, run)
        attrs = {k: op.attributes.get(k) for k in ("nkim.partition", "nkim.offset", "nkim.bank")}
        if all(a is None for a in attrs.values()):  # unplaced: a private array per execution
            def run(env):
                data, flags = Memory.private(space, shape, dt)
                fill_sentinel(data)
                env[s] = data
                if fslot is not None:
                    env[fslot] = flags
            return _guard(op, run)
        vals = {}
        for k, a in attrs.items():
            if a is not None and not isinstance(a, IntegerAttr):
                raise error_at(op, f"nisa.alloc: attribute {k} must be an integer, got {a}",
                               NKIRuntimeError)
            vals[k] = None if a is None else int(a.value.data)
        p0 = vals["nkim.partition"] or 0
        try:
            off = (resolve_psum_offset(vals["nkim.offset"], vals["nkim.bank"]) if space == "psum"
                   else vals["nkim.offset"] or 0)
        except MemoryFault as e:
            raise error_at(op, f"nisa.alloc: {e}", NKIRuntimeError) from None
        cache = self.fresh()  # the typed view, created on first execution in each run

        def run(env):
            v = env[cache]
            if v is None:
                v = env[cache] = env[_STATE].mem.region(space, p0, off, shape, dt)
            data, flags = v
            fill_sentinel(data)
            env[s] = data
            if flags is not None:
                flags.fill(0)
                env[fslot] = flags
        return _guard(op, run)

    def op_release(self, op: nisa.ReleaseOp):
        return None

    # -------------------------------------------------------------- nisa: instructions

    def finish(self, op: Operation, impl: Closure, *written: _Buf) -> Closure:
        """Guard ``impl``; clear PSUM matmul flags of every written PSUM operand."""
        for b in written:
            if b is not None and b.flags is not None:
                impl = _with_flag_clear(impl, b.flags)
        return _guard(op, impl)

    @staticmethod
    def engine(op: Operation) -> str:
        e = op.properties.get("engine")
        return e.data if isinstance(e, StringAttr) else "unknown"

    @staticmethod
    def reader(b: _Buf, shape: tuple[int, ...]) -> Callable[[list], np.ndarray]:
        """Read ``b`` as float32 in ``shape`` (same element count)."""
        s = b.slot
        if b.shape == shape:
            return lambda env: nm.to_f32(env[s])
        return lambda env: nm.to_f32(env[s]).reshape(shape)

    def check_elems(self, op, dst: _Buf, *others: tuple[str, _Buf]) -> None:
        for role, b in others:
            if b.parts != dst.parts or b.free != dst.free:
                raise error_at(op, f"{op.name}: '{role}' is {list(b.shape)} but 'dst' is "
                                   f"{list(dst.shape)}; partition and per-partition element counts "
                                   f"must match", NKIRuntimeError)

    def op_dma_copy(self, op: nisa.DmaCopyOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        if int(np.prod(dst.shape)) != int(np.prod(src.shape)):
            raise error_at(op, f"nisa.dma_copy: dst has {int(np.prod(dst.shape))} elements but src "
                               f"has {int(np.prod(src.shape))}", NKIRuntimeError)
        d, s, shape = dst.slot, src.slot, dst.shape
        if dst.dtype == src.dtype:
            if dst.shape == src.shape:
                def run(env):
                    env[d][...] = env[s]
            else:
                def run(env):
                    env[d][...] = env[s].reshape(shape)
        else:
            store, read = nm.make_store(dst.dtype), self.reader(src, shape)

            def run(env):
                store(env[d], read(env))
        return self.finish(op, run, dst)

    def op_tensor_copy(self, op: nisa.TensorCopyOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        self.check_elems(op, dst, ("src", src))
        d, s, shape = dst.slot, src.slot, dst.shape
        exact = self.engine(op) != "scalar" and (
            dst.dtype == src.dtype or (dst.dtype in nm.INT32_TYPES and src.dtype in nm.INT32_TYPES))
        if exact:  # bit-exact copy (int32 <-> uint32 wraps)
            if dst.shape == src.shape:
                def run(env):
                    env[d][...] = env[s]
            else:
                def run(env):
                    env[d][...] = env[s].reshape(shape)
        else:
            store, read = nm.make_store(dst.dtype), self.reader(src, shape)

            def run(env):
                store(env[d], read(env))
        return self.finish(op, run, dst)

    def op_memset(self, op: nisa.MemsetOp):
        dst = self.buf(op, op.dst, "dst")
        if isinstance(op.value.type, MemRefType):
            raise error_at(op, "nisa.memset: 'value' must be a scalar", NKIRuntimeError)
        d, v = dst.slot, self.use(op, op.value, "value")
        store = nm.make_store(dst.dtype)
        int_value = isinstance(op.value.type, (IntegerType, IndexType))
        if int_value and dtypes.is_int(dst.dtype) and dst.dtype != np.bool_:
            dt = dst.dtype

            def run(env):
                env[d][...] = np.asarray(int(env[v]), dtype=np.int64).astype(dt)
        else:
            def run(env):
                store(env[d], np.float32(env[v]))
        return self.finish(op, run, dst)

    def op_tensor_tensor(self, op: nisa.TensorTensorArithOp):
        dst = self.buf(op, op.dst, "dst")
        lhs, rhs = self.buf(op, op.lhs, "lhs"), self.buf(op, op.rhs, "rhs")
        self.check_elems(op, dst, ("lhs", lhs), ("rhs", rhs))
        name = op.op.data
        shape, d, ls, rs = dst.shape, dst.slot, lhs.slot, rhs.slot
        bitvec = name in nm.BITVEC
        if bitvec:
            for role, b in (("lhs", lhs), ("rhs", rhs)):
                if not dtypes.is_int(b.dtype):
                    raise error_at(op, f"nisa.tensor_tensor_arith: op={name} works on integer "
                                       f"bits, but '{role}' is {dtypes.name_of(b.dtype)}",
                                   NKIRuntimeError)
        exact = bitvec or (lhs.dtype in nm.INT32_TYPES and rhs.dtype in nm.INT32_TYPES and
                           (self.engine(op) == "gpsimd" or dst.dtype in nm.INT32_TYPES)
                           and name in nm.ALU_INT)
        if exact:
            fn, store = nm.ALU_INT[name], nm.make_int_store(dst.dtype)
            lsh, rsh = lhs.shape != shape, rhs.shape != shape

            def run(env):
                a = env[ls].astype(np.int64)
                b = env[rs].astype(np.int64)
                store(env[d], fn(a.reshape(shape) if lsh else a, b.reshape(shape) if rsh else b))
        else:
            fn = nm.ALU.get(name)
            if fn is None:
                raise error_at(op, f"nisa.tensor_tensor_arith: op={name} is not supported",
                               NKIRuntimeError)
            store, ra, rb = nm.make_store(dst.dtype), self.reader(lhs, shape), self.reader(rhs, shape)

            def run(env):
                store(env[d], fn(ra(env), rb(env)))
        return self.finish(op, run, dst)

    def op_tensor_scalar(self, op: nisa.TensorScalarArithOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        self.check_elems(op, dst, ("src", src))
        shape, d = dst.shape, dst.slot
        op0 = op.op0.data
        op1 = op.op1.data if op.op1 is not None else None
        if (op1 is None) != (op.operand1 is None):
            raise error_at(op, "nisa.tensor_scalar_arith: op1 and operand1 must be given together",
                           NKIRuntimeError)
        rev = op.reverse_operands.data if op.reverse_operands is not None else "none_"
        rev0, rev1 = rev in ("first", "both"), rev in ("second", "both")
        bitvec = op0 in nm.BITVEC
        if op1 is not None and (op1 in nm.BITVEC) != bitvec:
            raise error_at(op, f"nisa.tensor_scalar_arith: op0={op0} and op1={op1} must be of the "
                               f"same class (both bitvec or both arithmetic)", NKIRuntimeError)
        table = nm.ALU_INT if bitvec else nm.ALU
        for o in (op0, op1):
            if o is not None and o not in table:
                raise error_at(op, f"nisa.tensor_scalar_arith: operator {o} is not supported",
                               NKIRuntimeError)
        f0 = table[op0]
        f1 = table[op1] if op1 is not None else None
        g0 = self.scalar(op, op.operand0, "operand0", shape, as_int=bitvec)
        g1 = self.scalar(op, op.operand1, "operand1", shape, as_int=bitvec) if op1 else None
        if bitvec:
            if not dtypes.is_int(src.dtype):
                raise error_at(op, f"nisa.tensor_scalar_arith: op0={op0} works on integer bits, but "
                                   f"'src' is {dtypes.name_of(src.dtype)}", NKIRuntimeError)
            s, reshape = src.slot, src.shape != shape
            store = nm.make_int_store(dst.dtype)

            def read(env):
                x = env[s].astype(np.int64)
                return x.reshape(shape) if reshape else x
        else:
            store, read = nm.make_store(dst.dtype), self.reader(src, shape)

        def run(env):
            x = read(env)
            a = g0(env)
            t = f0(a, x) if rev0 else f0(x, a)
            if f1 is not None:
                b = g1(env)
                t = f1(b, t) if rev1 else f1(t, b)
            store(env[d], t)
        return self.finish(op, run, dst)

    def op_activation(self, op: nisa.ActivationOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        self.check_elems(op, dst, ("src", src))
        name = op.op.data
        fn = nm.ACTIVATION.get(name)
        if fn is None:
            raise error_at(op, f"nisa.activation: op={name} is not supported (expected one of "
                               f"{', '.join(nm.ACTIVATION)})", NKIRuntimeError)
        shape, d, P = dst.shape, dst.slot, dst.parts
        read, store = self.reader(src, shape), nm.make_store(dst.dtype)
        scale_c, bias_c = self.const_value(op.scale), self.const_value(op.bias)
        gs = None if scale_c is not None and float(scale_c) == 1.0 else \
            self.scalar(op, op.scale, "scale", shape)
        gb = None if bias_c is not None and float(bias_c) == 0.0 else \
            self.scalar(op, op.bias, "bias", shape)
        rr = self.buf(op, op.reduce_res, "reduce_res") if op.reduce_res is not None else None
        cmd = op.reduce_cmd.data if op.reduce_cmd is not None else "idle"
        rop = op.reduce_op.data if op.reduce_op is not None else "add"
        if rop != "add":
            raise error_at(op, f"nisa.activation: reduce_op={rop} is not supported (only add)",
                           NKIRuntimeError)
        if cmd == "load_reduce":
            raise error_at(op, "nisa.activation: reduce_cmd=load_reduce is not supported by the "
                               "interpreter", NKIRuntimeError)
        if rr is not None and (rr.parts != P or rr.free != 1):
            raise error_at(op, f"nisa.activation: 'reduce_res' must be [{P}, 1], got "
                               f"{list(rr.shape)}", NKIRuntimeError)
        if cmd == "idle":
            cmd = "reset_reduce" if rr is not None else "idle"
        rr_slot = rr.slot if rr is not None else None
        rr_shape = rr.shape if rr is not None else None
        rr_store = nm.make_store(rr.dtype) if rr is not None else None

        def run(env):
            x = read(env)
            if gs is not None:
                x = x * gs(env)
            if gb is not None:
                x = x + gb(env)
            y = fn(x)
            store(env[d], y)
            if cmd != "idle":
                acc = env[_STATE].act_acc
                if cmd == "reset":
                    acc[:P] = 0
                else:
                    total = np.add.reduce(np.asarray(y, np.float64).reshape(P, -1), axis=1)
                    if cmd == "reduce":
                        acc[:P] += total.astype(np.float32)
                    else:  # reset_reduce
                        acc[:P] = total
            if rr_slot is not None:
                rr_store(env[rr_slot], env[_STATE].act_acc[:P].reshape(rr_shape))
        return self.finish(op, run, dst, rr)

    def op_reciprocal(self, op: nisa.ReciprocalOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        self.check_elems(op, dst, ("src", src))
        d, read, store = dst.slot, self.reader(src, dst.shape), nm.make_store(dst.dtype)
        one = np.float32(1.0)

        def run(env):
            store(env[d], np.divide(one, read(env)))
        return self.finish(op, run, dst)

    def op_tensor_reduce(self, op: nisa.TensorReduceArithOp):
        dst, src = self.buf(op, op.dst, "dst"), self.buf(op, op.src, "src")
        name = op.op.data
        n = int(op.num_r_dim.value.data)
        negated = bool(op.negated.value.data)
        free_dims = src.shape[1:]
        if not 1 <= n <= len(free_dims):
            raise error_at(op, f"nisa.tensor_reduce_arith: num_r_dim={n} must be between 1 and the "
                               f"number of free dims ({len(free_dims)})", NKIRuntimeError)
        kept = int(np.prod(free_dims[:len(free_dims) - n], dtype=np.int64))
        red = int(np.prod(free_dims[len(free_dims) - n:], dtype=np.int64))
        if dst.parts != src.parts or dst.free != kept:
            raise error_at(op, f"nisa.tensor_reduce_arith: dst must be [{src.parts}, {kept}...] "
                               f"({kept} element(s) per partition), got {list(dst.shape)}",
                           NKIRuntimeError)
        P, d, s, shape = src.parts, dst.slot, src.slot, dst.shape
        if name in nm.REDUCE_INT:
            if not dtypes.is_int(src.dtype):
                raise error_at(op, f"nisa.tensor_reduce_arith: op={name} works on integer bits, but "
                                   f"'src' is {dtypes.name_of(src.dtype)}", NKIRuntimeError)
            fn, store = nm.REDUCE_INT[name], nm.make_int_store(dst.dtype)

            def run(env):
                r = fn(env[s].astype(np.int64).reshape(P, kept, red))
                store(env[d], (-r if negated else r).reshape(shape))
        elif name in nm.REDUCE:
            fn, store = nm.REDUCE[name], nm.make_store(dst.dtype)

            def run(env):
                r = fn(nm.to_f32(env[s]).reshape(P, kept, red))
                store(env[d], (np.negative(r) if negated else r).reshape(shape))
        else:
            raise error_at(op, f"nisa.tensor_reduce_arith: op={name} is not a reduction operator "
                               f"(expected one of {', '.join([*nm.REDUCE, *nm.REDUCE_INT])})",
                           NKIRuntimeError)
        return self.finish(op, run, dst)

    def op_matmul(self, op: nisa.MatmulOp):
        dst = self.buf(op, op.dst, "dst")
        sta, mov = self.buf(op, op.stationary, "stationary"), self.buf(op, op.moving, "moving")
        K, M, N = sta.parts, sta.free, mov.free
        if mov.parts != K:
            raise error_at(op, f"nisa.matmul: contraction sizes differ: 'stationary' has {K} "
                               f"partitions, 'moving' has {mov.parts}", NKIRuntimeError)
        if dst.flags is None:
            raise error_at(op, f"nisa.matmul: 'dst' must be a PSUM tensor from a nisa.alloc (it "
                               f"needs PSUM placement to accumulate), got a tensor in {dst.space}",
                           NKIRuntimeError)
        d, fl, ss, ms, shape = dst.slot, dst.flags, sta.slot, mov.slot, dst.shape
        ones = flag_set_value(dst.dtype)
        if bool(op.is_transpose.value.data):
            if dst.parts != M or dst.free != K:
                raise error_at(op, f"nisa.matmul: with is_transpose, 'dst' must be [{M}, {K}], got "
                                   f"{list(shape)}", NKIRuntimeError)

            def run(env):  # bit-exact transpose of stationary (moving is the identity)
                env[d][...] = env[ss].reshape(K, M).T.reshape(shape)
                env[fl][...] = ones
            return _guard(op, run)
        if dst.parts != M or dst.free != N:
            raise error_at(op, f"nisa.matmul: 'dst' must be [{M}, {N}] (stationary free x moving "
                               f"free), got {list(shape)}", NKIRuntimeError)
        mode = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
        if mode not in nisa.ACCUMULATE:
            raise error_at(op, f"nisa.matmul: psum_accumulate_flags={mode} is not supported",
                           NKIRuntimeError)
        store = nm.make_store(dst.dtype)

        def product(env):
            # contiguous copies: BLAS is ~15x faster than NumPy's strided fallback
            s = np.ascontiguousarray(nm.to_f32(env[ss])).reshape(K, M)
            m = np.ascontiguousarray(nm.to_f32(env[ms])).reshape(K, N)
            return np.matmul(s.T, m).reshape(shape)

        if mode == "overwrite":
            def run(env):
                store(env[d], product(env))
                env[fl][...] = ones
        elif mode == "accumulate":
            def run(env):
                res = product(env)
                store(env[d], nm.to_f32(env[d]) + res)
                env[fl][...] = ones
        else:
            def run(env):
                res = product(env)
                dv, fv = env[d], env[fl]
                written = fv != 0
                if not written.any():
                    store(dv, res)
                elif written.all():
                    store(dv, nm.to_f32(dv) + res)
                else:
                    store(dv, np.where(written, nm.to_f32(dv) + res, res))
                fv[...] = ones
        return _guard(op, run)

    def op_transpose(self, op: nisa.NcTransposeOp):
        dst, data = self.buf(op, op.dst, "dst"), self.buf(op, op.data, "data")
        P, F = data.parts, data.free
        if dst.parts != F or dst.free != P:
            raise error_at(op, f"nisa.nc_transpose: 'dst' must be [{F}, {P}] (the transpose of "
                               f"'data'), got {list(dst.shape)}", NKIRuntimeError)
        d, s, shape = dst.slot, data.slot, dst.shape

        def run(env):
            env[d][...] = env[s].reshape(P, F).T.reshape(shape)
        return self.finish(op, run, dst)

    def iota_values(self, op: Operation, dst: _Buf) -> np.ndarray:
        """``offset + p*channel_multiplier + sum_k step_k*i_k`` as int32 ``[P, F]``."""
        pattern = op.pattern
        steps, counts = [], []
        for pair in pattern.data if isinstance(pattern, ArrayAttr) else ():
            if (not isinstance(pair, ArrayAttr) or len(pair.data) != 2
                    or not all(isinstance(x, IntegerAttr) for x in pair.data)):
                raise error_at(op, f"{op.name}: pattern must be a list of [step, count] pairs",
                               NKIRuntimeError)
            steps.append(int(pair.data[0].value.data))
            counts.append(int(pair.data[1].value.data))
        if int(np.prod(counts, dtype=np.int64)) != dst.free:
            raise error_at(op, f"{op.name}: the pattern {[[s, c] for s, c in zip(steps, counts)]} "
                               f"covers {int(np.prod(counts, dtype=np.int64))} elements per "
                               f"partition but 'dst' has {dst.free}", NKIRuntimeError)
        offset = int(op.offset.value.data)
        cm = int(op.channel_multiplier.value.data)
        free = np.zeros(tuple(counts), np.int64)
        for k, (step, count) in enumerate(zip(steps, counts)):
            ax = [1] * len(counts)
            ax[k] = count
            free = free + step * np.arange(count, dtype=np.int64).reshape(ax)
        vals = offset + cm * np.arange(dst.parts, dtype=np.int64)[:, None] + free.reshape(1, -1)
        return vals.astype(np.int32)  # int32 arithmetic wraps

    def op_iota(self, op: nisa.IotaOp):
        dst = self.buf(op, op.dst, "dst")
        vals = self.iota_values(op, dst).reshape(dst.shape)
        pre = np.empty(dst.shape, dst.dtype)
        nm.make_int_store(dst.dtype)(pre, vals)
        d = dst.slot

        def run(env):
            env[d][...] = pre
        return self.finish(op, run, dst)

    def op_affine_select(self, op: nisa.AffineSelectOp):
        dst, tru = self.buf(op, op.dst, "dst"), self.buf(op, op.on_true_tile, "on_true_tile")
        self.check_elems(op, dst, ("on_true_tile", tru))
        cmp = op.cmp_op.data
        if not cmp.startswith("is_"):
            raise error_at(op, f"nisa.affine_select: cmp_op={cmp} is not a comparison (expected "
                               f"is_eq, is_ne, is_lt, is_le, is_gt or is_ge)", NKIRuntimeError)
        vals = self.iota_values(op, dst).reshape(dst.shape)
        mask = nm.ALU_INT[cmp](vals.astype(np.int64), np.int64(0)) != 0
        read, store, d = self.reader(tru, dst.shape), nm.make_store(dst.dtype), dst.slot
        gf = self.scalar(op, op.on_false_value, "on_false_value", dst.shape)

        def run(env):
            store(env[d], np.where(mask, read(env), gf(env)))
        return self.finish(op, run, dst)


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise _Fault("division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise _Fault("division by zero")
    return a // b


def _trunc_rem(a: int, b: int) -> int:
    if b == 0:
        raise _Fault("remainder by zero")
    return a - b * _trunc_div(a, b)


def _floor_rem(a: int, b: int) -> int:
    if b == 0:
        raise _Fault("remainder by zero")
    return a % b


_INT_BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _trunc_div,
    "arith.divui": _floor_div,
    "arith.floordivsi": _floor_div,
    "arith.ceildivsi": lambda a, b: -_floor_div(-a, b),
    "arith.remsi": _trunc_rem,
    "arith.remui": _floor_rem,
    "arith.minsi": min,
    "arith.maxsi": max,
    "arith.minui": min,
    "arith.maxui": max,
}

_HANDLERS: dict[str, Callable[[_Decoder, Operation], Closure | None]] = {
    "func.return": _Decoder.op_return,
    "scf.yield": _Decoder.op_yield,
    "scf.for": _Decoder.op_for,
    "arith.constant": _Decoder.op_constant,
    "arith.index_cast": _Decoder.op_index_cast,
    "arith.index_castui": _Decoder.op_index_cast,
    "memref.subview": _Decoder.op_subview,
    "nisa.alloc": _Decoder.op_alloc,
    "nisa.release": _Decoder.op_release,
    "nisa.dma_copy": _Decoder.op_dma_copy,
    "nisa.tensor_copy": _Decoder.op_tensor_copy,
    "nisa.memset": _Decoder.op_memset,
    "nisa.tensor_tensor_arith": _Decoder.op_tensor_tensor,
    "nisa.tensor_scalar_arith": _Decoder.op_tensor_scalar,
    "nisa.activation": _Decoder.op_activation,
    "nisa.reciprocal": _Decoder.op_reciprocal,
    "nisa.tensor_reduce_arith": _Decoder.op_tensor_reduce,
    "nisa.matmul": _Decoder.op_matmul,
    "nisa.nc_transpose": _Decoder.op_transpose,
    "nisa.iota": _Decoder.op_iota,
    "nisa.affine_select": _Decoder.op_affine_select,
    **{name: _Decoder.op_int_binary for name in _INT_BINARY},
}
