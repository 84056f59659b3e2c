"""Closure builders for the TensorEngine instructions: ``nisa.matmul`` and ``nisa.nc_transpose``.

``nisa.matmul``: ``dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]`` in float32, ``K`` the
partition (contraction) dim.  ``dst`` must be a PSUM tensor from a ``nisa.alloc``: its
matmul-written flags implement ``psum_accumulate_flags`` -- ``overwrite``, ``accumulate``,
or ``auto``: per element, overwrite unless a matmul has written it since its allocation
(other instructions writing PSUM clear the flags), else add.
With ``is_transpose`` the result is the bit-exact transpose of ``stationary``.
``nisa.nc_transpose``: ``dst[F, P]`` = the bit-exact transpose of ``data[P, F]``.
Semantics: nki_spec.md section 5.4 (``nki.isa.nc_matmul`` / ``nc_transpose``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import finish, guard
from .memory import flag_set_value

if TYPE_CHECKING:
    from .decoder import Decoder


def matmul(dec: Decoder, op: nisa.MatmulOp):
    dst = dec.buf(op, op.dst, "dst")
    sta, mov = dec.buf(op, op.stationary, "stationary"), dec.buf(op, op.moving, "moving")
    K, M, N = sta.parts, sta.free, mov.free
    if mov.parts != K:
        raise error_at(op, f"nisa.matmul: contraction sizes differ: 'stationary' has {K} "
                           f"partitions, 'moving' has {mov.parts}", NKIRuntimeError)
    if dst.flags is None:
        raise error_at(op, f"nisa.matmul: 'dst' must be a PSUM tensor from a nisa.alloc (it "
                           f"needs PSUM placement to accumulate), got a tensor in {dst.space}",
                       NKIRuntimeError)
    d, fl, ss, ms, shape = dst.slot, dst.flags, sta.slot, mov.slot, dst.shape
    ones = flag_set_value(dst.dtype)
    if bool(op.is_transpose.value.data):
        if dst.parts != M or dst.free != K:
            raise error_at(op, f"nisa.matmul: with is_transpose, 'dst' must be [{M}, {K}], got "
                               f"{list(shape)}", NKIRuntimeError)

        def run(env):  # bit-exact transpose of stationary (moving is the identity)
            env[d][...] = env[ss].reshape(K, M).T.reshape(shape)
            env[fl][...] = ones
        return guard(op, run)
    if dst.parts != M or dst.free != N:
        raise error_at(op, f"nisa.matmul: 'dst' must be [{M}, {N}] (stationary free x moving "
                           f"free), got {list(shape)}", NKIRuntimeError)
    mode = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
    if mode not in nisa.ACCUMULATE:
        raise error_at(op, f"nisa.matmul: psum_accumulate_flags={mode} is not supported",
                       NKIRuntimeError)
    store = nm.make_store(dst.dtype)

    def product(env):
        # contiguous copies: BLAS is ~15x faster than NumPy's strided fallback
        s = np.ascontiguousarray(nm.to_f32(env[ss])).reshape(K, M)
        m = np.ascontiguousarray(nm.to_f32(env[ms])).reshape(K, N)
        return np.matmul(s.T, m).reshape(shape)

    if mode == "overwrite":
        def run(env):
            store(env[d], product(env))
            env[fl][...] = ones
    elif mode == "accumulate":
        def run(env):
            res = product(env)
            store(env[d], nm.to_f32(env[d]) + res)
            env[fl][...] = ones
    else:
        def run(env):
            res = product(env)
            dv, fv = env[d], env[fl]
            written = fv != 0
            if not written.any():
                store(dv, res)
            elif written.all():
                store(dv, nm.to_f32(dv) + res)
            else:
                store(dv, np.where(written, nm.to_f32(dv) + res, res))
            fv[...] = ones
    return guard(op, run)


def nc_transpose(dec: Decoder, op: nisa.NcTransposeOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    P, F = data.parts, data.free
    if dst.parts != F or dst.free != P:
        raise error_at(op, f"nisa.nc_transpose: 'dst' must be [{F}, {P}] (the transpose of "
                           f"'data'), got {list(dst.shape)}", NKIRuntimeError)
    d, s, shape = dst.slot, data.slot, dst.shape

    def run(env):
        env[d][...] = env[s].reshape(P, F).T.reshape(shape)
    return finish(op, run, dst)
