"""The index-pattern instructions on GpSimd: iota and affine_select.

Both evaluate the affine pattern ``offset + p*channel_multiplier + sum_k step_k*i_k`` over
``dst``'s partitions ``p`` and its ``[step, count]`` free-dim pattern ``i_k``, in int32
(wrapping), once at decode time, plus the run-time ``offset_index`` when the API's
``offset`` is an affine expression of loop indices (so the loop stays rolled).  ``iota`` stores the values (cast to ``dst``'s dtype);
``affine_select`` keeps ``on_true_tile`` where ``cmp_op(value, 0)`` holds and
``on_false_value`` elsewhere (its ``nisa`` op spells ``cmp_op`` as AWS's ALU ops do:
``greater_equal`` -> ``is_ge``).  Semantics: the NKI ``nki.isa.iota`` and
``nki.isa.affine_select`` API pages (nki/api/generated/nki.isa.iota,
nki/api/generated/nki.isa.affine_select).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import free_size
from ..dialects.ods import Engine, Int, OpToken, Scalar, Stream, Tile
from ..dialects.ods_forms import IsaForm, LoopIndex, PairList
from ..dialects.vector_rules import ARITH_NAMES, ARITH_OPS
from ..errors import NKIRuntimeError
from ..frontend.isa_calls import loop_offset
from ..runtime import numerics as nm
from ..runtime.env import Buf, check_elems, finish, reader
from .define import instruction

#: the comparisons ``affine_select`` takes (``nl.<name>``)
CMP_OPS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")


def split_offset(cg, api, args) -> None:
    """The ``call`` hook: ``offset`` -> its constant part and ``offset_index`` (the SSA
    ``index`` of its loop-index part, or None)."""
    args["offset"], args["offset_index"] = loop_offset(cg, api, args["offset"])


def verify_pattern(op: Operation) -> None:
    """``pattern`` is a list of ``[step, count]`` pairs covering ``dst``'s elements per
    partition; else VerifyException."""
    count = 1
    for pair in op.pattern.data:
        if not isinstance(pair, ArrayAttr) or len(pair.data) != 2:
            raise VerifyException(f"{op.name}: pattern must be a list of [step, count] pairs")
        count *= pair.data[1].value.data
    if count != free_size(op.dst):
        raise VerifyException(f"{op.name}: the pattern covers {count} elements per partition but "
                              f"dst has {free_size(op.dst)}")


def gpsimd_rules(op: Operation, roles: tuple[str, ...], why: str) -> None:
    """The rules of a GpSimd-only instruction on the tiles ``roles``: start partition, no
    PSUM (the error says ``why``), SBUF, the engine, and the pattern."""
    rules.core(op, roles, "gpsimd", why=why)
    for r in roles:
        rules.tile(op, r, getattr(op, r), spaces=("sbuf",))
    verify_pattern(op)
    rules.engine(op, ("gpsimd",))


def _iota_values(op: Operation, dst: Buf) -> np.ndarray:
    """``offset + p*channel_multiplier + sum_k step_k*i_k`` as int64 ``[P, F]`` (without the
    run-time ``offset_index``)."""
    steps, counts = [], []
    for pair in op.pattern.data if isinstance(op.pattern, ArrayAttr) else ():
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
    return offset + cm * np.arange(dst.parts, dtype=np.int64)[:, None] + free.reshape(1, -1)


def pattern_values(dec, op: Operation, dst: Buf) -> Callable[[list], np.ndarray]:
    """A getter of the pattern's int32 values (int32 arithmetic wraps), shaped as ``dst``:
    computed once at decode time, plus the run-time ``offset_index`` when there is one."""
    base = _iota_values(op, dst).reshape(dst.shape)
    if op.offset_index is None:
        vals = base.astype(np.int32)
        return lambda env: vals
    off = dec.scalar(op, op.offset_index, "offset_index", dst.shape, as_int=True)
    return lambda env: (base + off(env)).astype(np.int32)


@instruction
class iota:
    """``dst[p, i...] = offset + p*channel_multiplier + sum_k step_k * i_k`` on the GpSimd
    engine, for ``pattern = [[step, count], ...]`` (computed in int32, wrapping, and cast to
    ``dst``'s dtype).

    ``dst``: an SBUF tile whose elements per partition the pattern covers (the product of
    the counts).  ``pattern``: a list of ``[step, count]`` integer pairs over the free dims.
    ``offset``: an integer, or an affine expression of loop indices (its loop-index part is
    computed at run time, as the ops' ``offset_index`` operand).  ``channel_multiplier``: an
    integer step per partition.

    Raises ``NKITypeError`` for a pattern that is not a list of integer pairs or another
    offset, and ``NKIVerifyError`` for a ``dst`` outside SBUF or a pattern of another size.
    NKI docs: ``nki.isa.iota`` (nki/api/generated/nki.isa.iota).
    """

    dst = Tile(writes=True, spaces=None)
    pattern = PairList()
    offset = Int(default=0)
    channel_multiplier = Int(default=0)
    offset_index = LoopIndex()
    engine = Engine("gpsimd", param=False, checked=False)
    order = ("dst", "offset_index", "pattern", "offset", "channel_multiplier")
    full_writes = ("dst",)
    cost = Stream("dst", source="ISA_OLD iota: GPSIMD_START then ~N")
    call = split_offset

    def verify(op):
        gpsimd_rules(op, ("dst",), " (iota is a GpSimd instruction)")

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        values = pattern_values(dec, op, dst)
        store, d = nm.make_int_store(dst.dtype), dst.slot
        if op.offset_index is None:  # the same values every time: converted once
            pre = np.empty(dst.shape, dst.dtype)
            store(pre, values(None))

            def run(env):
                env[d][...] = pre
        else:
            def run(env):
                store(env[d], values(env))
        return finish(op, run, dst)


def _default_equal(cg, args, operands, props, emit):
    """``cmp_op=None`` means ``nl.equal``."""
    if props["cmp_op"] is None:
        props["cmp_op"] = "equal"
    emit()


def _select_rules(op: Operation) -> None:
    gpsimd_rules(op, ("dst", "on_true_tile"), " (affine_select is a GpSimd instruction)")


@instruction
class affine_select:
    """``dst = on_true_tile where cmp_op(value, 0) else on_false_value`` on the GpSimd engine,
    ``value = offset + p*channel_multiplier + sum_k step_k * i_k`` the affine pattern of
    ``iota`` (int32) at each element.

    ``dst`` / ``on_true_tile``: SBUF tiles with the same partition count and elements per
    partition, which the pattern covers.  ``pattern``: a list of ``[step, count]`` integer
    pairs.  ``channel_multiplier``: an integer.  ``on_false_value``: a compile-time number
    (cast to ``dst``'s dtype).  ``cmp_op``: ``nl.equal`` (the default), ``nl.not_equal``,
    ``nl.greater``, ``nl.greater_equal``, ``nl.less`` or ``nl.less_equal``.  ``offset``: an
    integer, or an affine expression of loop indices (its loop-index part computed at run
    time, as the ops' ``offset_index`` operand).

    Raises ``NKITypeError`` for another comparison, pattern, offset or a tensor
    ``on_false_value``, and ``NKIVerifyError`` for another memory, shape or pattern size.
    NKI docs: ``nki.isa.affine_select`` (nki/api/generated/nki.isa.affine_select).
    """

    dst = Tile(writes=True, spaces=None, like="on_true_tile")
    pattern = PairList()
    channel_multiplier = Int()
    on_true_tile = Tile(spaces=None)
    on_false_value = Scalar(const=True)
    cmp_op = OpToken(allowed=CMP_OPS, optional=True)
    offset = Int(default=0)
    offset_index = LoopIndex()
    engine = Engine("gpsimd", param=False, checked=False)
    order = ("dst", "on_true_tile", "on_false_value", "offset_index", "pattern", "offset",
             "channel_multiplier", "cmp_op")
    elementwise = True
    cost = Stream("on_true_tile", source="ISA_OLD affine_select: GPSIMD_START then ~N")
    isa = IsaForm("affine_select",
                  dst=Tile(writes=True, spaces=None, like="on_true_tile"),
                  on_true_tile=Tile(spaces=None), on_false_value=Scalar(const=True),
                  offset_index=LoopIndex(), pattern=PairList(), offset=Int(),
                  channel_multiplier=Int(), cmp_op=OpToken(allowed=ARITH_NAMES),
                  spellings={"cmp_op": ARITH_OPS}, verify=_select_rules)
    call = split_offset
    frontend = _default_equal
    verify = _select_rules

    def interpret(dec, op):
        dst, tru = dec.buf(op, op.dst, "dst"), dec.buf(op, op.on_true_tile, "on_true_tile")
        check_elems(op, dst, ("on_true_tile", tru))
        cmp = op.cmp_op.data
        if not cmp.startswith("is_"):
            raise error_at(op, f"nisa.affine_select: cmp_op={cmp} is not a comparison (expected "
                               f"is_eq, is_ne, is_lt, is_le, is_gt or is_ge)", NKIRuntimeError)
        values, fn = pattern_values(dec, op, dst), nm.ALU_INT[cmp]
        read, store, d = reader(tru, dst.shape), nm.make_store(dst.dtype), dst.slot
        gf = dec.scalar(op, op.on_false_value, "on_false_value", dst.shape)

        def run(env):
            mask = fn(values(env).astype(np.int64), np.int64(0)) != 0
            store(env[d], np.where(mask, read(env), gf(env)))
        return finish(op, run, dst)
