"""Numerics of the compute engines: ALU operators, activation functions and casting rules.

Hardware model (NKI API common tables (nki/api/nki.api.shared), from the NKI docs "Supported data types"):

- Vector, Scalar and GpSimd read their inputs, convert them to **float32**, compute in
  float32 and cast the result to the ``dst`` dtype.  Float ``dst``: round to nearest even
  (``ml_dtypes`` casts for bf16/fp8).  Integer ``dst``: truncation toward zero, saturated to
  the dtype's range, NaN -> 0 (the hardware rounding mode for float->int is not documented;
  this is our choice).  ``bool`` ``dst``: ``value != 0``.
- Reading converts exactly to float32, except int32/uint32 magnitudes above 2^24, which
  round to nearest even (so Vector/Scalar arithmetic on int32 loses precision there, as
  NKI API common tables (nki/api/nki.api.shared) says).
- Narrow float ``dst`` (``make_store``): one RNE rounding float32 -> ``dst`` by ``ml_dtypes``
  (NumPy for float16).  These casts do **not saturate**: a finite value beyond the largest
  finite number of the format (after rounding) becomes +-inf for bfloat16, float16,
  float8_e4m3 (max 240) and float8_e5m2 (max 57344), and **NaN** for float8_e4m3fn (max 448,
  no infinity).  +-inf stays +-inf (NaN for float8_e4m3fn); NaN stays NaN; subnormals of the
  format are produced.  Whether the hardware saturates instead is not documented; we keep the
  IEEE-like (OCP "non-saturating") behaviour of ``ml_dtypes``.
- The exact integer path computes in int64 and wraps to the ``dst`` integer width.  It is
  taken by bitvec operators (any engine; integer operands only) and by ``tensor_tensor`` on
  **GpSimd** when both inputs are int32/uint32 (the only exact integer ALU, NKI API common tables (nki/api/nki.api.shared)).  int32 ``tensor_tensor`` on Vector goes through float32.
- Bitvec operators (``bitwise_*``, ``left_shift``, ``right_shift``) work on the integer values
  as a 32-bit ALU: ``right_shift`` is logical on the 32-bit two's-complement pattern.
- Activation functions: ``exp`` is computed in float32 (NumPy's float32 ``exp``, within 2
  ULP of the exact value), as ScalarE computes on float32 inputs in float32 (nki.isa API
  reference (nki/api/nki/isa), ``nki.isa.activation``); the other transcendental functions are
  evaluated exactly (float64, then rounded once to float32), as NKI API common tables
  (nki/api/nki.api.shared) allows.  The ScalarE polynomial out-of-range behaviour is not
  reproduced.

Operator spellings are AWS's ``ArithOp`` names (``nki_mlir.dialects.vector_rules.ARITH_NAMES``) and
``ActivationFunction`` names (``nki_mlir.dialects.vector_rules.ACTIVATIONS``).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.polynomial import chebyshev as _cheb

from .. import dtypes

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I64 = np.dtype(np.int64)

#: 32-bit integer dtypes that take the exact integer path
INT32_TYPES = (np.dtype(np.int32), np.dtype(np.uint32))


# --------------------------------------------------------------------------- casting


def to_f32(a) -> np.ndarray:
    """``a`` as float32 (no copy when it already is); bool/int/bf16/fp8 convert exactly or RNE.

    A bfloat16 array of at least :data:`BF16_SHIFT_MIN` elements converts as its bits shifted
    into the high half of a float32 (what the conversion is, NaN payloads included; ~2.5x
    faster than ``ml_dtypes``' cast), laid out as ``np.asarray`` lays it out (order ``K``)."""
    if type(a) is np.ndarray and a.dtype == _BF16 and a.size >= BF16_SHIFT_MIN:
        bits = a.view(np.uint16).astype(np.uint32)
        np.left_shift(bits, 16, out=bits)
        return bits.view(F32)
    return np.asarray(a, dtype=F32)


_BF16 = np.dtype(dtypes.bfloat16)
#: smallest bfloat16 array :func:`to_f32` converts by shifting bits (below it, the fixed cost
#: of three NumPy calls outweighs the per-element gain)
BF16_SHIFT_MIN = 2048


def f32_to_int(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Float -> integer ``dt``: truncate toward zero, saturate to ``dt``'s range, NaN -> 0."""
    info = np.iinfo(dt)
    y = np.nan_to_num(np.trunc(np.asarray(x, dtype=F64)), nan=0.0, posinf=float(info.max),
                      neginf=float(info.min))
    return np.clip(y, float(info.min), float(info.max)).astype(dt)  # 0-d input: a NumPy scalar


def make_store(dt: np.dtype) -> Callable[[np.ndarray, np.ndarray], None]:
    """``store(dst, value)``: write a float32 ``value`` (broadcastable to ``dst``) cast to ``dt``.

    ``dt`` is ``dst``'s dtype; the cast rule is chosen once here, at decode time.
    """
    dt = np.dtype(dt)
    if dt == np.bool_:
        def store(dst, value):
            dst[...] = np.asarray(value) != 0
    elif dtypes.is_float(dt):
        def store(dst, value):
            value = np.asarray(value)
            if value.dtype != F32:
                value = value.astype(F32)
            dst[...] = value
    else:
        def store(dst, value):
            dst[...] = f32_to_int(value, dt)
    return store


def make_int_store(dt: np.dtype) -> Callable[[np.ndarray, np.ndarray], None]:
    """``store(dst, value)`` for an int64 ``value`` of the exact integer path.

    Integer ``dst`` wraps to its width; float ``dst`` rounds (int64 -> float32 -> ``dt``).
    """
    dt = np.dtype(dt)
    if dt == np.bool_:
        def store(dst, value):
            dst[...] = np.asarray(value) != 0
    elif dtypes.is_float(dt):
        def store(dst, value):
            dst[...] = np.asarray(value).astype(F32)
    else:
        def store(dst, value):
            dst[...] = np.asarray(value).astype(dt)
    return store


def scalar_f32(x) -> np.float32:
    """A scalar operand (Python/NumPy number) as float32."""
    return np.float32(x)


# --------------------------------------------------------------------------- ALU


def _cmp(f, out=None):
    """A comparison giving 1/0 in ``out`` (float32 by default, int64 on the exact path)."""
    out = F32 if out is None else out
    return lambda a, b: f(a, b).astype(out)


def _logical(f, out=None):
    """A logical op on nonzero-ness giving 1/0 in ``out`` (float32 by default)."""
    out = F32 if out is None else out
    return lambda a, b: f(np.not_equal(a, 0), np.not_equal(b, 0)).astype(out)


#: binary ALU operators on float32 operands (arrays or np.float32 scalars) -> float32.
#: Unary operators (``abs``, ``rsqrt``, ``reciprocal``) ignore their second operand.
ALU: dict[str, Callable] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "is_eq": _cmp(np.equal),
    "is_ne": _cmp(np.not_equal),
    "is_lt": _cmp(np.less),
    "is_le": _cmp(np.less_equal),
    "is_gt": _cmp(np.greater),
    "is_ge": _cmp(np.greater_equal),
    "logical_and": _logical(np.logical_and),
    "logical_or": _logical(np.logical_or),
    "logical_xor": _logical(np.logical_xor),
    "pow": np.power,
    "abs_max": lambda a, b: np.maximum(np.abs(a), np.abs(b)),
    "abs_min": lambda a, b: np.minimum(np.abs(a), np.abs(b)),
    "bypass": lambda a, b: a,
    "abs": lambda a, b: np.abs(a),
    "mod": np.mod,  # floored: the sign of the divisor (NumPy / Python %)
    "fmod": np.fmod,  # truncated: the sign of the dividend (C fmod)
    "rsqrt": lambda a, b: (1.0 / np.sqrt(np.asarray(a, dtype=F64))).astype(F32),
    "reciprocal": lambda a, b: np.divide(np.float32(1.0), a),
}

#: operators on raw integer bits (need integer operands)
BITVEC = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"})
#: operators that use only their first operand
UNARY = frozenset({"abs", "rsqrt", "reciprocal"})

_MASK32 = np.int64(0xFFFFFFFF)


def _int_div(a, b):
    """C-style integer division (truncates toward zero); x / 0 -> 0."""
    a = np.asarray(a, dtype=I64)
    b = np.asarray(b, dtype=I64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    q = np.where((a < 0) != (safe < 0), -q, q)
    return np.where(b == 0, 0, q)


def _int_mod(a, b, floored: bool):
    """Integer remainder: floored (sign of ``b``) or truncated (sign of ``a``); x % 0 -> 0."""
    a = np.asarray(a, dtype=I64)
    b = np.asarray(b, dtype=I64)
    safe = np.where(b == 0, 1, b)
    r = np.mod(a, safe) if floored else np.fmod(a, safe)
    return np.where(b == 0, 0, r)


def _int_pow(a, b):
    r = np.power(np.asarray(a, dtype=F64), np.asarray(b, dtype=F64))
    return f32_to_int(r, I64)


def _shift_amount(b):
    return np.clip(np.asarray(b, dtype=I64), 0, 63)


def _icmp(f):
    return _cmp(f, I64)


def _ilogical(f):
    return _logical(f, I64)


#: the exact integer path: int64 operands -> int64 result
ALU_INT: dict[str, Callable] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _int_div,
    "max": np.maximum,
    "min": np.minimum,
    "is_eq": _icmp(np.equal),
    "is_ne": _icmp(np.not_equal),
    "is_lt": _icmp(np.less),
    "is_le": _icmp(np.less_equal),
    "is_gt": _icmp(np.greater),
    "is_ge": _icmp(np.greater_equal),
    "logical_and": _ilogical(np.logical_and),
    "logical_or": _ilogical(np.logical_or),
    "logical_xor": _ilogical(np.logical_xor),
    "pow": _int_pow,
    "abs_max": lambda a, b: np.maximum(np.abs(a), np.abs(b)),
    "abs_min": lambda a, b: np.minimum(np.abs(a), np.abs(b)),
    "bypass": lambda a, b: a,
    "abs": lambda a, b: np.abs(a),
    "mod": lambda a, b: _int_mod(a, b, floored=True),
    "fmod": lambda a, b: _int_mod(a, b, floored=False),
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": lambda a, b: np.left_shift(np.asarray(a, dtype=I64), _shift_amount(b)),
    "right_shift": lambda a, b: np.right_shift(np.bitwise_and(np.asarray(a, dtype=I64), _MASK32),
                                               _shift_amount(b)),
}


def to_int64(a) -> np.ndarray:
    """An integer (or bool) array/scalar as int64; floats truncate toward zero."""
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return a.astype(I64)
    return f32_to_int(a, I64)


# --------------------------------------------------------------------------- reductions


def _logical_reduce(f):
    return lambda x: f.reduce(np.not_equal(x, 0), axis=-1).astype(F32)


#: reductions over the last axis of a float32 array -> float32
REDUCE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "add": lambda x: np.add.reduce(x, axis=-1),
    "subtract": lambda x: np.subtract.reduce(x, axis=-1),
    "multiply": lambda x: np.multiply.reduce(x, axis=-1),
    "max": lambda x: np.maximum.reduce(x, axis=-1),
    "min": lambda x: np.minimum.reduce(x, axis=-1),
    "abs_max": lambda x: np.maximum.reduce(np.abs(x), axis=-1),
    "abs_min": lambda x: np.minimum.reduce(np.abs(x), axis=-1),
    "logical_and": _logical_reduce(np.logical_and),
    "logical_or": _logical_reduce(np.logical_or),
    "logical_xor": _logical_reduce(np.logical_xor),
}

#: the :data:`REDUCE` entries that are one ufunc's ``reduce`` (``u.reduce(x, axis=-1)``)
REDUCE_UFUNC: dict[str, np.ufunc] = {"add": np.add, "subtract": np.subtract,
                                     "multiply": np.multiply, "max": np.maximum,
                                     "min": np.minimum}

#: bitvec reductions over the last axis of an int64 array -> int64
REDUCE_INT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bitwise_and": lambda x: np.bitwise_and.reduce(x, axis=-1),
    "bitwise_or": lambda x: np.bitwise_or.reduce(x, axis=-1),
    "bitwise_xor": lambda x: np.bitwise_xor.reduce(x, axis=-1),
}


# --------------------------------------------------------------------------- erf / erfc
#
# float64 erf/erfc without SciPy.  Chebyshev interpolants are fitted once at import from
# math.erf / math.erfc (36 evaluations):
#   |x| < 2:       erf(a)  = a * C1(a^2/2 - 1)             (erf(a)/a is smooth and even)
#   2 <= |x| < 6:  erfc(a) = exp(-a^2) * C2((a - 4) / 2)   (erfc(a) e^{a^2} is smooth)
#   |x| >= 6:      erfc(a) = exp(-a^2)/(a sqrt(pi)) * asymptotic series (8 terms)
# Relative error < 1e-13 for erf everywhere and < 1e-11 for erfc below 6 (checked in tests).

def _fit_small(u):
    a = np.sqrt(2.0 * (np.asarray(u, dtype=F64) + 1.0))
    return np.array([math.erf(x) / x if x > 0 else 2.0 / math.sqrt(math.pi) for x in a])


def _fit_mid(v):
    a = 4.0 + 2.0 * np.asarray(v, dtype=F64)
    return np.array([math.erfc(x) * math.exp(x * x) for x in a])


_C_SMALL = _cheb.Chebyshev.interpolate(_fit_small, 14).coef
_C_MID = _cheb.Chebyshev.interpolate(_fit_mid, 20).coef
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _erfc_pos(a: np.ndarray) -> np.ndarray:
    """erfc(a) for a >= 2 (float64)."""
    out = np.empty_like(a)
    mid = a < 6.0
    b = a[mid]
    out[mid] = np.exp(-b * b) * _cheb.chebval((b - 4.0) / 2.0, _C_MID)
    b = a[~mid]
    if b.size:
        inv = 1.0 / (2.0 * b * b)
        series = np.ones_like(b)
        term = np.ones_like(b)
        for k in range(1, 9):
            term = -term * (2 * k - 1) * inv
            series = series + term
        out[~mid] = np.exp(-b * b) * _INV_SQRT_PI / b * series
    return out


def erf(x) -> np.ndarray:
    """The error function, float64 in and out (NaN propagates)."""
    x = np.asarray(x, dtype=F64)
    a = np.abs(x)
    out = np.empty_like(a)
    small = a < 2.0
    s = a[small]
    out[small] = s * _cheb.chebval(s * s / 2.0 - 1.0, _C_SMALL)
    big = ~small
    out[big] = 1.0 - _erfc_pos(a[big])
    return np.copysign(out, x)


def erfc(x) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, accurate in the tails (float64)."""
    x = np.asarray(x, dtype=F64)
    a = np.abs(x)
    pos = np.empty_like(a)  # erfc(|x|)
    small = a < 2.0
    s = a[small]
    pos[small] = 1.0 - s * _cheb.chebval(s * s / 2.0 - 1.0, _C_SMALL)
    big = ~small
    pos[big] = _erfc_pos(a[big])
    return np.where(x < 0, 2.0 - pos, pos)


# --------------------------------------------------------------------------- activations


def _f64(x):
    return np.asarray(x, dtype=F64)


def _sigmoid64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus64(x):
    return np.logaddexp(0.0, x)


def _wrap64(f):
    """An activation evaluated in float64 and rounded once to float32."""
    return lambda x: f(_f64(x)).astype(F32)


_SQRT_HALF = math.sqrt(0.5)
_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_SIG = 1.702
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

#: documented valid input ranges of the ScalarE functions (NKI API common tables (nki/api/nki.api.shared), NKI
#: ``nki.api.shared`` "Supported Activation Functions"): name -> (lo, hi, text, on_abs).
#: ``on_abs``: the range applies to ``|x|`` (reciprocal: +-[2^-42, 2^42]).  Bounds are
#: float32 and inclusive (float32(pi) is slightly above pi, so x = float32(pi) is in range).
ACT_RANGES: dict[str, tuple[np.float32, np.float32, str, bool]] = {
    "log": (np.float32(2.0 ** -64), np.float32(2.0 ** 64), "[2^-64, 2^64]", False),
    "sin": (np.float32(-math.pi), np.float32(math.pi), "[-pi, pi]", False),
    "arctan": (np.float32(-math.pi / 2), np.float32(math.pi / 2), "[-pi/2, pi/2]", False),
    "sqrt": (np.float32(2.0 ** -116), np.float32(2.0 ** 118), "[2^-116, 2^118]", False),
    "rsqrt": (np.float32(2.0 ** -87), np.float32(2.0 ** 97), "[2^-87, 2^97]", False),
    "reciprocal": (np.float32(2.0 ** -42), np.float32(2.0 ** 42), "+-[2^-42, 2^42]", True),
}


def act_range_violation(name: str, x: np.ndarray) -> float | None:
    """An input value of activation ``name`` outside :data:`ACT_RANGES`, or None.

    One min and one max reduction over ``x`` (NaNs ignored: ``np.fmin`` / ``np.fmax``);
    the offending element is located only when there is one.
    """
    r = ACT_RANGES.get(name)
    x = np.asarray(x)
    if r is None or x.size == 0:
        return None
    lo, hi, _, on_abs = r
    v = np.abs(x) if on_abs else x
    mn, mx = np.fmin.reduce(v, axis=None), np.fmax.reduce(v, axis=None)
    if mn < lo:
        bad = mn
    elif mx > hi:
        bad = mx
    else:
        return None
    if on_abs:  # report the signed element
        bad = x.flat[int(np.nanargmin(v) if bad == mn else np.nanargmax(v))]
    return float(bad)


#: ScalarE activation functions: float32 array -> float32 array (``nki_mlir.dialects.vector_rules.ACTIVATIONS``)
ACTIVATION: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "copy": lambda x: x,
    "identity": lambda x: x,
    "exp": lambda x: np.exp(np.asarray(x, dtype=F32)),
    "relu": lambda x: np.maximum(x, np.float32(0.0)),
    "gelu": _wrap64(lambda x: 0.5 * x * erfc(-x * _SQRT_HALF)),
    "gelu_apprx_tanh": _wrap64(lambda x: 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x * x * x)))),
    "sigmoid": _wrap64(_sigmoid64),
    "tanh": _wrap64(np.tanh),
    "square": lambda x: np.multiply(x, x),
    "sqrt": lambda x: np.sqrt(x),
    "rsqrt": _wrap64(lambda x: 1.0 / np.sqrt(x)),
    "reciprocal": lambda x: np.divide(np.float32(1.0), x),
    "log": _wrap64(np.log),
    "silu": _wrap64(lambda x: x * _sigmoid64(x)),
    "abs": lambda x: np.abs(x),
    "sign": lambda x: np.sign(x),
    "softplus": _wrap64(_softplus64),
    "erf": _wrap64(erf),
    "sin": _wrap64(np.sin),
    "arctan": _wrap64(np.arctan),
    "mish": _wrap64(lambda x: x * np.tanh(_softplus64(x))),
    # derivatives and the sigmoid GELU approximation (x * sigmoid(1.702 x), NKI API common tables (nki/api/nki.api.shared))
    "silu_dx": _wrap64(lambda x: _sigmoid64(x) * (1.0 + x * (1.0 - _sigmoid64(x)))),
    "gelu_dx": _wrap64(lambda x: 0.5 * erfc(-x * _SQRT_HALF) + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI),
    "gelu_apprx_sigmoid": _wrap64(lambda x: x * _sigmoid64(_GELU_SIG * x)),
    "gelu_apprx_sigmoid_dx": _wrap64(lambda x: _sigmoid64(_GELU_SIG * x) * (
        1.0 + _GELU_SIG * x * (1.0 - _sigmoid64(_GELU_SIG * x)))),
    "erf_dx": _wrap64(lambda x: 2.0 * _INV_SQRT_PI * np.exp(-x * x)),
}

#: the float32 functions of :data:`ACTIVATION` as ``f(x, out)`` writing into ``out`` (the same
#: float32 operations, no temporary)
ACTIVATION_INTO: dict[str, Callable[[np.ndarray, np.ndarray], object]] = {
    "relu": lambda x, out: np.maximum(x, np.float32(0.0), out=out),
    "exp": lambda x, out: np.exp(x, out=out),
    "square": lambda x, out: np.multiply(x, x, out=out),
    "sqrt": lambda x, out: np.sqrt(x, out=out),
    "reciprocal": lambda x, out: np.divide(np.float32(1.0), x, out=out),
    "abs": lambda x, out: np.abs(x, out=out),
    "sign": lambda x, out: np.sign(x, out=out),
}

def _rsqrt_into(t: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``1.0 / np.sqrt(t)`` in float64, into ``out`` (the steps of ``ACTIVATION["rsqrt"]``)."""
    np.sqrt(t, out=out)
    return np.divide(1.0, out, out=out)


#: the activation functions of :data:`ACTIVATION` evaluated in float64 in place, as
#: ``f(t, out=t)`` (one float64 ufunc, or the same float64 steps as :data:`ACTIVATION`), on
#: the float32 input converted exactly to float64, then rounded once to float32
ACTIVATION_F64: dict[str, Callable] = {"tanh": np.tanh, "log": np.log, "sin": np.sin,
                                       "arctan": np.arctan, "rsqrt": _rsqrt_into}


def _f64_to(f: np.ufunc) -> Callable:
    def to(x: np.ndarray, out: np.ndarray, t: np.ndarray | None) -> None:
        f(x, out=out, dtype=F64, casting="same_kind")
    return to


def _rsqrt_to(x: np.ndarray, out: np.ndarray, t: np.ndarray | None) -> None:
    np.sqrt(x, out=t, dtype=F64)
    np.divide(1.0, t, out=out, casting="same_kind")


#: :data:`ACTIVATION_F64` as ``f(x, out, t)``: the same float64 steps on ``x`` (float32 or
#: float64; converted exactly by the first ufunc) with the result rounded once into the
#: float32 ``out`` by the last one (no separate conversions); ``t``: a float64 temporary of
#: ``x``'s shape for the functions of several steps (:data:`F64_TEMP`), else unused
ACTIVATION_F64_TO: dict[str, Callable] = {**{k: _f64_to(f) for k, f in ACTIVATION_F64.items()
                                             if isinstance(f, np.ufunc)}, "rsqrt": _rsqrt_to}
#: the functions of :data:`ACTIVATION_F64_TO` that need the float64 temporary
F64_TEMP = frozenset({"rsqrt"})
