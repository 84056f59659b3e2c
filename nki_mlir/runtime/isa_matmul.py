"""The closure builder of ``nisa.matmul`` (``nc_matmul``'s ``nisa`` op, defined in
``nki_mlir/instructions/tensor_engine.py``, which names :func:`matmul_closure` as its
interpreter) and the PSUM writer it shares with ``nisa.nc_matmul_mx``.

``nisa.matmul``: ``dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]`` in float32, ``K`` the
partition (contraction) dim.  ``dst`` must be a PSUM tensor from a ``nisa.alloc``: its
matmul-written flags implement ``psum_accumulate_flags`` -- ``overwrite``, ``accumulate``,
or ``auto``: per element, overwrite unless a matmul has written it since its allocation
(other instructions writing PSUM clear the flags), else add.  ``accumulate`` adds onto
whatever PSUM holds (a never-written tile holds the NaN sentinel, so the misuse shows).
A bfloat16 ``dst`` (trn3) is read back as float32, added in float32 and rounded to
nearest even when stored.

- ``perf_opt=double_row``: ``stationary[K, 2, M]`` / ``moving[K, 2, N]``, the contraction runs
  over the K*2 rows.
- ``is_transpose``: ``dst[M, K]`` is the bit-exact transpose of ``stationary[K, M]``; ``moving``
  must hold the ``[K, K]`` identity (checked at run time).  With an fp8 ``stationary`` and a
  uint16/int16 ``dst``, each element is the fp8 code in the low byte, 0 in the high byte (the
  16-bit PSUM element TensorE writes).
- ``row_pos`` / ``col_pos`` / ``tile_size`` (tiling mode) only choose PE rows: no effect on values.

Semantics: NKI API common tables (nki/api/nki.api.shared) (``nki.isa.nc_matmul``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import nisa
from ..dialects.common import prop_flag
from ..errors import NKIRuntimeError
from . import numerics as nm
from . import precise_fp
from .env import STATE, Buf, Fault, guard, scratch
from .forward import args_read_only, function_of

if TYPE_CHECKING:
    from .decoder import Decoder


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
            mem = env[STATE].mem
            known = mem.flags_state(fv)   # (settles a pending flag write otherwise)
            written = None if known is not None else fv != 0
            if known is False or (known is None and not written.any()):
                store(dv, res)
            elif known or written.all():
                store(dv, nm.to_f32(dv) + res)
            else:
                store(dv, np.where(written, nm.to_f32(dv) + res, res))
            mem.set_flags(fv, True)
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


def matmul_closure(dec: Decoder, op):
    """The closure of a ``nisa.matmul`` (the interpreter of ``nc_matmul``'s definition,
    ``nki_mlir/instructions/tensor_engine.py``)."""
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
        return _transpose(dec, op, dst, sta, mov)
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

    converted = _converted(dec, op)

    def operand(env: list, a: np.ndarray, cols: int) -> np.ndarray:
        if direct and a.strides[1] == 4 and a.strides[0] % 4 == 0 and a.strides[0] >= 4 * cols:
            return a
        if converted is not None:
            return converted(env, a, lambda: np.ascontiguousarray(nm.to_f32(a)).reshape(K, cols))
        return np.ascontiguousarray(nm.to_f32(a)).reshape(K, cols)

    if np.dtype(dst.dtype) == nm.F32 and len(shape) == 2 and min(K, M, N) >= 2:
        return guard(op, _product_f32(dst, mode, operand, direct, ss, ms, M, N))

    def run(env):
        s = operand(env, env[ss], M)
        m = operand(env, env[ms], N)
        write(env, np.matmul(s.T, m).reshape(shape))
    return guard(op, run)


_ARG_SLOTS = object()      # (the key prefix of a function's argument slots in ``Decoder.memo``)
#: bytes of float32 operand copies one matmul keeps per run (:func:`_converted`)
CONVERTED_BYTES = 64 << 20


def _converted(dec: Decoder, op):
    """``get(env, a, make)``: the contiguous float32 copy ``make()`` of the operand ``a`` of
    the matmul ``op``, made once per run for each view of a kernel argument (a tile that DMA
    forwarding, :mod:`.forward`, bound to the argument: a ``moving`` tile loaded again for
    every output tile converts once), or None when the function writes some argument (then
    such a copy could go stale).  Copies of other operands (SBUF tiles, whose bytes change)
    are made every time.  At most :data:`CONVERTED_BYTES` are kept per run."""
    if not args_read_only(dec, op):
        return None
    fop = function_of(op)
    args = dec.memo.get((_ARG_SLOTS, fop))   # (the arguments' slots, given before the body's)
    if args is None:
        args = dec.memo[(_ARG_SLOTS, fop)] = tuple(dec.slot_of[a] for a in fop.body.block.args
                                                    if a in dec.slot_of)
    cs = dec.fresh()        # the run's {id(view): (view, copy)} (None until the first)

    def get(env, a, make):
        root = a.base
        if root is None or not any(root is env[s] for s in args):
            return make()
        kept = env[cs]
        if kept is None:
            kept = env[cs] = {"bytes": 0}
        hit = kept.get(id(a))       # (the entry keeps ``a`` alive: its id is not reused)
        if hit is not None and hit[0] is a:
            return hit[1]
        r = make()
        if kept["bytes"] + r.nbytes <= CONVERTED_BYTES:
            kept["bytes"] += r.nbytes
            kept[id(a)] = (a, r)
        return r
    return get


def _product_f32(dst: Buf, mode: str, operand, direct: bool, ss: int, ms: int, M: int,
                 N: int):
    """The run of a ``nisa.matmul`` into a float32 2-D PSUM ``dst`` (``min(K, M, N) >= 2``):
    the product ``operand(env, env[ss], M).T @ operand(env, env[ms], N)`` computed by the
    BLAS call :func:`psum_writer`'s ``np.matmul`` makes, written as it does, but an
    overwrite computes straight into ``dst`` when NumPy's matmul writes a float32 ``[M, N]``
    result into it with the same BLAS call it makes for a fresh array (unit column stride,
    row stride a whole number of elements, at least ``N``: the result bits are then the
    same), an accumulation adds from a reused temporary, and the flags are not refilled
    when already known set (:meth:`~.memory.Memory.flags_state`).  With ``direct``, an
    operand that ``operand`` would return as it is (the same test of its rows) is taken
    without the call (the tests are inline: a Python frame fewer each)."""
    d, fl = dst.slot, dst.flags
    m4, n4 = 4 * M, 4 * N

    def run(env):
        s, m = env[ss], env[ms]
        if direct:
            r, c = s.strides
            if not (c == 4 and r % 4 == 0 and r >= m4):
                s = operand(env, s, M)
            r, c = m.strides
            if not (c == 4 and r % 4 == 0 and r >= n4):
                m = operand(env, m, N)
        else:
            s, m = operand(env, s, M), operand(env, m, N)
        dv, fv = env[d], env[fl]
        mem = env[STATE].mem
        known = mem.flags_state(fv)   # the flags as the last flag write left them
        if mode == "overwrite":
            add = False
        elif mode == "accumulate":
            add = True
        else:
            n = np.count_nonzero(fv) if known is None else (fv.size if known else 0)
            if 0 < n < fv.size:       # some elements matmul-written: add only there
                res = np.matmul(s.T, m)
                dv[...] = np.where(fv != 0, dv + res, res)
                mem.set_flags(fv, True)
                return
            add = n == fv.size
        if add:
            t = scratch(env, (M, N), nm.F32)
            np.matmul(s.T, m, out=t)
            np.add(dv, t, out=dv)
        elif dv.strides[1] == 4 and dv.strides[0] % 4 == 0 and dv.strides[0] >= n4:
            np.matmul(s.T, m, out=dv)
        else:
            dv[...] = np.matmul(s.T, m)
        if known is not True:
            mem.set_flags(fv, True)
    return run


def _transpose(dec, op, dst: Buf, sta: Buf, mov: Buf):
    """``is_transpose``: dst[M, K] = stationary[K, M]^T bit for bit (identity ``moving``)."""
    K, M = sta.parts, sta.free
    if dst.parts != M or dst.free != K or mov.free != K:
        raise error_at(op, f"nisa.matmul: with is_transpose, 'moving' must be [{K}, {K}] and 'dst' "
                           f"[{M}, {K}], got {list(mov.shape)} and {list(dst.shape)}", NKIRuntimeError)
    if dst.flags is None:
        raise error_at(op, "nisa.matmul: 'dst' must be a PSUM tensor from a nisa.alloc",
                       NKIRuntimeError)
    dd, sd = dec.declared(dst), dec.declared(sta)   # (the storage: NKI_PRECISE_FP, precise_fp.py)
    raw16 = dd != sd and dd.itemsize == 2 and sd.itemsize == 1
    if dd != sd and not raw16:
        raise error_at(op, f"nisa.matmul: with is_transpose, 'dst' must have the stationary dtype "
                           f"{dtypes.name_of(sd)}, got {dtypes.name_of(dd)}", NKIRuntimeError)
    if raw16 and (sta.dtype != sd or dst.dtype != dd):
        return _fault(op, precise_fp.reinterpret_error("nisa.matmul(is_transpose) of an fp8 "
                                                       "'stationary' into a 16-bit 'dst'", sd, dd))
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


def _fault(op, msg: str):
    """The closure of ``op`` failing at run time with ``msg``."""
    def fail(env):
        raise Fault(msg)
    return guard(op, fail)

