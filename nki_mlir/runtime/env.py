"""The decoded form of a kernel: closures over a slot environment.

:func:`~.interpreter.decode` turns every op into a pre-bound closure ``f(env)`` (a
:data:`Closure`).  ``env`` is a flat list: slot :data:`STATE` holds the per-run
:class:`~.program.State`, every other slot an SSA value (a NumPy array for a tensor, a
Python ``int`` for an index, ``np.float32`` for a float scalar), the matmul-written flags
of a PSUM tensor, or a cache a closure owns.

This module holds what the closure builders share: the static facts of a tensor operand
(:class:`Buf`) and the helpers that guard a closure, clear PSUM matmul flags and inspect
operands.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from .. import dtypes
from ..diagnostics import OpSite, error_at, site_of
from ..errors import NKIError, NKIRuntimeError
from . import numerics as nm
from .memory import MemoryFault, free_elems

Closure = Callable[[list], None]

#: env slot of the per-run :class:`~.program.State`
STATE = 0


class Fault(Exception):
    """A runtime fault; re-raised as an NKIRuntimeError located at the executing op."""


class Buf:
    """Static facts of a buffer-typed SSA value (from its memref type).

    ``slot`` holds the array; ``flags`` the slot of its PSUM matmul-written flags (None
    outside PSUM); ``shape`` is ``(partitions, free dims...)``; ``space`` the memory space
    name (``"hbm"``, ``"sbuf"``, ``"psum"``, ...); ``dtype`` the dtype its elements are
    stored in and ``declared`` its type's (they differ for a bf16 / fp8 tensor stored as
    float32 with ``NKI_PRECISE_FP=0``, :mod:`.precise_fp`; default: ``dtype``).  Plain data,
    not the value itself: closures keep Bufs, and a decoded program holds none of the
    compile's IR (:mod:`.ir_release`).
    """

    __slots__ = ("slot", "flags", "shape", "dtype", "space", "declared")

    def __init__(self, slot, flags, shape, dtype, space, declared=None):
        self.slot, self.flags, self.shape, self.dtype, self.space = slot, flags, shape, dtype, space
        self.declared = dtype if declared is None else declared

    @property
    def parts(self) -> int:
        return self.shape[0]

    @property
    def free(self) -> int:
        return free_elems(self.shape)


def located(op: Operation, e: Exception) -> tuple[NKIRuntimeError, Exception | None]:
    """The NKIRuntimeError located at ``op`` for a failure ``e`` while it executed, and the
    exception to chain it to (None for a runtime fault: its message says it all)."""
    if isinstance(e, (Fault, MemoryFault)):
        return error_at(op, f"{op.name}: {e}", NKIRuntimeError), None
    # never leak a raw traceback to the user
    return error_at(op, f"{op.name}: internal error while executing this instruction: "
                        f"{type(e).__name__}: {e}", NKIRuntimeError), e


class Guarded:
    """``impl`` guarded: any failure becomes an NKIRuntimeError located at ``op``
    (:func:`located`).  ``guarded`` is ``(op, impl)``, so a caller adding another layer can
    guard ``impl`` itself and save a call; ``program_order`` (when set) is the closure a
    program-order run calls instead (:func:`program_order`).

    An object with slots rather than a closure: a decoded kernel holds one per op, and a
    closure is a function, its cells and their tuple -- objects every full collection of
    the cyclic garbage collector walks (a large unrolled kernel holds millions)."""

    __slots__ = ("op", "impl", "program_order")

    def __init__(self, op: OpSite, impl: Closure):
        self.op, self.impl = op, impl

    def __call__(self, env):
        try:
            self.impl(env)
        except NKIError:
            raise
        except Exception as e:  # noqa: BLE001
            err, cause = located(self.op, e)
            raise err from cause

    @property
    def guarded(self) -> tuple[OpSite, Closure]:
        return self.op, self.impl


class Queued:
    """An instruction's closure as a decoded body holds it (:func:`.queues.wrap`): in
    program order it runs ``closure`` (its ``program_order``, what :func:`program_order`
    puts in a program-order body), in queue mode it enqueues it with its static queue facts
    ``info`` (a :class:`.queues.Info`).  An object with slots, like :class:`Guarded`."""

    __slots__ = ("info", "program_order")

    def __init__(self, info, closure: Closure):
        self.info, self.program_order = info, closure

    def __call__(self, env):
        qr = env[STATE].queues
        if qr is None:
            self.program_order(env)
        else:
            qr.enqueue(self.info, self.program_order, env)


def guard(op: Operation, impl: Closure) -> Closure:
    """Wrap ``impl`` so that any failure becomes an NKIRuntimeError located at ``op``
    (:func:`located`; a :class:`Guarded`, which keeps ``op``'s
    :class:`~nki_mlir.diagnostics.OpSite`, not the op: a decoded program holds none of the
    compile's IR).  The wrapper's
    ``guarded`` attribute is ``(site, impl)``, so a caller adding another layer can guard
    ``impl`` itself and save a call."""
    return Guarded(site_of(op), impl)


def program_order(body) -> tuple[tuple[Closure, ...], dict]:
    """``(closures, ops)``: the closures of ``body`` (a decoded block) as a program-order run
    calls them -- each instruction's own closure, not its queue-mode wrapper
    (:func:`.queues.wrap`), and without its :func:`guard` -- and ``ops``, the op of every
    unguarded closure.  The caller runs the closures inside one ``try`` and locates a
    failure with :func:`raise_located` (one Python call per op instead of three)."""
    out, ops = [], {}
    for f in body:
        f = getattr(f, "program_order", f)
        if type(f) is Guarded:
            ops[f.impl] = f.op
            f = f.impl
        else:
            g = getattr(f, "guarded", None)
            if g is not None:
                op, f = g
                ops[f] = op
        out.append(f)
    return tuple(out), ops


def raise_located(ops: dict, f, e: Exception) -> None:
    """Re-raise ``e``, raised by the closure ``f`` of :func:`program_order`, as its guard
    would have (:func:`located` at ``f``'s op; ``e`` itself when ``f`` was not guarded)."""
    op = ops.get(f)
    if op is None:
        raise e
    err, cause = located(op, e)
    raise err from cause


def _with_flag_clear(impl: Closure, fslot: int) -> Closure:
    """A non-matmul write to PSUM: clear the matmul-written flags of the written region."""
    def run(env):
        impl(env)
        env[STATE].mem.set_flags(env[fslot], False)
    return run


def finish(op: Operation, impl: Closure, *written: Buf | None) -> Closure:
    """Guard ``impl``; clear PSUM matmul flags of every written PSUM operand."""
    for b in written:
        if b is not None and b.flags is not None:
            impl = _with_flag_clear(impl, b.flags)
    return guard(op, impl)


#: bytes of temporaries :func:`scratch` keeps per machine state (past it, it starts over)
SCRATCH_BYTES = 32 << 20


def scratch(env: list, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """A temporary of ``shape`` / ``dt`` kept with the run's state and reused by every
    instruction (a fresh large array per instruction costs page faults).  Its contents are
    garbage and must not be relied on after the instruction that asked for it.  At most
    :data:`SCRATCH_BYTES` are kept per state (pooled states are released when idle)."""
    key = (shape, dt)
    kept = env[STATE].scratch
    a = kept.get(key)
    if a is None:
        a = np.empty(shape, dt)
        if a.nbytes <= SCRATCH_BYTES:
            if sum(x.nbytes for x in kept.values()) + a.nbytes > SCRATCH_BYTES:
                kept.clear()
            kept[key] = a
    return a


_BF16 = np.dtype(dtypes.bfloat16)
_U32 = np.dtype(np.uint32)


def f32_scratch(env: list, a: np.ndarray) -> np.ndarray:
    """``nm.to_f32(a)`` (the same bits) written into a :func:`scratch` array of ``a``'s shape
    instead of a fresh one: a bfloat16 ``a`` by one shift of its bits into the high halves,
    any other dtype by NumPy's cast.  Valid until the instruction asks for another scratch
    array of that shape as float32 bits (kept under the ``uint32`` key, apart from a float32
    result of the same shape)."""
    out = scratch(env, a.shape, _U32)
    if a.dtype == _BF16:
        np.left_shift(a.view(np.uint16), np.uint32(16), out=out, dtype=np.uint32)
        return out.view(nm.F32)
    out = out.view(nm.F32)
    np.copyto(out, a, casting="unsafe")
    return out


def writes_f32(dst: "Buf") -> bool:
    """Whether an engine's float32 results may be computed straight into ``dst`` (a float32
    tensor: the store is then the identity, so ``out=dst`` gives the same bits)."""
    return np.dtype(dst.dtype) == nm.F32


def is_float_type(t) -> bool:
    """Whether the MLIR type ``t`` is an NKI float dtype."""
    try:
        return dtypes.is_float(dtypes.from_mlir(t))
    except KeyError:
        return False


def engine(op: Operation) -> str:
    """The op's ``engine`` property (``"vector"``, ``"scalar"``, ``"gpsimd"``, ...)."""
    e = op.properties.get("engine")
    return e.data if isinstance(e, StringAttr) else "unknown"


def reader(b: Buf, shape: tuple[int, ...]) -> Callable[[list], np.ndarray]:
    """Read ``b`` as float32 in ``shape`` (same element count)."""
    s = b.slot
    if np.dtype(b.dtype) == nm.F32:     # to_f32 is the identity on a float32 array
        if b.shape == shape:
            return operator.itemgetter(s)          # env[s], no Python frame
        return lambda env: env[s].reshape(shape)
    if b.shape == shape:
        return lambda env: nm.to_f32(env[s])
    return lambda env: nm.to_f32(env[s]).reshape(shape)


def check_elems(op: Operation, dst: Buf, *others: tuple[str, Buf]) -> None:
    """Check that every ``(role, buf)`` has ``dst``'s partition and per-partition counts."""
    for role, b in others:
        if b.parts != dst.parts or b.free != dst.free:
            raise error_at(op, f"{op.name}: '{role}' is {list(b.shape)} but 'dst' is "
                               f"{list(dst.shape)}; partition and per-partition element counts "
                               f"must match", NKIRuntimeError)
