"""View and indirect-DMA ops the upstream ``memref`` dialect cannot express.

Tensor views (nki.language API reference (nki/api/nki/language)) are upstream ops wherever possible:
``memref.subview`` (subscripts, ``slice``, ``select``) and ``memref.reinterpret_cast``
(``permute``, ``broadcast``, ``reshape``, ``rearrange``, ``ap``...), whose result is a
strided memref of the *same storage* (offset and strides count elements from the start
of the underlying buffer, the partition stride of an SBUF/PSUM buffer being its free
size).  Two things remain:

- ``nki.view_dtype`` / ``nisa.view_dtype`` -- ``NkiTensor.view(dtype)``: the same bytes
  read with another element type.  A memref cannot change its element type, so this op
  does it: the result's shape is the source's with the last dim scaled by
  ``itemsize(src) / itemsize(result)``, its layout the source's in units of the new type
  (``strided<[F, 1], offset: 0>`` of ``i32`` -> ``strided<[2F, 1], offset: 0>`` of
  ``bf16``).  The source's last dim must be contiguous.  The op is a view: nisa-allocate,
  nisa-schedule (``dialects/effects.py`` ``VIEW_OPS``) and the interpreter
  (``ndarray.view``) see through it.  Printed
  ``%v = nki.view_dtype(source=memref<128x4xi32, ...> %t) : memref<128x8xbf16, ...>``.
- ``nki.dma_copy_indirect`` / ``nisa.dma_copy_indirect`` -- gather / scatter DMA (AWS's
  ``nisa.dma_copy_indirect`` in aws-neuron/nkipy): with ``src_index`` (an SBUF
  ``[P, 1]`` int32/uint32 tile), ``dst[i, ...] = src[src_index[i], ...]`` where ``src`` is
  the HBM table ``[rows, ...]``; with ``dst_index``, ``dst[dst_index[i], ...] = src[i, ...]``.
  An index outside ``[0, rows)`` is a runtime error (``oob_mode=error`` /
  ``oob_is_err=true``, the default) or the row is not transferred (``skip`` /
  ``oob_is_err=false``).  The frontend emits it for ``nisa.dma_copy`` of a view made with
  ``t.ap(..., vector_offset=idx)`` or ``t.vector_select(0, idx)`` (nki.language API reference (nki/api/nki/language)).
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType, StridedLayoutAttr, StringAttr
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import HBM_SPACES, bool_attr, describe, dtype_of, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .ods_verify_memo import types_verdict
from .syntax import KeywordOp

#: index dtypes accepted by indirect DMA (NKI error catalogue (nki.errors))
INDEX_DTYPES = (dtypes.int32, dtypes.uint32)


# ------------------------------------------------------------------ view(dtype)


class _ViewDtype(KeywordOp):
    """``NkiTensor.view(dtype)``: reinterpret the bytes of ``source`` (see module docstring)."""

    source = operand_def(MemRefType)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(res, MemRefType)
        if space_of(src) != space_of(res):
            raise VerifyException(f"{self.name}: the result must stay in {space_of(src)}, "
                                  f"got {space_of(res)}")
        ss, rs = shape_of(src), shape_of(res)
        if len(ss) != len(rs) or ss[:-1] != rs[:-1]:
            raise VerifyException(f"{self.name}: only the last dim may change, got "
                                  f"{list(ss)} -> {list(rs)}")
        try:
            a, b = dtype_of(src).itemsize, dtype_of(res).itemsize
        except KeyError:
            raise VerifyException(f"{self.name}: element types must be NKI dtypes") from None
        if ss[-1] * a != rs[-1] * b:
            raise VerifyException(f"{self.name}: the last dim must keep its byte size: "
                                  f"{ss[-1]} x {a} bytes != {rs[-1]} x {b} bytes")
        layout = src.layout
        if isinstance(layout, StridedLayoutAttr):
            strides = [s.data if hasattr(s, "data") else s for s in layout.get_strides()]
            if strides and strides[-1] not in (1, None) and ss[-1] != 1:
                raise VerifyException(f"{self.name}: the last dim of the source must be "
                                      f"contiguous (stride 1), got stride {strides[-1]}")


@irdl_op_definition
class NkiViewDtypeOp(_ViewDtype):
    name = "nki.view_dtype"


@irdl_op_definition
class NisaViewDtypeOp(_ViewDtype):
    name = "nisa.view_dtype"


# -------------------------------------------------------------- indirect DMA


def _index(op, role: str, v) -> int:
    """``v`` is an SBUF ``[P, 1]`` int32/uint32 tile; returns P."""
    if space_of(v) != "sbuf":
        raise VerifyException(f"{rules.api(op)}: '{role}' must be an SBUF tensor, got {describe(v)}")
    rules.on_chip_shape(op, role, v)
    shape = shape_of(v)
    if any(d != 1 for d in shape[1:]):
        raise VerifyException(f"{rules.api(op)}: '{role}' must be [P, 1] (one row number per "
                              f"partition), got {list(shape)}")
    if dtype_of(v) not in INDEX_DTYPES:
        raise VerifyException(f"{rules.api(op)}: '{role}' must be int32 or uint32, got "
                              f"{dtypes.name_of(dtype_of(v))}")
    return shape[0]


def _rest(v) -> int:
    n = 1
    for d in shape_of(v)[1:]:
        n *= d
    return n


class _DmaCopyIndirect(KeywordOp):
    """Gather (``src_index``) / scatter (``dst_index``) DMA; see the module docstring."""

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    src_index = opt_operand_def(MemRefType)
    dst_index = opt_operand_def(MemRefType)
    dge_mode = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        name = rules.api(self)
        for role, v in (("dst", self.dst), ("src", self.src)):
            if space_of(v) is None:
                raise VerifyException(f"{name}: operand '{role}' must be a tensor in a #nisa.mem space")
            if space_of(v) == "psum":
                raise VerifyException(f"{name}: operand '{role}' is in PSUM; DMA cannot access PSUM "
                                      f"(copy it to SBUF with tensor_copy first)")
            if space_of(v) == "sbuf":
                rules.on_chip_shape(self, role, v)
        if self.src_index is None and self.dst_index is None:
            raise VerifyException(f"{name}: needs 'src_index' (gather) or 'dst_index' (scatter)")
        for role, idx, table, other in (("src_index", self.src_index, ("src", self.src), ("dst", self.dst)),
                                        ("dst_index", self.dst_index, ("dst", self.dst), ("src", self.src))):
            if idx is None:
                continue
            p = _index(self, role, idx)
            if space_of(table[1]) not in HBM_SPACES:
                raise VerifyException(f"{name}: the tensor indexed by '{role}' ('{table[0]}') must be "
                                      f"in HBM (dynamic selection on the partition dim of an on-chip "
                                      f"tensor is not allowed), got {describe(table[1])}")
            rows_other = shape_of(other[1])[0]
            other_indexed = (self.dst_index if role == "src_index" else self.src_index) is not None
            if not other_indexed and rows_other != p:
                raise VerifyException(f"{name}: '{other[0]}' has {rows_other} rows but '{role}' has "
                                      f"{p} indices; they must match")
        if _rest(self.dst) != _rest(self.src):
            raise VerifyException(f"{name}: a row of 'dst' has {_rest(self.dst)} elements but a row "
                                  f"of 'src' has {_rest(self.src)} (dst is {describe(self.dst)}, "
                                  f"src is {describe(self.src)})")
        if self.src_index is not None and self.dst_index is not None and \
                shape_of(self.src_index)[0] != shape_of(self.dst_index)[0]:
            raise VerifyException(f"{name}: 'src_index' and 'dst_index' must have the same number "
                                  f"of indices")


@irdl_op_definition
class NkiDmaCopyIndirectOp(_DmaCopyIndirect, NkiInstruction):
    """``nisa.dma_copy(dst, src.ap(..., vector_offset=idx))`` and its scatter form."""

    name = "nki.dma_copy_indirect"
    oob_mode = opt_prop_def(StringAttr)

    @types_verdict      # (reads operand shapes, dtypes, memories and properties only)
    def verify_(self) -> None:
        super().verify_()
        rules.enum(self, "oob_mode", ("error", "skip"))


@irdl_op_definition
class NisaDmaCopyIndirectOp(_DmaCopyIndirect, NisaInstruction):
    """AWS ``nisa.dma_copy_indirect(dst, src, src_index | dst_index, oob_is_err)``."""

    name = "nisa.dma_copy_indirect"
    oob_is_err = opt_prop_def(IntegerAttr)

    @types_verdict      # (reads operand shapes, dtypes, memories and properties only)
    def verify_(self) -> None:
        super().verify_()
        rules.engine(self, ("dma", "sync", "scalar", "gpsimd"))


def _indirect_props(op) -> dict:
    props = {k: v for k, v in op.properties.items() if k not in ("oob_mode", "dge_mode")}
    mode = op.properties.get("oob_mode")
    props["oob_is_err"] = bool_attr(not (isinstance(mode, StringAttr) and mode.data == "skip"))
    dge = op.properties.get("dge_mode")
    if isinstance(dge, StringAttr) and dge.data != "unknown":
        props["dge_mode"] = dge
    return props


direct_lowering(NkiViewDtypeOp, NisaViewDtypeOp, None)
direct_lowering(NkiDmaCopyIndirectOp, NisaDmaCopyIndirectOp, "dma", _indirect_props)

#: ops this module adds to the nki dialect
NKI_OPS: list = [NkiViewDtypeOp, NkiDmaCopyIndirectOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaViewDtypeOp, NisaDmaCopyIndirectOp]
