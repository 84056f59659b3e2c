"""Selection, search and sequence instructions: select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, sequence_bounds, nonzero_with_count, topk.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`); AWS shows none of them, so the ``nisa`` ops keep the
``nki.isa`` names, operand roles and NKI op-token spellings (``reduce_op=maximum``,
``comp_op0=less``) and lower 1:1.  Engines: VectorE for the first six, GpSimd for
``sequence_bounds`` / ``nonzero_with_count`` / ``topk`` (NKI docs: "using GpSIMD Engine").

Semantics, defaults and limits: nki.isa API reference (nki/api/nki/isa) and the NKI 0.6 ``nki.isa`` API
page (aws-neuron-sdk ``nki/api/nki/isa/__init__.py``); readings of what the docs leave
open are stated on each op and in :mod:`nki_mlir.runtime.isa_select`.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import describe, dtype_of, free_size, shape_of
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp

#: reduce_cmd values the VectorE select instructions accept (no ``load_reduce``: they have
#: no ``reduce_init`` operand)
SELECT_REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce")
#: comparison tokens of ``range_select``
RANGE_CMPS = ("equal", "less", "less_equal", "greater", "greater_equal")
#: ``range_select``'s only legal ``on_false_value`` (the hardware fills with FP32_MIN)
FP32_MIN = -3.4028234663852886e38
#: per-partition element limits of max8 / nc_find_index8 / nc_match_replace8
MAX8_MIN, MAX8_MAX = 8, 16384

_INT8_16 = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16)
_UINT = (dtypes.uint8, dtypes.uint16, dtypes.uint32)
_INDEX = (dtypes.uint16, dtypes.uint32)


def _name(dt) -> str:
    return dtypes.name_of(dt)


def _dtype_in(op, role: str, v: SSAValue | None, allowed, what: str) -> None:
    if v is None or not isinstance(v.type, MemRefType):
        return
    if dtype_of(v) not in allowed:
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {_name(dtype_of(v))}, but it "
                              f"must be {what}")


def _float_dtype(op, role: str, v: SSAValue | None) -> None:
    if v is not None and isinstance(v.type, MemRefType) and not dtypes.is_float(dtype_of(v)):
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {_name(dtype_of(v))}, but it "
                              f"must be a float type")


def _per_partition_count(op, role: str, v: SSAValue, lo: int, hi: int) -> None:
    n = free_size(v)
    if not lo <= n <= hi:
        raise VerifyException(f"{rules.api(op)}: '{role}' has {n} elements per partition, but "
                              f"{rules.api(op)} needs {lo}..{hi}")


def _max_rank(op, role: str, v: SSAValue, rank: int) -> None:
    if len(shape_of(v)) > rank:
        raise VerifyException(f"{rules.api(op)}: '{role}' is {len(shape_of(v))}-D "
                              f"({describe(v)}); at most {rank}-D is supported")


def _eight_wide(op, role: str, v: SSAValue, parts: int) -> None:
    """``v`` is a 2-D ``[parts, 8]`` tile."""
    rules.tile(op, role, v)
    if shape_of(v) != (parts, 8):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be a 2-D [{parts}, 8] tile, got "
                              f"{describe(v)}")


def _reduce(op) -> None:
    """The shared VectorE accumulator options: reduce_op=maximum, reduce_cmd, reduce_res[P,1]."""
    rules.enum(op, "reduce_op", ("maximum",))
    rules.enum(op, "reduce_cmd", SELECT_REDUCE_CMDS)
    rr = op.reduce_res
    if rr is not None:
        rules.per_partition_vector(op, "reduce_res", rr, shape_of(op.dst)[0])
        _float_dtype(op, "reduce_res", rr)


def _const_float(v: SSAValue) -> float | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    return None


def _int_prop(op, name: str, default: int = 0) -> int:
    a = op.properties.get(name)
    return int(a.value.data) if isinstance(a, IntegerAttr) else default


# ----------------------------------------------------------------------- VectorE


class _SelectReduce(KeywordOp):
    """``nisa.select_reduce(dst, predicate, on_true, on_false, reduce_res, reduce_cmd, reduce_op, reverse_pred)``.

    ``dst = where(predicate != 0 (xor reverse_pred), on_true, on_false)``; ``on_false`` is
    an f32 scalar or a ``[P, 1]`` tile.  ``predicate`` is int8/uint8/int16/uint16 and has
    dst's partition and per-partition element counts, as has ``on_true`` (any dtype but
    int32/uint32); ``on_true`` and ``predicate`` are not both in PSUM.  With ``reduce_cmd``
    the per-partition max of the selected values goes through the VectorE accumulators;
    ``reduce_res`` (``[P, 1]``, float) reads them out.  ``reduce_op`` is ``maximum`` only.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    predicate = operand_def(MemRefType)
    on_true = operand_def(MemRefType)
    on_false = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    reduce_cmd = opt_prop_def(StringAttr)
    reduce_op = opt_prop_def(StringAttr)
    reverse_pred = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "predicate", "on_true"))
        rules.not_both_psum(self, ("on_true", self.on_true), ("predicate", self.predicate))
        _dtype_in(self, "predicate", self.predicate, _INT8_16, "int8, uint8, int16 or uint16")
        if dtype_of(self.on_true) in (dtypes.int32, dtypes.uint32):
            raise VerifyException(f"{rules.api(self)}: 'on_true' has dtype "
                                  f"{_name(dtype_of(self.on_true))}; int32/uint32/tfloat32 are not supported")
        rules.per_partition_vector(self, "on_false", self.on_false, shape_of(self.dst)[0])
        _reduce(self)
        rules.engine(self, ("vector",))


@irdl_op_definition
class SelectReduceOp(_SelectReduce, NkiInstruction):
    name = "nki.select_reduce"


@irdl_op_definition
class NisaSelectReduceOp(_SelectReduce, NisaInstruction):
    name = "nisa.select_reduce"


class _RangeSelect(KeywordOp):
    """``nisa.range_select(dst, on_true_tile, bound0, bound1, on_false_value, reduce_res, comp_op0, comp_op1, reduce_cmd, reduce_op, range_start)``.

    NeuronCore-v3+ (trn2).  With ``idx = range_start + flat free index`` (fp32),
    ``dst = where(comp_op0(idx, bound0) & comp_op1(idx, bound1), on_true_tile,
    on_false_value)``.  ``bound0`` / ``bound1`` are float32 ``[P, 1]`` tiles;
    ``on_true_tile`` is a float type; ``on_false_value`` must be FP32_MIN
    (-3.4028235e38); the comparisons are equal, less, less_equal, greater or greater_equal;
    ``reduce_op`` is maximum; ``reduce_cmd`` defaults to ``reset_reduce``.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    on_true_tile = operand_def(MemRefType)
    bound0 = operand_def(MemRefType)
    bound1 = operand_def(MemRefType)
    on_false_value = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    comp_op0 = prop_def(StringAttr)
    comp_op1 = prop_def(StringAttr)
    reduce_cmd = opt_prop_def(StringAttr)
    reduce_op = opt_prop_def(StringAttr)
    range_start = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.require_target(self, "trn2", "range_select")
        rules.elementwise(self, ("dst", "on_true_tile"))
        _float_dtype(self, "on_true_tile", self.on_true_tile)
        parts = shape_of(self.dst)[0]
        for role in ("bound0", "bound1"):
            v = getattr(self, role)
            rules.per_partition_vector(self, role, v, parts)
            _dtype_in(self, role, v, (dtypes.float32,), "float32")
        rules.enum(self, "comp_op0", RANGE_CMPS)
        rules.enum(self, "comp_op1", RANGE_CMPS)
        if isinstance(self.on_false_value.type, MemRefType):
            raise VerifyException(f"{rules.api(self)}: 'on_false_value' must be the scalar "
                                  f"FP32_MIN (-3.4028235e+38), not a tensor")
        c = _const_float(self.on_false_value)
        if c is not None and np.float32(c) != np.float32(FP32_MIN):
            raise VerifyException(f"{rules.api(self)}: on_false_value={c!r} is not supported; the "
                                  f"hardware only fills with FP32_MIN (-3.4028235e+38)")
        _reduce(self)
        rules.engine(self, ("vector",))


@irdl_op_definition
class RangeSelectOp(_RangeSelect, NkiInstruction):
    name = "nki.range_select"


@irdl_op_definition
class NisaRangeSelectOp(_RangeSelect, NisaInstruction):
    name = "nisa.range_select"


class _Max8(KeywordOp):
    """``nisa.max8(dst, src)``: ``dst[P, 8]`` = the 8 largest values of each partition of
    ``src`` (compared in fp32), in descending order.  ``src`` is at most 3-D with 8..16384
    elements per partition; ``dst`` is 2-D ``[P, 8]``."""

    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)

    def verify_(self) -> None:
        rules.tile(self, "src", self.src)
        parts = shape_of(self.src)[0]
        _eight_wide(self, "dst", self.dst, parts)
        _max_rank(self, "src", self.src, 3)
        _per_partition_count(self, "src", self.src, MAX8_MIN, MAX8_MAX)
        rules.engine(self, ("vector",))


@irdl_op_definition
class Max8Op(_Max8, NkiInstruction):
    name = "nki.max8"


@irdl_op_definition
class NisaMax8Op(_Max8, NisaInstruction):
    name = "nisa.max8"


class _FindIndex8(KeywordOp):
    """``nisa.nc_find_index8(dst, data, vals)``: ``dst[P, 8]`` (uint32 or uint16) = the index
    of the first occurrence in ``data`` (flattened free dims, 8..16384 elements, at most
    3-D) of each of the 8 ``vals`` per partition (at most 3-D, 8 elements per partition)."""

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    vals = operand_def(MemRefType)

    def verify_(self) -> None:
        _verify_search8(self, self.data)
        _eight_wide(self, "dst", self.dst, shape_of(self.data)[0])
        _dtype_in(self, "dst", self.dst, _INDEX, "uint16 or uint32")
        rules.engine(self, ("vector",))


def _verify_search8(op, data: SSAValue) -> None:
    rules.tile(op, "data", data)
    rules.tile(op, "vals", op.vals)
    rules.same_partitions(op, ("data", data), ("vals", op.vals))
    _max_rank(op, "data", data, 3)
    _max_rank(op, "vals", op.vals, 3)
    _per_partition_count(op, "data", data, MAX8_MIN, MAX8_MAX)
    if free_size(op.vals) != 8:
        raise VerifyException(f"{rules.api(op)}: 'vals' must hold exactly 8 elements per "
                              f"partition, got {describe(op.vals)}")


@irdl_op_definition
class NcFindIndex8Op(_FindIndex8, NkiInstruction):
    name = "nki.nc_find_index8"


@irdl_op_definition
class NisaNcFindIndex8Op(_FindIndex8, NisaInstruction):
    name = "nisa.nc_find_index8"


class _MatchReplace8(KeywordOp):
    """``nisa.nc_match_replace8(dst, data, vals, imm, dst_idx)``: ``dst`` = ``data`` with the
    first occurrence of each of the 8 ``vals`` replaced by the f32 ``imm`` (vals processed
    i = 7..0, each match taking the first still-unreplaced position); the positions go to
    the optional ``dst_idx[P, 8]`` (uint16/uint32).  ``dst`` has data's partition and
    per-partition counts; ``data`` has 8..16384 elements per partition."""

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    vals = operand_def(MemRefType)
    imm = operand_def()
    dst_idx = opt_operand_def(MemRefType)

    def verify_(self) -> None:
        _verify_search8(self, self.data)
        rules.elementwise(self, ("dst", "data"))
        if isinstance(self.imm.type, MemRefType):
            raise VerifyException(f"{rules.api(self)}: 'imm' must be a compile-time float, not a tensor")
        if self.dst_idx is not None:
            _eight_wide(self, "dst_idx", self.dst_idx, shape_of(self.data)[0])
            _dtype_in(self, "dst_idx", self.dst_idx, _INDEX, "uint16 or uint32")
        rules.engine(self, ("vector",))


@irdl_op_definition
class NcMatchReplace8Op(_MatchReplace8, NkiInstruction):
    name = "nki.nc_match_replace8"


@irdl_op_definition
class NisaNcMatchReplace8Op(_MatchReplace8, NisaInstruction):
    name = "nisa.nc_match_replace8"


class _CopyPredicated(KeywordOp):
    """``nisa.tensor_copy_predicated(dst, src, predicate, reverse_pred)``:
    ``dst = where(predicate != 0 (xor reverse_pred), src, dst)``.  ``src`` is a tile with
    dst's dtype (copied bit-exactly) or a scalar; ``predicate`` is uint8/uint16/uint32;
    all tiles share the partition and per-partition counts; ``src`` and ``predicate`` are
    not both in PSUM."""

    dst = operand_def(MemRefType)
    src = operand_def()
    predicate = operand_def(MemRefType)
    reverse_pred = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        roles = ("dst", "predicate") + (("src",) if isinstance(self.src.type, MemRefType) else ())
        rules.elementwise(self, roles)
        _dtype_in(self, "predicate", self.predicate, _UINT, "uint8, uint16 or uint32")
        if isinstance(self.src.type, MemRefType):
            if dtype_of(self.src) != dtype_of(self.dst):
                raise VerifyException(f"{rules.api(self)}: 'src' dtype {_name(dtype_of(self.src))} "
                                      f"differs from 'dst' dtype {_name(dtype_of(self.dst))}; "
                                      f"they must be the same")
            rules.not_both_psum(self, ("src", self.src), ("predicate", self.predicate))
        rules.engine(self, ("vector",))


@irdl_op_definition
class TensorCopyPredicatedOp(_CopyPredicated, NkiInstruction):
    name = "nki.tensor_copy_predicated"


@irdl_op_definition
class NisaTensorCopyPredicatedOp(_CopyPredicated, NisaInstruction):
    name = "nisa.tensor_copy_predicated"


# ----------------------------------------------------------------------- GpSimd


def _sbuf(op, *roles: str) -> None:
    for r in roles:
        rules.tile(op, r, getattr(op, r), spaces=("sbuf",))


class _SequenceBounds(KeywordOp):
    """``nisa.sequence_bounds(dst, segment_ids)`` on GpSimd: ``segment_ids`` is ``(1, n)``
    (partition dim exactly 1), ``dst`` is ``(1, 2, n)``: ``dst[0, 0, i]`` / ``dst[0, 1, i]``
    = start / exclusive end of the contiguous run of equal ids holding ``i``; id 0 is
    padding and gets ``(n, -1)``.  Both float32 or int32, in SBUF."""

    dst = operand_def(MemRefType)
    segment_ids = operand_def(MemRefType)

    def verify_(self) -> None:
        _sbuf(self, "dst", "segment_ids")
        for role in ("dst", "segment_ids"):
            v = getattr(self, role)
            _dtype_in(self, role, v, (dtypes.float32, dtypes.int32), "float32 or int32")
            if shape_of(v)[0] != 1:
                raise VerifyException(f"{rules.api(self)}: '{role}' has partition dimension "
                                      f"{shape_of(v)[0]}, but sequence_bounds needs exactly 1")
        n = free_size(self.segment_ids)
        if shape_of(self.dst) != (1, 2, n):
            raise VerifyException(f"{rules.api(self)}: 'dst' must be [1, 2, {n}] ([start, end] for "
                                  f"each of the {n} segment ids), got {describe(self.dst)}")
        rules.engine(self, ("gpsimd",))


@irdl_op_definition
class SequenceBoundsOp(_SequenceBounds, NkiInstruction):
    name = "nki.sequence_bounds"


@irdl_op_definition
class NisaSequenceBoundsOp(_SequenceBounds, NisaInstruction):
    name = "nisa.sequence_bounds"


class _NonzeroWithCount(KeywordOp):
    """``nisa.nonzero_with_count(dst, src, index_offset, padding_val)`` on GpSimd,
    NeuronCore-v3+ (trn2).  Only partitions 0, 16, ..., 112 (of the tile) are read and
    written: ``dst[p] = [nonzero indices of src[p] + index_offset..., padding_val...,
    count]``.  ``src`` float32/int32, ``dst`` int32 with one more element per partition,
    both in SBUF with the same partition count."""

    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    index_offset = opt_prop_def(IntegerAttr)
    padding_val = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.require_target(self, "trn2", "nonzero_with_count")
        _sbuf(self, "dst", "src")
        rules.same_partitions(self, ("dst", self.dst), ("src", self.src))
        _dtype_in(self, "src", self.src, (dtypes.float32, dtypes.int32), "float32 or int32")
        _dtype_in(self, "dst", self.dst, (dtypes.int32,), "int32")
        if free_size(self.dst) != free_size(self.src) + 1:
            raise VerifyException(f"{rules.api(self)}: 'dst' must hold {free_size(self.src) + 1} "
                                  f"elements per partition (src's {free_size(self.src)} + 1 for the "
                                  f"count), got {describe(self.dst)}")
        for p in ("index_offset", "padding_val"):
            v = _int_prop(self, p)
            if not -2**31 <= v < 2**31:
                raise VerifyException(f"{rules.api(self)}: {p}={v} does not fit in int32")
        rules.engine(self, ("gpsimd",))


@irdl_op_definition
class NonzeroWithCountOp(_NonzeroWithCount, NkiInstruction):
    name = "nki.nonzero_with_count"


@irdl_op_definition
class NisaNonzeroWithCountOp(_NonzeroWithCount, NisaInstruction):
    name = "nisa.nonzero_with_count"


class _TopK(KeywordOp):
    """``nisa.topk(val_dst, idx_dst, src, n)`` on GpSimd (NKI 0.6).

    Every 16-partition group of ``src`` (bf16, SBUF, P a multiple of 16) holds one snake of
    ``n`` elements: element ``s`` is at partition ``s % 16``, free position ``s // 16``
    (8 <= n < 65536, free size >= ceil(n/16)).  K = per-partition free size of ``val_dst``
    (bf16 ``[P, K]``) = that of ``idx_dst`` (uint32 ``[P, K]``), 1 <= K < 32768, K <= n.
    The K largest values of each snake (ascending) and their snake indices are written
    back in the same snake layout (result j at partition j % 16, position j // 16).
    """

    val_dst = operand_def(MemRefType)
    idx_dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    n = prop_def(IntegerAttr)

    def verify_(self) -> None:
        _sbuf(self, "val_dst", "idx_dst", "src")
        rules.same_partitions(self, ("src", self.src), ("val_dst", self.val_dst),
                              ("idx_dst", self.idx_dst))
        parts = shape_of(self.src)[0]
        if parts % 16:
            raise VerifyException(f"{rules.api(self)}: 'src' has {parts} partitions; topk works on "
                                  f"16-partition groups, so the partition count must be a multiple of 16")
        _dtype_in(self, "src", self.src, (dtypes.bfloat16,), "bfloat16")
        _dtype_in(self, "val_dst", self.val_dst, (dtypes.bfloat16,), "bfloat16")
        _dtype_in(self, "idx_dst", self.idx_dst, (dtypes.uint32,), "uint32")
        k, n = free_size(self.val_dst), _int_prop(self, "n")
        if free_size(self.idx_dst) != k:
            raise VerifyException(f"{rules.api(self)}: 'idx_dst' must hold K={k} elements per "
                                  f"partition like 'val_dst', got {describe(self.idx_dst)}")
        if not 8 <= n < 65536:
            raise VerifyException(f"{rules.api(self)}: n={n} is out of range (8 <= n < 65536)")
        if not 1 <= k < 32768 or k > n:
            raise VerifyException(f"{rules.api(self)}: K={k} (the free size of 'val_dst') must "
                                  f"satisfy 1 <= K < 32768 and K <= n={n}")
        need = -(-n // 16)
        if free_size(self.src) < need:
            raise VerifyException(f"{rules.api(self)}: 'src' has {free_size(self.src)} elements per "
                                  f"partition, fewer than ceil(n/16)={need} for a snake of n={n}")
        rules.engine(self, ("gpsimd",))


@irdl_op_definition
class TopkOp(_TopK, NkiInstruction):
    name = "nki.topk"


@irdl_op_definition
class NisaTopkOp(_TopK, NisaInstruction):
    name = "nisa.topk"


_PAIRS = (
    (SelectReduceOp, NisaSelectReduceOp, "vector"),
    (RangeSelectOp, NisaRangeSelectOp, "vector"),
    (Max8Op, NisaMax8Op, "vector"),
    (NcFindIndex8Op, NisaNcFindIndex8Op, "vector"),
    (NcMatchReplace8Op, NisaNcMatchReplace8Op, "vector"),
    (TensorCopyPredicatedOp, NisaTensorCopyPredicatedOp, "vector"),
    (SequenceBoundsOp, NisaSequenceBoundsOp, "gpsimd"),
    (NonzeroWithCountOp, NisaNonzeroWithCountOp, "gpsimd"),
    (TopkOp, NisaTopkOp, "gpsimd"),
)

#: ops this module adds to the nki and nisa dialects
NKI_OPS, NISA_OPS = register_twins(_PAIRS)

__all__ = ["NKI_OPS", "NISA_OPS", "FP32_MIN", "RANGE_CMPS", "SELECT_REDUCE_CMDS"]
