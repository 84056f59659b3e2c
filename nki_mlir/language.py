"""``nki.language`` (``nl``): dtypes, buffers, tile sizes, op tokens and language functions.

Names and semantics follow the NKI ``nki.language`` API page (nki_spec.md sections 2.3,
2.4, 3, 4.1, 5.2, 5.3 and 5.6).  Functions here are markers compiled by the frontend;
calling them outside an ``@nki.jit`` kernel raises an ``NKIError``.
"""
from __future__ import annotations

from types import SimpleNamespace

from . import dtypes as _dt
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
class MemoryRegion:
    """A buffer token (``nl.sbuf``, ``nl.psum``, ``nl.hbm``, ``nl.shared_hbm``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    def __reduce__(self):
        return (_buffer_by_name, (self.name,))


sbuf = MemoryRegion("sbuf")
psum = MemoryRegion("psum")
hbm = MemoryRegion("hbm")
private_hbm = hbm  # nl.hbm is an alias of nl.private_hbm
shared_hbm = MemoryRegion("shared_hbm")


def _buffer_by_name(name: str) -> MemoryRegion:
    return {"sbuf": sbuf, "psum": psum, "hbm": hbm, "private_hbm": hbm, "shared_hbm": shared_hbm}[name]


# ------------------------------------------------------------------------- tile sizes
#: hardware tile limits (nki_spec.md section 2.3)
tile_size = SimpleNamespace(
    pmax=128,
    gemm_stationary_fmax=128,
    gemm_moving_fmax=512,
    psum_fmax=512,
    psum_bank_fmax=512,
    psum_bank_fmax_bytes=2048,
    psum_num_banks=8,
    bn_stats_fmax=512,
    total_available_sbuf_size=212984,
    sbuf_fmax_bytes=212984,
)

# ------------------------------------------------------------- op tokens + functions
_ALU = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
        "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
        "logical_xor", "logical_not", "power", "abs_max", "abs_min", "bitwise_and", "bitwise_or",
        "bitwise_xor", "invert", "left_shift", "right_shift", "bypass", "average", "mod", "fmod"]
_ACT = ["copy", "identity", "exp", "relu", "gelu", "gelu_dx", "gelu_apprx_tanh",
        "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "sigmoid", "tanh", "square", "sqrt",
        "rsqrt", "reciprocal", "log",
        "silu", "silu_dx", "abs", "sign", "softplus", "mish", "erf", "erf_dx", "sin", "arctan",
        "prelu"]

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

__all__ = [n for n in dir() if not n.startswith("_")]
