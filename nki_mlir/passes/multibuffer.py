"""Multi-buffering of tensors allocated in ``affine_range`` bodies (docs/backend.md section B).

A tensor allocated in the body of a loop is a new tensor in every iteration.  Giving it
``k`` rotating copies (iteration ``i`` uses copy ``i mod k``) lets iteration ``i+1`` fill
one copy while iteration ``i`` still reads another, so the iterations of an
``affine_range`` (which carry no dependence, NKI error catalogue (nki.errors)) can overlap.

Eligible allocs (:func:`rotation_nest`): on-chip, not directly allocated
(``nkim.address``), whose innermost enclosing loop is ``scf.for`` with
``nki.range = "affine"``, and all of whose ancestors up to the function are ``scf.for``
loops with constant bounds and step (so no ``scf.if`` / ``scf.while`` / dynamic loop in
between).  Their slot is the linear iteration number of the innermost loop over the
whole run, computed from the induction variables, outermost first::

    slot = ((iv0 - lb0) / step0 * trips1 + (iv1 - lb1) / step1) * trips2 + ...

(loops of one trip contribute nothing and are skipped; ``- lb`` is omitted for ``lb = 0``
and ``/ step`` for ``step = 1``).  Under the conditions above this equals serial(L) of
docs/backend.md section A.  The IR passes the linear number; the consumer takes ``slot mod k``.

Copy ``c`` lives at ``nkim.offset + c * nkim.copy_stride``.  Strides (bytes per partition):

- SBUF: the size rounded up to the tensor's alignment;
- PSUM: a copy must not straddle a 2 KiB bank, so a tensor of at most one bank gets the
  smallest power of two >= max(size, alignment) (and is placed at a multiple of it, so
  every copy stays inside one bank); a larger one gets whole banks per copy.

The number of copies (2 <= k <= 4, k <= total iterations) is decided by ``nisa-allocate``
(see its docstring for the policy); this module only analyses loops and emits the IR.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ..dialects.nisa import AllocOp

ATTR_COPIES = "nkim.copies"
ATTR_COPY_STRIDE = "nkim.copy_stride"
ATTR_RANGE = "nki.range"
#: the most rotating copies a tensor gets (issue 5: 2-4 copies)
MAX_COPIES = 4


@dataclass(frozen=True)
class StaticLoop:
    """An ``scf.for`` with constant bounds: its induction variable, lb, step and trip count."""

    op: Operation
    iv: SSAValue
    lb: int
    step: int
    trips: int


@dataclass(frozen=True)
class RotationNest:
    """The loops around a multi-bufferable alloc, outermost first (the last one is affine)."""

    loops: tuple[StaticLoop, ...]

    @property
    def total_iterations(self) -> int:
        """How many times the alloc executes in one run (product of the trip counts)."""
        n = 1
        for loop in self.loops:
            n *= loop.trips
        return n

    def slot(self, ivs: tuple[int, ...]) -> int:
        """The linear iteration number for induction-variable values (outermost first):
        what the ops of :func:`emit_slot` compute (a reference for tests)."""
        n = 0
        for loop, iv in zip(self.loops, ivs):
            n = n * loop.trips + (iv - loop.lb) // loop.step
        return n


def _constant(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def static_loop(op: Operation) -> StaticLoop | None:
    """``op`` as a :class:`StaticLoop` if it is an ``scf.for`` with constant lb/ub/step."""
    if op.name != "scf.for":
        return None
    lb, ub, step = (_constant(v) for v in op.operands[:3])
    if lb is None or ub is None or step is None or step <= 0:
        return None
    trips = max(0, -(-(ub - lb) // step))
    return StaticLoop(op, op.regions[0].blocks[0].args[0], lb, step, trips)


def rotation_nest(alloc: AllocOp) -> RotationNest | None:
    """The loop nest if ``alloc`` may be multi-buffered (module docstring), else None."""
    if "nkim.address" in alloc.attributes:
        return None
    loops: list[StaticLoop] = []
    node = alloc.parent_op()
    while node is not None and node.name != "func.func":
        loop = static_loop(node)
        if loop is None:
            return None
        loops.append(loop)
        node = node.parent_op()
    if node is None or not loops:
        return None
    kind = loops[0].op.attributes.get(ATTR_RANGE)
    if getattr(kind, "data", None) != "affine":
        return None
    return RotationNest(tuple(reversed(loops)))


def max_copies_for(nest: RotationNest | None, limit: int) -> int:
    """The most copies an alloc may get: min(limit, 4, total iterations), 1 if < 2."""
    if nest is None:
        return 1
    k = min(limit, MAX_COPIES, nest.total_iterations)
    return k if k >= 2 else 1


def _next_pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def copy_stride(size: int, alignment: int, bank: int | None) -> tuple[int, int] | None:
    """``(stride, placement alignment)`` for rotating copies of a ``size``-byte tensor, or
    None if it cannot rotate (a PSUM alignment that does not divide a bank)."""
    if bank is None:
        return -(-size // alignment) * alignment, alignment
    if size > bank:
        return -(-size // bank) * bank, bank
    stride = _next_pow2(max(size, alignment))
    if stride > bank or bank % stride:
        return None
    return stride, stride


def emit_slot(alloc: AllocOp, nest: RotationNest) -> SSAValue:
    """Insert the arith ops computing the slot right before ``alloc``; returns the slot."""
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        op.location = alloc.location
        ops.append(op)
        return op.results[0]

    def const(v: int) -> SSAValue:
        return add(arith.ConstantOp(IntegerAttr(v, IndexType())))

    slot: SSAValue | None = None
    for loop in nest.loops:
        if loop.trips <= 1:
            continue
        term = loop.iv
        if loop.lb:
            term = add(arith.SubiOp(term, const(loop.lb)))
        if loop.step != 1:
            term = add(arith.DivUIOp(term, const(loop.step)))
        if slot is not None:
            slot = add(arith.AddiOp(add(arith.MuliOp(slot, const(loop.trips))), term))
        else:
            slot = term
    if slot is None:        # every loop runs once: the slot is always 0
        slot = const(0)
    if slot.name_hint is None and ops:
        slot.name_hint = "slot"
    Rewriter.insert_op(ops, InsertPoint.before(alloc))
    return slot


def set_copies(alloc: AllocOp, copies: int, stride: int, nest: RotationNest,
               slots: dict[Operation, SSAValue] | None = None) -> None:
    """Annotate ``alloc`` with ``copies`` rotating copies ``stride`` bytes apart and give it
    its ``copy(%slot)`` operand.  ``slots`` (innermost loop -> slot) shares one slot
    computation among the allocs of a loop body when they are annotated in program order
    (they all sit in that body's block, after the first one)."""
    alloc.attributes[ATTR_COPIES] = IntegerAttr(copies, i64)
    alloc.attributes[ATTR_COPY_STRIDE] = IntegerAttr(stride, i64)
    loop = nest.loops[-1].op
    slot = slots.get(loop) if slots is not None else None
    if slot is None:
        slot = emit_slot(alloc, nest)
        if slots is not None:
            slots[loop] = slot
    alloc.operands = (slot,)


def clear_copies(alloc: AllocOp) -> None:
    """Drop a previous run's rotation (so that nisa-allocate can run again on its output)."""
    alloc.attributes.pop(ATTR_COPIES, None)
    alloc.attributes.pop(ATTR_COPY_STRIDE, None)
    if alloc.copy_index is not None:
        alloc.operands = ()
