"""The trn3 microscaling (MX) instructions: quantize_mx and nc_matmul_mx.

Semantics: the NKI ``nki.isa`` API pages of these instructions and the NKI API common tables
(nki/api/nki.api.shared); OCP Microscaling (MX) v1.0.

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

import ml_dtypes
import numpy as np
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..dialects import matmul_rules, rules
from ..dialects.common import PMAX, describe, dtype_of, free_size, shape_of
from ..dialects.ods import Engine, Flag, Formula, IntPair, Stream, Tile
from ..runtime import numerics as nm
from ..runtime.env import Buf, finish, guard
from ..runtime.isa_matmul import psum_writer
from .define import instruction

#: partitions x packed elements of one MX scale group (8 x 4 values = 32 values)
GROUP_PARTITIONS = 8
#: partitions of one SBUF quadrant
QUADRANT = 32
#: dtypes a scale tile may have (the e8m0 code as such, or its raw byte)
SCALE_DTYPES = (dtypes.float8_e8m0fnu, dtypes.uint8)
#: packed types quantize_mx can write, with Emax of their value type (OCP MX)
QUANTIZE_EMAX = {dtypes.float8_e4m3fn_x4: 8, dtypes.float8_e5m2_x4: 15}
#: Emax - 1: the exponent offset of the scale (nki.isa API reference, quantize_mx row)
SCALE_SHIFT = {dt: emax - 1 for dt, emax in QUANTIZE_EMAX.items()}


def scale_row(g: int) -> int:
    """The scale-tile partition holding the codes of group ``g`` (data partitions 8g..8g+7)."""
    return QUADRANT * (g // 4) + g % 4


# ------------------------------------------------------------------------ verifier rules


def _x4_names() -> str:
    return ", ".join(dtypes.name_of(d) for d in dtypes.X4_VALUE)


def _scale(op, role: str, data_role: str) -> None:
    """``op.<role>`` is an e8m0/uint8 ``[P_s, F]`` tile matching the MX data tile ``data_role``
    (its memory is the field's rule)."""
    api, scale, data = rules.api(op), getattr(op, role), getattr(op, data_role)
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


def _mx_partitions(op, role: str) -> int:
    p = shape_of(getattr(op, role))[0]
    if p % QUADRANT != 0:
        raise VerifyException(f"{rules.api(op)}: '{role}' has {p} partitions; MX data needs a multiple "
                              f"of {QUADRANT} partitions (at most {PMAX})")
    return p


def _pair(a) -> tuple[int, ...]:
    return () if a is None else tuple(int(x.value.data) for x in a.data)


# -------------------------------------------------------------------- interpreter helpers


def unpack_x4(a: np.ndarray, dt: np.dtype, parts: int, free: int) -> np.ndarray:
    """Packed ``[parts, free]`` x4 elements -> float32 ``[parts, free, 4]`` values."""
    b = np.ascontiguousarray(a).reshape(parts, free).view(np.uint8).reshape(parts, free, 4)
    if dtypes.X4_VALUE[dt] == dtypes.float4_e2m1fn:
        b = b & 0x0F  # one e2m1 code per byte, in the low nibble
    return b.view(dtypes.X4_VALUE[dt]).astype(np.float32)


def pack_x4(values: np.ndarray, dt: np.dtype) -> np.ndarray:
    """float32 ``[..., free, 4]`` values (already in range) -> packed ``[..., free]`` x4 elements."""
    codes = np.ascontiguousarray(values.astype(dtypes.X4_VALUE[dt])).view(np.uint8)
    return codes.view(dt).reshape(values.shape[:-1])


def scale_rows(parts: int) -> np.ndarray:
    """Scale-tile partitions of the ``parts // 8`` groups of a ``parts``-partition MX tile."""
    return np.array([scale_row(g) for g in range(parts // GROUP_PARTITIONS)], dtype=np.intp)


def group_factors(codes: np.ndarray) -> np.ndarray:
    """e8m0 codes (uint8) -> float32 factors 2^(code-127); 255 -> NaN."""
    f = np.ldexp(np.float32(1.0), codes.astype(np.int32) - 127).astype(np.float32)
    f[codes == 255] = np.nan
    return f


def _codes(b: Buf):
    """A reader of a scale tile's raw e8m0 codes (uint8) ``[parts, free]``."""
    s, parts, free = b.slot, b.parts, b.free
    return lambda env: np.ascontiguousarray(env[s]).reshape(parts, free).view(np.uint8)


def _dequantized(data: Buf, scale: Buf):
    """A reader of ``data`` dequantized with ``scale``: float32 ``[K, F, 4]``."""
    K, F, ds, dt = data.parts, data.free, data.slot, data.dtype
    rows, codes = scale_rows(K), _codes(scale)

    def read(env):
        f = np.repeat(group_factors(codes(env)[rows]), GROUP_PARTITIONS, axis=0)  # [K, F]
        return unpack_x4(env[ds], dt, K, F) * f[:, :, None]
    return read


# --------------------------------------------------------------------------- quantize_mx


@instruction
class quantize_mx:
    """Quantize ``src[P, F]`` (bfloat16 / float16) to MXFP8: ``dst[P, F/4]``
    (float8_e4m3fn_x4 or float8_e5m2_x4, 4 values per packed element) and the ``dst_scale``
    codes (float8_e8m0fnu or uint8), on the Vector engine; trn3 only.

    Per group of 8 partitions x 4 values: ``scale = 2^(floor(log2 amax) - (Emax - 1))``,
    Emax = 8 (e4m3fn) or 15 (e5m2); an all-zero group gets 2^-127 (code 0), a group holding
    Inf/NaN code 255 (NaN); values are ``src / scale`` saturated to the fp8 range and rounded
    to nearest even.  ``P`` is a multiple of 32 (at most 128), ``F`` a multiple of 4; all
    operands are in SBUF.  ``dst_scale`` is ``[P, F/4]`` (``[4, F/4]`` or ``[32, F/4]`` when
    ``P`` is 32) with the code of partition group ``g`` at partition ``32*(g//4) + g%4``.

    Raises ``NKIVerifyError`` before trn3 or for another memory, dtype or shape.
    NKI docs: ``nki.isa.quantize_mx`` (nki/api/generated/nki.isa.quantize_mx).
    """

    dst = Tile(writes=True, spaces=("sbuf",), dtypes=tuple(QUANTIZE_EMAX),
               allowed="float8_e4m3fn_x4 or float8_e5m2_x4")
    src = Tile(spaces=("sbuf",), dtypes=(dtypes.bfloat16, dtypes.float16),
               allowed="bfloat16 or float16")
    dst_scale = Tile(writes=True, spaces=("sbuf",))
    engine = Engine("vector", param=False)
    since = "trn3"
    feature = "quantize_mx (MXFP8 quantization)"
    cost = Stream("src", source="analogue: tensor_scalar (one vector stream over src)")

    def verify(op):
        api = rules.api(op)
        p = _mx_partitions(op, "src")
        f = free_size(op.src)
        if f % 4:
            raise VerifyException(f"{api}: 'src' has {f} elements per partition; quantize_mx needs a "
                                  f"multiple of 4 (4 values per packed element)")
        if shape_of(op.dst)[0] != p or free_size(op.dst) != f // 4:
            raise VerifyException(f"{api}: 'dst' must be [{p}, {f // 4}] (4 values per packed "
                                  f"element), got {describe(op.dst)}")
        _scale(op, "dst_scale", "dst")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        sc = dec.buf(op, op.dst_scale, "dst_scale")
        P, F = src.parts, src.free
        G, J = P // GROUP_PARTITIONS, F // 4
        d, s, c, dt = dst.slot, src.slot, sc.slot, dst.dtype
        shift = SCALE_SHIFT[dt]
        fmax = float(ml_dtypes.finfo(dtypes.X4_VALUE[dt]).max)
        rows = scale_rows(P)
        sc_dt, code_shape = sc.dtype, (G,) + tuple(sc.shape[1:])

        def run(env):
            x = nm.to_f32(env[s]).reshape(G, GROUP_PARTITIONS, J, 4).astype(np.float64)
            amax = np.abs(x).max(axis=(1, 3))  # [G, J]; NaN propagates
            _, e = np.frexp(amax)  # amax = m * 2^e with m in [0.5, 1): floor(log2 amax) = e - 1
            code = np.clip(e.astype(np.int64) - 1 + 127 - shift, 0, 254)
            code = np.where(amax == 0, 0, code)
            code = np.where(np.isfinite(amax), code, 255).astype(np.uint8)
            scale = np.ldexp(1.0, code.astype(np.int64) - 127)
            scale[code == 255] = np.nan
            q = np.clip(x / scale[:, None, :, None], -fmax, fmax)  # NaN stays NaN
            env[d][...] = pack_x4(q.reshape(P, J, 4).astype(np.float32), dt).reshape(dst.shape)
            env[c][rows] = code.view(sc_dt).reshape(code_shape)  # both scale dtypes are 1 byte
        return finish(op, run, dst, sc)


# -------------------------------------------------------------------------- nc_matmul_mx


@instruction
class nc_matmul_mx:
    """``dst[M, N] (+)= sum over (k, i) of deq(stationary)[k, m, i] * deq(moving)[k, n, i]``
    on the Tensor engine; trn3 only.

    ``stationary[K, M]`` / ``moving[K, N]``: packed x4 SBUF tiles (4 values per element),
    dequantized with their SBUF scale tiles ``stationary_scale`` / ``moving_scale`` (the MX
    layout of ``nki.isa.quantize_mx``); float32 accumulation into the PSUM ``dst`` (float32 or
    bfloat16).  K is a multiple of 32 and at most 128, M even and at most 128, N at most 4096
    (float32 dst) or 8192 (bfloat16 dst).  ``tile_position`` / ``tile_size``: row and column
    tiling as for ``nki.isa.nc_matmul`` (compile-time pairs).  ``accumulate``: None (the first
    write overwrites, later writes add), True adds, False overwrites.

    Raises ``NKIVerifyError`` before trn3 or for another memory, dtype, shape or tiling, and
    ``NKITypeError`` for a non-boolean ``accumulate`` or a tile pair that is not two
    compile-time integers.
    NKI docs: ``nki.isa.nc_matmul_mx`` (nki/api/generated/nki.isa.nc_matmul_mx).
    """

    dst = Tile(writes=True, spaces=("psum",))
    stationary = Tile(spaces=("sbuf",))
    moving = Tile(spaces=("sbuf",))
    stationary_scale = Tile(spaces=("sbuf",))
    moving_scale = Tile(spaces=("sbuf",))
    tile_position = IntPair()
    tile_size = IntPair()
    accumulate = Flag()
    engine = Engine("tensor", param=False)
    since = "trn3"
    feature = "nc_matmul_mx (MXFP8/MXFP4 matmul)"
    cost = Formula("matmul_mx", source="ARCH4 Quad-MXFP8: max(N_mov, 64), 4 values per element "
                                       "along K")

    def verify(op):
        api = rules.api(op)
        for role in ("stationary", "moving"):
            dt = dtype_of(getattr(op, role))
            if not dtypes.is_x4(dt):
                raise VerifyException(f"{api}: '{role}' dtype {dtypes.name_of(dt)} is not a "
                                      f"packed MX type ({_x4_names()})")
        k = _mx_partitions(op, "stationary")
        if shape_of(op.moving)[0] != k:
            raise VerifyException(f"{api}: contraction (partition) sizes differ: stationary has {k}, "
                                  f"moving has {shape_of(op.moving)[0]}")
        m, n = free_size(op.stationary), free_size(op.moving)
        matmul_rules.tiling(op, _pair(op.tile_position), _pair(op.tile_size), k, m)
        if m % 2 or m > matmul_rules.STATIONARY_FMAX:
            raise VerifyException(f"{api}: stationary free size {m} must be even and at most "
                                  f"{matmul_rules.STATIONARY_FMAX}")
        dd = dtype_of(op.dst)
        if dd not in (dtypes.float32, dtypes.bfloat16):
            raise VerifyException(f"{api}: PSUM dst must be float32 or bfloat16, got {dtypes.name_of(dd)}")
        fmax = matmul_rules.moving_fmax("trn3", dd)
        if n > fmax:
            raise VerifyException(f"{api}: moving free size {n} exceeds the limit of {fmax} "
                                  f"(trn3, {dtypes.name_of(dd)} dst: 8 PSUM banks)")
        if shape_of(op.dst)[0] != m or free_size(op.dst) != n:
            raise VerifyException(f"{api}: dst must be [{m}, {n}] (stationary free x moving free), "
                                  f"got {describe(op.dst)}")
        _scale(op, "stationary_scale", "stationary")
        _scale(op, "moving_scale", "moving")

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        sta, mov = dec.buf(op, op.stationary, "stationary"), dec.buf(op, op.moving, "moving")
        s_read = _dequantized(sta, dec.buf(op, op.stationary_scale, "stationary_scale"))
        m_read = _dequantized(mov, dec.buf(op, op.moving_scale, "moving_scale"))
        K4, M, N, shape = sta.parts * 4, sta.free, mov.free, dst.shape
        mode = "auto" if op.accumulate is None else \
            ("accumulate" if op.accumulate.value.data else "overwrite")
        write = psum_writer(op, dst, mode)

        def run(env):
            s = s_read(env).transpose(0, 2, 1).reshape(K4, M)  # rows: (partition, packed value)
            m = m_read(env).transpose(0, 2, 1).reshape(K4, N)
            write(env, np.matmul(s.T, m).reshape(shape))
        return guard(op, run)
