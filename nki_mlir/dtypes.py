"""NKI data types and their MLIR element types.

NKI dtypes are NumPy dtypes (as in NKI Beta 1, where ``nl.float32 is np.float32``);
bfloat16 and the fp8 formats come from ``ml_dtypes``.  Semantics: NKI API common tables (nki/api/nki.api.shared) (from the NKI docs page ``nki.api.shared``, "Supported data types").
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects import builtin
from xdsl.ir import Attribute

from .errors import NKITypeError

float32 = np.dtype(np.float32)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
tfloat32 = float32  # stored as fp32; a TensorE input mode, not a storage format here
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
bool_ = np.dtype(np.bool_)

# MX (OCP microscaling) types, trn3 only (NKI API common tables (nki/api/nki.api.shared); nki.isa.quantize_mx /
# nc_matmul_mx).  float8_e8m0fnu is the unsigned exponent-only scale (2^(code-127), 0xFF = NaN).
# A packed ``*_x4`` element is 32 bits holding 4 values: byte i is value i (for
# float4_e2m1fn_x4 each byte holds one e2m1 code in its low nibble, the ml_dtypes layout).
# NumPy: a one-field structured dtype named after the NKI type (distinct from uint32 and from
# each other); MLIR: ``vector<4xVALUE>`` (e.g. ``memref<32x8xvector<4xf8E5M2>, ...>``), a
# builtin type that nki-opt and upstream MLIR parse back; shapes count packed elements.
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
float4_e2m1fn = np.dtype(ml_dtypes.float4_e2m1fn)  # one value of float4_e2m1fn_x4 only
float8_e5m2_x4 = np.dtype([("float8_e5m2_x4", "<u4")])
float8_e4m3fn_x4 = np.dtype([("float8_e4m3fn_x4", "<u4")])
float4_e2m1fn_x4 = np.dtype([("float4_e2m1fn_x4", "<u4")])
#: packed x4 dtype -> the dtype of each of its 4 values
X4_VALUE: dict[np.dtype, np.dtype] = {float8_e5m2_x4: float8_e5m2, float8_e4m3fn_x4: float8_e4m3fn,
                                      float4_e2m1fn_x4: float4_e2m1fn}

# NKI name -> NumPy dtype, in the order of the NKI dtype table.
BY_NAME: dict[str, np.dtype] = {
    "float32": float32, "bfloat16": bfloat16, "float16": float16,
    "float8_e4m3": float8_e4m3, "float8_e4m3fn": float8_e4m3fn, "float8_e5m2": float8_e5m2,
    "int8": int8, "int16": int16, "int32": int32,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "bool_": bool_,
    "float8_e8m0fnu": float8_e8m0fnu, "float8_e5m2_x4": float8_e5m2_x4,
    "float8_e4m3fn_x4": float8_e4m3fn_x4, "float4_e2m1fn_x4": float4_e2m1fn_x4,
}

_TO_MLIR: dict[np.dtype, Attribute] = {
    float32: builtin.f32,
    bfloat16: builtin.bf16,
    float16: builtin.f16,
    float8_e4m3: builtin.Float8E4M3Type(),
    float8_e4m3fn: builtin.Float8E4M3FNType(),
    float8_e5m2: builtin.Float8E5M2Type(),
    int8: builtin.IntegerType(8),
    int16: builtin.IntegerType(16),
    int32: builtin.IntegerType(32),
    uint8: builtin.IntegerType(8, builtin.Signedness.UNSIGNED),
    uint16: builtin.IntegerType(16, builtin.Signedness.UNSIGNED),
    uint32: builtin.IntegerType(32, builtin.Signedness.UNSIGNED),
    bool_: builtin.IntegerType(1),
    float8_e8m0fnu: builtin.Float8E8M0FNUType(),
    float8_e5m2_x4: builtin.VectorType(builtin.Float8E5M2Type(), [4]),
    float8_e4m3fn_x4: builtin.VectorType(builtin.Float8E4M3FNType(), [4]),
    float4_e2m1fn_x4: builtin.VectorType(builtin.Float4E2M1FNType(), [4]),
}
_FROM_MLIR: dict[Attribute, np.dtype] = {v: k for k, v in _TO_MLIR.items()}


def as_dtype(x: object) -> np.dtype:
    """Normalise a dtype-like (NumPy dtype or type, ml_dtypes type, NKI name) to a NumPy dtype.

    Raises:
        NKITypeError: ``x`` is not one of the NKI dtypes.
    """
    hit = _AS_DTYPE.get(id(x))
    if hit is not None and hit[0] is x:   # (the same object: the same answer)
        return hit[1]
    if isinstance(x, str) and x in BY_NAME:
        return BY_NAME[x]
    dt = _as_dtype(x)
    if isinstance(x, np.dtype) or x in (float, int, bool) or (isinstance(x, type) and issubclass(x, np.generic)):
        # immutable, and few: remembered (and kept alive, so the id stays its own)
        if len(_AS_DTYPE) >= 256:
            _AS_DTYPE.clear()
        _AS_DTYPE[id(x)] = (x, dt)
    return dt


#: id(dtype or scalar type) -> (it, :func:`as_dtype` of it)
_AS_DTYPE: dict[int, tuple[object, np.dtype]] = {}


def _as_dtype(x: object) -> np.dtype:
    try:
        dt = np.dtype(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise NKITypeError(f"{x!r} is not an NKI dtype; use one of nl.{', nl.'.join(BY_NAME)}")
    if dt == np.float64:
        return float32  # Python floats are weakly typed fp32 in NKI
    if dt == np.int64:
        return int32
    if dt not in _TO_MLIR:
        raise NKITypeError(f"dtype {dt} is not supported by NKI; use one of nl.{', nl.'.join(BY_NAME)}")
    return dt


def to_mlir(dt: np.dtype) -> Attribute:
    """The MLIR element type of an NKI dtype (``f32``, ``bf16``, ``ui8``, ...)."""
    return _TO_MLIR[as_dtype(dt)]


def from_mlir(t: Attribute) -> np.dtype:
    """The NumPy dtype of an MLIR element type.  Raises KeyError for a foreign type."""
    return _FROM_MLIR[t]


def name_of(dt: np.dtype) -> str:
    """The ``nl.`` name of a dtype, e.g. ``'bfloat16'``."""
    for name, d in BY_NAME.items():
        if d == dt:
            return name
    return str(dt)


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in (bfloat16, float8_e4m3, float8_e4m3fn, float8_e5m2, float8_e8m0fnu)


def is_x4(dt: np.dtype) -> bool:
    """Whether ``dt`` is a packed MX type (``float8_e5m2_x4``, ``float8_e4m3fn_x4``, ``float4_e2m1fn_x4``)."""
    return dt in X4_VALUE


def is_int(dt: np.dtype) -> bool:
    return dt.kind in "iub"


def int_constant_attr(v: int, dt: np.dtype) -> builtin.IntegerAttr:
    """The ``arith.constant`` value of integer ``v`` as a ``dt`` element (an NKI int dtype).

    ``arith.constant`` takes signless integers only: an unsigned dtype uses the signless type
    of its width, and the value keeps its bits (uint8 200 is ``-56 : i8``, the same byte).
    """
    if as_dtype(dt) == bool_:
        return builtin.IntegerAttr(int(bool(v)), builtin.IntegerType(1))
    width = as_dtype(dt).itemsize * 8
    iv = int(v) % (1 << width)
    return builtin.IntegerAttr(iv - (1 << width) if iv >= 1 << (width - 1) else iv, builtin.IntegerType(width))
