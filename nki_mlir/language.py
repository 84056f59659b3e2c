"""``nki.language`` (``nl``): dtypes, buffers, tile sizes, op tokens and language functions.

Names and semantics follow the NKI ``nki.language`` API pages.  Functions here are markers compiled by the frontend;
calling them outside an ``@nki.jit`` kernel raises an ``NKIError``.
"""
from __future__ import annotations

from types import SimpleNamespace

import builtins as _builtins

import numpy as _np

from . import dtypes as _dt
from . import targets as _tg
from .dialects.vector_rules import ACT2_FUNCS as _ACT2_FUNCS
from .frontend.builtins import Builtin as _B

# ----------------------------------------------------------------------------- dtypes
float32 = _dt.float32
bfloat16 = _dt.bfloat16
float16 = _dt.float16
tfloat32 = _dt.tfloat32
float8_e4m3 = _dt.float8_e4m3
float8_e4m3fn = _dt.float8_e4m3fn
float8_e5m2 = _dt.float8_e5m2
int8 = _dt.int8
int16 = _dt.int16
int32 = _dt.int32
uint8 = _dt.uint8
uint16 = _dt.uint16
uint32 = _dt.uint32
bool_ = _dt.bool_
float8_e8m0fnu = _dt.float8_e8m0fnu
float8_e5m2_x4 = _dt.float8_e5m2_x4
float8_e4m3fn_x4 = _dt.float8_e4m3fn_x4
float4_e2m1fn_x4 = _dt.float4_e2m1fn_x4


# ---------------------------------------------------------------------------- buffers
from .frontend.buffers import (  # noqa: E402,F401
    MemoryRegion, hbm, private_hbm, psum, sbuf, shared_hbm,
)
from .frontend.buffers import buffer_by_name as _buffer_by_name  # noqa: E402,F401  (old pickles)


# ------------------------------------------------------------------------- tile sizes
_SBUF = _tg.SBUF_USABLE_BYTES[_tg.DEFAULT]
#: hardware tile limits (NKI ``nki.language.tile_size``), those of the default target (trn2)
tile_size = SimpleNamespace(
    pmax=_tg.PARTITIONS,
    gemm_stationary_fmax=_tg.STATIONARY_FMAX,
    gemm_moving_fmax=_tg.MOVING_FMAX[_tg.DEFAULT],
    psum_fmax=_tg.PSUM_BANK_BYTES // 4,            # fp32 elements of one bank
    psum_bank_fmax=_tg.PSUM_BANK_BYTES // 4,
    psum_bank_fmax_bytes=_tg.PSUM_BANK_BYTES,
    psum_num_banks=_tg.PSUM_BANKS,
    bn_stats_fmax=512,
    total_available_sbuf_size=_SBUF,
    sbuf_fmax_bytes=_SBUF,
    sbuf_fmax=_SBUF // 4,                          # in fp32 elements
    sbuf_size_bytes=_SBUF * _tg.PARTITIONS,        # all partitions
    psum_min_align=4,                              # bytes (NKI architecture guide (nki/guides/architecture))
    sbuf_min_align=1,
)

# ------------------------------------------------------------- op tokens + functions
_ALU = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
        "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
        "logical_xor", "logical_not", "power", "abs_max", "abs_min", "bitwise_and", "bitwise_or",
        "bitwise_xor", "invert", "left_shift", "right_shift", "bypass", "average", "mod", "fmod"]
#: the activation functions (and prelu), as the instructions' vocabulary defines them
_ACT = list(_ACT2_FUNCS)

for _name in dict.fromkeys(_ALU + _ACT):
    globals()[_name] = _B(f"nl.{_name}", token=_name)

_FUNCS = [
    # creation and constants
    "ndarray", "zeros", "ones", "full", "zeros_like", "empty_like", "rand", "random_seed",
    "shared_constant", "shared_identity_matrix",
    # loops, slices, scheduling
    "ds", "affine_range", "sequential_range", "static_range", "dynamic_range", "fori_loop",
    "while_loop", "no_reorder",
    # memory, copy and shape
    "load", "store", "load_transpose2d", "transpose", "broadcast_to", "expand_dims",
    "matmul",
    # reductions and composites
    "sum", "max", "min", "mean", "prod", "var", "all", "softmax", "rms_norm", "where",
    "dropout", "gather_flattened",
    # unary math not already an op token
    "negative", "ceil", "floor", "trunc", "cos", "tan",
    # SPMD and debugging
    "program_id", "num_programs", "program_ndim", "device_print",
]
for _name in _FUNCS:
    globals()[_name] = _B(f"nl.{_name}")

del _name

# ------------------------------------------------------ objects, types and predicates
from .frontend.frames import transparent as _transparent  # noqa: E402
from .frontend.proxies import NkiTensor  # noqa: E402  (the tensor type a traced kernel sees)

#: the type of NKI dtypes (``nl.float32`` ...): NumPy / ml_dtypes dtypes in nki-mlir
DType = _np.dtype
bool = bool_  # noqa: A001  (``nl.bool``: the NKI spelling of the boolean dtype)
#: ``nl.tensor``: the tensor type, for annotations (an alias of :class:`NkiTensor`)
tensor = NkiTensor
#: ``nl.dtype``: the dtype type, for annotations
dtype = DType


class _NKIObjectType(type):
    """Keyword construction of NKIObject dataclasses: a keyword naming a class attribute
    that ``__init__`` does not take (``@dataclass`` makes no field of an attribute without
    an annotation) is set on the instance after ``__init__``, as NKI's
    ``NKIObject(**kwargs)`` does.  Anything else is Python's own behaviour."""

    @_transparent
    def __call__(cls, *args, **kwargs):
        extra = {}
        if kwargs:
            params = _init_parameters(cls)
            if params is not None:
                extra = {k: kwargs.pop(k) for k in list(kwargs)
                         if k not in params and hasattr(cls, k)}
        obj = super().__call__(*args, **kwargs)
        for k, v in extra.items():
            setattr(obj, k, v)
        return obj


def _init_parameters(cls) -> "set[str] | None":
    """The keyword names ``cls.__init__`` binds (None: it takes ``**kwargs``, or unknown)."""
    import inspect
    try:
        params = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


class NKIObject(metaclass=_NKIObjectType):
    """Base class for NKI kernel dataclasses and configuration objects (NKI
    ``nki.language.NKIObject``).

    A kernel's Python runs at compile time, so subclasses are ordinary Python classes:
    they may hold tiles (:class:`NkiTensor`), lists of tiles and compile-time values, and
    have methods.  ``NKIObject(**kwargs)`` sets one attribute per keyword (also on a
    ``@dataclass`` subclass, for class attributes declared without an annotation).
    """

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


def _buffer_name(buffer) -> str:
    if isinstance(buffer, MemoryRegion):
        return buffer.name
    if isinstance(buffer, NkiTensor):
        return buffer._t.buffer
    if isinstance(buffer, str):
        return buffer
    raise TypeError(f"expected a buffer (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm), got {buffer!r}")


def is_hbm(buffer) -> bool:
    """True for any HBM buffer (``nl.hbm`` / ``nl.private_hbm`` / ``nl.shared_hbm``)."""
    return _buffer_name(buffer) in ("hbm", "private_hbm", "shared_hbm")


def is_sbuf(buffer) -> bool:
    """True for ``nl.sbuf``."""
    return _buffer_name(buffer) == "sbuf"


def is_psum(buffer) -> bool:
    """True for ``nl.psum``."""
    return _buffer_name(buffer) == "psum"


def is_on_chip(buffer) -> bool:
    """True for on-chip buffers (SBUF or PSUM)."""
    return _buffer_name(buffer) in ("sbuf", "psum")


def range(*args):  # noqa: A001  (``nl.range``: an alias for Python's range)
    """``nl.range(...)``: Python's ``range`` (a loop the compiler may keep rolled)."""
    return _builtins.range(*args)


from . import dtypes  # noqa: E402,F401  (``nki.language.dtypes``)

__all__ = [n for n in dir() if not n.startswith("_")]
