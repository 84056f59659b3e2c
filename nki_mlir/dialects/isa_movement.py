"""DMA instructions beyond dma_copy not yet moved to a definition (``nki_mlir/instructions``):
dma_transpose, dma_compute.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki.isa API reference (nki/api/nki/isa) (NKI
``nki.isa`` API pages of these instructions):

- ``dma_transpose(dst, src, axes)``: DMA ``dst = src.transpose(axes)`` with axes ``(1, 0)``,
  ``(2, 1, 0)`` or ``(3, 1, 2, 0)`` by rank; equal dtypes (2-byte with ``dge_mode=hwdge``,
  whose constraints the API page lists; the default ``unknown`` mode takes any dtype, as
  nki-library's kernels use it on float32); ``dst`` in SBUF.
- ``dma_compute(dst, srcs, reduce_op=add, scales)``: DMA ``dst = sum_i srcs[i] * scales[i]``
  (fp32 math, <= 16 sources, scales all 1.0).
"""
from __future__ import annotations

import math

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import describe, dtype_of, HBM_SPACES, prop_int, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .syntax import KeywordOp, parse_value, print_value

#: dma_transpose permutation by source rank (the only ones the DMA engine supports)
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}
#: dtypes dma_transpose accepts with dge_mode=hwdge (2-byte elements only)
TWO_BYTE = (dtypes.bfloat16, dtypes.float16, dtypes.int16, dtypes.uint16)
DGE_MODES = ("unknown", "swdge", "hwdge", "none")
OOB_MODES = ("error", "skip")
#: at most this many dma_compute sources (NKI migration guide (nki/migration))
DMA_COMPUTE_MAX_SRCS = 16


def _ints(op, name: str) -> list[int] | None:
    a = op.properties.get(name)
    if a is None:
        return None
    out = []
    for x in a.data:  # type: ignore[attr-defined]
        if not isinstance(x, IntegerAttr):
            raise VerifyException(f"{rules.api(op)}: {name} must be a list of integers, got {a}")
        out.append(int(x.value.data))
    return out


def _priority(op) -> None:
    p = prop_int(op, "priority")
    if p is not None and not 0 <= p <= 3:
        raise VerifyException(f"{rules.api(op)}: priority={p} is out of range (DMA QoS priority "
                              f"levels are 0..3, lower is higher priority)")


def _dma_endpoint(op, role: str, v: SSAValue, spaces: tuple[str, ...]) -> None:
    """A DMA operand: an HBM or SBUF tensor (DMA cannot access PSUM)."""
    if not isinstance(v.type, MemRefType):
        raise VerifyException(f"{rules.api(op)}: operand '{role}' must be a tensor")
    sp = space_of(v)
    if sp not in spaces:
        extra = " (DMA cannot access PSUM)" if sp == "psum" else ""
        raise VerifyException(f"{rules.api(op)}: operand '{role}' is a tensor in {sp}, but this "
                              f"instruction only accepts {'/'.join(spaces)} tensors{extra}")
    if sp == "sbuf":
        rules.on_chip_shape(op, role, v)


def _same_dtype(op, a: tuple[str, SSAValue], b: tuple[str, SSAValue], why: str) -> None:
    if dtype_of(a[1]) != dtype_of(b[1]):
        raise VerifyException(f"{rules.api(op)}: '{a[0]}' dtype {dtypes.name_of(dtype_of(a[1]))} differs "
                              f"from '{b[0]}' dtype {dtypes.name_of(dtype_of(b[1]))}; {why}")


# ------------------------------------------------------------------ dma_transpose


class _DmaTranspose(KeywordOp):
    """``dst = src.transpose(axes)`` on a DMA queue (nisa.dma_transpose)."""

    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    axes = opt_prop_def(ArrayAttr)
    priority = opt_prop_def(IntegerAttr)
    dge_mode = opt_prop_def(StringAttr)
    oob_mode = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        _dma_endpoint(self, "dst", self.dst, ("sbuf",))
        _dma_endpoint(self, "src", self.src, (*HBM_SPACES, "sbuf"))
        rules.enum(self, "dge_mode", DGE_MODES)
        rules.enum(self, "oob_mode", OOB_MODES)
        rules.engine(self, ("dma",))
        _priority(self)
        shape = shape_of(self.src)
        rank = len(shape)
        if rank not in TRANSPOSE_AXES:
            raise VerifyException(f"{api}: 'src' has rank {rank} ({describe(self.src)}); "
                                  f"dma_transpose supports ranks 2, 3 and 4")
        perm = TRANSPOSE_AXES[rank]
        axes = _ints(self, "axes")
        if axes is not None and tuple(axes) != perm:
            raise VerifyException(f"{api}: axes={tuple(axes)} is not supported for a rank-{rank} "
                                  f"'src'; the only permutation is {perm}")
        want = tuple(shape[a] for a in perm)
        if shape_of(self.dst) != want:
            raise VerifyException(f"{api}: 'dst' must have the permuted shape {list(want)} "
                                  f"(src {list(shape)} permuted by {perm}), got {describe(self.dst)}")
        _same_dtype(self, ("dst", self.dst), ("src", self.src), "dma_transpose keeps the dtype")
        mode = self.properties.get("dge_mode")
        mode = mode.data if isinstance(mode, StringAttr) else "unknown"
        if mode in ("swdge", "none"):
            raise VerifyException(f"{api}: dge_mode={mode} is not supported for a direct "
                                  f"transpose (use unknown or hwdge; swdge is for an indirect "
                                  f"'src', the gather-transpose)")
        if mode == "hwdge":
            rules.require_target(self, "trn2", "dge_mode=hwdge")
            if dtype_of(self.src) not in TWO_BYTE:
                raise VerifyException(f"{api}: with dge_mode=hwdge 'src' must have a 2-byte "
                                      f"dtype (bfloat16, float16, int16, uint16), got "
                                      f"{dtypes.name_of(dtype_of(self.src))}")
            p0 = shape[0]
            if rank == 2 and p0 != 16:
                raise VerifyException(f"{api}: with dge_mode=hwdge a 2-D 'src' needs "
                                      f"src.shape[0] == 16, got {p0}")
            if rank > 2 and (p0 not in (1, 2, 4, 8, 16) or (p0 * shape[-2]) % 16 != 0):
                raise VerifyException(f"{api}: with dge_mode=hwdge a {rank}-D 'src' needs "
                                      f"src.shape[0] in (1, 2, 4, 8, 16) and "
                                      f"src.shape[0] * src.shape[-2] a multiple of 16, got "
                                      f"{list(shape)}")
            if shape[-1] > 128:
                raise VerifyException(f"{api}: with dge_mode=hwdge src.shape[-1] must be at "
                                      f"most 128, got {shape[-1]}")


@irdl_op_definition
class DmaTransposeOp(_DmaTranspose, NkiInstruction):
    name = "nki.dma_transpose"


@irdl_op_definition
class NisaDmaTransposeOp(_DmaTranspose, NisaInstruction):
    name = "nisa.dma_transpose"


direct_lowering(DmaTransposeOp, NisaDmaTransposeOp, "dma")


# -------------------------------------------------------------------- dma_compute


class _DmaCompute(KeywordOp):
    """``dst = sum_i srcs[i] * scales[i]`` on a DMA queue (fp32 math).

    ``srcs`` is variadic and printed as a list: ``srcs=[T %a, T %b]``.
    """

    dst = operand_def(MemRefType)
    srcs = var_operand_def(MemRefType)
    reduce_op = prop_def(StringAttr)
    scales = opt_prop_def(ArrayAttr)
    unique_indices = opt_prop_def(IntegerAttr)
    oob_mode = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        n = len(self.srcs)
        if not 1 <= n <= DMA_COMPUTE_MAX_SRCS:
            raise VerifyException(f"{api}: 'srcs' has {n} tensors; dma_compute takes 1 to "
                                  f"{DMA_COMPUTE_MAX_SRCS} sources")
        rules.enum(self, "reduce_op", ("add",))
        rules.enum(self, "oob_mode", OOB_MODES)
        rules.engine(self, ("dma",))
        spaces = (*HBM_SPACES, "sbuf")
        _dma_endpoint(self, "dst", self.dst, spaces)
        total = math.prod(shape_of(self.dst))
        for i, s in enumerate(self.srcs):
            _dma_endpoint(self, f"srcs[{i}]", s, spaces)
            if math.prod(shape_of(s)) != total:
                raise VerifyException(f"{api}: 'srcs[{i}]' has {math.prod(shape_of(s))} elements "
                                      f"but 'dst' has {total} (srcs[{i}] is {describe(s)}, dst is "
                                      f"{describe(self.dst)})")
        scales = self.properties.get("scales")
        if scales is not None:
            vals = []
            for x in scales.data:  # type: ignore[attr-defined]
                if not isinstance(x, (FloatAttr, IntegerAttr)):
                    raise VerifyException(f"{api}: scales must be a list of numbers, got {scales}")
                vals.append(float(x.value.data))
            if len(vals) != n:
                raise VerifyException(f"{api}: scales has {len(vals)} entries but there are "
                                      f"{n} sources")
            bad = [v for v in vals if v != 1.0]
            if bad:
                raise VerifyException(f"{api}: scales must all be 1.0 (the DMA engine does not "
                                      f"scale), got {vals}")

    # The generic keyword syntax handles single operands; print ``srcs`` as a list.
    def print(self, printer: Printer) -> None:
        printer.print_string("(dst=")
        printer.print_attribute(self.dst.type)
        printer.print_string(" ")
        printer.print_ssa_value(self.dst)
        printer.print_string(", srcs=[")
        for i, s in enumerate(self.srcs):
            if i:
                printer.print_string(", ")
            printer.print_attribute(s.type)
            printer.print_string(" ")
            printer.print_ssa_value(s)
        printer.print_string("]")
        for p in ("reduce_op", "scales", "unique_indices", "oob_mode"):
            if p in self.properties:
                printer.print_string(f", {p}=")
                print_value(printer, self.properties[p])
        printer.print_string(")")
        engine = self.properties.get("engine")
        if isinstance(engine, StringAttr):
            printer.print_string(f" engine={engine.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser):
        props: dict[str, Attribute] = {}
        dst: SSAValue | None = None
        srcs: list[SSAValue] = []
        allowed = ("reduce_op", "scales", "unique_indices", "oob_mode")
        parser.parse_punctuation("(")
        while True:
            pos = parser.pos
            key = parser.parse_identifier(f"operand role or property of '{cls.name}'")
            parser.parse_punctuation("=")
            if key == "dst":
                dst = parser.parse_operand(parser.parse_type())
            elif key == "srcs":
                parser.parse_punctuation("[")
                if parser.parse_optional_punctuation("]") is None:
                    while True:
                        srcs.append(parser.parse_operand(parser.parse_type()))
                        if parser.parse_optional_punctuation(",") is None:
                            break
                    parser.parse_punctuation("]")
            elif key in allowed:
                props[key] = parse_value(parser)
            else:
                parser.raise_error(f"'{cls.name}' has no operand or property '{key}' (expected "
                                   f"one of: dst, srcs, {', '.join(allowed)})", pos, parser.pos)
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation(")")
        if parser.parse_optional_keyword("engine") is not None:
            parser.parse_punctuation("=")
            props["engine"] = StringAttr(parser.parse_identifier("engine name"))
        attributes = parser.parse_optional_attr_dict()
        if dst is None:
            parser.raise_error(f"'{cls.name}' needs operand dst")
        return cls.build(operands=[dst, srcs], properties=props, attributes=attributes)


@irdl_op_definition
class DmaComputeOp(_DmaCompute, NkiInstruction):
    name = "nki.dma_compute"


@irdl_op_definition
class NisaDmaComputeOp(_DmaCompute, NisaInstruction):
    name = "nisa.dma_compute"


direct_lowering(DmaComputeOp, NisaDmaComputeOp, "dma")


#: ops this module adds to the nki dialect
NKI_OPS: list = [DmaTransposeOp, DmaComputeOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaDmaTransposeOp, NisaDmaComputeOp]
