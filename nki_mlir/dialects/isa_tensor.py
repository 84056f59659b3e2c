"""TensorE instructions beyond nc_matmul/nc_transpose: nc_matmul_mx and the MX quantizer quantize_mx (trn3).

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: NKI API common tables (nki/api/nki.api.shared) (NKI
``nki.isa.nc_matmul_mx`` / ``nki.isa.quantize_mx``; OCP Microscaling (MX) v1.0).

MX layout shared by both (all operands in SBUF):

- data: a packed ``*_x4`` tensor ``[P, F]``; element ``[p, j]`` holds 4 values (see
  :mod:`nki_mlir.dtypes`), so it stands for ``[P, 4F]`` values.  ``quantize_mx`` packs the 4
  consecutive free-dim values ``src[p, 4j:4j+4]``; in ``nc_matmul_mx`` the contraction runs over
  the partition and the 4 packed values.
- scale groups are 8 partitions x 1 packed element (32 values): group ``(g, j)`` covers data
  partitions ``8g..8g+7`` at element ``j`` and has one ``float8_e8m0fnu`` (or ``uint8``) code
  ``c``, the factor ``2^(c-127)`` (255 = NaN).
- scale tile: ``[P_s, F]`` with the code of group ``(g, j)`` at partition
  ``32*(g // 4) + g % 4`` (the first 4 partitions of each 32-partition SBUF quadrant, the
  hardware layout); ``P_s`` is 4 (or 32) when the data has 32 partitions, else equal to ``P``.
  Partitions that hold no code are not written by ``quantize_mx`` nor read by ``nc_matmul_mx``.
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import matmul_rules, rules
from .common import PMAX, describe, dtype_of, free_size, shape_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .syntax import KeywordOp

#: partitions x packed elements of one MX scale group (8 x 4 values = 32 values)
GROUP_PARTITIONS = 8
#: partitions of one SBUF quadrant
QUADRANT = 32
#: dtypes a scale tile may have (the e8m0 code as such, or its raw byte)
SCALE_DTYPES = (dtypes.float8_e8m0fnu, dtypes.uint8)
#: packed types quantize_mx can write, with Emax of their value type (OCP MX)
QUANTIZE_EMAX = {dtypes.float8_e4m3fn_x4: 8, dtypes.float8_e5m2_x4: 15}


def scale_row(g: int) -> int:
    """The scale-tile partition holding the codes of group ``g`` (data partitions 8g..8g+7)."""
    return QUADRANT * (g // 4) + g % 4


def _x4_names() -> str:
    return ", ".join(dtypes.name_of(d) for d in dtypes.X4_VALUE)


def _scale(op, role: str, scale, data_role: str, data) -> None:
    """``scale`` is an SBUF ``[P_s, F]`` e8m0/uint8 tile matching the MX data tile ``data``."""
    api = rules.api(op)
    rules.tile(op, role, scale, spaces=("sbuf",))
    if dtype_of(scale) not in SCALE_DTYPES:
        raise VerifyException(f"{api}: '{role}' dtype {dtypes.name_of(dtype_of(scale))} is not an MX "
                              f"scale type (float8_e8m0fnu or uint8)")
    p, f = shape_of(data)[0], free_size(data)
    parts = (4, QUADRANT) if p == QUADRANT else (p,)
    if shape_of(scale)[0] not in parts or free_size(scale) != f:
        want = " or ".join(f"[{n}, {f}]" for n in parts)
        raise VerifyException(f"{api}: '{role}' must be {want} (one code per 8 partitions x 1 packed "
                              f"element of '{data_role}', kept in the first 4 partitions of each "
                              f"32-partition quadrant), got {describe(scale)}")


def _mx_partitions(op, role: str, v) -> int:
    p = shape_of(v)[0]
    if p % QUADRANT != 0:
        raise VerifyException(f"{rules.api(op)}: '{role}' has {p} partitions; MX data needs a multiple "
                              f"of {QUADRANT} partitions (at most {PMAX})")
    return p


# ---------------------------------------------------------------------- nc_matmul_mx


class _NcMatmulMx(KeywordOp):
    """``dst[M, N] (+)= sum over (k, i) of deq(stationary)[k, m, i] * deq(moving)[k, n, i]``.

    ``stationary[K, M]`` / ``moving[K, N]`` are packed x4 tensors (4 values per element),
    dequantized with their scale tiles; fp32 accumulation into PSUM ``dst`` (float32 or
    bfloat16).  K is a multiple of 32 and <= 128, M even and <= 128, N <= 4096 (fp32 dst) or
    8192 (bf16 dst).  Row and column tiling (``tile_position``/``tile_size``, :func:`.matmul_rules.tiling`).  ``accumulate``: absent
    = first write overwrites, later writes add; true adds; false overwrites.  trn3 only.
    """

    dst = operand_def(MemRefType)
    stationary = operand_def(MemRefType)
    moving = operand_def(MemRefType)
    stationary_scale = operand_def(MemRefType)
    moving_scale = operand_def(MemRefType)
    tile_position = opt_prop_def(ArrayAttr)
    tile_size = opt_prop_def(ArrayAttr)
    accumulate = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.require_target(self, "trn3", "nc_matmul_mx (MXFP8/MXFP4 matmul)")
        rules.engine(self, ("tensor",))
        rules.tile(self, "stationary", self.stationary, spaces=("sbuf",))
        rules.tile(self, "moving", self.moving, spaces=("sbuf",))
        rules.tile(self, "dst", self.dst, spaces=("psum",))
        for role, v in (("stationary", self.stationary), ("moving", self.moving)):
            if not dtypes.is_x4(dtype_of(v)):
                raise VerifyException(f"{api}: '{role}' dtype {dtypes.name_of(dtype_of(v))} is not a "
                                      f"packed MX type ({_x4_names()})")
        k = _mx_partitions(self, "stationary", self.stationary)
        if shape_of(self.moving)[0] != k:
            raise VerifyException(f"{api}: contraction (partition) sizes differ: stationary has {k}, "
                                  f"moving has {shape_of(self.moving)[0]}")
        m, n = free_size(self.stationary), free_size(self.moving)
        matmul_rules.tiling(self, _pair(self.tile_position), _pair(self.tile_size), k, m)
        if m % 2 or m > matmul_rules.STATIONARY_FMAX:
            raise VerifyException(f"{api}: stationary free size {m} must be even and at most "
                                  f"{matmul_rules.STATIONARY_FMAX}")
        dd = dtype_of(self.dst)
        if dd not in (dtypes.float32, dtypes.bfloat16):
            raise VerifyException(f"{api}: PSUM dst must be float32 or bfloat16, got {dtypes.name_of(dd)}")
        fmax = matmul_rules.moving_fmax("trn3", dd)
        if n > fmax:
            raise VerifyException(f"{api}: moving free size {n} exceeds the limit of {fmax} "
                                  f"(trn3, {dtypes.name_of(dd)} dst: 8 PSUM banks)")
        if shape_of(self.dst)[0] != m or free_size(self.dst) != n:
            raise VerifyException(f"{api}: dst must be [{m}, {n}] (stationary free x moving free), "
                                  f"got {describe(self.dst)}")
        _scale(self, "stationary_scale", self.stationary_scale, "stationary", self.stationary)
        _scale(self, "moving_scale", self.moving_scale, "moving", self.moving)


def _pair(a) -> tuple[int, ...]:
    return () if a is None else tuple(int(x.value.data) for x in a.data)


@irdl_op_definition
class NcMatmulMxOp(_NcMatmulMx, NkiInstruction):
    name = "nki.nc_matmul_mx"


@irdl_op_definition
class NisaNcMatmulMxOp(_NcMatmulMx, NisaInstruction):
    name = "nisa.nc_matmul_mx"


direct_lowering(NcMatmulMxOp, NisaNcMatmulMxOp, "tensor")


# ----------------------------------------------------------------------- quantize_mx


class _QuantizeMx(KeywordOp):
    """Quantize ``src[P, F]`` (bfloat16/float16) to MXFP8: ``dst[P, F/4]`` (float8_e4m3fn_x4 or
    float8_e5m2_x4) and ``dst_scale`` codes (see the module docstring for the layout).

    Per group of 8 partitions x 4 values: ``scale = 2^(floor(log2 amax) - (Emax - 1))``, Emax = 8
    (e4m3fn) or 15 (e5m2), an all-zero group gets 2^-127 (code 0); values are ``src / scale``
    rounded to nearest even and saturated to the fp8 range.  P is a multiple of 32 (<= 128), F a
    multiple of 4.  Vector engine, trn3 only.
    """

    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    dst_scale = operand_def(MemRefType)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.require_target(self, "trn3", "quantize_mx (MXFP8 quantization)")
        rules.engine(self, ("vector",))
        for role, v in (("dst", self.dst), ("src", self.src)):
            rules.tile(self, role, v, spaces=("sbuf",))
        if dtype_of(self.src) not in (dtypes.bfloat16, dtypes.float16):
            raise VerifyException(f"{api}: 'src' dtype {dtypes.name_of(dtype_of(self.src))} is not "
                                  f"supported (bfloat16 or float16)")
        if dtype_of(self.dst) not in QUANTIZE_EMAX:
            raise VerifyException(f"{api}: 'dst' dtype {dtypes.name_of(dtype_of(self.dst))} is not "
                                  f"supported (float8_e4m3fn_x4 or float8_e5m2_x4)")
        p = _mx_partitions(self, "src", self.src)
        f = free_size(self.src)
        if f % 4:
            raise VerifyException(f"{api}: 'src' has {f} elements per partition; quantize_mx needs a "
                                  f"multiple of 4 (4 values per packed element)")
        if shape_of(self.dst)[0] != p or free_size(self.dst) != f // 4:
            raise VerifyException(f"{api}: 'dst' must be [{p}, {f // 4}] (4 values per packed "
                                  f"element), got {describe(self.dst)}")
        _scale(self, "dst_scale", self.dst_scale, "dst", self.dst)


@irdl_op_definition
class QuantizeMxOp(_QuantizeMx, NkiInstruction):
    name = "nki.quantize_mx"


@irdl_op_definition
class NisaQuantizeMxOp(_QuantizeMx, NisaInstruction):
    name = "nisa.quantize_mx"


direct_lowering(QuantizeMxOp, NisaQuantizeMxOp, "vector")

#: ops this module adds to the nki dialect
NKI_OPS: list = [NcMatmulMxOp, QuantizeMxOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaNcMatmulMxOp, NisaQuantizeMxOp]
