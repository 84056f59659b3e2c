"""Static rules of the Tensor Engine instructions, shared by the verifiers of ``nki`` and
``nisa`` ops: ``nc_matmul`` (:func:`matmul`: shapes, dtypes, ``perf_mode``, ``is_transpose``,
tiling mode), ``nc_transpose`` (:func:`transpose`) and the TensorE input dtypes.

Each check raises ``VerifyException`` naming the instruction, the operand role and the limit
(NKI error catalogue (nki.errors)).  Sources: NKI architecture guide (nki/guides/architecture)
and the ``nki.isa.nc_matmul`` / ``nc_transpose`` API pages.
"""
from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..targets import MOVING_FMAX, STATIONARY_FMAX
from .common import ON_CHIP, PMAX, describe, dtype_of, free_size, shape_of
from .rules import api, require_target, target_of, tile


#: TensorE input dtypes (NKI API common tables (nki/api/nki.api.shared)).  tfloat32 is stored as float32 here, so the
#: fp32/tf32 pairing rule is one rule; float8_e4m3fn is added on trn3 (never mixed with float8_e4m3).
MATMUL_INPUTS = (dtypes.float8_e4m3, dtypes.float8_e5m2, dtypes.bfloat16, dtypes.float16, dtypes.float32)
FP8_INPUTS = (dtypes.float8_e4m3, dtypes.float8_e5m2, dtypes.float8_e4m3fn)
#: Tensor Engine tile sizes (tile_size rows or columns) -> the oldest target that has them
ROW_TILE_SIZES = {128: "trn1", 64: "trn1", 32: "trn2"}
#: PE columns (a column tile is 128, 64 or 32 of them)
PE_COLUMNS = 128


def moving_fmax(target: str, dst_dtype) -> int:
    """gemm_moving_fmax: 512 fp32 (one PSUM bank) on trn1/trn2; on trn3 all 8 banks:
    4096 for a float32 ``dst``, 8192 for a bfloat16 ``dst`` (NKI architecture guide (nki/guides/architecture))."""
    if target == "trn3":
        return 8192 if dst_dtype == dtypes.bfloat16 else 4096
    return MOVING_FMAX[target]


def _dt(v: SSAValue) -> str:
    return dtypes.name_of(dtype_of(v))


def matmul_input_dtypes(op: Operation, stationary: SSAValue, moving: SSAValue, *,
                        fp8_only: bool = False) -> None:
    """TensorE input dtypes: fp8_e4m3, fp8_e5m2, bf16, fp16, tf32/fp32 (+ fp8_e4m3fn on trn3,
    not mixed with fp8_e4m3); fp32/tf32 pairs only with fp32/tf32; ``fp8_only`` for double_row."""
    trn3 = target_of(op) == "trn3"
    allowed = MATMUL_INPUTS + ((dtypes.float8_e4m3fn,) if trn3 else ())
    for role, v in (("stationary", stationary), ("moving", moving)):
        dt = dtype_of(v)
        if dt == dtypes.float8_e4m3fn and not trn3:
            raise VerifyException(f"{api(op)}: '{role}' dtype float8_e4m3fn (OCP fp8) is a TensorE "
                                  f"input on trn3 only, but the target is {target_of(op)}; use "
                                  f"float8_e4m3 or compile with target=\"trn3\"")
        if dt not in allowed:
            names = "float8_e4m3, float8_e5m2, bfloat16, float16, tfloat32, float32" + (
                ", float8_e4m3fn" if trn3 else "")
            raise VerifyException(f"{api(op)}: '{role}' dtype {_dt(v)} is not a TensorE input type "
                                  f"(allowed: {names})")
        if fp8_only and dt not in FP8_INPUTS:
            raise VerifyException(f"{api(op)}: perf_mode=double_row needs fp8 inputs "
                                  f"(float8_e4m3, float8_e5m2{', float8_e4m3fn' if trn3 else ''}), "
                                  f"but '{role}' is {_dt(v)}")
    s, m = dtype_of(stationary), dtype_of(moving)
    if (s == dtypes.float32) != (m == dtypes.float32):
        raise VerifyException(f"{api(op)}: fp32/tf32 inputs must pair with fp32/tf32 (stationary is "
                              f"{_dt(stationary)}, moving is {_dt(moving)})")
    if {s, m} == {dtypes.float8_e4m3, dtypes.float8_e4m3fn}:
        raise VerifyException(f"{api(op)}: legacy float8_e4m3 and OCP float8_e4m3fn cannot be mixed "
                              f"in one matmul (stationary is {_dt(stationary)}, moving is {_dt(moving)})")


def tiling(op: Operation, tile_position, tile_size, k: int, m: int | None = None,
           double_row: bool = False) -> None:
    """Tensor Engine tiling mode (nc_matmul / nc_matmul_mx ``tile_position``/``tile_size``).

    Both are ``(row, column)`` pairs and must be given together (NKI ``nki.isa.nc_matmul``,
    "Tiling mode": row tiling slices the 128 PE rows into 2 x 64 (trn1+) or 4 x 32 (trn2+)
    row tiles, column tiling slices the 128 PE columns in the same fashion).  Each size is
    128, 64 or 32 (trn2+); each start is a multiple of its size below 128 (0; 0/64;
    0/32/64/96).  The contraction size ``k`` (operand partitions) must fit in the row tile,
    the stationary free size ``m`` (when given) in the column tile; ``double_row``
    (``perf_mode``) cannot be combined with column tiling.  An entry of ``tile_position`` may
    be None (a non-constant ``row_pos``/``col_pos`` operand at the nisa level): it is not
    checked.  Tiling only chooses PEs: the values computed are the same.
    """
    if not tile_position and not tile_size:
        return
    if not tile_position or not tile_size:
        missing = "tile_position" if not tile_position else "tile_size"
        raise VerifyException(f"{api(op)}: tile_position and tile_size must be set together "
                              f"(tiling mode), but {missing} is missing")
    if len(tile_position) != 2 or len(tile_size) != 2:
        raise VerifyException(f"{api(op)}: tile_position and tile_size are (row, column) pairs, got "
                              f"tile_position={list(tile_position)}, tile_size={list(tile_size)}")
    for what, size, start in (("row", tile_size[0], tile_position[0]),
                              ("column", tile_size[1], tile_position[1])):
        if size not in ROW_TILE_SIZES:
            raise VerifyException(f"{api(op)}: tile_size {what} size {size} is not supported "
                                  f"(allowed: 128, 64, 32 (trn2+))")
        require_target(op, ROW_TILE_SIZES[size], f"a {what} tile size of {size}")
        if start is not None and (start < 0 or start % size != 0 or start + size > PMAX):
            starts = ", ".join(str(r) for r in range(0, PMAX, size))
            raise VerifyException(f"{api(op)}: tile_position {what} {start} is not a valid start "
                                  f"for a {size}-{what} tile (allowed: {starts}; a multiple of the "
                                  f"{what} size below {PMAX})")
    rows, cols = tile_size
    if k > rows:
        raise VerifyException(f"{api(op)}: contraction (partition) size {k} exceeds the row tile "
                              f"size {rows} (tile_size[0])")
    if m is not None and m > cols:
        raise VerifyException(f"{api(op)}: stationary free size {m} exceeds the column tile "
                              f"size {cols} (tile_size[1])")
    if double_row and cols != PE_COLUMNS:
        raise VerifyException(f"{api(op)}: perf_mode=double_row cannot be combined with column "
                              f"tiling (tile_size[1]={cols})")


def matmul(op: Operation, dst: SSAValue, stationary: SSAValue, moving: SSAValue, transpose: bool = False,
           *, perf_mode: str = "none", tile_position=(), tile_size=()) -> None:
    """nc_matmul: ``dst[M,N] (+)= stationary[K,M]^T @ moving[K,N]`` (NKI architecture guide (nki/guides/architecture); NKI ``nki.isa.nc_matmul``).

    - stationary/moving in SBUF, dst in PSUM; K <= 128 equal in both; M <= 128;
      N <= 512 (trn1/trn2) or 4096 fp32 / 8192 bf16 dst (trn3).
    - dtypes: :func:`matmul_input_dtypes`; dst float32 (trn1/trn2) or float32/bfloat16 (trn3).
    - ``transpose`` (trn2+): dst[M, K] is the bit-exact transpose of stationary; moving is the
      [K, K] identity; dst has the stationary dtype, or for fp8 a 16-bit integer dtype
      (uint16/int16) receiving the raw code in the low byte with a zero high byte.
    - ``perf_mode="double_row"`` (trn2+): fp8 inputs shaped [K, 2, M] / [K, 2, N], the
      contraction runs over K*2; no transpose.
    - tiling: :func:`tiling` (row and column tiling).
    """
    tile(op, "stationary", stationary, spaces=("sbuf",))
    tile(op, "moving", moving, spaces=("sbuf",))
    tile(op, "dst", dst, spaces=("psum",))
    target = target_of(op)
    double = perf_mode == "double_row"
    if perf_mode not in ("none", "double_row"):
        raise VerifyException(f"{api(op)}: perf_mode={perf_mode} is not supported (expected none "
                              f"or double_row)")
    if double:
        require_target(op, "trn2", "perf_mode=double_row")
        if transpose:
            raise VerifyException(f"{api(op)}: perf_mode=double_row cannot be combined with "
                                  f"is_transpose")
        for role, v in (("stationary", stationary), ("moving", moving)):
            sh = shape_of(v)
            if len(sh) != 3 or sh[1] != 2:
                raise VerifyException(f"{api(op)}: with perf_mode=double_row '{role}' must be "
                                      f"[K, 2, F] (contraction over K*2), got {describe(v)}")
        k, m = shape_of(stationary)[0], shape_of(stationary)[2]
        k2, n = shape_of(moving)[0], shape_of(moving)[2]
    else:
        k, m = shape_of(stationary)[0], free_size(stationary)
        k2, n = shape_of(moving)[0], free_size(moving)
    if transpose:
        require_target(op, "trn2", "is_transpose=True (bit-exact TensorE transpose)")
    if k != k2:
        raise VerifyException(f"{api(op)}: contraction (partition) sizes differ: stationary has "
                              f"{k}, moving has {k2}")
    tiling(op, tile_position, tile_size, k, m, double)
    if m > STATIONARY_FMAX:
        raise VerifyException(f"{api(op)}: stationary free size {m} exceeds the limit of "
                              f"{STATIONARY_FMAX} (gemm_stationary_fmax)")
    matmul_input_dtypes(op, stationary, moving, fp8_only=double)
    if transpose:
        if n != k:
            raise VerifyException(f"{api(op)}: with is_transpose, 'moving' must be the [{k}, {k}] "
                                  f"identity, got {describe(moving)}")
        if shape_of(dst)[0] != m or free_size(dst) != k:
            raise VerifyException(f"{api(op)}: with is_transpose, dst must be [{m}, {k}] (the "
                                  f"transpose of stationary), got {describe(dst)}")
        sd, dd = dtype_of(stationary), dtype_of(dst)
        raw16 = sd in FP8_INPUTS and dd in (dtypes.uint16, dtypes.int16)
        if dd != sd and not raw16:
            also = " or uint16/int16 (fp8 codes in the low byte)" if sd in FP8_INPUTS else ""
            raise VerifyException(f"{api(op)}: with is_transpose, dst dtype must be the stationary "
                                  f"dtype {_dt(stationary)}{also}, got {_dt(dst)}")
        return
    fmax = moving_fmax(target, dtype_of(dst))
    if n > fmax:
        why = ("one PSUM bank of fp32" if target != "trn3" else
               f"8 PSUM banks of {_dt(dst) if dtype_of(dst) == dtypes.bfloat16 else 'float32'}")
        raise VerifyException(f"{api(op)}: moving free size {n} exceeds the limit of {fmax} "
                              f"(gemm_moving_fmax on {target}: {why})")
    if shape_of(dst)[0] != m or free_size(dst) != n:
        raise VerifyException(f"{api(op)}: dst must be [{m}, {n}] (stationary free x moving free), "
                              f"got {describe(dst)}")
    dd = dtype_of(dst)
    if target == "trn3":
        if dd not in (dtypes.float32, dtypes.bfloat16):
            raise VerifyException(f"{api(op)}: PSUM dst must be float32 or bfloat16 on trn3, got {_dt(dst)}")
    elif dd != dtypes.float32:
        what = ("bfloat16 PSUM dst needs trn3 (NeuronCore-v4); " if dd == dtypes.bfloat16 else "")
        raise VerifyException(f"{api(op)}: PSUM dst must be float32 on {target}, got {_dt(dst)} "
                              f"({what}matmul accumulates in fp32)")


def transpose(op: Operation, dst: SSAValue, data: SSAValue, eng: str) -> None:
    """nc_transpose: dst[f, p] = data[p, f]; TensorE <= 128x128 (SBUF->PSUM, an identity matmul,
    so data must be a TensorE input dtype), VectorE <= 32x32 (any dtype); dtype kept."""
    limit = 32 if eng == "vector" else PMAX
    tile(op, "data", data, spaces=("sbuf",) if eng != "vector" else ON_CHIP)
    tile(op, "dst", dst, spaces=("psum",) if eng == "tensor" else ON_CHIP)
    p, f = shape_of(data)[0], free_size(data)
    if p > limit or f > limit:
        raise VerifyException(f"{api(op)}: data is [{p}, {f}] but nc_transpose on the {eng} "
                              f"engine handles at most [{limit}, {limit}]")
    if shape_of(dst)[0] != f or free_size(dst) != p:
        raise VerifyException(f"{api(op)}: dst must be [{f}, {p}] (the transpose of data), got {describe(dst)}")
    if dtype_of(dst) != dtype_of(data):
        raise VerifyException(f"{api(op)}: dst dtype {dtypes.name_of(dtype_of(dst))} differs from data dtype "
                              f"{dtypes.name_of(dtype_of(data))}; nc_transpose keeps the dtype")
    if eng == "tensor":
        allowed = MATMUL_INPUTS + ((dtypes.float8_e4m3fn,) if target_of(op) == "trn3" else ())
        if dtype_of(data) not in allowed:
            raise VerifyException(f"{api(op)}: data dtype {_dt(data)} cannot go through the Tensor "
                                  f"engine (an identity matmul needs a TensorE input dtype); use "
                                  f"engine=nisa.engine.vector (<= 32x32) or nisa.dma_transpose")
