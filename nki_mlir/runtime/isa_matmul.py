"""The PSUM writer of the Tensor engine's matmuls (``nisa.matmul``, ``nisa.nc_matmul_mx``).

:func:`psum_writer` stores a float32 product into a PSUM ``dst`` per its accumulate mode
(``psum_accumulate_flags``): ``overwrite``, ``accumulate``, or ``auto`` -- per element,
overwrite unless a matmul has written it since its allocation (other instructions writing
PSUM clear the flags), else add -- and marks it matmul-written.  A bfloat16 ``dst`` (trn3) is
read back as float32, added in float32 and rounded to nearest even when stored.  The
instructions themselves are defined in ``nki_mlir/instructions`` (``tensor_engine.py``,
``mx.py``).

Semantics: NKI API common tables (nki/api/nki.api.shared) (``nki.isa.nc_matmul``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Buf


def psum_writer(op, dst: Buf, mode: str) -> Callable[[list, np.ndarray], None]:
    """``write(env, res)``: put the float32 result ``res`` (``dst``'s shape) into the PSUM
    ``dst`` per ``mode`` (``overwrite`` / ``accumulate`` / ``auto``) and mark it matmul-written."""
    if dst.flags is None:
        raise error_at(op, f"{op.name}: 'dst' must be a PSUM tensor from a nisa.alloc (it "
                           f"needs PSUM placement to accumulate), got a tensor in {dst.space}",
                       NKIRuntimeError)
    if mode not in nisa.ACCUMULATE:
        raise error_at(op, f"{op.name}: accumulate mode {mode} is not supported", NKIRuntimeError)
    d, fl = dst.slot, dst.flags
    store = nm.make_store(dst.dtype)
    if np.dtype(dst.dtype) == nm.F32:
        return _psum_writer_f32(d, fl, mode)
    if mode == "overwrite":
        def write(env, res):
            store(env[d], res)
            env[STATE].mem.set_flags(env[fl], True)
    elif mode == "accumulate":
        def write(env, res):
            store(env[d], nm.to_f32(env[d]) + res)
            env[STATE].mem.set_flags(env[fl], True)
    else:
        def write(env, res):
            dv, fv = env[d], env[fl]
            written = fv != 0
            if not written.any():
                store(dv, res)
            elif written.all():
                store(dv, nm.to_f32(dv) + res)
            else:
                store(dv, np.where(written, nm.to_f32(dv) + res, res))
            env[STATE].mem.set_flags(fv, True)
    return write


def _psum_writer_f32(d: int, fl: int, mode: str):
    """:func:`psum_writer` for a float32 ``dst``: accumulation adds in place (the same
    float32 additions, without reading PSUM into a temporary and writing it back)."""
    if mode == "overwrite":
        def write(env, res):
            env[d][...] = res
            env[STATE].mem.set_flags(env[fl], True)
    elif mode == "accumulate":
        def write(env, res):
            dv = env[d]
            np.add(dv, res, out=dv)
            env[STATE].mem.set_flags(env[fl], True)
    else:
        def write(env, res):
            dv, fv = env[d], env[fl]
            mem = env[STATE].mem
            known = mem.flags_state(fv)   # the flags as the last flag write left them
            n = np.count_nonzero(fv) if known is None else (fv.size if known else 0)
            if n == fv.size:             # every element matmul-written: accumulate
                np.add(dv, res, out=dv)
            elif n == 0:                 # none: overwrite
                dv[...] = res
            else:
                dv[...] = np.where(fv != 0, dv + res, res)
            mem.set_flags(fv, True)
    return write
