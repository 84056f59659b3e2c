"""Our Beta 1 kernels for test_beta1_spellings.py: spellings real Beta 1 kernels use."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def reduce_with_nl_max(a):
    out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nisa.tensor_reduce(nl.max, t, axis=[1]))
    return out


@nki.jit
def accumulate_into_ndarray(lhs_t, rhs):
    """``+=`` onto an uninitialised PSUM tensor: the first matmul write overwrites."""
    out = nl.ndarray((lhs_t.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((nl.par_dim(lhs_t.shape[1]), rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhs_t.shape[0] // 128):
        a = nl.load(lhs_t[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc[...] += nisa.nc_matmul(a, b)
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def masked_accumulate(lhs_t, rhs):
    """``+=`` of a matmul masked by a loop-index predicate: only k < 2 contributes."""
    out = nl.ndarray((lhs_t.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nl.par_dim(lhs_t.shape[1]), rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhs_t.shape[0] // 128):
        a = nl.load(lhs_t[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc[...] += nisa.nc_matmul(a, b, mask=(k < 2))
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def psum_operands(a, b):
    """A TensorE transpose (a PSUM tile) used as matmul stationary and a PSUM matmul result
    selected by affine_select: each copied to SBUF first.  Returns tril(a @ b) (rows i,
    columns j <= i kept, -1 elsewhere)."""
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    xt = nisa.nc_transpose(x)
    prod = nl.zeros((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.psum)
    prod[...] += nisa.nc_matmul(xt, y)
    i_p, i_f = nl.mgrid[0:128, 0:128]
    sel = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=prod, on_false_value=-1.0)
    nl.store(out, value=sel)
    return out
