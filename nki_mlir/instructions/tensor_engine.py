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
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import matmul_rules, rules
from ..dialects.common import bool_attr, prop_flag
from ..dialects.nisa import ACCUMULATE
from ..dialects.ods_verify_memo import types_and, types_only
from ..dialects.ods import Engine, EnumProp, Flag, Formula, IntPair, Scalar, Tile
from ..dialects.ods_forms import IsaForm
from ..errors import NKITypeError, NKIRuntimeError
from ..frontend.values import Tensor
from ..runtime import bind
from ..runtime.env import finish, guard
from ..runtime.isa_matmul import matmul_closure
from .define import instruction

#: ``perf_opt`` spellings: AWS ``PerfOptMode`` ``none_`` (observed) and ``double_row`` (ours)
PERF_OPTS = ("none_", "double_row")

# --------------------------------------------------------------------------- nc_matmul


def _flag(cg, api: str, role: str, v) -> bool:
    """A compile-time bool argument (a bool, or the int 0 / 1)."""
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise cg.b.error(f"{api}: {role} must be a compile-time bool, got {v!r}", NKITypeError)


def _matmul_call(cg, api: str, a: dict) -> None:
    """The flags are compile-time bools (``accumulate`` also None)."""
    for role in ("is_stationary_onezero", "is_moving_onezero", "is_transpose"):
        a[role] = _flag(cg, api, role, a[role])
    if a["accumulate"] is not None:
        a["accumulate"] = _flag(cg, api, "accumulate", a["accumulate"])


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


#: the one PSUM zero region (shared: attributes are immutable)
_SIZE2048 = StringAttr("size2048")


def _matmul_properties(op) -> dict:
    """``accumulate`` -> ``psum_accumulate_flags``, ``perf_mode`` -> ``perf_opt``."""
    acc = op.properties.get("accumulate")
    flags = "auto" if acc is None else ("accumulate" if acc.value.data else "overwrite")
    perf = op.properties.get("perf_mode")
    props = {"is_transpose": bool_attr(prop_flag(op, "is_transpose")),
             "perf_opt": StringAttr("none_" if perf is None or perf.data == "none" else perf.data),
             "psum_zero_region": _SIZE2048,
             "psum_accumulate_flags": StringAttr(flags)}
    if "tile_size" in op.properties:
        props["tile_size"] = op.properties["tile_size"]
    return props


def _matmul_operands(op) -> tuple[list, dict]:
    """``tile_position=[r, c]`` -> the index constants ``row_pos`` / ``col_pos``."""
    consts, pos = [], {}
    tp = op.properties.get("tile_position")
    if tp is not None:
        for role, a in zip(("row_pos", "col_pos"), tp.data[:2]):
            c = arith.ConstantOp(IntegerAttr(int(a.value.data), IndexType()))
            consts.append(c)
            pos[role] = c.result
    return consts, pos


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


def _tile_pos(op) -> tuple:
    """The values of ``nisa.matmul``'s ``row_pos`` / ``col_pos`` operands that are given
    (None for one that is not a constant)."""
    return tuple(_const_int(v) for v in (op.row_pos, op.col_pos) if v is not None)


@types_and(_tile_pos)
def _verify_isa_matmul(op) -> None:
    """``nisa.matmul``: the matmul rules with ``perf_opt`` and the ``row_pos`` / ``col_pos``
    constants (beyond them it reads only the operand types, properties and target)."""
    perf = op.perf_opt.data if op.perf_opt is not None else "none_"
    pos = _tile_pos(op)
    matmul_rules.matmul(op, op.dst, op.stationary, op.moving,
                        transpose=prop_flag(op, "is_transpose"),
                        perf_mode="none" if perf == "none_" else perf,
                        tile_position=pos, tile_size=_int_pair(op.tile_size))


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

    dst = Tile(writes=True, spaces=None)
    stationary = Tile(spaces=None)
    moving = Tile(spaces=None)
    is_stationary_onezero = Flag(default=False)
    is_moving_onezero = Flag(default=False)
    is_transpose = Flag(default=False)
    accumulate = Flag()
    tile_position = IntPair()
    tile_size = IntPair()
    perf_mode = EnumProp(enum="matmul_perf_mode", default="none")
    engine = Engine("tensor", param=False)
    order = ("dst", "stationary", "moving", "accumulate", "is_transpose", "tile_position",
             "tile_size", "perf_mode", "is_stationary_onezero", "is_moving_onezero")
    isa = IsaForm("matmul", dst=Tile(writes=True, spaces=None), stationary=Tile(spaces=None),
                  moving=Tile(spaces=None), row_pos=Scalar(default=None),
                  col_pos=Scalar(default=None), is_transpose=Flag(),
                  perf_opt=EnumProp(allowed=PERF_OPTS), psum_zero_region=EnumProp(),
                  psum_accumulate_flags=EnumProp(allowed=ACCUMULATE), tile_size=IntPair(),
                  props=_matmul_properties, operands=_matmul_operands, verify=_verify_isa_matmul)
    cost = Formula("matmul", roles=("stationary", "moving"),
                   source="ARCH2: max(N, 64) x dtype factor; LoadStationary M/4 hidden (Opt #7)")
    call = _matmul_call
    full_writes = ("dst",)  # when it overwrites (runtime/isa_memory.py: _matmul_overwrites)
    beta1_result = _matmul_result
    interpret = matmul_closure

    @types_only()
    def verify(op):
        perf = op.properties.get("perf_mode")
        matmul_rules.matmul(op, op.dst, op.stationary, op.moving,
                            transpose=prop_flag(op, "is_transpose"),
                            perf_mode=perf.data if perf is not None else "none",
                            tile_position=_int_pair(op.properties.get("tile_position")),
                            tile_size=_int_pair(op.properties.get("tile_size")))


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

    dst = Tile(writes=True, spaces=None)
    data = Tile(spaces=None)
    engine = Engine("tensor", vector="trn1")
    cost = Formula("transpose", roles=("data",),
                   source="ISA_OLD: tensor max(P, min(64, F)); vector: analogue tensor_copy (k=1)")
    full_writes = ("dst",)
    beta1_result = _transpose_result

    @types_only()
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
        write = finish(op, run, dst)
        if bind.bindable(dec, op):   # program order: dst is data's transposed view (its
            return guard(op, bind.binding(write, d, s))  # bytes and flags: none else reads them)
        return write
