"""Tensor-engine instructions: nc_matmul (``nisa.matmul``), nc_transpose.

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the
NKI API common tables (nki/api/nki.api.shared).  ``nc_transpose`` is bit-exact on either
engine (the Tensor engine's identity matmul keeps the bits of every TensorE input dtype).

``nc_matmul``'s ``nisa`` op is AWS's ``nisa.matmul`` (aws-neuron/nkipy): ``accumulate=None |
True | False`` becomes ``psum_accumulate_flags=auto | accumulate | overwrite``,
``perf_mode`` ``perf_opt`` (``none_`` / ``double_row``), ``tile_position=[r, c]`` the
``index`` operands ``row_pos`` / ``col_pos``; the onezero hints are dropped.  The interpreter
computes ``dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]`` in float32 (``K`` the partition
dim); ``dst`` must be a PSUM tensor from a ``nisa.alloc``, whose matmul-written flags
implement ``auto`` (per element: overwrite unless a matmul wrote it since its allocation;
other instructions writing PSUM clear the flags).  ``accumulate`` adds onto whatever PSUM
holds (a never-written tile holds the NaN sentinel, so the misuse shows).  A bfloat16
``dst`` (trn3) is read back as float32, added in float32 and rounded when stored.

- ``perf_opt=double_row``: ``stationary[K, 2, M]`` / ``moving[K, 2, N]``, the contraction
  runs over the K*2 rows.
- ``is_transpose``: ``dst[M, K]`` is the bit-exact transpose of ``stationary[K, M]``;
  ``moving`` must hold the ``[K, K]`` identity (checked at run time).  With an fp8
  ``stationary`` and a uint16/int16 ``dst``, each element is the fp8 code in the low byte,
  0 in the high byte (the 16-bit PSUM element TensorE writes).
- ``row_pos`` / ``col_pos`` / ``tile_size`` (tiling mode) only choose PE rows: no effect on
  values.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, BoolAttr, IndexType, IntegerAttr, StringAttr
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import matmul_rules, rules
from ..dialects.common import prop_flag
from ..dialects.nisa import ACCUMULATE
from ..dialects.ods import Engine, EnumProp, Flag, Formula, IntPair, Scalar, Tile
from ..dialects.ods_forms import Lowering
from ..errors import NKITypeError, NKIRuntimeError
from ..frontend.values import Tensor
from ..runtime import numerics as nm
from ..runtime.env import STATE, Fault, finish, guard
from ..runtime.isa_matmul import psum_writer
from .define import instruction

#: ``perf_opt`` spellings: AWS ``PerfOptMode`` ``none_`` (observed) and ``double_row`` (ours)
PERF_OPTS = ("none_", "double_row")

# --------------------------------------------------------------------------- nc_matmul


def _flag(cg, api: str, role: str, v) -> bool:
    """A compile-time bool argument (a bool, or the int 0 / 1)."""
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise cg.b.error(f"{api}: {role} must be a compile-time bool, got {v!r}", NKITypeError)


def _matmul_call(cg, api: str, a: dict, emit):
    """The flags are compile-time bools (``accumulate`` also None)."""
    for role in ("is_stationary_onezero", "is_moving_onezero", "is_transpose"):
        a[role] = _flag(cg, api, role, a[role])
    if a["accumulate"] is not None:
        a["accumulate"] = _flag(cg, api, "accumulate", a["accumulate"])
    return emit(a)


def _matmul_result(cg, api, bound, dt):
    """The Beta 1 result of ``nc_matmul(stationary, moving)``: ``[M, N]`` in PSUM, float32
    (the stationary dtype for a transpose)."""
    s, m = bound.get("stationary"), bound.get("moving")
    if not (isinstance(s, Tensor) and isinstance(m, Tensor)):
        raise cg.b.error(f"{api}: stationary and moving must be tiles", NKITypeError)
    pm = bound.get("perf_mode")
    if getattr(pm, "name", pm) in ("double_row", "double_row_gen3"):  # [K, 2, M] x [K, 2, N]
        return (s.shape[-1], m.shape[-1]), dt or dtypes.float32, "psum"
    if bound.get("is_transpose"):  # a bit-exact transpose keeps the stationary dtype (v3+)
        return (s.shape[-1],) + tuple(m.shape[1:]), dt or s.dtype, "psum"
    return (s.shape[-1],) + tuple(m.shape[1:]), dt or dtypes.float32, "psum"


def _matmul_properties(op) -> dict:
    """``accumulate`` -> ``psum_accumulate_flags``, ``perf_mode`` -> ``perf_opt``."""
    acc = op.properties.get("accumulate")
    flags = "auto" if acc is None else ("accumulate" if acc.value.data else "overwrite")
    perf = op.properties.get("perf_mode")
    props = {"is_transpose": BoolAttr.from_bool(prop_flag(op, "is_transpose")),
             "perf_opt": StringAttr("none_" if perf is None or perf.data == "none" else perf.data),
             "psum_zero_region": StringAttr("size2048"),
             "psum_accumulate_flags": StringAttr(flags)}
    if "tile_size" in op.properties:
        props["tile_size"] = op.properties["tile_size"]
    return props


def _matmul_operands(op) -> tuple[list, list]:
    """``tile_position=[r, c]`` -> the index constants ``row_pos`` / ``col_pos``."""
    consts, pos = [], [None, None]
    tp = op.properties.get("tile_position")
    if tp is not None:
        for i, a in enumerate(tp.data[:2]):
            c = arith.ConstantOp(IntegerAttr(int(a.value.data), IndexType()))
            consts.append(c)
            pos[i] = c.result
    return consts, [op.dst, op.stationary, op.moving, *pos]


def _int_pair(a: ArrayAttr | None) -> tuple[int, ...]:
    """``[64, 0]`` -> ``(64, 0)``; absent -> ``()``."""
    if a is None:
        return ()
    out = []
    for x in a.data:
        if not isinstance(x, IntegerAttr):
            raise VerifyException(f"expected a list of integers, got {a}")
        out.append(int(x.value.data))
    return tuple(out)


def _const_int(v) -> int | None:
    """The value of an ``arith.constant`` integer/index operand, else None (not checkable)."""
    owner = getattr(v, "owner", None)
    val = getattr(owner, "value", None) if getattr(owner, "name", "") == "arith.constant" else None
    return int(val.value.data) if isinstance(val, IntegerAttr) else None


@instruction
class nc_matmul:
    """``dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]`` on the Tensor engine, in float32,
    ``K`` the partition (contraction) dim.

    ``stationary`` / ``moving``: SBUF tiles of TensorE input dtypes (``K`` <= 128, ``M`` <=
    128, ``N`` at most the target's moving free size); ``dst``: a float32 PSUM tile
    (bfloat16 too on trn3).  ``accumulate``: None (the first write to a PSUM location
    overwrites, later writes add), True (add) or False (overwrite).  ``is_transpose``
    (trn2+): ``dst[M, K]`` is the bit-exact transpose of ``stationary`` (``moving`` the
    identity).  ``tile_position`` / ``tile_size``: ``(row, col)`` Tensor Engine tiling;
    ``perf_mode=double_row``: fp8 ``[K, 2, M]`` x ``[K, 2, N]`` operands (trn2+).
    ``is_stationary_onezero`` / ``is_moving_onezero``: performance hints, no effect on
    results.

    Raises ``NKITypeError`` for a non-tile or non-bool argument and ``NKIVerifyError`` for
    another shape, memory, dtype, tiling or target.
    NKI docs: ``nki.isa.nc_matmul`` (nki/api/generated/nki.isa.nc_matmul).
    """

    isa = "matmul"
    dst = Tile(writes=True, spaces=None, whole=True)  # when it overwrites (runtime/isa_memory.py)
    stationary = Tile(spaces=None)
    moving = Tile(spaces=None)
    row_pos = Scalar(default=None, only="nisa")
    col_pos = Scalar(default=None, only="nisa")
    is_stationary_onezero = Flag(default=False, only="nki")
    is_moving_onezero = Flag(default=False, only="nki")
    is_transpose = Flag(default=False)
    accumulate = Flag(only="nki")
    tile_position = IntPair(only="nki")
    perf_opt = EnumProp(allowed=PERF_OPTS, only="nisa")
    psum_zero_region = EnumProp(only="nisa")
    psum_accumulate_flags = EnumProp(allowed=ACCUMULATE, only="nisa")
    tile_size = IntPair()
    perf_mode = EnumProp(enum="matmul_perf_mode", default="none", only="nki")
    engine = Engine("tensor", param=False)
    cost = Formula("matmul", roles=("stationary", "moving"),
                   source="ARCH2: max(N, 64) x dtype factor; LoadStationary M/4 hidden (Opt #7)")
    lowering = Lowering(properties=_matmul_properties, operands=_matmul_operands)
    frontend = _matmul_call
    beta1_result = _matmul_result

    def verify(op):
        if op.name.startswith("nki."):
            perf = op.properties.get("perf_mode")
            matmul_rules.matmul(op, op.dst, op.stationary, op.moving,
                                transpose=prop_flag(op, "is_transpose"),
                                perf_mode=perf.data if perf is not None else "none",
                                tile_position=_int_pair(op.properties.get("tile_position")),
                                tile_size=_int_pair(op.properties.get("tile_size")))
            return
        perf = op.perf_opt.data if op.perf_opt is not None else "none_"
        pos = tuple(_const_int(v) for v in (op.row_pos, op.col_pos) if v is not None)
        matmul_rules.matmul(op, op.dst, op.stationary, op.moving,
                            transpose=prop_flag(op, "is_transpose"),
                            perf_mode="none" if perf == "none_" else perf,
                            tile_position=pos, tile_size=_int_pair(op.tile_size))

    def interpret(dec, op):
        return _matmul(dec, op)


def _matmul(dec, op):
    dst = dec.buf(op, op.dst, "dst")
    sta, mov = dec.buf(op, op.stationary, "stationary"), dec.buf(op, op.moving, "moving")
    perf = op.perf_opt.data if op.perf_opt is not None else "none_"
    rows = 2 if perf == "double_row" else 1  # contraction rows per partition
    if rows == 2 and (len(sta.shape) != 3 or sta.shape[1] != 2 or len(mov.shape) != 3 or mov.shape[1] != 2):
        raise error_at(op, f"nisa.matmul: perf_opt=double_row needs [K, 2, F] operands, got "
                           f"stationary {list(sta.shape)} and moving {list(mov.shape)}", NKIRuntimeError)
    K, M, N = sta.parts * rows, sta.free // rows, mov.free // rows
    if mov.parts != sta.parts:
        raise error_at(op, f"nisa.matmul: contraction sizes differ: 'stationary' has {sta.parts} "
                           f"partitions, 'moving' has {mov.parts}", NKIRuntimeError)
    ss, ms, shape = sta.slot, mov.slot, dst.shape
    if prop_flag(op, "is_transpose"):
        return _transpose(op, dst, sta, mov)
    if dst.parts != M or dst.free != N:
        raise error_at(op, f"nisa.matmul: 'dst' must be [{M}, {N}] (stationary free x moving "
                           f"free), got {list(shape)}", NKIRuntimeError)
    mode = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
    write = psum_writer(op, dst, mode)

    # float32 [K, M] / [K, N] tiles go to BLAS as they are (rows of a tile are evenly
    # strided); other operands are copied contiguous first (NumPy's strided fallback is
    # ~15x slower).  A vector-shaped product (a size-1 dim) is always computed on
    # contiguous copies: NumPy picks a BLAS routine by stride there, which changes bits.
    direct = (sta.dtype == nm.F32 and mov.dtype == nm.F32 and rows == 1 and
              len(sta.shape) == 2 and len(mov.shape) == 2 and min(K, M, N) >= 2)

    def operand(a: np.ndarray, cols: int) -> np.ndarray:
        if direct and a.strides[1] == 4 and a.strides[0] % 4 == 0 and a.strides[0] >= 4 * cols:
            return a
        return np.ascontiguousarray(nm.to_f32(a)).reshape(K, cols)

    def run(env):
        s = operand(env[ss], M)
        m = operand(env[ms], N)
        write(env, np.matmul(s.T, m).reshape(shape))
    return guard(op, run)


def _transpose(op, dst, sta, mov):
    """``is_transpose``: dst[M, K] = stationary[K, M]^T bit for bit (identity ``moving``)."""
    K, M = sta.parts, sta.free
    if dst.parts != M or dst.free != K or mov.free != K:
        raise error_at(op, f"nisa.matmul: with is_transpose, 'moving' must be [{K}, {K}] and 'dst' "
                           f"[{M}, {K}], got {list(mov.shape)} and {list(dst.shape)}", NKIRuntimeError)
    if dst.flags is None:
        raise error_at(op, "nisa.matmul: 'dst' must be a PSUM tensor from a nisa.alloc",
                       NKIRuntimeError)
    raw16 = dst.dtype != sta.dtype and dst.dtype.itemsize == 2 and sta.dtype.itemsize == 1
    if dst.dtype != sta.dtype and not raw16:
        raise error_at(op, f"nisa.matmul: with is_transpose, 'dst' must have the stationary dtype "
                           f"{dtypes.name_of(sta.dtype)}, got {dtypes.name_of(dst.dtype)}", NKIRuntimeError)
    d, fl, ss, ms, shape = dst.slot, dst.flags, sta.slot, mov.slot, dst.shape
    eye = np.eye(K, dtype=np.float32)

    def run(env):
        if not np.array_equal(nm.to_f32(env[ms]).reshape(K, K), eye):
            raise Fault(f"with is_transpose, 'moving' must hold the [{K}, {K}] identity matrix")
        t = np.ascontiguousarray(env[ss]).reshape(K, M).T
        if raw16:  # fp8 code zero-extended into the 16-bit PSUM element
            t = t.view(np.uint8).astype(np.uint16).view(dst.dtype)
        env[d][...] = t.reshape(shape)
        env[STATE].mem.set_flags(env[fl], True)
    return guard(op, run)


# ------------------------------------------------------------------------ nc_transpose


def _transpose_result(cg, api, bound, dt):
    """The Beta 1 result of ``nc_transpose(data)``: ``[F, P]`` in PSUM (SBUF on Vector)."""
    t = bound.get("data")
    if not isinstance(t, Tensor) or t.ndim != 2:
        raise cg.b.error(f"{api}: data must be a 2-D tile", NKITypeError)
    eng = bound.get("engine")
    buf = "sbuf" if getattr(eng, "name", None) == "vector" else "psum"
    return (t.shape[1], t.shape[0]), dt or t.dtype, buf


@instruction
class nc_transpose:
    """``dst[f, p] = data[p, f]``: a 2-D transpose between the partition dim and the
    (flattened) free dims, bit-exact, on the Tensor engine (default) or the Vector engine.

    ``data``: ``[P, F]``; ``dst``: ``[F, P]`` of ``data``'s dtype.  Tensor engine: ``P``,
    ``F`` <= 128, ``data`` in SBUF of a TensorE input dtype, ``dst`` in PSUM (an identity
    matmul).  Vector engine: ``P``, ``F`` <= 32, SBUF or PSUM tiles of any dtype.

    Raises ``NKITypeError`` for a non-tile argument and ``NKIVerifyError`` for another
    shape, memory, dtype or engine.
    NKI docs: ``nki.isa.nc_transpose`` (nki/api/generated/nki.isa.nc_transpose).
    """

    dst = Tile(writes=True, spaces=None, whole=True)
    data = Tile(spaces=None)
    engine = Engine("tensor", vector="trn1")
    cost = Formula("transpose", roles=("data",),
                   source="ISA_OLD: tensor max(P, min(64, F)); vector: analogue tensor_copy (k=1)")
    beta1_result = _transpose_result

    def verify(op):
        matmul_rules.transpose(op, op.dst, op.data, rules.engine_of(op, "tensor"))

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        P, F = data.parts, data.free
        if dst.parts != F or dst.free != P:
            raise error_at(op, f"nisa.nc_transpose: 'dst' must be [{F}, {P}] (the transpose of "
                               f"'data'), got {list(dst.shape)}", NKIRuntimeError)
        d, s, shape = dst.slot, data.slot, dst.shape

        def run(env):
            # a contiguous copy first: transposing strided tile rows directly is ~4x slower
            env[d][...] = np.ascontiguousarray(env[s]).reshape(P, F).T.reshape(shape)
        return finish(op, run, dst)
