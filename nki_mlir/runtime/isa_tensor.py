"""Closure builders for nc_matmul_mx, quantize_mx (trn3 MXFP8/MXFP4).

Layouts (packed ``*_x4`` data, 8-partition x 4-value scale groups, scale codes at partition
``32*(g//4) + g%4``) are described in :mod:`nki_mlir.dialects.isa_tensor`.

- ``nisa.nc_matmul_mx``: both operands are unpacked to ``[K, F, 4]`` float32 values,
  multiplied by their group factors ``2^(code-127)`` (code 255 = NaN), and contracted over
  the partition and the 4 packed values in float32; the result goes to PSUM like
  ``nisa.matmul`` (``accumulate`` absent = auto, true = add, false = overwrite).
- ``nisa.quantize_mx``: per group, ``code = clip(floor(log2 amax) + 127 - (Emax - 1), 0, 254)``
  (an all-zero group gets code 0 = 2^-127; a group holding Inf/NaN gets 255 = NaN); values
  are ``src / 2^(code-127)`` saturated to the fp8 range and rounded to nearest even.

Semantics: NKI API common tables (nki/api/nki.api.shared) (NKI ``nki.isa.nc_matmul_mx`` / ``quantize_mx``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from .. import dtypes
from ..dialects import isa_tensor as T
from . import numerics as nm
from .env import Buf, finish, guard
from .isa_matmul import psum_writer

if TYPE_CHECKING:
    from .decoder import Decoder

#: Emax - 1: the exponent offset of the scale (nki.isa API reference (nki/api/nki/isa), quantize_mx row)
SCALE_SHIFT = {dt: emax - 1 for dt, emax in T.QUANTIZE_EMAX.items()}


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
    return np.array([T.scale_row(g) for g in range(parts // T.GROUP_PARTITIONS)], dtype=np.intp)


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
        f = np.repeat(group_factors(codes(env)[rows]), T.GROUP_PARTITIONS, axis=0)  # [K, F]
        return unpack_x4(env[ds], dt, K, F) * f[:, :, None]
    return read


def nc_matmul_mx(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    sta, mov = dec.buf(op, op.stationary, "stationary"), dec.buf(op, op.moving, "moving")
    s_read = _dequantized(sta, dec.buf(op, op.stationary_scale, "stationary_scale"))
    m_read = _dequantized(mov, dec.buf(op, op.moving_scale, "moving_scale"))
    K4, M, N, shape = sta.parts * 4, sta.free, mov.free, dst.shape
    mode = "auto" if op.accumulate is None else ("accumulate" if op.accumulate.value.data else "overwrite")
    write = psum_writer(op, dst, mode)

    def run(env):
        s = s_read(env).transpose(0, 2, 1).reshape(K4, M)  # rows: (partition, packed value)
        m = m_read(env).transpose(0, 2, 1).reshape(K4, N)
        write(env, np.matmul(s.T, m).reshape(shape))
    return guard(op, run)


def quantize_mx(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    sc = dec.buf(op, op.dst_scale, "dst_scale")
    P, F = src.parts, src.free
    G, J = P // T.GROUP_PARTITIONS, F // 4
    d, s, c, dt = dst.slot, src.slot, sc.slot, dst.dtype
    shift = SCALE_SHIFT[dt]
    fmax = float(ml_dtypes.finfo(dtypes.X4_VALUE[dt]).max)
    rows = scale_rows(P)
    sc_dt, code_shape = sc.dtype, (G,) + tuple(sc.shape[1:])

    def run(env):
        x = nm.to_f32(env[s]).reshape(G, T.GROUP_PARTITIONS, J, 4).astype(np.float64)
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


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {"nisa.nc_matmul_mx": nc_matmul_mx, "nisa.quantize_mx": quantize_mx}
