"""Beta 1 kernels with one mistake each (test_beta1_errors.py); the offending line carries
a ``# <- name`` marker."""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def arange_1d(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)
    t = nl.load(a[i, i])  # <- arange_1d
    nl.store(out, value=t)
    return out


@nki.jit
def mixed_indexing(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    t = nl.load(a[i_p, 0:64])  # <- mixed_indexing
    nl.store(out, value=t)
    return out


@nki.jit
def assign_to_index(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_p[0] = 3  # <- assign_to_index
    return out


@nki.jit
def indirect_free_dim(a, idx):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_0 = nl.arange(1)[None, :]
    ix = nl.load(idx[i_p, i_0])
    t = nl.load(a[i_p, ix[i_p, 0]])  # <- indirect_free_dim
    nl.store(out, value=t)
    return out


@nki.jit
def branch_on_tile(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(a[i_p, i_f])
    if t:  # <- branch_on_tile
        nl.store(out[i_p, i_f], value=t)
    return out


@nki.jit
def and_on_tiles(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(a[i_p, i_f])
    u = t and t  # <- and_on_tiles
    nl.store(out[i_p, i_f], value=u)
    return out


@nki.jit
def out_of_block(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    for k in nl.affine_range(2):
        t = nl.load(a[i_p, i_f])
    nl.store(out[i_p, i_f], value=t)  # <- out_of_block
    return out


@nki.jit
def arange_condition(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    if i_p < 64:  # <- arange_condition
        nl.store(out[i_p, 0:64], value=nl.load(a[i_p, 0:64]))
    return out


@nki.jit
def shape_too_small(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(a[i_p, i_f])
    small = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
    small[...] = t  # <- shape_too_small
    nl.store(out[i_p, i_f], value=t)
    return out


@nki.jit
def arange_out_of_bounds(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(a[i_p, i_f + 1])  # <- arange_out_of_bounds
    nl.store(out[i_p, i_f], value=t)
    return out


@nki.jit
def operators_in_beta1_value(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    j = i_f // 2  # <- nonaffine_index
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, j]))
    return out


@nki.jit
def block_dims(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((4, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    nl.store(out, value=t)  # <- block_dims
    return out
